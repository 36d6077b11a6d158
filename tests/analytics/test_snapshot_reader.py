"""open_snapshot_tables refuses a bad snapshot before any row is read, naming the table, field or file."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pyozone.analytics.schema import MANIFEST, SCHEMA_VERSION, TABLES, SnapshotError
from pyozone.analytics.snapshot_reader import open_snapshot_tables
from pyozone.analytics.snapshot_writer import PART_FILE, SnapshotWriter

DELETED = [
    {"tx_id": 1, "container_id": 2, "local_ids": [3, 4]},
    {"tx_id": 2, "container_id": 5, "local_ids": []},
]


@pytest.fixture
def snapshot(tmp_path: Path) -> Path:
    out = tmp_path / "snap"
    with SnapshotWriter(out, "CID-1", "scm") as writer:
        writer.add_rows("deleted_blocks", DELETED)
        writer.finish()
    return out


def test_a_valid_snapshot_opens(snapshot: Path) -> None:
    tables = open_snapshot_tables(snapshot)
    assert tables["deleted_blocks"].to_table().to_pylist() == DELETED
    assert tables["keys"].count_rows() == 0


def test_missing_directory_and_missing_table_are_refused(snapshot: Path, tmp_path: Path) -> None:
    with pytest.raises(SnapshotError, match="no such snapshot directory"):
        open_snapshot_tables(tmp_path / "nowhere")
    (snapshot / "pending_ops" / PART_FILE).unlink()
    (snapshot / "pending_ops").rmdir()
    with pytest.raises(SnapshotError, match="table directory pending_ops/ is missing"):
        open_snapshot_tables(snapshot)


def test_schema_version_mismatch_is_refused(snapshot: Path) -> None:
    manifest = json.loads((snapshot / MANIFEST).read_text())
    manifest["schemaVersion"] = SCHEMA_VERSION + 1
    (snapshot / MANIFEST).write_text(json.dumps(manifest))
    message = f"schema version {SCHEMA_VERSION + 1}; this pyozone reads version {SCHEMA_VERSION}"
    with pytest.raises(SnapshotError, match=message):
        open_snapshot_tables(snapshot)


def test_a_mistyped_field_is_refused_naming_table_and_field(snapshot: Path) -> None:
    schema = TABLES["deleted_blocks"]
    wrong = pa.schema([schema.field("tx_id"), ("container_id", pa.string()), schema.field("local_ids")])
    pq.write_table(pa.Table.from_pylist([], schema=wrong), snapshot / "deleted_blocks" / PART_FILE)
    with pytest.raises(
        SnapshotError, match="table deleted_blocks: field 'container_id' is string, expected int64"
    ):
        open_snapshot_tables(snapshot)


def test_a_missing_or_extra_field_is_refused(snapshot: Path) -> None:
    path = snapshot / "deleted_blocks" / PART_FILE
    table = pq.read_table(path)
    pq.write_table(table.drop_columns(["local_ids"]), path)
    with pytest.raises(SnapshotError, match="table deleted_blocks: field 'local_ids' is missing"):
        open_snapshot_tables(snapshot)
    pq.write_table(table.append_column("color", pa.array(["red", "blue"])), path)
    with pytest.raises(SnapshotError, match="table deleted_blocks: unexpected field 'color'"):
        open_snapshot_tables(snapshot)


@pytest.mark.parametrize("damage", ["garbage", "truncated"])
def test_a_corrupt_file_is_refused_naming_it(snapshot: Path, damage: str) -> None:
    path = snapshot / "deleted_blocks" / PART_FILE
    data = path.read_bytes()
    path.write_bytes(b"not parquet at all" if damage == "garbage" else data[: len(data) // 2])
    with pytest.raises(SnapshotError, match=rf"{path}: corrupt Parquet file"):
        open_snapshot_tables(snapshot)


def test_rows_other_than_the_manifest_says_are_refused(snapshot: Path) -> None:
    manifest = json.loads((snapshot / MANIFEST).read_text())
    manifest["rows"]["deleted_blocks"] = 3
    (snapshot / MANIFEST).write_text(json.dumps(manifest))
    with pytest.raises(SnapshotError, match="table deleted_blocks has 2 rows, the manifest says 3"):
        open_snapshot_tables(snapshot)


def test_spark_written_tables_are_accepted(snapshot: Path) -> None:
    """Spark's part-file names, _SUCCESS and .crc files, non-null fields and "element" lists; no file at
    all for an empty table."""
    table_dir = snapshot / "deleted_blocks"
    (table_dir / PART_FILE).unlink()
    fields = [
        pa.field("tx_id", pa.int64(), nullable=False),
        pa.field("local_ids", pa.list_(pa.field("element", pa.int64(), nullable=False))),
        pa.field("container_id", pa.int64()),
    ]
    for i, row in enumerate(DELETED):
        part = pa.Table.from_pylist([row], schema=pa.schema(fields))
        pq.write_table(part, table_dir / f"part-0000{i}-4f1c-c000.snappy.parquet")
    (table_dir / "_SUCCESS").write_text("")
    (table_dir / ".part-00000-4f1c-c000.snappy.parquet.crc").write_bytes(b"\x00")
    (snapshot / "keys" / PART_FILE).unlink()
    tables = open_snapshot_tables(snapshot)
    assert sorted(tables["deleted_blocks"].to_table().to_pylist(), key=lambda r: r["tx_id"]) == DELETED
    assert tables["keys"].count_rows() == 0 and tables["keys"].schema.equals(TABLES["keys"])
