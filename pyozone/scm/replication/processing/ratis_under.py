"""RatisUnderReplicationHandler (Ozone's class of that name): copy a Ratis container to new datanodes.

Copies come from the replicas most likely to hold all committed data (the highest BCSID among CLOSED,
else QUASI_CLOSED, else UNHEALTHY ones), pushed by the least-loaded source. A partial repair is sent
and then reported (InsufficientDatanodesError) so the container is requeued for the rest.
"""

from __future__ import annotations

from collections.abc import Sequence

from pyozone.hdds.exceptions import SCMException
from pyozone.hdds.ids import DatanodeID
from pyozone.hdds.states import LifeCycleState, ReplicaState
from pyozone.scm.replication.commands import CommandTargetOverloadedError, InsufficientDatanodesError
from pyozone.scm.replication.pending_ops import PendingOp, PendingOpType
from pyozone.scm.replication.processing.context import (
    RepairContext,
    choose_targets,
    excluded_and_used,
    pending_targets,
)
from pyozone.scm.replication.ratis_count import RatisContainerReplicaCount
from pyozone.scm.replication.results import UnderReplicatedHealthResult
from pyozone.scm.replication.targets import is_no_suitable_node
from pyozone.scm.replication.unhealthy import select_unhealthy_replica_for_delete


def handle_ratis_under_replicated(result: UnderReplicatedHealthResult, ctx: RepairContext) -> int:
    container = result.container
    replicas = ctx.replicas(container.container_id)
    ops = ctx.pending_ops.ops(container.container_id)
    # 1. An empty QUASI_CLOSED container is about to be deleted: copying it is wasted work.
    if container.state is LifeCycleState.QUASI_CLOSED and replicas and all(r.is_empty for r in replicas):
        return 0
    minimum = ctx.config.maintenance_replica_minimum
    with_unhealthy = RatisContainerReplicaCount(container, replicas, ops, minimum, True, ctx.node_status)
    without_unhealthy = RatisContainerReplicaCount(container, replicas, ops, minimum, False, ctx.node_status)
    # 2.
    if result.has_vulnerable_unhealthy:
        return _replicate_vulnerable(with_unhealthy, ops, ctx)
    # 3.
    count = _still_under_replicated(with_unhealthy, without_unhealthy)
    if count is None:
        return 0
    # 4.
    sources = _sources(count, ops, ctx)
    if not sources:
        return 0
    # 5.
    needed = count.additional_replica_needed()
    try:
        nodes = excluded_and_used(ctx, container, count.replicas, (), ops)
        targets = choose_targets(ctx, container, needed, nodes.used, nodes.excluded)
    except SCMException as e:
        if is_no_suitable_node(e):
            _delete_an_unhealthy_replica(count, ops, ctx)
        raise
    # 6.
    for target in targets:
        ctx.sender.send_throttled_replication(container, sources, target, 0)
    if len(targets) < needed:
        ctx.metrics.partial_replication_total += 1
        raise InsufficientDatanodesError(needed, len(targets))
    return len(targets)


def _still_under_replicated(
    with_unhealthy: RatisContainerReplicaCount, without_unhealthy: RatisContainerReplicaCount
) -> RatisContainerReplicaCount | None:
    """The count to repair with, or None when there is nothing to do (any more): replicated enough,
    or will be once pending adds land, or nothing left to copy. Healthy copies are what is counted
    when there are any; with only unhealthy ones, those are counted (and copied)."""
    if without_unhealthy.is_sufficiently_replicated(False) or without_unhealthy.is_sufficiently_replicated(
        True
    ):
        return None
    if not with_unhealthy.replicas:
        return None
    if with_unhealthy.is_sufficiently_replicated(True) and with_unhealthy.healthy_count == 0:
        return None
    return without_unhealthy if without_unhealthy.healthy_count > 0 else with_unhealthy


def _sources(
    count: RatisContainerReplicaCount, ops: Sequence[PendingOp], ctx: RepairContext
) -> list[DatanodeID]:
    """CLOSED replicas; QUASI_CLOSED ones too when there is no CLOSED one or the container is
    QUASI_CLOSED; UNHEALTHY ones too when nothing healthy is left. On heartbeating nodes, not being
    deleted, and only those at the highest BCSID: a lower one may miss committed blocks."""
    allowed = {ReplicaState.CLOSED}
    if count.container.state is LifeCycleState.QUASI_CLOSED or not any(
        r.state is ReplicaState.CLOSED for r in count.replicas
    ):
        allowed.add(ReplicaState.QUASI_CLOSED)
    if count.healthy_count == 0:
        allowed.add(ReplicaState.UNHEALTHY)
    deleting = pending_targets(ops, PendingOpType.DELETE)
    candidates = []
    for replica in count.replicas:
        status = ctx.node_status(replica.datanode)
        live = status is not None and status.is_healthy()
        if replica.state in allowed and live and replica.datanode not in deleting:
            candidates.append(replica)
    best = max((r.sequence_id for r in candidates), default=None)
    return [r.datanode for r in candidates if r.sequence_id == best]


def _replicate_vulnerable(
    count: RatisContainerReplicaCount, ops: Sequence[PendingOp], ctx: RepairContext
) -> int:
    """Copy every vulnerable UNHEALTHY replica (possibly the last of its origin's data) to one new node
    each, in random order so one that keeps failing does not starve the others. An overloaded source
    is skipped; the first overload is raised once all were tried."""
    container = count.container
    vulnerable = count.vulnerable_unhealthy_replicas(ctx.node_status)
    if sum(op.type is PendingOpType.ADD for op in ops) >= len(vulnerable):
        return 0
    ctx.rng.shuffle(vulnerable)
    nodes = excluded_and_used(ctx, container, count.replicas, (), ops)
    overloaded: CommandTargetOverloadedError | None = None
    sent = 0
    for replica in vulnerable:
        target = choose_targets(ctx, container, 1, nodes.used, nodes.excluded)[0]
        try:
            ctx.sender.send_throttled_replication(container, [replica.datanode], target, 0)
        except CommandTargetOverloadedError as e:
            overloaded = overloaded or e
            continue
        nodes.used.append(target)
        sent += 1
    if overloaded is not None:
        raise overloaded
    return sent


def _delete_an_unhealthy_replica(
    count: RatisContainerReplicaCount, ops: Sequence[PendingOp], ctx: RepairContext
) -> None:
    """No target left: on a small cluster an unhealthy copy may be what blocks the only suitable node,
    so delete one (unthrottled, force) before the container is requeued."""
    deletes = sum(op.type is PendingOpType.DELETE for op in ops)
    victim = select_unhealthy_replica_for_delete(count.container, count.replicas, deletes, ctx.node_status)
    if victim is not None:
        ctx.sender.send_delete(count.container, victim.datanode, victim.replica_index, True, False)
