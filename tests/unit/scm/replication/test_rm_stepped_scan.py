"""The periodic full scan in steps (issue 16): SCAN_STEP containers a tick, the old report, queue and
health until the last step, then all three at once; process_all() still scans in one go."""

from __future__ import annotations

import pytest

from pyozone.hdds.container_health import ContainerHealthState
from pyozone.hdds.states import LifeCycleEvent, LifeCycleState, SCMCommandType
from pyozone.scm.events import SCMEvent
from pyozone.scm.periodic import MORE, PeriodicTask
from pyozone.scm.replication import manager
from tests.unit.scm.replication.rm_harness import MINUTE, RMHarness

S = ContainerHealthState
REPLICATE = SCMCommandType.replicateContainerCommand
INTERVAL = {"hdds.scm.replication.thread.interval": "60s"}


@pytest.fixture(autouse=True)
def small_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(manager, "SCAN_STEP", 3)


def harness(containers: int = 10, replicas: int = 2) -> tuple[RMHarness, list[int]]:
    """Under-replicated containers (two replicas each, by default), the scan due at the next tick."""
    h = RMHarness(overrides=INTERVAL)
    cids = [h.container(h.dns[i % 3 : i % 3 + replicas]) for i in range(containers)]
    h.clock.advance(MINUTE)
    return h, cids


def test_a_scan_of_ten_containers_takes_four_ticks_and_swaps_at_the_last():
    h, cids = harness()
    rm = h.rm
    old_report, old_queue = rm.report, rm.queue
    for tick in range(3):
        h.scm.tick()
        assert rm.scan_in_progress() and rm.scan_task.runs == 0, tick
        # readers see the old report, queue and health until the last step
        assert rm.report is old_report and rm.queue is old_queue
        assert rm.report.stat(S.UNDER_REPLICATED) == 0 and rm.queue.is_empty()
        assert all(rm.container_health(cid) is S.HEALTHY for cid in cids)
    h.scm.tick()
    assert not rm.scan_in_progress() and rm.scan_task.runs == 1
    assert rm.report is not old_report and rm.queue is not old_queue
    assert rm.report.stat(S.UNDER_REPLICATED) == 10 and rm.report.samples(S.UNDER_REPLICATED) == cids
    assert rm.report.stat(LifeCycleState.CLOSED) == 10
    assert rm.report.timestamp_ms == h.clock.wall_ms()
    assert rm.queue.under_size() == 10
    assert all(rm.container_health(cid) is S.UNDER_REPLICATED for cid in cids)
    h.scm.tick()  # nothing due: no new scan
    assert not rm.scan_in_progress() and rm.scan_task.runs == 1


def test_a_cluster_within_one_step_is_scanned_in_the_tick_the_scan_starts():
    h, _cids = harness(containers=3)
    h.scm.tick()
    assert not h.rm.scan_in_progress() and h.rm.scan_task.runs == 1
    assert h.rm.report.stat(S.UNDER_REPLICATED) == 3
    # the under-replicated processor ran in the same tick, after the scan, as before
    assert len(h.queued(REPLICATE)) == 3


def test_process_all_still_scans_everything_at_once():
    h, _cids = harness()
    report = h.rm.process_all()
    assert report is h.rm.report and report.stat(S.UNDER_REPLICATED) == 10
    assert not h.rm.scan_in_progress() and h.rm.queue.under_size() == 10


def test_each_container_is_checked_as_it_is_when_its_turn_comes(monkeypatch: pytest.MonkeyPatch):
    h = RMHarness(overrides=INTERVAL)
    cids = [h.container(h.dns[:2]) for _ in range(6)]  # under-replicated
    opened = h.container(h.dns[:3], state="OPEN", replica_state="CLOSED")  # no pipeline
    deleted = h.container(h.dns[:2])
    vanished = h.container(h.dns[:2])
    fixed = h.container(h.dns[:2])
    h.clock.advance(MINUTE)
    h.scm.tick()
    assert h.rm.scan_in_progress()
    # between steps: one container closed, one deleted, one gone from SCM, one repaired
    h.scm.containers.update_state(opened, LifeCycleEvent.FINALIZE)
    h.scm.containers.update_state(opened, LifeCycleEvent.CLOSE)
    h.scm.containers.update_state(deleted, LifeCycleEvent.DELETE)
    find = h.scm.containers.find
    monkeypatch.setattr(h.scm.containers, "find", lambda cid: None if cid == vanished else find(cid))
    h.add_replica(fixed, h.dns[2])
    while h.rm.scan_in_progress():
        h.scm.tick()
    report = h.rm.report
    # the lifecycle counts are the scan's start's
    assert report.stat(LifeCycleState.OPEN) == 1 and report.stat(LifeCycleState.CLOSED) == 9
    assert report.stat(LifeCycleState.DELETING) == 0
    # the rest is what each container was when checked
    assert report.samples(S.UNDER_REPLICATED) == cids
    assert report.stat(S.OPEN_WITHOUT_PIPELINE) == 0
    assert h.scm.containers.get(opened).state is LifeCycleState.CLOSED
    assert h.rm.container_health(deleted) is S.HEALTHY
    assert h.rm.container_health(vanished) is S.HEALTHY
    assert h.rm.container_health(fixed) is S.HEALTHY
    assert h.rm.queue.under_size() == 6


def test_no_second_scan_starts_while_one_runs():
    h, _cids = harness()
    rm = h.rm
    h.scm.tick()
    h.clock.advance(MINUTE)  # due again, and the queue is empty: a node event would wake it
    dead = h.dns[5]
    h.scm.events.fire(SCMEvent.REPLICATION_MANAGER_NOTIFY, (dead, []))
    assert rm.scan_task.next_due_ms == h.clock.now_ms()
    first = rm.report
    for _ in range(3):
        h.scm.tick()
    assert rm.scan_task.runs == 1 and not rm.scan_in_progress()
    published = rm.report
    assert published is not first
    # the next scan starts at its own due time, not on top of the first
    h.clock.advance(MINUTE)
    h.scm.tick()
    assert rm.scan_in_progress() and rm.report is published and rm.scan_task.runs == 1


def test_a_node_event_during_a_scan_does_not_wake_another():
    h, _cids = harness()
    h.scm.tick()
    due = h.rm.scan_task.next_due_ms
    h.scm.events.fire(SCMEvent.REPLICATION_MANAGER_NOTIFY, (h.dns[5], []))
    assert h.rm.scan_task.next_due_ms == due


def test_a_container_a_targeted_check_saw_after_the_scan_passed_it_is_checked_again():
    h, cids = harness(replicas=3)  # all healthy
    h.scm.tick()  # the scan passed containers 1-3
    cid = cids[1]
    dead = h.scm.containers.replicas(cid)[0].datanode
    h.remove_replica(cid, dead)
    h.scm.events.fire(SCMEvent.REPLICATION_MANAGER_NOTIFY, (dead, [cid]))
    assert h.rm.container_health(cid) is S.UNDER_REPLICATED
    [(_, replicate)] = h.queued(REPLICATE)
    assert replicate.container_id == cid
    while h.rm.scan_in_progress():
        h.scm.tick()
    # the scan's own result for it (healthy, before the replica was lost) does not win
    assert h.rm.container_health(cid) is S.UNDER_REPLICATED
    assert h.rm.report.stat(S.UNDER_REPLICATED) == 0  # counted when first passed, as it was then
    assert h.rm.queue.is_empty()  # the replication is pending: nothing to queue


def test_stopping_the_manager_lets_the_scan_finish_without_repairs():
    """Ozone's stop() interrupts the monitor thread, whose loop ends its pass before it waits."""
    h, _cids = harness()
    h.scm.tick()
    h.drain()
    h.rm.stop()
    for _ in range(3):
        h.scm.tick()
    assert h.rm.scan_task.runs == 1 and h.rm.report.stat(S.UNDER_REPLICATED) == 10
    assert h.rm.queue.under_size() == 10
    h.clock.advance(MINUTE)
    h.scm.tick()
    assert h.queued() == [] and not h.rm.scan_in_progress() and h.rm.scan_task.runs == 1


def test_a_scan_resumed_when_scm_is_not_ready_stops_and_publishes_what_it_found(
    monkeypatch: pytest.MonkeyPatch,
):
    """Ozone's pass checks shouldRun() before each container: it breaks and publishes its report."""
    h, cids = harness()
    h.rm.process_all()  # all ten under-replicated
    for i, cid in enumerate(cids):
        h.add_replica(cid, h.dns[3 + i % 3])
    h.scm.tick()  # repaired ones 1-3 checked
    monkeypatch.setattr(h.rm, "_services_ready", lambda: False)
    h.scm.tick()
    assert not h.rm.scan_in_progress() and h.rm.scan_task.runs == 1
    assert h.rm.report.stat(S.UNDER_REPLICATED) == 0 and h.rm.queue.is_empty()
    assert [h.rm.container_health(cid) for cid in cids[:3]] == [S.HEALTHY] * 3
    # the containers it did not reach keep what the last check found
    assert all(h.rm.container_health(cid) is S.UNDER_REPLICATED for cid in cids[3:])


def test_a_task_action_may_span_ticks():
    steps: list[int] = []

    def action() -> object:
        steps.append(len(steps))
        return MORE if len(steps) % 3 else None

    enabled = [True]
    task = PeriodicTask("t", 100, action, lambda: enabled[0])
    assert task.run_if_due(0) and task.in_progress and task.runs == 0
    enabled[0] = False  # a run under way goes on regardless
    assert task.run_if_due(10) and task.run_if_due(20)
    assert not task.in_progress and task.runs == 1 and len(steps) == 3
    assert not task.run_if_due(30)  # the interval counts from the run's start
    enabled[0] = True
    assert task.run_if_due(100) and task.in_progress


def test_a_run_that_raises_is_over():
    def action() -> object:
        raise RuntimeError("boom")

    task = PeriodicTask("t", 100, action)
    with pytest.raises(RuntimeError):
        task.run_if_due(0)
    assert not task.in_progress and task.runs == 0
    assert not task.run_if_due(10)
