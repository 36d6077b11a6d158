"""ECUnderReplicationHandler (Ozone's class of that name): rebuild missing EC indexes, copy indexes off
leaving nodes.

Three phases share one list of used and excluded nodes, so no two new copies land on the same node:

1. Missing indexes (no copy anywhere, pending adds counted) are rebuilt by one reconstructECContainers
   command, when at least `data` indexes have a CLOSED source. If the busy nodes RM excludes stand in
   the way of a full set while the loss is not yet critical (fewer missing than parity), wait rather
   than rebuild part of it: a later pass can do it all at once.
2. Indexes whose only copies are on decommissioning nodes are copied, one replicate command each.
   From here on, busy nodes are excluded as targets too.
3. Indexes whose only copies are on maintenance nodes: only as many as keep the remaining maintenance
   redundancy (additional_maintenance_copies_needed) are copied.

With pyozone's ops-per-node rule on (node_ops.py), a reconstruction names exactly `data` sources, none
on a node at its limit for this iteration (another copy of an index, or another index, stands in), and
the coordinator reads just those; too few such sources defer the container.

A phase's shortfall (too few targets, busy sources) is raised once all phases ran, so the container is
requeued. When no node at all can be found, extra copies and then one UNHEALTHY copy are deleted, as
they may occupy the only suitable nodes of a small cluster.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from pyozone.hdds.container import ContainerInfo, ContainerReplica
from pyozone.hdds.exceptions import SCMException
from pyozone.hdds.ids import DatanodeID
from pyozone.hdds.states import ReplicaState
from pyozone.scm.replication.commands import CommandTargetOverloadedError, InsufficientDatanodesError
from pyozone.scm.replication.ec_count import ECContainerReplicaCount
from pyozone.scm.replication.pending_ops import PendingOpType
from pyozone.scm.replication.processing.context import (
    RepairContext,
    choose_targets,
    excluded_and_used,
    pending_targets,
)
from pyozone.scm.replication.processing.ec_over import fix_ec_over_replication
from pyozone.scm.replication.ratis_count import replica_order
from pyozone.scm.replication.replica_match import is_in_service_healthy
from pyozone.scm.replication.results import UnderReplicatedHealthResult
from pyozone.scm.replication.targets import is_no_suitable_node

log = logging.getLogger(__name__)


def handle_ec_under_replicated(result: UnderReplicatedHealthResult, ctx: RepairContext) -> int:
    container = result.container
    replicas = sorted(ctx.replicas(container.container_id), key=replica_order)
    ops = ctx.pending_ops.ops(container.container_id)
    count = ECContainerReplicaCount(
        container, replicas, ops, ctx.config.maintenance_remaining_redundancy, ctx.node_status
    )
    if count.is_sufficiently_replicated(False) or count.is_sufficiently_replicated(True):
        return 0
    deleting = pending_targets(ops, PendingOpType.DELETE)
    repair = _Repair(container, replicas, _source_copies(replicas, deleting, ctx), ctx)
    sent = 0
    try:
        shortfall: Exception | None = None
        for phase in (repair.missing_indexes, repair.decommissioning_indexes, repair.maintenance_indexes):
            try:
                sent += phase()
            except (InsufficientDatanodesError, CommandTargetOverloadedError) as e:
                shortfall = shortfall or e
        if shortfall is not None:
            raise shortfall
    except SCMException as e:
        if is_no_suitable_node(e):
            if count.is_over_replicated(False):
                fix_ec_over_replication(container, ctx)
            _delete_an_unhealthy_replica(count, deleting, ctx)
        raise
    return sent


def _source_copies(
    replicas: Sequence[ContainerReplica], deleting: set[DatanodeID], ctx: RepairContext
) -> dict[int, list[ContainerReplica]]:
    """The CLOSED copies of each index on heartbeating nodes, not being deleted, by index; the first is
    the index's source: in-service copies first (in replica order), then the others (last first).
    Copies on dead maintenance nodes stay in SCM's replica map, hence the check."""
    in_service: dict[int, list[ContainerReplica]] = {}
    leaving: dict[int, list[ContainerReplica]] = {}
    for replica in replicas:
        if replica.state is not ReplicaState.CLOSED or replica.datanode in deleting:
            continue
        status = ctx.node_status(replica.datanode)
        if status is None or not status.is_healthy():
            continue
        group = in_service if status.is_in_service() else leaving
        group.setdefault(replica.replica_index, []).append(replica)
    return {
        index: [*in_service.get(index, ()), *reversed(leaving.get(index, ()))]
        for index in sorted({*in_service, *leaving})
    }


class _Repair:
    """The phases of one container's repair, sharing used and excluded nodes."""

    def __init__(
        self,
        container: ContainerInfo,
        replicas: Sequence[ContainerReplica],
        copies: dict[int, list[ContainerReplica]],
        ctx: RepairContext,
    ) -> None:
        self.container = container
        self.replicas = replicas
        self.copies = copies
        self.sources = {index: c[0] for index, c in copies.items()}
        self.ctx = ctx
        nodes = excluded_and_used(ctx, container, replicas, (), ctx.pending_ops.ops(container.container_id))
        self.used = nodes.used
        self.excluded = nodes.excluded

    def count(self) -> ECContainerReplicaCount:
        """Counted afresh for each phase, with the ADDs the earlier phases scheduled."""
        ops = self.ctx.pending_ops.ops(self.container.container_id)
        redundancy = self.ctx.config.maintenance_remaining_redundancy
        return ECContainerReplicaCount(self.container, self.replicas, ops, redundancy, self.ctx.node_status)

    def missing_indexes(self) -> int:
        count = self.count()
        missing = count.unavailable_indexes(True)
        expected = len(missing)
        if expected == 0:
            return 0
        if len(self.sources) < count.data:
            log.warning(
                "Cannot reconstruct container %s: %d CLOSED sources, %d needed",
                self.container.container_id,
                len(self.sources),
                count.data,
            )
            return 0
        ctx, metrics = self.ctx, self.ctx.metrics
        sources = self._reconstruction_sources(count.data)
        busy = sorted(ctx.sender.excluded_nodes)
        critical = expected == count.parity
        not_busy = list(dict.fromkeys([*self.excluded, *busy]))
        targets = choose_targets(ctx, self.container, expected, self.used, not_busy)
        partial_by_load = busy and len(targets) < expected and not critical
        if partial_by_load and self._full_set_if_busy_allowed(expected):
            metrics.ec_partial_reconstruction_skipped_total += 1
            raise InsufficientDatanodesError(expected, len(targets))
        self.used.extend(targets)
        ctx.sender.send_throttled_reconstruction(self.container, sources, targets, missing[: len(targets)])
        if len(targets) < expected:
            if busy and critical:
                metrics.ec_partial_reconstruction_critical_total += 1
            else:
                metrics.ec_partial_reconstruction_none_overloaded_total += 1
            raise InsufficientDatanodesError(expected, len(targets))
        return 1

    def _reconstruction_sources(self, data: int) -> list[tuple[DatanodeID, int]]:
        """Every index's source, or with the ops-per-node rule on exactly `data` of them on nodes below
        their limit (another copy of an index may stand in); too few defers the container."""
        node_ops = self.ctx.sender.node_ops
        if not node_ops.enabled:
            return [(r.datanode, index) for index, r in self.sources.items()]
        copies = {index: [r.datanode for r in c] for index, c in self.copies.items()}
        chosen = node_ops.choose_sources(copies, data)
        if chosen is None:
            self.ctx.metrics.ec_reconstruction_cmds_deferred_total += 1
            raise CommandTargetOverloadedError(
                f"fewer than {data} sources of container {self.container.container_id} are below "
                f"the ops limit of this iteration"
            )
        return chosen

    def _full_set_if_busy_allowed(self, expected: int) -> bool:
        targets = choose_targets(self.ctx, self.container, expected, self.used, self.excluded)
        return len(targets) == expected

    def decommissioning_indexes(self) -> int:
        self.excluded.extend(dn for dn in sorted(self.ctx.sender.excluded_nodes) if dn not in self.excluded)
        indexes = sorted(self.count().decommissioning_only_indexes(True))
        if not indexes:
            return 0
        targets = choose_targets(self.ctx, self.container, len(indexes), self.used, self.excluded)
        self.used.extend(targets)
        sent = self._copy(indexes, targets, len(indexes))
        if len(targets) < len(indexes):
            self.ctx.metrics.ec_partial_replication_for_out_of_service_replicas_total += 1
            raise InsufficientDatanodesError(len(indexes), len(targets))
        return sent

    def maintenance_indexes(self) -> int:
        count = self.count()
        indexes = sorted(count.maintenance_only_indexes(True))
        needed = count.additional_maintenance_copies_needed(True)
        if not indexes or needed == 0:
            return 0
        targets = choose_targets(self.ctx, self.container, needed, self.used, self.excluded)
        self.used.extend(targets)
        sent = self._copy(indexes, targets, needed)
        if len(targets) < needed:
            self.ctx.metrics.ec_partial_replication_for_out_of_service_replicas_total += 1
            raise InsufficientDatanodesError(needed, len(targets))
        return sent

    def _copy(self, indexes: Sequence[int], targets: Sequence[DatanodeID], wanted: int) -> int:
        """Copy up to `wanted` of `indexes`, each from its source to the next target. A busy source
        uses up its target (the choice stays deterministic); the first refusal is raised at the end."""
        remaining = iter(targets)
        sent = 0
        overloaded: CommandTargetOverloadedError | None = None
        for index in indexes:
            if sent == wanted:
                break
            source = self.sources.get(index)
            if source is None:
                continue
            target = next(remaining, None)
            if target is None:
                break
            try:
                self.ctx.sender.send_throttled_replication(self.container, [source.datanode], target, index)
                sent += 1
            except CommandTargetOverloadedError as e:
                overloaded = overloaded or e
        if overloaded is not None:
            raise overloaded
        return sent


def _delete_an_unhealthy_replica(
    count: ECContainerReplicaCount, deleting: set[DatanodeID], ctx: RepairContext
) -> None:
    """Free a node for the next attempt: one UNHEALTHY copy on an in-service heartbeating node, one
    whose index also has a CLOSED copy if possible. Not while deletes are pending (they free nodes
    anyway) nor when the container cannot be recovered."""
    if deleting or count.is_unrecoverable():
        return
    live = [
        r
        for r in sorted(count.replicas, key=replica_order)
        if is_in_service_healthy(ctx.node_status, r.datanode)
    ]
    closed = {r.replica_index for r in live if r.state is ReplicaState.CLOSED}
    unhealthy = [r for r in live if r.state is ReplicaState.UNHEALTHY]
    preferred = [r for r in unhealthy if r.replica_index in closed]
    for replica in [*preferred, *unhealthy]:
        try:
            ctx.sender.send_delete(count.container, replica.datanode, replica.replica_index, True, True)
            return
        except CommandTargetOverloadedError:
            continue
