"""RatisOverReplicationHandler (Ozone's class of that name): delete excess replicas of a Ratis container.

Only replicas on heartbeating nodes count: deleting a good copy because a STALE one looks like a spare
could lose both when the stale node dies. Mismatched and unhealthy copies go first; good copies only
while the placement does not get worse. Deletes are throttled; a refused one still uses up its share
of the excess, so the choice stays deterministic, and the container is requeued if anything was left.

"Does the placement get worse" is judged on every copy that stays (live, not being deleted). Ozone
judges it on the deletion candidates alone, which for a QUASI_CLOSED container are only the spare
copies of each origin, so it could never delete the last spare of an unsatisfied placement.
"""

from __future__ import annotations

from pyozone.hdds.container import ContainerInfo, ContainerReplica
from pyozone.hdds.ids import DatanodeID
from pyozone.hdds.states import LifeCycleState, NodeOperationalState
from pyozone.scm.replication.commands import CommandTargetOverloadedError
from pyozone.scm.replication.pending_ops import PendingOpType
from pyozone.scm.replication.placement import ContainerPlacementStatus
from pyozone.scm.replication.processing.context import RepairContext, pending_targets
from pyozone.scm.replication.ratis_count import RatisContainerReplicaCount, replica_order
from pyozone.scm.replication.replica_match import (
    compare_state,
    copies_a_delete_may_rely_on,
    persisted_op_state,
)
from pyozone.scm.replication.results import OverReplicatedHealthResult
from pyozone.scm.replication.unhealthy import find_non_unique_delete_candidates


def handle_ratis_over_replicated(result: OverReplicatedHealthResult, ctx: RepairContext) -> int:
    container = result.container
    ops = ctx.pending_ops.ops(container.container_id)
    on_live_nodes = copies_a_delete_may_rely_on(
        container, ctx.replicas(container.container_id), ctx.node_status
    )
    count = RatisContainerReplicaCount(
        container, on_live_nodes, ops, ctx.config.maintenance_replica_minimum, True, ctx.node_status
    )
    if not count.is_over_replicated(True):
        return 0
    deleting = pending_targets(ops, PendingOpType.DELETE)
    eligible = _eligible(count, deleting, ctx)
    if not eligible:
        return 0
    staying = [r for r in count.replicas if r.datanode not in deleting]
    return _delete_excess(container, staying, eligible, count.excess_redundancy(True), ctx)


def _eligible(
    count: RatisContainerReplicaCount, deleting: set[DatanodeID], ctx: RepairContext
) -> list[ContainerReplica]:
    """Deletion candidates in deterministic order (lowest BCSID first when all are unhealthy): on
    IN_SERVICE nodes, not already being deleted; unless the container is CLOSED, one copy of every
    origin is spared (a QUASI_CLOSED origin may hold data no other has), a healthy one if possible."""
    if count.healthy_count == 0:
        ordered = sorted(count.replicas, key=lambda r: (r.sequence_id, replica_order(r)))
    else:
        ordered = list(count.replicas)
    eligible = [
        r
        for r in ordered
        if persisted_op_state(ctx.node_status, r.datanode) is NodeOperationalState.IN_SERVICE
        and r.datanode not in deleting
    ]
    if count.container.state is not LifeCycleState.CLOSED:
        deletable = set(find_non_unique_delete_candidates(eligible, eligible, ctx.node_status))
        eligible = [r for r in eligible if r in deletable]
    return eligible


def _delete_excess(
    container: ContainerInfo,
    staying: list[ContainerReplica],
    eligible: list[ContainerReplica],
    excess: int,
    ctx: RepairContext,
) -> int:
    """Delete up to `excess` of `eligible`: first every copy that does not match the container, then
    copies whose removal leaves the placement of the copies staying (`staying`: on live nodes, not
    being deleted) as good as it was."""
    initial_excess = excess
    sent = 0
    overloaded: CommandTargetOverloadedError | None = None
    matching = []
    for replica in eligible:
        if excess == 0 or compare_state(container.state, replica.state):
            matching.append(replica)
            continue
        try:
            ctx.sender.send_delete(container, replica.datanode, replica.replica_index, True, True)
            sent += 1
        except CommandTargetOverloadedError as e:
            overloaded = overloaded or e
        excess -= 1
        staying = [r for r in staying if r is not replica]

    original = ctx.placement_status(container, [r.datanode for r in staying])
    for replica in matching:
        if excess == 0:
            break
        after = ctx.placement_status(container, [r.datanode for r in staying if r is not replica])
        if not _actually_equal(original, after):
            continue
        try:
            ctx.sender.send_delete(container, replica.datanode, replica.replica_index, True, True)
            sent += 1
        except CommandTargetOverloadedError as e:
            overloaded = overloaded or e
        excess -= 1
        staying = [r for r in staying if r is not replica]
    if overloaded is not None and sent != initial_excess:
        raise overloaded
    return sent


def _actually_equal(before: ContainerPlacementStatus, after: ContainerPlacementStatus) -> bool:
    """Removing a copy may keep a satisfied placement satisfied, or an unsatisfied one on as many racks."""
    if before.satisfied:
        return after.satisfied
    return before.current_racks == after.current_racks
