"""SnapshotWriter: round trip, row groups, bounded memory, and the manifest written last or not at all."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pyozone.analytics.schema import MANIFEST, SCHEMA_VERSION, TABLES, SnapshotError, read_manifest
from pyozone.analytics.snapshot_reader import open_snapshot_tables
from pyozone.analytics.snapshot_writer import PART_FILE, SnapshotWriter

ROOT = Path(__file__).resolve().parents[2]
DN = "11111111-0000-4000-8000-000000000001"


def replica(cid: int, dn: str = DN) -> dict:
    return {
        "container_id": cid,
        "datanode": dn,
        "state": "CLOSED",
        "origin_node_id": dn,
        "sequence_id": cid * 10,
        "key_count": 3,
        "bytes_used": 1 << 20,
        "replica_index": 0,
        "is_empty": False,
    }


def test_round_trip_of_every_table(tmp_path: Path) -> None:
    out = tmp_path / "snap"
    rows = {
        "nodes": [
            {
                "uuid": DN,
                "hostname": "dn1",
                "ip_address": "10.0.0.1",
                "rack": "/rack1",
                "health": "HEALTHY",
                "operational_state": "IN_SERVICE",
                "op_state_expiry_epoch_sec": 0,
                "data_disks": 2,
                "failed_disks": 1,
                "metadata_disks": 1,
                "capacity": 100,
                "used": 10,
                "remaining": 90,
                "last_heartbeat_ms": 1_700_000_000_000,
            }
        ],
        "pipelines": [
            {
                "pipeline_id": "p1",
                "replication_config": "RATIS/ONE",
                "state": "OPEN",
                "nodes": [DN],
                "leader": None,
                "created_ms": 5,
            }
        ],
        "replicas": [replica(1), replica(2)],
        "pending_ops": [
            {"container_id": 1, "type": "ADD", "target": DN, "replica_index": 0, "deadline_epoch_ms": 9}
        ],
        "keys": [
            {
                "volume": "v",
                "bucket": "b",
                "key": "k",
                "size": 7,
                "replication_config": "RATIS/THREE",
                "created_ms": 1,
                "blocks": [{"container_id": 1, "local_id": 2, "length": 7}],
            }
        ],
        "deleted_blocks": [{"tx_id": 1, "container_id": 2, "local_ids": [4, 5]}],
    }
    with SnapshotWriter(out, "CID-1", "scm", created_ms=1234) as writer:
        for table, table_rows in rows.items():
            writer.add_rows(table, table_rows)
        manifest = writer.finish()
    expected_counts = {table: len(rows.get(table, [])) for table in TABLES}
    assert manifest.rows == expected_counts
    assert read_manifest(out) == manifest
    assert (manifest.schema_version, manifest.created_ms, manifest.cluster_id, manifest.source) == (
        SCHEMA_VERSION,
        1234,
        "CID-1",
        "scm",
    )
    tables = open_snapshot_tables(out)
    assert set(tables) == set(TABLES)
    for table, dataset in tables.items():
        assert dataset.schema.equals(TABLES[table])
        assert dataset.to_table().to_pylist() == rows.get(table, [])


def test_rows_go_out_in_row_groups_as_they_come(tmp_path: Path) -> None:
    """A full row group is written as soon as it is complete, not at finish."""
    out = tmp_path / "snap"
    with SnapshotWriter(out, "CID-1", "scm", row_group_rows=100) as writer:
        for start in range(0, 250, 30):
            writer.add_rows("replicas", [replica(cid) for cid in range(start, min(start + 30, 250))])
        assert writer.rows["replicas"] == 250
        manifest = writer.finish()
    assert manifest.rows["replicas"] == 250
    metadata = pq.read_metadata(out / "replicas" / PART_FILE)
    assert [metadata.row_group(i).num_rows for i in range(metadata.num_row_groups)] == [100, 100, 50]
    ids = open_snapshot_tables(out)["replicas"].to_table(columns=["container_id"]).column(0).to_pylist()
    assert ids == list(range(250))


def test_memory_stays_bounded_for_two_million_rows(tmp_path: Path) -> None:
    """In a fresh process, so the peak RSS is this write's: 2M replica rows in 10k-row batches."""
    done = subprocess.run(
        [sys.executable, "-m", "tests.analytics.snapshot_memory_probe", str(tmp_path / "snap"), "2000000"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=240,
        check=True,
    )
    result = json.loads(done.stdout)
    print(f"2M rows: {result['rows_per_s']:.0f} rows/s, peak RSS growth {result['rss_growth_mb']:.0f} MB")
    assert result["rss_growth_mb"] < 200, result
    assert open_snapshot_tables(tmp_path / "snap")["replicas"].count_rows() == 2_000_000


def test_an_error_inside_the_block_leaves_no_manifest(tmp_path: Path) -> None:
    out = tmp_path / "snap"
    with pytest.raises(RuntimeError), SnapshotWriter(out, "CID-1", "scm") as writer:
        writer.add_rows("replicas", [replica(1)])
        raise RuntimeError("SCM went away")
    assert (out / "replicas" / PART_FILE).is_file() and not (out / MANIFEST).exists()
    with pytest.raises(SnapshotError, match="not a snapshot"):
        open_snapshot_tables(out)
    # The interrupted run's directory takes a new attempt.
    with SnapshotWriter(out, "CID-1", "scm") as writer:
        writer.add_rows("replicas", [replica(2)])
        writer.finish()
    assert open_snapshot_tables(out)["replicas"].to_table().to_pylist() == [replica(2)]


def test_leaving_the_block_without_finish_is_incomplete(tmp_path: Path) -> None:
    with SnapshotWriter(tmp_path / "snap", "CID-1", "scm") as writer:
        writer.add_rows("replicas", [replica(1)])
    with pytest.raises(SnapshotError, match="was it written completely"):
        open_snapshot_tables(tmp_path / "snap")


def test_refuses_a_finished_snapshot_a_file_and_foreign_files(tmp_path: Path) -> None:
    done = tmp_path / "done"
    with SnapshotWriter(done, "CID-1", "scm") as writer:
        writer.finish()
    with pytest.raises(SnapshotError, match="already holds a snapshot"):
        SnapshotWriter(done, "CID-1", "scm")
    afile = tmp_path / "file"
    afile.write_text("x")
    with pytest.raises(SnapshotError, match="not a directory"):
        SnapshotWriter(afile, "CID-1", "scm")
    foreign = tmp_path / "foreign"
    (foreign / "containers").mkdir(parents=True)
    (foreign / "containers" / "part-00007.parquet").write_text("x")
    with pytest.raises(SnapshotError, match=r"containers: holds other files \(part-00007.parquet\)"):
        SnapshotWriter(foreign, "CID-1", "scm")


def test_refuses_unknown_tables_wrong_batches_and_writes_after_finish(tmp_path: Path) -> None:
    with SnapshotWriter(tmp_path / "snap", "CID-1", "scm") as writer:
        with pytest.raises(SnapshotError, match="no table 'volumes'"):
            writer.add_rows("volumes", [{"a": 1}])
        wrong = pa.RecordBatch.from_pylist([{"container_id": "one"}])
        with pytest.raises(SnapshotError, match="table containers: field 'container_id' is string"):
            writer.add_batch("containers", wrong)
        writer.finish()
        with pytest.raises(SnapshotError, match="already finished"):
            writer.add_rows("replicas", [replica(1)])
        with pytest.raises(SnapshotError, match="already finished"):
            writer.finish()


def test_accepts_a_batch_with_spark_conventions(tmp_path: Path) -> None:
    """Columns in another order, non-null fields: cast to the format's schema on the way in."""
    fields = [pa.field("local_ids", pa.list_(pa.field("element", pa.int64(), nullable=False)))]
    fields += [pa.field("container_id", pa.int64(), nullable=False), pa.field("tx_id", pa.int64())]
    batch = pa.RecordBatch.from_pylist(
        [{"local_ids": [1, 2], "container_id": 3, "tx_id": 4}], schema=pa.schema(fields)
    )
    with SnapshotWriter(tmp_path / "snap", "CID-1", "scm") as writer:
        writer.add_batch("deleted_blocks", batch)
        writer.finish()
    table = open_snapshot_tables(tmp_path / "snap")["deleted_blocks"].to_table()
    assert table.schema.equals(TABLES["deleted_blocks"])
    assert table.to_pylist() == [{"tx_id": 4, "container_id": 3, "local_ids": [1, 2]}]
