"""One task's output: its record batches as Parquet objects under the job's temporary prefix.

Batches are gathered into row groups of about rowGroupBytes and each row group is written as soon as it is
full, so a task holds one row group in memory, whatever its partition's size. An object is closed (its key
committed, still under `_temporary`) once it passes objectBytes, and the next row group opens a new one.
A task that fails removes what it wrote; the job's abort removes anything a killed task left.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.parquet as pq

from pyozone.analytics.datasource.keyfile import KeySink
from pyozone.analytics.datasource.location import TableLocation
from pyozone.analytics.datasource.options import WriteSettings
from pyozone.client import OzoneClient


@dataclass(frozen=True)
class TaskAttempt:
    job_id: str
    partition: int
    attempt_id: int  # Spark's task attempt id, unique in the application

    def directory(self, location: TableLocation) -> str:
        return f"{location.job_prefix(self.job_id)}attempt-{self.attempt_id}/"

    def object_name(self, sequence: int) -> str:
        """The object's name in the table (Spark's part-file naming: no two tasks or jobs share one)."""
        return f"part-{self.partition:05d}-{self.job_id}-c{sequence:03d}.parquet"


@dataclass(frozen=True)
class TaskOutput:
    names: tuple[str, ...]  # objects in the attempt's directory, as named in the table
    rows: int


class _ParquetObject:
    def __init__(self, client: OzoneClient, location: TableLocation, key: str, name: str, schema: pa.Schema,
                 settings: WriteSettings) -> None:  # fmt: skip
        self.name = name
        self.sink = KeySink(client.create_key(location.volume, location.bucket, key))
        self.parquet = pq.ParquetWriter(self.sink, schema, compression=settings.compression)

    def write(self, row_group: pa.Table) -> int:
        """Writes one row group; the object's size so far."""
        self.parquet.write_table(row_group, row_group_size=row_group.num_rows)
        return self.sink.tell()

    def commit(self) -> None:
        self.parquet.close()
        self.sink.commit()

    def abort(self) -> None:
        self.sink.abort()


class _TaskWriter:
    """Gathers batches into row groups and row groups into objects; knows what it committed."""

    def __init__(self, client: OzoneClient, location: TableLocation, attempt: TaskAttempt,
                 settings: WriteSettings) -> None:  # fmt: skip
        self.client, self.location, self.attempt, self.settings = client, location, attempt, settings
        self.committed: list[str] = []
        self.rows = 0
        self._open: _ParquetObject | None = None
        self._pending: list[pa.RecordBatch] = []
        self._pending_bytes = 0

    def add(self, batch: pa.RecordBatch) -> None:
        if batch.num_rows:
            self._pending.append(batch)
            self._pending_bytes += batch.nbytes
            self.rows += batch.num_rows
            if self._pending_bytes >= self.settings.row_group_bytes:
                self._flush()

    def finish(self) -> None:
        if self._pending:
            self._flush()
        if self._open is not None:
            self._close()

    def discard(self) -> None:
        """Aborts the open object and deletes the committed ones."""
        if self._open is not None:
            self._open.abort()
        for name in self.committed:
            self.client.delete_key(self.location.volume, self.location.bucket, self._key(name))

    def _key(self, name: str) -> str:
        return self.attempt.directory(self.location) + name

    def _flush(self) -> None:
        if self._open is None:
            name = self.attempt.object_name(len(self.committed))
            self._open = _ParquetObject(
                self.client, self.location, self._key(name), name, self._pending[0].schema, self.settings
            )
        size = self._open.write(pa.Table.from_batches(self._pending))
        self._pending, self._pending_bytes = [], 0
        if size >= self.settings.object_bytes:
            self._close()

    def _close(self) -> None:
        assert self._open is not None
        closing, self._open = self._open, None
        try:
            closing.commit()
        except BaseException:
            closing.abort()
            raise
        self.committed.append(closing.name)


def write_task(
    client: OzoneClient, location: TableLocation, attempt: TaskAttempt, settings: WriteSettings,
    batches: Iterator[pa.RecordBatch],
) -> TaskOutput:  # fmt: skip
    writer = _TaskWriter(client, location, attempt, settings)
    try:
        for batch in batches:
            writer.add(batch)
        writer.finish()
    except BaseException:
        with contextlib.suppress(Exception):  # the task's own failure is the one to report; the job's
            writer.discard()  # abort deletes whatever this could not
        raise
    return TaskOutput(tuple(writer.committed), writer.rows)
