from __future__ import annotations

import pytest

from pyozone.hdds.clock import ManualClock
from pyozone.scm.replication.pending_ops import (
    ContainerReplicaPendingOps,
    PendingOp,
    PendingOpsReplicaListener,
    PendingOpType,
)
from tests.unit.scm.replication.rm_builders import replica

ADD, DELETE = PendingOpType.ADD, PendingOpType.DELETE
TIMEOUT = 12 * 60_000


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def pending(clock: ManualClock) -> ContainerReplicaPendingOps:
    return ContainerReplicaPendingOps(clock, TIMEOUT)


def deadline(clock: ManualClock) -> int:
    return clock.wall_ms() + TIMEOUT


def test_schedule_and_list(pending: ContainerReplicaPendingOps, clock: ManualClock) -> None:
    pending.schedule_add(1, "dn1", 0, "cmd-a", deadline(clock), 20)
    pending.schedule_delete(1, "dn2", 0, "cmd-d", deadline(clock))
    pending.schedule_add(2, "dn3", 4, None, deadline(clock))
    assert [(op.type, op.target_dn) for op in pending.ops(1)] == [(ADD, "dn1"), (DELETE, "dn2")]
    assert pending.ops(1)[0].command == "cmd-a"
    assert pending.ops(99) == []
    assert pending.containers() == [1, 2]
    assert pending.count(ADD, ec=False) == 1 and pending.count(ADD, ec=True) == 1
    assert pending.count(DELETE, ec=False) == 1 and pending.count(DELETE, ec=True) == 0
    assert pending.pending_add_count() == 2


def test_ops_returns_a_copy(pending: ContainerReplicaPendingOps, clock: ManualClock) -> None:
    pending.schedule_add(1, "dn1", 0, None, deadline(clock))
    pending.ops(1).clear()
    assert len(pending.ops(1)) == 1


def test_same_type_target_index_replaces(pending: ContainerReplicaPendingOps, clock: ManualClock) -> None:
    pending.schedule_delete(1, "dn1", 0, "old", 100)
    pending.schedule_delete(1, "dn1", 0, "new", 200)
    pending.schedule_add(1, "dn1", 0, None, 300)  # other type: kept apart
    pending.schedule_delete(1, "dn1", 2, None, 300)  # other index: kept apart
    ops = pending.ops(1)
    assert len(ops) == 3
    assert [op.command for op in ops if op.type is DELETE and op.replica_index == 0] == ["new"]
    assert pending.count(DELETE, ec=False) == 1


def test_complete_removes_and_notifies(pending: ContainerReplicaPendingOps, clock: ManualClock) -> None:
    seen: list[tuple[PendingOp, int, bool]] = []
    pending.subscribe(lambda op, cid, timed_out: seen.append((op, cid, timed_out)))
    pending.schedule_add(1, "dn1", 0, None, deadline(clock))
    pending.schedule_delete(1, "dn2", 0, None, deadline(clock))
    assert seen == []  # scheduling and replacing notify nobody
    assert not pending.complete_add(1, "dn1", 3)  # wrong index
    assert not pending.complete_add(1, "dn2", 0)  # wrong type
    assert pending.complete_add(1, "dn1", 0)
    assert pending.complete_delete(1, "dn2", 0)
    assert [(op.type, cid, t) for op, cid, t in seen] == [(ADD, 1, False), (DELETE, 1, False)]
    assert pending.ops(1) == [] and pending.containers() == []
    assert pending.pending_add_count() == 0 and pending.count(DELETE, ec=False) == 0
    assert not pending.complete_add(1, "dn1", 0)


def test_remove_op(pending: ContainerReplicaPendingOps, clock: ManualClock) -> None:
    pending.schedule_add(1, "dn1", 2, None, deadline(clock))
    assert pending.remove_op(1, pending.ops(1)[0])
    assert pending.ops(1) == []


def test_expiry_drops_adds_keeps_deletes(pending: ContainerReplicaPendingOps, clock: ManualClock) -> None:
    seen: list[tuple[PendingOpType, int, bool]] = []
    pending.subscribe(lambda op, cid, timed_out: seen.append((op.type, cid, timed_out)))
    pending.schedule_add(1, "dn1", 0, None, deadline(clock), 50)
    pending.schedule_delete(1, "dn2", 0, None, deadline(clock))
    pending.schedule_add(2, "dn3", 0, None, deadline(clock) + 1)
    clock.advance(TIMEOUT)
    pending.remove_expired()  # deadline == now is not expired
    assert seen == []
    clock.advance(1)
    pending.remove_expired()
    assert seen == [(ADD, 1, True), (DELETE, 1, True)]
    assert [op.type for op in pending.ops(1)] == [DELETE]
    assert pending.count(DELETE, ec=False) == 1 and pending.pending_add_count() == 1
    assert pending.scheduled_size("dn1") == 0
    # a timed-out delete is reported again on each scrub until resent with a fresh deadline
    pending.remove_expired()
    assert seen[-1] == (DELETE, 1, True)
    pending.schedule_delete(1, "dn2", 0, "resent", deadline(clock))
    seen.clear()
    pending.remove_expired(clock.wall_ms())
    assert seen == [] and pending.ops(1)[0].command == "resent"


def test_clear(pending: ContainerReplicaPendingOps, clock: ManualClock) -> None:
    pending.schedule_add(1, "dn1", 0, None, deadline(clock), 5)
    pending.schedule_delete(2, "dn1", 1, None, deadline(clock))
    pending.clear()
    assert pending.containers() == [] and pending.pending_add_count() == 0
    assert pending.count(DELETE, ec=True) == 0 and pending.scheduled_size("dn1") == 0


def test_scheduled_size_accounting(pending: ContainerReplicaPendingOps, clock: ManualClock) -> None:
    gb = 1 << 30
    pending.schedule_add(1, "dn1", 0, None, deadline(clock), 5 * gb)
    pending.schedule_add(2, "dn1", 0, None, deadline(clock), 3 * gb)
    pending.schedule_delete(3, "dn1", 0, None, deadline(clock))  # deletes schedule no bytes
    assert pending.scheduled_size("dn1") == 8 * gb
    pending.complete_add(1, "dn1", 0)
    assert pending.scheduled_size("dn1") == 3 * gb
    pending.complete_add(2, "dn1", 0)
    assert pending.scheduled_size("dn1") == 0


def test_scheduled_size_window(pending: ContainerReplicaPendingOps, clock: ManualClock) -> None:
    pending.schedule_add(1, "dn1", 0, None, 1 << 60, 100)
    clock.advance(TIMEOUT)
    assert pending.scheduled_size("dn1") == 100
    clock.advance(1)
    assert pending.scheduled_size("dn1") == 0  # older than an event timeout: stale tally
    pending.schedule_add(2, "dn1", 0, None, 1 << 60, 10)  # a new ADD refreshes the window
    assert pending.scheduled_size("dn1") == 110


def test_replica_listener_completes_ops(pending: ContainerReplicaPendingOps, clock: ManualClock) -> None:
    listener = PendingOpsReplicaListener(pending)
    pending.schedule_add(1, "dn1", 2, None, deadline(clock))
    pending.schedule_delete(1, "dn2", 3, None, deadline(clock))
    listener.replica_updated(replica("dn1", index=2))
    listener.replica_updated(replica("dn2", index=3))  # an update does not complete a DELETE
    assert [op.type for op in pending.ops(1)] == [DELETE]
    listener.replica_removed(replica("dn2", index=3))
    assert pending.ops(1) == []


def test_listener_plugs_into_the_container_manager_protocol() -> None:
    from pyozone.scm.container.replicas import ContainerReplicaMap

    pending = ContainerReplicaPendingOps(ManualClock())
    replicas = ContainerReplicaMap()
    replicas.add_listener(PendingOpsReplicaListener(pending))
    pending.schedule_add(1, "dn1", 0, None, 1 << 60)
    replicas.update(replica("dn1"))
    assert pending.ops(1) == []


def test_withdraw_drops_an_op_without_notifying(
    pending: ContainerReplicaPendingOps, clock: ManualClock
) -> None:
    """A balancer move given up (R24 D1/D11): its ADD leaves the table, and no subscriber takes it for
    a completed copy."""
    seen: list[tuple[PendingOp, int, bool]] = []
    pending.subscribe(lambda op, cid, timed_out: seen.append((op, cid, timed_out)))
    pending.schedule_add(1, "dn1", 0, None, deadline(clock), 20)
    assert pending.withdraw(1, ADD, "dn1", 0)
    assert pending.ops(1) == [] and pending.pending_add_count() == 0 and pending.scheduled_size("dn1") == 0
    assert seen == []
    assert not pending.withdraw(1, ADD, "dn1", 0)


def test_low_priority_adds_are_outside_the_inflight_count(
    pending: ContainerReplicaPendingOps, clock: ManualClock
) -> None:
    """R24 D10: the balancer's LOW replicates do not use up the in-flight cap of NORMAL repairs."""
    pending.schedule_add(1, "dn1", 0, None, deadline(clock))
    pending.schedule_add(2, "dn1", 0, None, deadline(clock), low_priority=True)
    assert pending.pending_add_count() == 2 and pending.inflight_add_count() == 1
    assert pending.withdraw(2, ADD, "dn1", 0)
    assert pending.inflight_add_count() == 1
    clock.advance(TIMEOUT + 1)
    pending.remove_expired()
    assert pending.pending_add_count() == 0 and pending.inflight_add_count() == 0
