"""Opening a snapshot without Spark: every check a reader needs before it trusts the files.

`open_snapshot_tables` validates the manifest (complete snapshot, known schema version), then every
table file's footer: a file that is not Parquet, a schema that is not the table's, or row counts that are
not the manifest's fail here with the file named, before any job reads a row. Footers are cheap (a few KB
per file), so this costs milliseconds whatever the snapshot's size.

Types are compared as the snapshot format defines them: names and types, not nullability or the names
Parquet gives list elements, since Spark writes the same data with its own conventions for both.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from pyozone.analytics.schema import TABLES, SnapshotError, read_manifest


def open_snapshot_tables(directory: Path | str) -> dict[str, ds.Dataset]:
    """Every table of a valid snapshot as a dataset (nothing read yet); SnapshotError names what is wrong."""
    directory = Path(directory)
    manifest = read_manifest(directory)
    return {table: _open_table(directory / table, table, manifest.rows[table]) for table in TABLES}


def _open_table(table_dir: Path, table: str, expected_rows: int) -> ds.Dataset:
    # Spark and Hadoop put _SUCCESS and .crc files beside the data, and may write no file for an empty
    # table: readers skip such names, and the manifest's row count says whether nothing is right.
    files = sorted(
        p for p in table_dir.iterdir() if p.is_file() and p.suffix == ".parquet" and p.name[0] not in "._"
    )
    rows = 0
    for path in files:
        try:
            metadata = pq.read_metadata(path)
            schema = metadata.schema.to_arrow_schema()
        except (pa.ArrowException, OSError) as e:
            raise SnapshotError(f"{path}: corrupt Parquet file: {e}") from None
        problem = schema_mismatch(table, schema)
        if problem:
            raise SnapshotError(f"{path}: table {table}: {problem}")
        rows += metadata.num_rows
    if rows != expected_rows:
        raise SnapshotError(f"{table_dir}: table {table} has {rows} rows, the manifest says {expected_rows}")
    return ds.dataset([str(p) for p in files], schema=TABLES[table], format="parquet")


def schema_mismatch(table: str, schema: pa.Schema) -> str | None:
    """What keeps `schema` from being the table's (the first missing, mistyped or extra field), or None."""
    expected = TABLES[table]
    for field in expected:
        index = schema.get_field_index(field.name)
        if index < 0:
            return f"field {field.name!r} is missing"
        actual = schema.field(index).type
        if not _same_type(actual, field.type):
            return f"field {field.name!r} is {actual}, expected {field.type}"
    extra = [name for name in schema.names if expected.get_field_index(name) < 0]
    return f"unexpected field {extra[0]!r}" if extra else None


def _same_type(actual: pa.DataType, expected: pa.DataType) -> bool:
    if pa.types.is_list(expected):
        return pa.types.is_list(actual) and _same_type(actual.value_type, expected.value_type)
    if pa.types.is_struct(expected):
        return (
            pa.types.is_struct(actual)
            and [f.name for f in actual] == [f.name for f in expected]
            and all(_same_type(a.type, e.type) for a, e in zip(actual, expected, strict=True))
        )
    return actual.equals(expected)
