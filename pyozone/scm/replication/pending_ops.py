"""ContainerReplicaPendingOps: replicas SCM has asked for but not yet seen created or deleted.

Counting code treats pending ADDs as "may fail" and pending DELETEs as "will succeed"
(RatisContainerReplicaCount), so this table is what stops the Replication Manager from sending the same repair
twice. The cluster-wide ADD count is the global in-flight limit's input
(hdds.scm.replication.inflight.limit.factor), and the bytes scheduled onto each target keep targets from being
over-filled (ReplicationManagerUtil excludes full nodes).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from pyozone.hdds.clock import Clock
from pyozone.hdds.container import ContainerReplica
from pyozone.hdds.ids import ContainerID, DatanodeID

DEFAULT_EVENT_TIMEOUT_MS = 12 * 60_000


class PendingOpType(Enum):
    ADD = "ADD"
    DELETE = "DELETE"


@dataclass(frozen=True, slots=True)
class PendingOp:
    """One pending replica operation. `command` is whatever was sent (kept so a timed-out DELETE can
    be resent as is); it takes no part in equality."""

    type: PendingOpType
    target_dn: DatanodeID
    replica_index: int
    command: Any = field(compare=False)
    deadline_epoch_ms: int
    container_size: int = 0
    low_priority: bool = False
    """A LOW priority replicate's ADD (the balancer's move): outside the in-flight limit."""

    @property
    def is_ec(self) -> bool:
        return self.replica_index > 0


Subscriber = Callable[[PendingOp, ContainerID, bool], None]
"""Called as (op, container id, timed_out) when an op completes (False) or expires (True)."""


class ContainerReplicaPendingOps:
    def __init__(self, clock: Clock, event_timeout_ms: int = DEFAULT_EVENT_TIMEOUT_MS) -> None:
        self._clock = clock
        self._event_timeout_ms = event_timeout_ms
        self._ops: dict[ContainerID, list[PendingOp]] = {}
        self._counts: dict[tuple[PendingOpType, bool], int] = {}
        self._low_adds = 0
        # target -> (bytes scheduled by pending ADDs, wall time of the latest ADD scheduled to it)
        self._scheduled: dict[DatanodeID, tuple[int, int]] = {}
        self._subscribers: list[Subscriber] = []

    def subscribe(self, callback: Subscriber) -> None:
        self._subscribers.append(callback)

    def schedule_add(
        self,
        container_id: ContainerID,
        target: DatanodeID,
        replica_index: int,
        command: Any,
        deadline_epoch_ms: int,
        container_size: int = 0,
        low_priority: bool = False,
    ) -> None:
        """Records an ADD; `container_size` (2 x used bytes, as ReplicationManager) is added to the target's
        scheduled bytes."""
        op = PendingOp(
            PendingOpType.ADD, target, replica_index, command, deadline_epoch_ms, container_size, low_priority
        )
        self._add(container_id, op)
        size, _ = self._scheduled.get(target, (0, 0))
        self._scheduled[target] = (size + container_size, self._clock.wall_ms())

    def schedule_delete(
        self,
        container_id: ContainerID,
        target: DatanodeID,
        replica_index: int,
        command: Any,
        deadline_epoch_ms: int,
    ) -> None:
        self._add(
            container_id, PendingOp(PendingOpType.DELETE, target, replica_index, command, deadline_epoch_ms)
        )

    def complete_add(self, container_id: ContainerID, target: DatanodeID, replica_index: int) -> bool:
        return self._complete(container_id, PendingOpType.ADD, target, replica_index, notify=True)

    def complete_delete(self, container_id: ContainerID, target: DatanodeID, replica_index: int) -> bool:
        return self._complete(container_id, PendingOpType.DELETE, target, replica_index, notify=True)

    def remove_op(self, container_id: ContainerID, op: PendingOp) -> bool:
        return self._complete(container_id, op.type, op.target_dn, op.replica_index, notify=True)

    def withdraw(
        self, container_id: ContainerID, op_type: PendingOpType, target: DatanodeID, index: int
    ) -> bool:
        """Drops an op SCM no longer waits for (a balancer move given up), telling no subscriber: it is
        not a completion, so nobody treats the replica as made, and the container is counted without it."""
        return self._complete(container_id, op_type, target, index, notify=False)

    def ops(self, container_id: ContainerID) -> list[PendingOp]:
        """A copy; empty when the container has nothing pending."""
        return list(self._ops.get(container_id, ()))

    def containers(self) -> list[ContainerID]:
        """Containers with at least one pending op, in id order."""
        return sorted(self._ops)

    def count(self, op_type: PendingOpType, ec: bool) -> int:
        """Pending ops of a type, for Ratis (index 0) or EC (index > 0) replicas."""
        return self._counts.get((op_type, ec), 0)

    def pending_add_count(self) -> int:
        """All pending ADDs."""
        return self.count(PendingOpType.ADD, False) + self.count(PendingOpType.ADD, True)

    def inflight_add_count(self) -> int:
        """The pending ADDs the global in-flight limit counts (ReplicationManager): LOW priority ones (the
        balancer's moves) left out, as the datanodes' replication load leaves them out, so the balancer
        never uses up the Replication Manager's cap for its NORMAL repairs. Ozone counts every ADD."""
        return self.pending_add_count() - self._low_adds

    def scheduled_size(self, target: DatanodeID) -> int:
        """Bytes pending ADDs will write to `target`; 0 when its latest ADD was scheduled more than an
        event timeout ago (those ops have all completed or expired by now, whatever the tally says)."""
        size, last_ms = self._scheduled.get(target, (0, 0))
        if self._clock.wall_ms() - last_ms > self._event_timeout_ms:
            return 0
        return size

    def remove_expired(self, now_epoch_ms: int | None = None) -> None:
        """The scrubber: an op past its deadline is reported timed out. An ADD is dropped (the next scan
        re-detects the under-replication); a DELETE stays pending until the Replication Manager resends
        it with a fresh deadline, which replaces it."""
        now = self._clock.wall_ms() if now_epoch_ms is None else now_epoch_ms
        for container_id in list(self._ops):
            ops = self._ops[container_id]
            expired = [op for op in ops if now > op.deadline_epoch_ms]
            for op in expired:
                if op.type is PendingOpType.ADD:
                    ops.remove(op)
                    self._forget(op, now)
            if not ops:
                del self._ops[container_id]
            for op in expired:
                self._notify(op, container_id, timed_out=True)

    def clear(self) -> None:
        """Forget everything (on becoming leader: commands of an old term are void; ReplicationManager)."""
        self._ops.clear()
        self._counts.clear()
        self._low_adds = 0
        self._scheduled.clear()

    def _add(self, container_id: ContainerID, op: PendingOp) -> None:
        # A resent command replaces its predecessor, so an op is never counted twice.
        self._complete(container_id, op.type, op.target_dn, op.replica_index, notify=False)
        self._ops.setdefault(container_id, []).append(op)
        key = (op.type, op.is_ec)
        self._counts[key] = self._counts.get(key, 0) + 1
        self._low_adds += op.low_priority

    def _complete(
        self, container_id: ContainerID, op_type: PendingOpType, target: DatanodeID, index: int, notify: bool
    ) -> bool:
        ops = self._ops.get(container_id)
        if not ops:
            return False
        done = [
            op for op in ops if op.type is op_type and op.target_dn == target and op.replica_index == index
        ]
        for op in done:
            ops.remove(op)
            self._forget(op, None)
        if not ops:
            del self._ops[container_id]
        if notify:
            for op in done:
                self._notify(op, container_id, timed_out=False)
        return bool(done)

    def _forget(self, op: PendingOp, expired_at: int | None) -> None:
        key = (op.type, op.is_ec)
        self._counts[key] -= 1
        self._low_adds -= op.low_priority
        if op.type is not PendingOpType.ADD or op.target_dn not in self._scheduled:
            return
        size, last_ms = self._scheduled[op.target_dn]
        size -= op.container_size
        stale = expired_at is not None and expired_at - last_ms > self._event_timeout_ms
        if size <= 0 or stale:
            del self._scheduled[op.target_dn]
        else:
            self._scheduled[op.target_dn] = (size, last_ms)

    def _notify(self, op: PendingOp, container_id: ContainerID, timed_out: bool) -> None:
        for callback in self._subscribers:
            callback(op, container_id, timed_out)


class PendingOpsReplicaListener:
    """Completes pending ops from the replica map (AbstractContainerReportHandler): a stored replica completes
    the ADD aimed at its datanode and index, a removed one the DELETE. Register with
    ContainerManager.add_replica_listener."""

    def __init__(self, pending_ops: ContainerReplicaPendingOps) -> None:
        self._pending = pending_ops

    def replica_updated(self, replica: ContainerReplica) -> None:
        self._pending.complete_add(replica.container_id, replica.datanode, replica.replica_index)

    def replica_removed(self, replica: ContainerReplica) -> None:
        self._pending.complete_delete(replica.container_id, replica.datanode, replica.replica_index)
