"""The "pyozone" Python data source: Spark tables as Parquet objects in pyozone, at ofs:// URLs.

    df.write.format("pyozone").mode("append" | "overwrite").save("ofs://om:9862/vol/bucket/table")
    spark.read.format("pyozone").load("ofs://om:9862/vol/bucket/table")
    save(df, url, mode="errorifexists" | "ignore" | ...)   # every save mode (see options.SaveMode)

Executors write and read with their own OzoneClient (one per Python worker, from pyozone.fs.clients);
the driver's Python worker commits.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pyarrow as pa
from pyspark import TaskContext
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.datasource import DataSource, DataSourceArrowWriter, WriterCommitMessage
from pyspark.sql.types import StructType

from pyozone.analytics.datasource.commit import TableExistsError, commit_job, data_keys, delete_job_output
from pyozone.analytics.datasource.location import TableLocation, client_for, parse_table_url
from pyozone.analytics.datasource.options import SaveMode, WriteSettings, save_mode
from pyozone.analytics.datasource.read import OzoneTableReader, table_schema
from pyozone.analytics.datasource.task_output import TaskAttempt, TaskOutput, write_task

NAME = "pyozone"


@dataclass(frozen=True)
class TaskCommitMessage(WriterCommitMessage):
    attempt: TaskAttempt
    output: TaskOutput


class OzoneTableWriter(DataSourceArrowWriter):
    """Made on the driver and shipped to every task; `job_id` names this job's temporary prefix."""

    def __init__(
        self, location: TableLocation, mode: SaveMode, settings: WriteSettings, schema: StructType
    ) -> None:
        self.location = location
        self.mode = mode
        self.settings = settings
        self.schema_json = schema.json()
        self.job_id = uuid.uuid4().hex

    def write(self, iterator: Iterator[pa.RecordBatch]) -> TaskCommitMessage:  # type: ignore[override]
        context = TaskContext.get()
        assert context is not None, "write runs in a Spark task"
        attempt = TaskAttempt(self.job_id, context.partitionId(), context.taskAttemptId())
        output = write_task(
            client_for(self.location.om_address), self.location, attempt, self.settings, iterator
        )
        return TaskCommitMessage(attempt, output)

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:  # type: ignore[override]
        tasks = [(m.attempt, m.output) for m in messages if isinstance(m, TaskCommitMessage)]
        commit_job(
            client_for(self.location.om_address),
            self.location,
            self.job_id,
            self.mode,
            tasks,
            self.schema_json,
        )

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:  # type: ignore[override]
        delete_job_output(client_for(self.location.om_address), self.location, self.job_id)


class OzoneDataSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return NAME

    def _location(self) -> TableLocation:
        if "path" not in self.options:
            raise ValueError(f'format("{NAME}") needs a table: .save(url) / .load(url) with an ofs:// URL')
        return parse_table_url(self.options["path"])

    def schema(self) -> StructType:
        location = self._location()
        return table_schema(client_for(location.om_address), location)

    def reader(self, schema: StructType) -> OzoneTableReader:
        return OzoneTableReader(self._location(), schema)

    def writer(self, schema: StructType, overwrite: bool) -> OzoneTableWriter:
        location = self._location()
        mode = save_mode(self.options, overwrite)
        if mode is SaveMode.ERROR_IF_EXISTS and data_keys(client_for(location.om_address), location):
            raise TableExistsError(f"{location} already has data objects (save mode errorifexists)")
        return OzoneTableWriter(location, mode, WriteSettings.from_options(self.options), schema)


def register(spark: SparkSession) -> None:
    """Makes format("pyozone") available in this session."""
    spark.dataSource.register(OzoneDataSource)


def save(df: DataFrame, url: str, mode: str = "errorifexists", **options: str) -> None:
    """`df.write.format("pyozone").save(url)` in any save mode. Spark passes only append and overwrite to
    a Python data source, so errorifexists and ignore are checked here first (no job runs when the table
    has data) and then run as append with the `saveMode` option, which the job commit enforces again
    against a writer that committed in between."""
    wanted = SaveMode.parse(mode)
    location = parse_table_url(url)
    if wanted in (SaveMode.ERROR_IF_EXISTS, SaveMode.IGNORE) and data_keys(
        client_for(location.om_address), location
    ):
        if wanted is SaveMode.IGNORE:
            return
        raise TableExistsError(f"{location} already has data objects (save mode errorifexists)")
    writer = df.write.format(NAME).options(**options).option("saveMode", wanted.value)
    writer.mode("overwrite" if wanted is SaveMode.OVERWRITE else "append").save(url)
