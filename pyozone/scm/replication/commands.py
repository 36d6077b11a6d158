"""ReplicationCommandSender: how the Replication Manager's repairs reach datanodes (ReplicationManager;
Ozone's "Replication Manager" doc).

Every command gets the leader's term and two deadlines: SCM forgets the pending op at now + event
timeout, the datanode drops the command `offset` earlier, so a late copy can never run after SCM has
scheduled its replacement. Each command updates the pending-op table the moment it is queued
(ContainerReplicaPendingOps): that is what keeps the next check from asking twice, and what the cluster-wide
in-flight limit counts.

Throttling is per datanode and uses the command counts the node manager keeps (SCM-queued + last
reported, DatanodeInfo.setCommandCounts): replicate and reconstruct commands share the datanode's replication
pool, a reconstruction weighing `reconstruction.weight`, against `replication.limit` (scaled by the
out-of-service factor on a node leaving service, which replicates with a larger pool); deletes have
their own limit. A node found at its limit joins `excluded_nodes`, which EC reconstruction uses to
avoid choosing busy coordinators, until its next command-count update shows room again.

With pyozone's ops-per-node rule on (node_ops.py), every replicate and reconstruct command sent here is
also charged against each node it makes work for, for the current under-replication iteration.

Low-priority (balancer) replications do not count (Ozone's "Replication Manager" doc: the datanode leaves them
out of the queue size it reports and runs them only when no normal work is queued). The reported counts
already exclude them; this sender also leaves out the low-priority commands still queued at SCM, so balancer
work never blocks repairs. (The node manager adds every command it has just drained to the stored
counts until the next report replaces them; that brief over-count is the node manager's.)
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Protocol

from pyozone.hdds.clock import Clock
from pyozone.hdds.commands import (
    CloseContainerCommand,
    DeleteContainerCommand,
    ReconstructECContainersCommand,
    ReconstructionSource,
    ReplicateContainerCommand,
    ReplicationCommandPriority,
    SCMCommand,
    is_low_priority_replication,
)
from pyozone.hdds.container import ContainerInfo, ContainerReplica
from pyozone.hdds.datanode import DatanodeDetails, DatanodeInfo, required_replication_space
from pyozone.hdds.exceptions import ResultCode, SCMException
from pyozone.hdds.ids import ContainerID, DatanodeID
from pyozone.hdds.states import NodeOperationalState, SCMCommandType
from pyozone.scm.ha.context import ScmContext
from pyozone.scm.node.commands import CommandQueue
from pyozone.scm.replication import throttle
from pyozone.scm.replication.config import ReplicationManagerConfig
from pyozone.scm.replication.metrics import ReplicationManagerMetrics
from pyozone.scm.replication.node_ops import NodeOpsCounter
from pyozone.scm.replication.pending_ops import ContainerReplicaPendingOps, PendingOp, PendingOpType

log = logging.getLogger(__name__)

_REPLICATE = SCMCommandType.replicateContainerCommand
_RECONSTRUCT = SCMCommandType.reconstructECContainersCommand
_DELETE = SCMCommandType.deleteContainerCommand
NORMAL, LOW = ReplicationCommandPriority.NORMAL, ReplicationCommandPriority.LOW


class CommandTargetOverloadedError(Exception):
    """Every datanode that could run the command is at its limit: requeue the container."""


class InsufficientDatanodesError(Exception):
    """Placement found fewer targets than the repair needs; what it could do was sent. Requeue."""

    def __init__(self, required: int, available: int) -> None:
        super().__init__(f"{required} target datanodes required, {available} found")
        self.required = required
        self.available = available


class NodeManagerView(Protocol):
    """The node manager as the sender sees it (pyozone.scm.node.node_manager.NodeManager)."""

    context: ScmContext  # the leader's term, stamped on every command
    commands: CommandQueue

    def get(self, dn: DatanodeID) -> DatanodeInfo | None: ...

    def add_datanode_command(self, dn: DatanodeID, command: SCMCommand) -> None: ...

    def total_datanode_command_count(self, dn: DatanodeID, command_type: SCMCommandType) -> int: ...


class ReplicationCommandSender:
    def __init__(
        self,
        node_manager: NodeManagerView,
        pending_ops: ContainerReplicaPendingOps,
        config: ReplicationManagerConfig,
        clock: Clock,
        metrics: ReplicationManagerMetrics,
        inflight_limit: Callable[[], int] | None = None,
    ) -> None:
        self._nodes = node_manager
        self._pending = pending_ops
        self._config = config
        self._clock = clock
        self._metrics = metrics
        self._inflight_limit = inflight_limit
        self.excluded_nodes: set[DatanodeID] = set()
        self.node_ops = NodeOpsCounter(config.node_ops_limit)
        """Units of work per node in this under-replication iteration (node_ops.py; off by default)."""

    # ------------------------------------------------------------------ load and limits
    def replication_load(self, dn: DatanodeID) -> int:
        """Queued replications + weight x queued reconstructions, low-priority replications left out."""
        replicate = self._nodes.total_datanode_command_count(dn, _REPLICATE) - self._queued_low_priority(dn)
        reconstruct = self._nodes.total_datanode_command_count(dn, _RECONSTRUCT)
        return throttle.replication_load(replicate, reconstruct, self._config.datanode_reconstruction_weight)

    def replication_limit(self, dn: DatanodeID) -> int:
        """By the op state the datanode has persisted: that is when it grows its replication pool."""
        info = self._nodes.get(dn)
        state = NodeOperationalState.IN_SERVICE if info is None else info.details.persisted_op_state
        return throttle.replication_limit(
            self._config.datanode_replication_limit, state, self._config.out_of_service_factor
        )

    def on_command_counts_updated(self, dn: DatanodeID) -> None:
        """DATANODE_COMMAND_COUNT_UPDATED: an excluded node with room again may be chosen again."""
        if dn not in self.excluded_nodes:
            return
        if self._nodes.get(dn) is None or not throttle.is_overloaded(
            self.replication_load(dn), self.replication_limit(dn)
        ):
            self.excluded_nodes.discard(dn)

    # ------------------------------------------------------------------ commands
    def send_close(self, container: ContainerInfo, replica: ContainerReplica, force: bool) -> None:
        """Unthrottled: closing is cheap and unblocks everything else."""
        command = CloseContainerCommand(
            container_id=container.container_id, pipeline_id=container.pipeline_id, force=force
        )
        self._queue(replica.datanode, command, self._scm_deadline())

    def send_delete(
        self,
        container: ContainerInfo,
        dn: DatanodeID,
        replica_index: int,
        force: bool,
        throttled: bool,
        deadline_epoch_ms: int | None = None,
    ) -> None:
        """Delete the replica on `dn` and record the pending DELETE. Throttled deletes are refused
        (CommandTargetOverloadedError) when the datanode already has delete.container.limit queued. The
        SCM deadline is now + event timeout unless the caller gives one (the balancer's move.timeout)."""
        if throttled:
            queued = self._nodes.total_datanode_command_count(dn, _DELETE)
            if throttle.is_overloaded(queued, self._config.datanode_delete_container_limit):
                self._metrics.delete_container_cmds_deferred_total += 1
                raise CommandTargetOverloadedError(
                    f"cannot delete container {container.container_id} on {dn}: {queued} delete commands "
                    f"queued, limit {self._config.datanode_delete_container_limit}"
                )
        delete = DeleteContainerCommand(
            container_id=container.container_id, force=force, replica_index=replica_index
        )
        deadline = self._scm_deadline() if deadline_epoch_ms is None else deadline_epoch_ms
        command = self._queue(dn, delete, deadline)
        self._pending.schedule_delete(container.container_id, dn, replica_index, command, deadline)
        self._count_delete(replica_index)
        if replica_index == 0:
            self._metrics.deletion_bytes_total += container.used_bytes

    def _check_inflight(self, container: ContainerInfo, adds: int) -> None:
        """A hard cluster cap: Ozone checks the in-flight limit only before each container, so a container
        needing several copies can overshoot it; here no command takes pending ADDs past the limit (the
        rest of the repair is requeued like any overloaded target)."""
        if self._inflight_limit is None:
            return
        limit = self._inflight_limit()
        if limit > 0 and self._pending.inflight_add_count() + adds > limit:
            self._metrics.pending_replication_limit_reached_total += 1
            raise CommandTargetOverloadedError(
                f"cluster in-flight replication limit {limit} reached; "
                f"container {container.container_id} waits"
            )

    def send_throttled_replication(
        self, container: ContainerInfo, sources: Sequence[DatanodeID], target: DatanodeID, replica_index: int
    ) -> None:
        """Push model: the command goes to the least-loaded source below its limit, naming the target."""
        self._check_inflight(container, 1)
        source = self._least_loaded(sources, 1)
        if source is None:
            self._metrics.replicate_container_cmds_deferred_total += 1
            raise CommandTargetOverloadedError(
                f"no source of container {container.container_id} has room to replicate to {target}: "
                f"{list(sources)}"
            )
        self._send_replicate(container, source, target, replica_index, NORMAL, self._scm_deadline())
        self.node_ops.charge((source, target))

    def send_throttled_reconstruction(
        self,
        container: ContainerInfo,
        sources: Sequence[tuple[DatanodeID, int]],
        targets: Sequence[DatanodeID],
        missing_indexes: Sequence[int],
    ) -> None:
        """One reconstructECContainers command, to the least-loaded target (it coordinates); targets[i]
        receives missing_indexes[i], each an ADD op. With the ops-per-node rule on, `sources` are the ones
        the coordinator is to read, and each source and target is charged a unit."""
        if len(targets) != len(missing_indexes):
            raise ValueError(f"{len(targets)} targets for {len(missing_indexes)} missing indexes")
        self._check_inflight(container, len(targets))
        coordinator = self._least_loaded(targets, self._config.datanode_reconstruction_weight)
        if coordinator is None:
            self._metrics.ec_reconstruction_cmds_deferred_total += 1
            raise CommandTargetOverloadedError(
                f"no target has room to reconstruct container {container.container_id}: {list(targets)}"
            )
        reconstruct = ReconstructECContainersCommand(
            container_id=container.container_id,
            sources=tuple(ReconstructionSource(self._details(dn), index) for dn, index in sources),
            targets=tuple(self._details(dn) for dn in targets),
            missing_indexes=bytes(missing_indexes),
            replication_config=container.replication_config,
        )
        deadline = self._scm_deadline()
        command = self._queue(coordinator, reconstruct, deadline)
        size = required_replication_space(container.used_bytes)
        for target, index in zip(targets, missing_indexes, strict=True):
            self._pending.schedule_add(container.container_id, target, index, command, deadline, size)
        self._metrics.ec_reconstruction_cmds_sent_total += 1
        self.node_ops.charge([*(dn for dn, _ in sources), *targets])

    def send_low_priority_replication(
        self,
        container: ContainerInfo,
        source: DatanodeID,
        target: DatanodeID,
        replica_index: int,
        deadline_epoch_ms: int,
    ) -> None:
        """For the balancer: unthrottled, LOW priority, with the caller's (longer) SCM deadline."""
        self._send_replicate(container, source, target, replica_index, LOW, deadline_epoch_ms)

    def resend_delete(self, container_id: ContainerID, op: PendingOp) -> None:
        """A DELETE that timed out stays pending (ContainerReplicaPendingOps): send its command again,
        unthrottled, with a fresh term and deadlines; the new op replaces the old. Deletion bytes were counted
        when the delete was first sent and are not counted again."""
        if op.type is not PendingOpType.DELETE:
            raise ValueError(f"only DELETE ops are resent, not {op.type.name}")
        deadline = self._scm_deadline()
        term = self._nodes.context.term_of_leader()
        command = replace(op.command, term=term, deadline_epoch_ms=self._dn_deadline(deadline))
        self._nodes.add_datanode_command(op.target_dn, command)
        self._pending.schedule_delete(container_id, op.target_dn, op.replica_index, command, deadline)
        self._count_delete(op.replica_index)

    # ------------------------------------------------------------------ internals
    def _least_loaded(self, candidates: Sequence[DatanodeID], weight: int) -> DatanodeID | None:
        """The candidate with the smallest load below its limit (first in order on ties). Candidates at
        their limit, and the chosen one if this command fills it, join the excluded nodes."""
        best: tuple[int, DatanodeID, int] | None = None
        for dn in candidates:
            if self._nodes.get(dn) is None:
                log.warning("Datanode %s is not registered; it cannot run replication commands", dn)
                continue
            load, limit = self.replication_load(dn), self.replication_limit(dn)
            if throttle.is_overloaded(load, limit):
                self.excluded_nodes.add(dn)
            elif best is None or load < best[0]:
                best = (load, dn, limit)
        if best is None:
            return None
        load, dn, limit = best
        if throttle.fills_up(load, weight, limit):
            self.excluded_nodes.add(dn)
        return dn

    def _send_replicate(
        self,
        container: ContainerInfo,
        source: DatanodeID,
        target: DatanodeID,
        replica_index: int,
        priority: ReplicationCommandPriority,
        deadline: int,
    ) -> None:
        replicate = ReplicateContainerCommand(
            container_id=container.container_id,
            target=self._details(target),
            replica_index=replica_index,
            priority=priority,
        )
        command = self._queue(source, replicate, deadline)
        self._pending.schedule_add(
            container.container_id,
            target,
            replica_index,
            command,
            deadline,
            required_replication_space(container.used_bytes),
            low_priority=priority is LOW,
        )
        if replica_index > 0:
            self._metrics.ec_replication_cmds_sent_total += 1
        else:
            self._metrics.replication_cmds_sent_total += 1

    def _count_delete(self, replica_index: int) -> None:
        if replica_index > 0:
            self._metrics.ec_deletion_cmds_sent_total += 1
        else:
            self._metrics.deletion_cmds_sent_total += 1

    def _queue(self, dn: DatanodeID, command: SCMCommand, scm_deadline: int) -> SCMCommand:
        """Queues a copy of `command` with the leader's term and the datanode deadline; returns it."""
        term = self._nodes.context.term_of_leader()
        command = replace(command, term=term, deadline_epoch_ms=self._dn_deadline(scm_deadline))
        log.debug("Queueing %s for %s (SCM deadline %d)", command, dn, scm_deadline)
        self._nodes.add_datanode_command(dn, command)
        return command

    def _scm_deadline(self) -> int:
        return throttle.scm_deadline(self._clock.wall_ms(), self._config.event_timeout_ms)

    def _dn_deadline(self, scm_deadline: int) -> int:
        return throttle.datanode_deadline(scm_deadline, self._config.event_timeout_datanode_offset_ms)

    def _details(self, dn: DatanodeID) -> DatanodeDetails:
        """Commands name datanodes in full: the receiver must be able to connect to them."""
        info = self._nodes.get(dn)
        if info is None:
            raise SCMException(f"datanode {dn} is not registered", ResultCode.NO_SUCH_DATANODE)
        return info.details

    def _queued_low_priority(self, dn: DatanodeID) -> int:
        return sum(1 for c in self._nodes.commands.peek(dn) if is_low_priority_replication(c))
