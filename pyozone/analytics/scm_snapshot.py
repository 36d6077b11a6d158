"""The SCM core's state as snapshot rows: a consistent view, one row function per table, record batches.

`take_view` copies references to the core's records in one go (one event-loop turn in the daemon, so no
heartbeat lands in between). The records are frozen dataclasses, so the copy is a list of pointers and
the rows are built from it afterwards, batch by batch, while the core moves on. Only DatanodeInfo is
mutable (NodeManager swaps its fields in place), so each is copied shallowly; its fields are frozen.

Keys are OM's, not SCM's: the view has none; `pyozone admin snapshot --keys` adds them from OM
(pyozone/admin/om_keys.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from functools import cache
from typing import Any

import pyarrow as pa

from pyozone.analytics.schema import TABLES
from pyozone.hdds.commands import DeletedBlocksTransaction
from pyozone.hdds.container import ContainerInfo, ContainerReplica
from pyozone.hdds.datanode import DatanodeInfo
from pyozone.hdds.ids import ContainerID, ReplicationConfig
from pyozone.hdds.pipeline import Pipeline
from pyozone.scm.replication.pending_ops import PendingOp
from pyozone.scm.scm import StorageContainerManager

Row = dict[str, Any]

DEFAULT_BATCH_ROWS = 8192


@dataclass(frozen=True, slots=True)
class ScmView:
    """The records of every table at one instant, by table name; a table without records (keys: OM's) is
    absent."""

    cluster_id: str
    created_ms: int
    records: dict[str, list[Any]]

    def row_counts(self) -> dict[str, int]:
        return {table: len(self.records.get(table, ())) for table in TABLES}


def take_view(core: StorageContainerManager) -> ScmView:
    """Synchronous on purpose: the caller gets every table as of the same instant."""
    containers = core.containers.containers()
    pending = core.replication.pending_ops
    log = core.deleted_blocks
    records: dict[str, list[Any]] = {
        "nodes": [replace(info) for info in core.nodes.nodes()],
        "pipelines": core.pipelines.pipelines(),
        "containers": containers,
        "replicas": [r for info in containers for r in core.containers.replicas(info.container_id)],
        "pending_ops": [(cid, op) for cid in pending.containers() for op in pending.ops(cid)],
        "deleted_blocks": [tx for tx in map(log.get, log.transaction_ids()) if tx is not None],
    }
    return ScmView(core.cluster_id, core.clock.wall_ms(), records)


def batches(view: ScmView, batch_rows: int = DEFAULT_BATCH_ROWS) -> Iterator[tuple[str, pa.RecordBatch]]:
    """Each table's rows in TABLES order, as record batches of at most batch_rows; none for an empty table."""
    for table, schema in TABLES.items():
        records = view.records.get(table, [])
        for start in range(0, len(records), batch_rows):
            rows = list(map(ROWS[table], records[start : start + batch_rows]))
            yield table, pa.RecordBatch.from_pylist(rows, schema=schema)


def node_row(info: DatanodeInfo) -> Row:
    """data_disks counts every data volume, failed ones included; capacity, used and remaining are the
    healthy volumes' sums, as `admin datanode list` shows them."""
    details, status = info.details, info.status
    return {
        "uuid": details.uuid,
        "hostname": details.hostname,
        "ip_address": details.ip_address,
        "rack": details.network_location,
        "health": status.health.name,
        "operational_state": status.operational_state.name,
        "op_state_expiry_epoch_sec": status.op_state_expiry_epoch_sec,
        "data_disks": len(info.report.storage),
        "failed_disks": info.failed_volume_count(),
        "metadata_disks": info.metadata_volume_count(),
        "capacity": info.capacity(),
        "used": info.used(),
        "remaining": info.remaining(),
        "last_heartbeat_ms": info.last_heartbeat_wall_ms,
    }


def pipeline_row(pipeline: Pipeline) -> Row:
    return {
        "pipeline_id": pipeline.id,
        "replication_config": _config_name(pipeline.replication_config),
        "state": pipeline.state.name,
        "nodes": list(pipeline.nodes),
        "leader": pipeline.leader,
        "created_ms": pipeline.created_ms,
    }


def container_row(info: ContainerInfo) -> Row:
    return {
        "container_id": info.container_id,
        "state": info.state.name,
        "replication_config": _config_name(info.replication_config),
        "pipeline_id": info.pipeline_id,
        "owner": info.owner,
        "used_bytes": info.used_bytes,
        "number_of_keys": info.number_of_keys,
        "sequence_id": info.sequence_id,
        "state_entered_ms": info.state_entered_ms,
        "suppressed": info.suppressed,
        "replicas_reported": info.replicas_reported,
    }


def replica_row(replica: ContainerReplica) -> Row:
    return {
        "container_id": replica.container_id,
        "datanode": replica.datanode,
        "state": replica.state.name,
        "origin_node_id": replica.origin_node_id,
        "sequence_id": replica.sequence_id,
        "key_count": replica.key_count,
        "bytes_used": replica.bytes_used,
        "replica_index": replica.replica_index,
        "is_empty": replica.is_empty,
    }


def pending_op_row(entry: tuple[ContainerID, PendingOp]) -> Row:
    container_id, op = entry
    return {
        "container_id": container_id,
        "type": op.type.value,
        "target": op.target_dn,
        "replica_index": op.replica_index,
        "deadline_epoch_ms": op.deadline_epoch_ms,
    }


def deleted_block_row(tx: DeletedBlocksTransaction) -> Row:
    return {"tx_id": tx.tx_id, "container_id": tx.container_id, "local_ids": list(tx.local_ids)}


ROWS: dict[str, Callable[[Any], Row]] = {
    "nodes": node_row,
    "pipelines": pipeline_row,
    "containers": container_row,
    "replicas": replica_row,
    "pending_ops": pending_op_row,
    "deleted_blocks": deleted_block_row,
}


@cache
def _config_name(config: ReplicationConfig) -> str:
    """A cluster has a handful of configs and millions of records naming one: format each once."""
    return str(config)
