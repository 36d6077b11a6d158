"""Snapshot: a snapshot directory opened for Spark, its manifest checked before anything else happens.

Tables are read with the schema the format declares rather than the one Parquet files carry, so an empty
table (no part files) still has its columns and a job's query plan does not depend on what was written.
"""

from __future__ import annotations

from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.pandas.types import from_arrow_schema
from pyspark.sql.types import StructType

from pyozone.analytics.schema import SCHEMA_VERSION, TABLES, Manifest, SnapshotError, read_manifest


def spark_schema(table: str) -> StructType:
    if table not in TABLES:
        raise SnapshotError(f"unknown snapshot table {table!r}; the tables are {', '.join(TABLES)}")
    return from_arrow_schema(TABLES[table])


class Snapshot:
    def __init__(self, spark: SparkSession, path: Path) -> None:
        # Absolute, because executors resolve the path on their own machines (shared storage).
        self.path = Path(path).absolute()
        self.manifest: Manifest = read_manifest(self.path)
        self.spark = spark

    def table(self, name: str) -> DataFrame:
        return self.spark.read.schema(spark_schema(name)).parquet(str(self.path / name))


def schema_markdown() -> str:
    """The tables of the format version as Markdown; docs/analytics.md carries this text (a test keeps it
    in step with schema.TABLES)."""
    lines = [f"Snapshot format version {SCHEMA_VERSION}.", ""]
    for table, schema in TABLES.items():
        spark = from_arrow_schema(schema)
        lines += [f"### `{table}`", "", "| Column | Arrow type | Spark type |", "|---|---|---|"]
        lines += [
            f"| `{field.name}` | `{field.type}` | `{spark[field.name].dataType.simpleString()}` |"
            for field in schema
        ]
        lines.append("")
    return "\n".join(lines)
