"""Reading a table: one input partition per data object; the schema from the first object's footer.

A table whose jobs wrote no rows has no objects; its schema then comes from `_SUCCESS`, which records
the schema of the job that wrote it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql.datasource import DataSourceReader, InputPartition
from pyspark.sql.pandas.types import from_arrow_schema
from pyspark.sql.types import StructType

from pyozone.analytics.datasource.commit import data_keys
from pyozone.analytics.datasource.location import TableLocation, client_for
from pyozone.client import OMException, OzoneClient

BATCH_ROWS = 64 * 1024


class TableNotFoundError(Exception):
    """The table has no data objects and no `_SUCCESS` to take a schema from."""


@dataclass(frozen=True)
class ObjectPartition(InputPartition):
    key: str


def table_schema(client: OzoneClient, location: TableLocation) -> StructType:
    keys = data_keys(client, location)
    if keys:
        with client.open_key_reader(location.volume, location.bucket, keys[0]) as reader:
            return from_arrow_schema(pq.read_schema(reader))
    try:
        with client.read_key(location.volume, location.bucket, location.success_key) as reader:
            marker = json.loads(reader.readall())
    except OMException as e:
        if e.result != "KEY_NOT_FOUND":
            raise
        raise TableNotFoundError(f"{location} has no data objects and no {location.success_key}") from None
    return StructType.fromJson(marker["schema"])


class OzoneTableReader(DataSourceReader):
    def __init__(self, location: TableLocation, schema: StructType) -> None:
        self.location = location
        self.columns = schema.fieldNames()

    def partitions(self) -> list[ObjectPartition]:
        return [
            ObjectPartition(key) for key in data_keys(client_for(self.location.om_address), self.location)
        ]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if not isinstance(partition, ObjectPartition):
            return  # Spark plans an empty table (no partitions) as one InputPartition(None)
        client = client_for(self.location.om_address)
        with client.open_key_reader(self.location.volume, self.location.bucket, partition.key) as reader:
            yield from pq.ParquetFile(reader).iter_batches(BATCH_ROWS, columns=self.columns)
