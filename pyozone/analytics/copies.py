"""The copies a decommission needs for one container, decided by the Replication Manager's own code.

Runs on the executors, one snapshot row (container + its replicas + pending ops) at a time. The chosen
nodes are shown to the counters as DECOMMISSIONING, which is what SCM's view will be once the decommission
starts; the counting (RatisContainerReplicaCount, ECContainerReplicaCount) and the choice of source
replicas (the under-replication handlers' source rules) are the SCM's, not re-implemented here.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from pyozone.hdds.container import ContainerInfo, ContainerReplica
from pyozone.hdds.ids import DatanodeID, ReplicationConfig
from pyozone.hdds.node_status import NodeStatus
from pyozone.hdds.states import LifeCycleState, ReplicaState, ReplicationType
from pyozone.scm.replication.config import ReplicationManagerConfig
from pyozone.scm.replication.ec_count import ECContainerReplicaCount
from pyozone.scm.replication.pending_ops import PendingOp, PendingOpType
from pyozone.scm.replication.processing.context import pending_targets

# The handlers' source rules are module-private there; they are imported, not copied, so a change to
# them changes this estimate too. They only read `ctx.node_status`.
from pyozone.scm.replication.processing.ec_under import _source_copies as ec_source_copies
from pyozone.scm.replication.processing.ratis_under import _sources as ratis_sources
from pyozone.scm.replication.ratis_count import RatisContainerReplicaCount

_GONE = (LifeCycleState.DELETING, LifeCycleState.DELETED)


@dataclass(frozen=True, slots=True)
class Load:
    """Copy work attributed to one source node: a Ratis copy is shared evenly by its possible sources
    (the Replication Manager picks the least loaded one each time), an EC index has one source."""

    datanode: DatanodeID
    copies: float
    bytes: float


@dataclass(frozen=True, slots=True)
class Copies:
    new_copies: int
    copy_bytes: int
    indexes: tuple[int, ...]  # EC replica indexes to copy; empty for Ratis
    loads: tuple[Load, ...]  # empty when copies are needed but no replica can source them


def container_copies(
    row: Mapping[str, Any],
    chosen: Collection[DatanodeID],
    statuses: Mapping[DatanodeID, NodeStatus],
    config: ReplicationManagerConfig,
) -> Copies:
    """`row`: a containers row with `replicas` (replica rows) and `ops` (pending_ops rows or None);
    `statuses` already shows the chosen nodes as DECOMMISSIONING."""
    container = _container(row)
    replicas = [_replica(r) for r in row["replicas"]]
    ops = [_op(o) for o in row["ops"] or ()]
    ctx = SimpleNamespace(node_status=statuses.get)
    if container.state in _GONE:
        return Copies(0, 0, (), ())
    if container.replication_config.type is ReplicationType.EC:
        return _ec(container, replicas, ops, chosen, ctx, config)
    return _ratis(container, replicas, ops, chosen, ctx, config)


def _ratis(container, replicas, ops, chosen, ctx, config: ReplicationManagerConfig) -> Copies:
    """One new copy per healthy replica on a chosen node, unless the other healthy replicas already
    suffice: min(leaving copies, what the counter says is needed). Copies owed for other reasons (an
    already under-replicated container) are the rm-report's business, not the decommission's."""
    count = RatisContainerReplicaCount(
        container, replicas, ops, config.maintenance_replica_minimum, False, ctx.node_status
    )
    leaving = sum(r.datanode in chosen for r in count.healthy_replicas())
    needed = max(0, min(leaving, count.additional_replica_needed()))
    if not needed:
        return Copies(0, 0, (), ())
    sources = ratis_sources(count, ops, ctx)
    size = container.used_bytes
    loads = tuple(Load(dn, needed / len(sources), needed * size / len(sources)) for dn in sources)
    return Copies(needed, needed * size, (), loads)


def _ec(container, replicas, ops, chosen, ctx, config: ReplicationManagerConfig) -> Copies:
    """Per replica index: an index whose only good copies are on decommissioning nodes, one of them
    chosen, is copied from its source (the decommissioning copy itself when nothing better exists)."""
    count = ECContainerReplicaCount(
        container, replicas, ops, config.maintenance_remaining_redundancy, ctx.node_status
    )
    on_chosen = {
        r.replica_index for r in replicas if r.datanode in chosen and r.state is not ReplicaState.UNHEALTHY
    }
    indexes = tuple(sorted(count.decommissioning_only_indexes(True) & on_chosen))
    if not indexes:
        return Copies(0, 0, (), ())
    copies = ec_source_copies(replicas, pending_targets(ops, PendingOpType.DELETE), ctx)
    sources = {index: found[0] for index, found in copies.items()}  # the first copy is the index's source
    size = {r.replica_index: r.bytes_used for r in replicas if r.datanode in chosen}
    loads = tuple(
        Load(sources[i].datanode, 1.0, float(sources[i].bytes_used)) for i in indexes if i in sources
    )
    return Copies(len(indexes), sum(size[i] for i in indexes), indexes, loads)


def _container(row: Mapping[str, Any]) -> ContainerInfo:
    return ContainerInfo(
        container_id=row["container_id"],
        state=LifeCycleState[row["state"]],
        state_entered_ms=row["state_entered_ms"] or 0,
        pipeline_id=row["pipeline_id"],
        replication_config=ReplicationConfig.parse(row["replication_config"]),
        owner=row["owner"] or "",
        used_bytes=row["used_bytes"] or 0,
        number_of_keys=row["number_of_keys"] or 0,
        sequence_id=row["sequence_id"] or 0,
        suppressed=bool(row["suppressed"]),
        replicas_reported=bool(row["replicas_reported"]),
    )


def _replica(r: Mapping[str, Any]) -> ContainerReplica:
    return ContainerReplica(
        container_id=r["container_id"],
        datanode=r["datanode"],
        state=ReplicaState[r["state"]],
        origin_node_id=r["origin_node_id"] or r["datanode"],
        sequence_id=r["sequence_id"] or 0,
        key_count=r["key_count"] or 0,
        bytes_used=r["bytes_used"] or 0,
        replica_index=r["replica_index"] or 0,
        is_empty=bool(r["is_empty"]),
    )


def _op(o: Mapping[str, Any]) -> PendingOp:
    return PendingOp(
        PendingOpType[o["type"]], o["target"], o["replica_index"] or 0, None, o["deadline_epoch_ms"] or 0
    )
