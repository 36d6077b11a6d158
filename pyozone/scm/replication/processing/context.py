"""RepairContext: what a repair handler may see and use (implemented by the Replication Manager), and the
helpers every handler shares to read it.

Handlers re-read replicas and pending ops when they run (as Ozone's): a result may have waited in the
queue for a while, and repairing from stale facts would duplicate or undo work.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Iterable, Sequence
from typing import Protocol

from pyozone.hdds.clock import Clock
from pyozone.hdds.container import ContainerInfo, ContainerReplica
from pyozone.hdds.datanode import DatanodeInfo
from pyozone.hdds.exceptions import SCMException
from pyozone.hdds.ids import ContainerID, DatanodeID
from pyozone.hdds.node_status import NodeStatus
from pyozone.scm.replication.commands import CommandTargetOverloadedError, ReplicationCommandSender
from pyozone.scm.replication.config import ReplicationManagerConfig
from pyozone.scm.replication.metrics import ReplicationManagerMetrics
from pyozone.scm.replication.pending_ops import ContainerReplicaPendingOps, PendingOp, PendingOpType
from pyozone.scm.replication.placement import ContainerPlacementStatus
from pyozone.scm.replication.targets import (
    ExcludedAndUsed,
    get_excluded_and_used_nodes,
    get_target_datanodes,
    is_no_suitable_node,
    placement_policy_for,
)


class RepairContext(Protocol):
    config: ReplicationManagerConfig
    clock: Clock
    sender: ReplicationCommandSender
    pending_ops: ContainerReplicaPendingOps
    rng: random.Random
    metrics: ReplicationManagerMetrics
    container_size: int
    """ozone.scm.container.size: a target must fit a container that may still grow to it."""

    def node_status(self, dn: DatanodeID) -> NodeStatus | None: ...

    def replicas(self, container_id: ContainerID) -> tuple[ContainerReplica, ...]: ...

    def placement_status(
        self, container: ContainerInfo, dns: Sequence[DatanodeID]
    ) -> ContainerPlacementStatus:
        """The container's placement policy validating `dns` for its required replica count."""
        ...

    def candidate_nodes(self) -> list[DatanodeInfo]:
        """Every registered datanode (node_manager.nodes()); placement filters them."""
        ...

    def rack_of(self, dn: DatanodeID) -> str | None:
        """None when the node is not in the network topology (e.g. dead)."""
        ...

    def rack_count(self) -> int: ...


def pending_targets(ops: Iterable[PendingOp], op_type: PendingOpType) -> set[DatanodeID]:
    return {op.target_dn for op in ops if op.type is op_type}


def excluded_and_used(
    ctx: RepairContext,
    container: ContainerInfo,
    replicas: Sequence[ContainerReplica],
    to_be_removed: Collection[ContainerReplica],
    ops: Iterable[PendingOp],
) -> ExcludedAndUsed:
    return get_excluded_and_used_nodes(
        container,
        replicas,
        to_be_removed,
        ops,
        ctx.node_status,
        ctx.candidate_nodes(),
        ctx.pending_ops.scheduled_size,
    )


def choose_targets(
    ctx: RepairContext,
    container: ContainerInfo,
    required: int,
    used: Sequence[DatanodeID],
    excluded: Sequence[DatanodeID],
) -> list[DatanodeID]:
    """Up to `required` targets (maybe fewer); SCMException FAILED_TO_FIND_SUITABLE_NODE if none.

    Nodes at their ops limit for this iteration (node_ops.py, when on) are excluded too. When that alone
    leaves no node, or only nodes that would spread the container over fewer racks than the busy ones
    would, the container waits for the next iteration (CommandTargetOverloadedError) rather than be
    placed worse: a later iteration can place it well."""
    taken = set(used)  # never chosen anyway; excluding them too would count them twice in placement
    saturated = [dn for dn in ctx.sender.node_ops.saturated() if dn not in taken]
    if not saturated:
        return _targets(ctx, container, required, used, excluded, ctx.rng)
    busy = CommandTargetOverloadedError(
        f"the datanodes that could take container {container.container_id} well are at their ops "
        "limit for this iteration"
    )
    try:
        targets = _targets(ctx, container, required, used, [*excluded, *saturated], ctx.rng)
    except SCMException as e:
        if not is_no_suitable_node(e):
            raise
        _targets(ctx, container, required, used, excluded, _scratch(ctx.rng))  # none at all: raises
        raise busy from e
    worse = _mis_replication(ctx, container, used, targets)
    if worse > 0:
        try:
            unlimited = _targets(ctx, container, required, used, excluded, _scratch(ctx.rng))
        except SCMException:
            return targets
        if _mis_replication(ctx, container, used, unlimited) < worse:
            raise busy
    return targets


def _scratch(rng: random.Random) -> random.Random:
    """A copy of the seeded random for a trial choice, so trials leave the real sequence as it was."""
    copy = random.Random()
    copy.setstate(rng.getstate())
    return copy


def _mis_replication(
    ctx: RepairContext, container: ContainerInfo, used: Sequence[DatanodeID], targets: Sequence[DatanodeID]
) -> int:
    return ctx.placement_status(container, [*used, *targets]).mis_replication_count


def _targets(
    ctx: RepairContext,
    container: ContainerInfo,
    required: int,
    used: Sequence[DatanodeID],
    excluded: Sequence[DatanodeID],
    rng: random.Random,
) -> list[DatanodeID]:
    return get_target_datanodes(
        placement_policy_for(container),
        ctx.candidate_nodes(),
        ctx.rack_of,
        required,
        used,
        list(dict.fromkeys(excluded)),
        container,
        ctx.container_size,
        rng,
    )
