"""Quasi-closed stuck under/over-replication handlers (Ozone's QuasiClosedStuckUnderReplicationHandler and
QuasiClosedStuckOverReplicationHandler).

A stuck container cannot be force-closed, so every origin's copies may hold data nobody else has: the
repair keeps enough copies of each origin (QuasiClosedStuckReplicaCount) rather than enough replicas.
Both handlers wait while ops of their kind are pending, since those may already fix the container.
"""

from __future__ import annotations

from collections.abc import Iterable

from pyozone.hdds.container import ContainerReplica
from pyozone.hdds.exceptions import SCMException
from pyozone.hdds.states import NodeState
from pyozone.scm.replication.commands import CommandTargetOverloadedError, InsufficientDatanodesError
from pyozone.scm.replication.pending_ops import PendingOp, PendingOpType
from pyozone.scm.replication.processing.context import RepairContext, choose_targets, excluded_and_used
from pyozone.scm.replication.qc_stuck_count import QuasiClosedStuckReplicaCount
from pyozone.scm.replication.ratis_count import replica_order
from pyozone.scm.replication.results import OverReplicatedHealthResult, UnderReplicatedHealthResult


def handle_qc_stuck_under_replicated(result: UnderReplicatedHealthResult, ctx: RepairContext) -> int:
    """Copy each under-replicated origin from its own replicas. Targets chosen for one origin count as
    used for the next, so two origins never share a new node. Fewer copies than needed: raise the first
    failure (or InsufficientDatanodesError) after sending the rest."""
    container = result.container
    replicas = ctx.replicas(container.container_id)
    ops = ctx.pending_ops.ops(container.container_id)
    if (replicas and all(r.is_empty for r in replicas)) or any(op.type is PendingOpType.ADD for op in ops):
        return 0
    origins = _count(replicas, ctx).under_replicated_origins()
    required = sum(origin.replica_delta for origin in origins)
    scheduled = list(ops)
    sent = 0
    failure: Exception | None = None
    for origin in origins:
        try:
            nodes = excluded_and_used(ctx, container, replicas, (), scheduled)
            targets = choose_targets(ctx, container, origin.replica_delta, nodes.used, nodes.excluded)
        except SCMException as e:
            failure = failure or e
            continue
        sources = [r.datanode for r in origin.sources]
        for target in targets:
            try:
                ctx.sender.send_throttled_replication(container, sources, target, 0)
            except CommandTargetOverloadedError as e:
                failure = failure or e
                continue
            scheduled.append(PendingOp(PendingOpType.ADD, target, 0, None, 0))
            sent += 1
    if failure is not None or sent < required:
        ctx.metrics.partial_replication_total += 1
        raise failure or InsufficientDatanodesError(required, sent)
    return sent


def handle_qc_stuck_over_replicated(result: OverReplicatedHealthResult, ctx: RepairContext) -> int:
    """Delete each over-replicated origin's excess, in deterministic order, counting only copies on
    HEALTHY nodes (a STALE node's copy may vanish by itself)."""
    container = result.container
    if any(op.type is PendingOpType.DELETE for op in ctx.pending_ops.ops(container.container_id)):
        return 0
    live = []
    for replica in ctx.replicas(container.container_id):
        status = ctx.node_status(replica.datanode)
        if status is not None and status.health is NodeState.HEALTHY:
            live.append(replica)
    sent = 0
    overloaded: CommandTargetOverloadedError | None = None
    for origin in _count(live, ctx).over_replicated_origins():
        for replica in sorted(origin.sources, key=replica_order)[: origin.replica_delta]:
            try:
                ctx.sender.send_delete(container, replica.datanode, 0, True, True)
                sent += 1
            except CommandTargetOverloadedError as e:
                overloaded = e
    if overloaded is not None:
        if sent:
            ctx.metrics.partial_replication_total += 1
        raise overloaded
    return sent


def _count(replicas: Iterable[ContainerReplica], ctx: RepairContext) -> QuasiClosedStuckReplicaCount:
    config = ctx.config
    return QuasiClosedStuckReplicaCount(
        replicas,
        config.maintenance_replica_minimum,
        config.quasi_closed_stuck_best_origin_copies,
        config.quasi_closed_stuck_other_origin_copies,
        ctx.node_status,
    )
