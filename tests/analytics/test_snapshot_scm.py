"""Snapshot rows from a SimCluster's SCM core equal the core's state exactly, as of the view's instant;
and the wire encoding of streamSnapshot round-trips and respects the message limit."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from pyozone.analytics.schema import TABLES
from pyozone.analytics.scm_snapshot import batches, take_view
from pyozone.analytics.snapshot_from_core import write_core_snapshot
from pyozone.analytics.snapshot_reader import open_snapshot_tables
from pyozone.analytics.snapshot_transport import TransportError, decode_batches, encode_batch
from pyozone.config import OzoneConfiguration
from pyozone.hdds.states import LifeCycleState, NodeOperationalState
from pyozone.scm.scm import StorageContainerManager
from pyozone.sim.cluster import SimCluster

MB = 1 << 20
MINUTE = 60_000
SMALL = {
    "ozone.scm.container.size": "10MB",
    "ozone.scm.block.size": "1MB",
    "ozone.scm.close.container.wait.duration": "10s",
}


@pytest.fixture(scope="module")
def cluster() -> SimCluster:
    """Closed and open containers, a dead node, a decommissioned one, deleted blocks and pending ops."""
    c = SimCluster(7, racks=2, data_disks=2, conf=OzoneConfiguration(SMALL), seed=3)
    assert c.run_until(lambda: not c.scm.safe_mode.in_safe_mode(), 10 * MINUTE)
    scm = c.scm
    written = []
    while all(info.state is LifeCycleState.OPEN for info in scm.containers.containers()):
        written.append(c.write_block(MB, owner=f"om{len(written) % 2}"))
        c.advance(1_000)  # the datanodes' reports, not the allocations, fill a container up
        assert len(written) < 500
    c.advance(2 * MINUTE)
    assert {LifeCycleState.CLOSED, LifeCycleState.OPEN} <= {
        info.state for info in scm.containers.containers()
    }
    first = written[0].block_id.container_id
    local_ids = [b.block_id.local_id for b in written if b.block_id.container_id == first]
    scm.deleted_blocks.add_transactions({first: local_ids[:3]})
    dns = sorted(c.datanodes)
    c.kill(dns[0])
    scm.nodes.set_operational_state(dns[1], NodeOperationalState.DECOMMISSIONING)
    c.advance(11 * MINUTE)
    cid = scm.containers.containers()[0].container_id
    scm.replication.pending_ops.schedule_add(cid, dns[2], 0, None, c.clock.wall_ms() + MINUTE)
    return c


def expected_rows(scm: StorageContainerManager) -> dict[str, list[dict]]:
    """The core's state, read here field by field (not through the row functions under test)."""
    nodes = [
        {
            "uuid": i.uuid,
            "hostname": i.details.hostname,
            "ip_address": i.details.ip_address,
            "rack": i.details.network_location,
            "health": i.status.health.name,
            "operational_state": i.status.operational_state.name,
            "op_state_expiry_epoch_sec": i.status.op_state_expiry_epoch_sec,
            "data_disks": len(i.report.storage),
            "failed_disks": sum(s.failed for s in i.report.storage),
            "metadata_disks": len(i.report.metadata_storage),
            "capacity": sum(s.capacity for s in i.report.storage if not s.failed),
            "used": sum(s.used for s in i.report.storage if not s.failed),
            "remaining": sum(s.remaining for s in i.report.storage if not s.failed),
            "last_heartbeat_ms": i.last_heartbeat_wall_ms,
        }
        for i in scm.nodes.nodes()
    ]
    pipelines = [
        {
            "pipeline_id": p.id,
            "replication_config": str(p.replication_config),
            "state": p.state.name,
            "nodes": list(p.nodes),
            "leader": p.leader,
            "created_ms": p.created_ms,
        }
        for p in scm.pipelines.pipelines()
    ]
    containers = scm.containers.containers()
    pending = scm.replication.pending_ops
    return {
        "nodes": nodes,
        "pipelines": pipelines,
        "containers": [{**c.to_dict(), "pipelineID": c.pipeline_id} for c in containers],
        "replicas": [
            {
                "container_id": r.container_id,
                "datanode": r.datanode,
                "state": r.state.name,
                "origin_node_id": r.origin_node_id,
                "sequence_id": r.sequence_id,
                "key_count": r.key_count,
                "bytes_used": r.bytes_used,
                "replica_index": r.replica_index,
                "is_empty": r.is_empty,
            }
            for c in containers
            for r in scm.containers.replicas(c.container_id)
        ],
        "pending_ops": [
            {
                "container_id": cid,
                "type": op.type.value,
                "target": op.target_dn,
                "replica_index": op.replica_index,
                "deadline_epoch_ms": op.deadline_epoch_ms,
            }
            for cid in pending.containers()
            for op in pending.ops(cid)
        ],
        "keys": [],
        "deleted_blocks": [
            {"tx_id": tx.tx_id, "container_id": tx.container_id, "local_ids": list(tx.local_ids)}
            for tx in map(scm.deleted_blocks.get, scm.deleted_blocks.transaction_ids())
        ],
    }


CONTAINER_FIELDS = {
    "containerID": "container_id",
    "state": "state",
    "stateEnterTime": "state_entered_ms",
    "pipelineID": "pipeline_id",
    "replicationConfig": "replication_config",
    "owner": "owner",
    "usedBytes": "used_bytes",
    "numberOfKeys": "number_of_keys",
    "sequenceId": "sequence_id",
    "suppressed": "suppressed",
    "replicasReported": "replicas_reported",
}


def read_rows(directory: Path) -> dict[str, list[dict]]:
    rows = {
        table: dataset.to_table().to_pylist() for table, dataset in open_snapshot_tables(directory).items()
    }
    rows["containers"] = [{k: row[v] for k, v in CONTAINER_FIELDS.items()} for row in rows["containers"]]
    return rows


def test_snapshot_rows_equal_the_core_state(cluster: SimCluster, tmp_path: Path) -> None:
    scm = cluster.scm
    expected = expected_rows(scm)
    manifest = write_core_snapshot(scm, tmp_path / "snap", batch_rows=16)
    assert read_rows(tmp_path / "snap") == expected
    assert manifest.rows == {table: len(rows) for table, rows in expected.items()}
    assert manifest.cluster_id == scm.cluster_id and manifest.source == "scm"
    assert manifest.created_ms == cluster.clock.wall_ms()
    # the scenario reached every kind of row it means to compare
    assert all(manifest.rows[t] for t in TABLES if t != "keys")
    states = {(row["health"], row["operational_state"]) for row in expected["nodes"]}
    assert ("DEAD", "IN_SERVICE") in states and ("HEALTHY", "DECOMMISSIONED") in states
    assert {row["rack"] for row in expected["nodes"]} == {"/rack1", "/rack2"}


def test_the_view_is_the_state_when_it_was_taken(cluster: SimCluster, tmp_path: Path) -> None:
    """Rows built after the core moved on still show the instant of the view."""
    scm = cluster.scm
    before = expected_rows(scm)
    view = take_view(scm)
    for _ in range(12):
        cluster.write_block(MB)
    cluster.restart(sorted(cluster.datanodes)[0])
    cluster.advance(3 * MINUTE)
    assert expected_rows(scm) != before
    rows: dict[str, list[dict]] = {table: [] for table in TABLES}
    for table, batch in batches(view, batch_rows=5):
        assert batch.num_rows <= 5 and batch.schema.equals(TABLES[table])
        rows[table] += batch.to_pylist()
    rows["containers"] = [{k: row[v] for k, v in CONTAINER_FIELDS.items()} for row in rows["containers"]]
    assert rows == before


def test_encoded_batches_fit_the_limit_and_round_trip() -> None:
    rows = [{"tx_id": i, "container_id": i, "local_ids": list(range(100))} for i in range(200)]
    batch = pa.RecordBatch.from_pylist(rows, schema=TABLES["deleted_blocks"])
    whole = list(encode_batch(batch, 1 << 20))
    assert len(whole) == 1
    parts = list(encode_batch(batch, 40_000))
    assert len(parts) > 4 and all(len(p) <= 40_000 for p in parts)
    decoded = [b for p in parts for b in decode_batches(p)]
    assert pa.Table.from_batches(decoded).to_pylist() == rows
    with pytest.raises(TransportError, match="one row encodes to"):
        list(encode_batch(batch.slice(0, 1), 500))
    with pytest.raises(TransportError, match="not an Arrow IPC stream"):
        decode_batches(b"\x00garbage")
