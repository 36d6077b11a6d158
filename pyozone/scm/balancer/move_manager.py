"""MoveManager: schedules, tracks and completes the balancer's container moves (Ozone's MoveManager).

A move is two commands. The replicate goes to the source with LOW priority and the SCM deadline
now + move.replication.timeout (the datanode runs it only when no NORMAL work waits, Ozone's "Replication
Manager" doc); when the new replica is reported (the pending ADD completes) the source's replica is deleted,
unthrottled and forced, with the deadline start + move.timeout, but only if the container, without it, is
HEALTHY by the Replication Manager's own check chain, pending ops included
(`ReplicationManager.replication_health`, Ozone's getContainerReplicationHealth), counting only the copies its
over-replication handlers let a delete rely on (`copies_a_delete_may_rely_on`: none on a STALE node; Ozone
counts those too): placement and replica counting have one definition each, and a move never leaves a
container under-replicated or mis-replicated. Otherwise the move ends
DELETE_FAIL_POLICY and the extra copy is the Replication Manager's ordinary over-replication.

Every move ends in one MoveResult, told to the listener. Beyond Ozone, which learns of trouble only
when an op completes or expires, `check()` (each SCM tick) ends a replicating move at once when it can no
longer complete: its target is no longer healthy or in service, its container no longer CLOSED, or a
copy it started from is gone or on a node no longer HEALTHY (the source above all, which runs the push
replicate). Ozone keeps a move's pending ADD until it completes or expires (move.replication.timeout,
50 min), and its Replication Manager counts a pending ADD toward sufficiency, so a container whose source
died mid-move gets no repair for that long. Here a replicating move that ends any other way than by its
ADD (check, `cancel`, `clear`: a failure, the iteration's end, `stop`, a step-down) withdraws its ADD
from the pending ops without a completion notice, and the containers `check` ended are re-checked by the
Replication Manager at once (`check_containers`): a container short of copies is repaired with NORMAL
priority as fast as with the balancer off. A replicate still queued may yet run: its copy is then the
Replication Manager's ordinary over-replication.

Moves live in the leader's memory only, as in Ozone since the legacy move table went: a new leader
starts with none (its pending replica ops start empty too), and a replica the old leader's move made is
over-replication for the Replication Manager.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, replace
from enum import Enum
from typing import TYPE_CHECKING

from pyozone.hdds.clock import Clock
from pyozone.hdds.container import ContainerReplica
from pyozone.hdds.container_health import ContainerHealthState
from pyozone.hdds.ids import ContainerID, DatanodeID
from pyozone.hdds.states import LifeCycleState, NodeState, ReplicaState
from pyozone.scm.replication.pending_ops import PendingOp, PendingOpType

if TYPE_CHECKING:
    from pyozone.scm.container.manager import ContainerManager
    from pyozone.scm.node.node_manager import NodeManager
    from pyozone.scm.replication.manager import ReplicationManager

log = logging.getLogger(__name__)


class MoveResult(Enum):
    """Ozone's MoveManager.MoveResult."""

    COMPLETED = "COMPLETED"
    FAIL_LEADER_NOT_READY = "FAIL_LEADER_NOT_READY"
    REPLICATION_FAIL_NOT_EXIST_IN_SOURCE = "REPLICATION_FAIL_NOT_EXIST_IN_SOURCE"
    REPLICATION_FAIL_EXIST_IN_TARGET = "REPLICATION_FAIL_EXIST_IN_TARGET"
    REPLICATION_FAIL_CONTAINER_NOT_CLOSED = "REPLICATION_FAIL_CONTAINER_NOT_CLOSED"
    REPLICATION_FAIL_INFLIGHT_DELETION = "REPLICATION_FAIL_INFLIGHT_DELETION"
    REPLICATION_FAIL_INFLIGHT_REPLICATION = "REPLICATION_FAIL_INFLIGHT_REPLICATION"
    REPLICATION_FAIL_TIME_OUT = "REPLICATION_FAIL_TIME_OUT"
    REPLICATION_FAIL_NODE_NOT_IN_SERVICE = "REPLICATION_FAIL_NODE_NOT_IN_SERVICE"
    REPLICATION_FAIL_NODE_UNHEALTHY = "REPLICATION_FAIL_NODE_UNHEALTHY"
    DELETION_FAIL_TIME_OUT = "DELETION_FAIL_TIME_OUT"
    DELETION_FAIL_NODE_NOT_IN_SERVICE = "DELETION_FAIL_NODE_NOT_IN_SERVICE"
    DELETION_FAIL_NODE_UNHEALTHY = "DELETION_FAIL_NODE_UNHEALTHY"
    DELETE_FAIL_POLICY = "DELETE_FAIL_POLICY"
    REPLICATION_NOT_HEALTHY_BEFORE_MOVE = "REPLICATION_NOT_HEALTHY_BEFORE_MOVE"
    REPLICATION_NOT_HEALTHY_AFTER_MOVE = "REPLICATION_NOT_HEALTHY_AFTER_MOVE"
    FAIL_CONTAINER_ALREADY_BEING_MOVED = "FAIL_CONTAINER_ALREADY_BEING_MOVED"
    FAIL_UNEXPECTED_ERROR = "FAIL_UNEXPECTED_ERROR"

    @property
    def timed_out(self) -> bool:
        return self in (MoveResult.REPLICATION_FAIL_TIME_OUT, MoveResult.DELETION_FAIL_TIME_OUT)


@dataclass(frozen=True, slots=True)
class MoveDataNodePair:
    """Ozone's MoveDataNodePair: where a container's replica moves from and to."""

    source: DatanodeID
    target: DatanodeID


_NOT_COUNTED = frozenset({ReplicaState.UNHEALTHY, ReplicaState.INVALID, ReplicaState.DELETED})
"""Replica states no copy counts in (a QUASI_CLOSED replica closing meanwhile still counts)."""


@dataclass(frozen=True, slots=True)
class Holder:
    """A datanode holding the container when a move started: whether its replica counted then, and
    whether the datanode was in service then. The move fails once either stops holding (an UNHEALTHY
    replica, a decommission begun: the Replication Manager must copy that replica now); a copy on a
    datanode in (or entering) maintenance still counts toward the maintenance minimum and the move
    goes on (the source's own delete then fails DELETION_FAIL_NODE_NOT_IN_SERVICE)."""

    datanode: DatanodeID
    counted: bool
    in_service: bool


@dataclass(frozen=True, slots=True)
class MoveOperation:
    """One move under way: `start_ms` (wall) when its replicate was sent; `deleting` once its delete was."""

    pair: MoveDataNodePair
    replica_index: int
    start_ms: int
    holders: frozenset[Holder]
    """The copies the container had when the move started, as they were then: what its success relies
    on."""
    deleting: bool = False


CHECK_STEP = 2_000
"""Replicating moves `check` looks at per SCM tick, about 6 ms."""

MoveListener = Callable[[ContainerID, MoveDataNodePair, MoveResult], None]


class MoveManager:
    def __init__(
        self,
        clock: Clock,
        nodes: NodeManager,
        containers: ContainerManager,
        replication: ReplicationManager,
    ) -> None:
        self._clock = clock
        self._nodes = nodes
        self._containers = containers
        self._rm = replication
        self.move_timeout_ms = 65 * 60_000
        self.replication_timeout_ms = 50 * 60_000
        self.pending: dict[ContainerID, MoveOperation] = {}
        self._to_check: deque[tuple[ContainerID, MoveOperation]] = deque()
        """The replicating moves in the order `check` looks at them: from the left, back to the right."""
        self.listener: MoveListener | None = None
        replication.pending_ops.subscribe(self._op_done)

    def set_timeouts(self, move_timeout_ms: int, replication_timeout_ms: int) -> None:
        self.move_timeout_ms, self.replication_timeout_ms = move_timeout_ms, replication_timeout_ms

    def is_moving(self, container_id: ContainerID) -> bool:
        return container_id in self.pending

    # ------------------------------------------------------------------ starting a move
    def move(self, container_id: ContainerID, source: DatanodeID, target: DatanodeID) -> MoveResult | None:
        """Starts moving the container's replica on `source` to `target`: None when the replicate was
        sent (the result comes to the listener later), else the reason it was not (Ozone's move)."""
        for dn in (source, target):
            info = self._nodes.get(dn)
            if info is None or info.status.health is not NodeState.HEALTHY:
                return MoveResult.REPLICATION_FAIL_NODE_UNHEALTHY
            if not info.status.is_in_service():
                return MoveResult.REPLICATION_FAIL_NODE_NOT_IN_SERVICE
        if container_id in self.pending:  # Ozone's order: before the RM's chain runs twice for nothing
            return MoveResult.FAIL_CONTAINER_ALREADY_BEING_MOVED
        container = self._containers.find(container_id)
        if container is None:
            return MoveResult.FAIL_UNEXPECTED_ERROR
        replicas = self._containers.replicas(container_id)
        holders = {r.datanode: r for r in replicas}
        if target in holders:
            return MoveResult.REPLICATION_FAIL_EXIST_IN_TARGET
        if source not in holders:
            return MoveResult.REPLICATION_FAIL_NOT_EXIST_IN_SOURCE
        if self._rm.replication_health(container, replicas) is not ContainerHealthState.HEALTHY:
            return MoveResult.REPLICATION_NOT_HEALTHY_BEFORE_MOVE
        for op in self._rm.pending_ops.ops(container_id):
            if op.type is PendingOpType.ADD:
                return MoveResult.REPLICATION_FAIL_INFLIGHT_REPLICATION
            return MoveResult.REPLICATION_FAIL_INFLIGHT_DELETION
        if container.state is not LifeCycleState.CLOSED:
            return MoveResult.REPLICATION_FAIL_CONTAINER_NOT_CLOSED
        after = self._rm.copies_a_delete_may_rely_on(
            container, _replicas_after_move(replicas, holders[source], target)
        )
        if self._rm.replication_health(container, after) is not ContainerHealthState.HEALTHY:
            return MoveResult.REPLICATION_NOT_HEALTHY_AFTER_MOVE
        now = self._clock.wall_ms()
        index = holders[source].replica_index
        move = MoveOperation(
            MoveDataNodePair(source, target), index, now, frozenset(self._holder(r) for r in replicas)
        )
        self.pending[container_id] = move
        self._to_check.append((container_id, move))
        self._rm.sender.send_low_priority_replication(
            container, source, target, index, now + self.replication_timeout_ms
        )
        log.debug("Moving container %d from %s to %s", container_id, source, target)
        return None

    def _holder(self, replica: ContainerReplica) -> Holder:
        info = self._nodes.get(replica.datanode)
        in_service = info is not None and info.status.is_in_service()
        return Holder(replica.datanode, replica.state not in _NOT_COUNTED, in_service)

    # ------------------------------------------------------------------ progress
    def _op_done(self, op: PendingOp, container_id: ContainerID, timed_out: bool) -> None:
        """A ContainerReplicaPendingOps subscriber: the move's ADD or DELETE completed or expired."""
        move = self.pending.get(container_id)
        if move is None:
            return
        pair = move.pair
        if op.type is PendingOpType.ADD and op.target_dn == pair.target and not move.deleting:
            if timed_out:
                self._complete(container_id, MoveResult.REPLICATION_FAIL_TIME_OUT)
            else:
                self._replicated(container_id, move)
        elif op.type is PendingOpType.DELETE and op.target_dn == pair.source and move.deleting:
            self._complete(
                container_id, MoveResult.DELETION_FAIL_TIME_OUT if timed_out else MoveResult.COMPLETED
            )

    def _replicated(self, container_id: ContainerID, move: MoveOperation) -> None:
        """Ozone's handleSuccessfulAdd: the source's replica goes only if the container stays HEALTHY."""
        source = move.pair.source
        container = self._containers.find(container_id)
        if container is None:
            self._complete(container_id, MoveResult.REPLICATION_FAIL_CONTAINER_NOT_CLOSED)
            return
        replicas = self._containers.replicas(container_id)
        remaining = tuple(r for r in replicas if r.datanode != source)
        if len(remaining) == len(replicas):  # the source's copy went meanwhile: the target holds one
            self._complete(container_id, MoveResult.COMPLETED)
            return
        info = self._nodes.get(source)
        if info is None or not info.status.is_in_service():
            self._complete(container_id, MoveResult.DELETION_FAIL_NODE_NOT_IN_SERVICE)
            return
        if not info.status.is_healthy():
            self._complete(container_id, MoveResult.DELETION_FAIL_NODE_UNHEALTHY)
            return
        health = self._rm.replication_health(
            container, self._rm.copies_a_delete_may_rely_on(container, remaining)
        )
        if health is not ContainerHealthState.HEALTHY:
            log.info(
                "Container %d keeps its replica on %s: it would be %s", container_id, source, health.name
            )
            self._complete(container_id, MoveResult.DELETE_FAIL_POLICY)
            return
        self.pending[container_id] = replace(move, deleting=True)
        self._rm.sender.send_delete(
            container,
            source,
            move.replica_index,
            force=True,
            throttled=False,
            deadline_epoch_ms=move.start_ms + self.move_timeout_ms,
        )

    def check(self) -> None:
        """Ends at once the replicating moves that cannot complete, withdrawing their ADDs, and has the
        Replication Manager check those containers now. A deleting move waits for its delete.

        CHECK_STEP moves a tick, round robin (about 3 us each): a tick's cost stays bounded however many
        moves an operator's limits start (30,000 at 2,000 datanodes with `-d 100` and no size limits:
        100 ms a tick when all were looked at), and a move that can no longer complete ends within
        len(pending) / CHECK_STEP ticks, seconds, where its pending ADD would hide the container's
        state from the Replication Manager for the replication timeout. A queue, not an index into
        `pending`: moves ending ahead of the others never make it skip any. An entry names its move, so
        one left by a move that ended (or went on to deleting) is dropped, never checked for a later move
        of the same container."""
        ended: list[ContainerID] = []
        for _ in range(min(CHECK_STEP, len(self._to_check))):
            container_id, move = self._to_check.popleft()
            if self.pending.get(container_id) is not move:  # ended, or past replicating
                continue
            failure = self._cannot_complete(container_id, move)
            if failure is None:
                self._to_check.append((container_id, move))
            else:
                self._complete(container_id, failure)
                ended.append(container_id)
        if ended:
            self._rm.check_containers(ended)

    def _cannot_complete(self, container_id: ContainerID, move: MoveOperation) -> MoveResult | None:
        """Why a replicating move can no longer complete, or None while it can: the copies it started
        from must still hold (a replica gone or turned UNHEALTHY, or a holder being decommissioned, no
        longer counts, and the move's pending ADD would hide that from the Replication Manager)."""
        container = self._containers.find(container_id)
        if container is None or container.state is not LifeCycleState.CLOSED:
            return MoveResult.REPLICATION_FAIL_CONTAINER_NOT_CLOSED
        target = self._nodes.get(move.pair.target)
        if target is None or target.status.health is not NodeState.HEALTHY:
            return MoveResult.REPLICATION_FAIL_NODE_UNHEALTHY
        if not target.status.is_in_service():
            return MoveResult.REPLICATION_FAIL_NODE_NOT_IN_SERVICE
        held = {r.datanode: r.state for r in self._containers.replicas(container_id)}
        if move.pair.source not in held:
            return MoveResult.REPLICATION_FAIL_NOT_EXIST_IN_SOURCE
        for holder in move.holders:
            state = held.get(holder.datanode)
            if state is None or (holder.counted and state in _NOT_COUNTED):
                return MoveResult.REPLICATION_NOT_HEALTHY_AFTER_MOVE
            info = self._nodes.get(holder.datanode)
            if info is None or info.status.health is not NodeState.HEALTHY:
                return MoveResult.REPLICATION_FAIL_NODE_UNHEALTHY
            if holder.in_service and info.status.is_decommission():
                return MoveResult.REPLICATION_FAIL_NODE_NOT_IN_SERVICE
        return None

    def cancel(self, container_id: ContainerID) -> None:
        """Forgets a move the balancer gave up on (its iteration's move.timeout passed), withdrawing its
        ADD if it was still replicating; a delete already sent is left to its deadline."""
        move = self.pending.pop(container_id, None)
        if move is not None:
            self._withdraw(container_id, move)

    def clear(self) -> None:
        """Forgets every move (a new iteration, `stop`, a step-down): Ozone's resetState, the ADDs of
        replicating moves withdrawn."""
        for container_id in list(self.pending):
            self.cancel(container_id)
        self._to_check.clear()

    def _withdraw(self, container_id: ContainerID, move: MoveOperation) -> None:
        if not move.deleting:
            self._rm.pending_ops.withdraw(
                container_id, PendingOpType.ADD, move.pair.target, move.replica_index
            )

    def _complete(self, container_id: ContainerID, result: MoveResult) -> None:
        move = self.pending.pop(container_id, None)
        if move is None:
            return
        self._withdraw(container_id, move)  # no-op when the ADD itself completed or expired
        log.debug(
            "Move of container %d from %s to %s: %s",
            container_id,
            move.pair.source,
            move.pair.target,
            result.name,
        )
        if self.listener is not None:
            self.listener(container_id, move.pair, result)


def _replicas_after_move(
    replicas: tuple[ContainerReplica, ...], source: ContainerReplica, target: DatanodeID
) -> tuple[ContainerReplica, ...]:
    """The replicas as the move would leave them: the source's copy on the target instead."""
    return (*(r for r in replicas if r is not source), replace(source, datanode=target))
