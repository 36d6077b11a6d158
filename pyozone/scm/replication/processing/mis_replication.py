"""MisReplicationHandler (Ozone's class of that name): copy replicas off over-full racks, Ratis and EC alike.

Only a container with exactly the right number of replicas and nothing pending is touched: fixing
under- or over-replication first often fixes the racks too, and the copies made here leave the
container over-replicated, which the over-replication handler then resolves rack by rack. The
placement helper picks the copies to move (replicasToCopyToFixMisreplication); their nodes are excluded as
targets.
"""

from __future__ import annotations

from pyozone.hdds.container import ContainerInfo, ContainerReplica
from pyozone.hdds.ids import DatanodeID
from pyozone.hdds.states import ReplicaState, ReplicationType
from pyozone.scm.replication.commands import CommandTargetOverloadedError, InsufficientDatanodesError
from pyozone.scm.replication.ec_count import ECContainerReplicaCount
from pyozone.scm.replication.placement import replicas_to_copy_to_fix_misreplication
from pyozone.scm.replication.processing.context import RepairContext, choose_targets, excluded_and_used
from pyozone.scm.replication.ratis_count import RatisContainerReplicaCount, replica_order
from pyozone.scm.replication.replica_match import is_in_service_healthy
from pyozone.scm.replication.results import UnderReplicatedHealthResult
from pyozone.scm.replication.targets import placement_policy_for

_COPYABLE = (ReplicaState.CLOSED, ReplicaState.QUASI_CLOSED)


def handle_mis_replicated(result: UnderReplicatedHealthResult, ctx: RepairContext) -> int:
    container = result.container
    if ctx.pending_ops.ops(container.container_id):
        return 0
    replicas = sorted(ctx.replicas(container.container_id), key=replica_order)
    is_ec = container.replication_config.type is ReplicationType.EC
    if not _exactly_replicated(container, replicas, is_ec, ctx):
        return 0
    if ctx.placement_status(container, [r.datanode for r in replicas]).satisfied:
        return 0

    sources = [
        r for r in replicas if r.state in _COPYABLE and is_in_service_healthy(ctx.node_status, r.datanode)
    ]
    to_copy = replicas_to_copy_to_fix_misreplication(
        {r: r in sources for r in replicas},
        lambda r: ctx.rack_of(r.datanode),
        placement_policy_for(container),
        ctx.rack_count(),
    )
    nodes = excluded_and_used(ctx, container, replicas, set(to_copy), ())
    targets = choose_targets(ctx, container, len(to_copy), nodes.used, nodes.excluded)
    if is_ec:
        sent = _copy_each(container, to_copy, targets, ctx)
    else:
        for target in targets:
            ctx.sender.send_throttled_replication(container, [r.datanode for r in sources], target, 0)
        sent = len(targets)
    if len(targets) < len(to_copy):
        if is_ec:
            ctx.metrics.ec_partial_replication_for_mis_replication_total += 1
        else:
            ctx.metrics.partial_replication_for_mis_replication_total += 1
        raise InsufficientDatanodesError(len(to_copy), len(targets))
    return sent


def _exactly_replicated(
    container: ContainerInfo, replicas: list[ContainerReplica], is_ec: bool, ctx: RepairContext
) -> bool:
    if is_ec:
        redundancy = ctx.config.maintenance_remaining_redundancy
        ec = ECContainerReplicaCount(container, replicas, (), redundancy, ctx.node_status)
        return ec.is_sufficiently_replicated(False) and not ec.is_over_replicated(False)
    minimum = ctx.config.maintenance_replica_minimum
    ratis = RatisContainerReplicaCount(container, replicas, (), minimum, True, ctx.node_status)
    return ratis.is_sufficiently_replicated(False) and not ratis.is_over_replicated(True)


def _copy_each(
    container: ContainerInfo, to_copy: list[ContainerReplica], targets: list[DatanodeID], ctx: RepairContext
) -> int:
    """EC: each chosen copy goes from its own node (the only holder of its index) to one target."""
    sent = 0
    overloaded: CommandTargetOverloadedError | None = None
    for replica, target in zip(to_copy, targets, strict=False):
        try:
            ctx.sender.send_throttled_replication(
                container, [replica.datanode], target, replica.replica_index
            )
            sent += 1
        except CommandTargetOverloadedError as e:
            overloaded = e
    if overloaded is not None:
        raise overloaded
    return sent
