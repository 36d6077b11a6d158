"""ECOverReplicationHandler (Ozone's class of that name): delete extra copies of EC replica indexes.

Only CLOSED copies on in-service heartbeating nodes are candidates (a copy on a STALE or leaving node
may vanish by itself). The placement helper picks which copies go, from the most crowded racks first
(replicasToRemoveToFixOverreplication); an index is never taken to zero. Deletes are throttled; the first
refusal is raised after the rest were tried, so the container is requeued.
"""

from __future__ import annotations

from collections import Counter

from pyozone.hdds.container import ContainerInfo
from pyozone.hdds.states import ReplicaState
from pyozone.scm.replication.commands import CommandTargetOverloadedError
from pyozone.scm.replication.ec_count import ECContainerReplicaCount
from pyozone.scm.replication.pending_ops import PendingOpType
from pyozone.scm.replication.placement import replicas_to_remove_to_fix_overreplication
from pyozone.scm.replication.processing.context import RepairContext, pending_targets
from pyozone.scm.replication.ratis_count import replica_order
from pyozone.scm.replication.replica_match import copies_a_delete_may_rely_on
from pyozone.scm.replication.results import OverReplicatedHealthResult


def handle_ec_over_replicated(result: OverReplicatedHealthResult, ctx: RepairContext) -> int:
    return fix_ec_over_replication(result.container, ctx)


def fix_ec_over_replication(container: ContainerInfo, ctx: RepairContext) -> int:
    """Also run by the EC under-replication handler when no target is left: the extra copies may be
    what blocks the nodes it needs."""
    ops = ctx.pending_ops.ops(container.container_id)
    replicas = sorted(
        copies_a_delete_may_rely_on(container, ctx.replicas(container.container_id), ctx.node_status),
        key=replica_order,
    )
    count = ECContainerReplicaCount(
        container, replicas, ops, ctx.config.maintenance_remaining_redundancy, ctx.node_status
    )
    if not count.is_over_replicated(False) or not count.is_over_replicated(True):
        return 0
    deleting = pending_targets(ops, PendingOpType.DELETE)
    candidates = [r for r in replicas if r.datanode not in deleting and r.state is ReplicaState.CLOSED]
    copies = Counter(r.replica_index for r in candidates)
    sent = 0
    overloaded: CommandTargetOverloadedError | None = None
    for replica in replicas_to_remove_to_fix_overreplication(candidates, 1, ctx.rack_of):
        if copies[replica.replica_index] < 2:
            continue
        try:
            ctx.sender.send_delete(container, replica.datanode, replica.replica_index, True, True)
        except CommandTargetOverloadedError as e:
            overloaded = overloaded or e
            continue
        copies[replica.replica_index] -= 1
        sent += 1
    if overloaded is not None:
        raise overloaded
    return sent
