"""ReplicationManager: the full scan, the read-only check, the processors, lifecycle and scheduling."""

from __future__ import annotations

from pyozone.hdds.container_health import ContainerHealthState
from pyozone.hdds.states import LifeCycleState, NodeOperationalState, SCMCommandType
from pyozone.scm.events import SCMEvent
from pyozone.scm.replication.pending_ops import PendingOpType
from tests.unit.scm.replication.rm_harness import MINUTE, RMHarness

S = ContainerHealthState
REPLICATE = SCMCommandType.replicateContainerCommand
DELETE = SCMCommandType.deleteContainerCommand


def test_full_scan_counts_every_container_and_queues_repairs():
    h = RMHarness()
    dns = h.dns
    healthy = h.container(dns[:3])
    under = h.container(dns[:2])
    over = h.container(dns[:4])
    opened = h.container(dns[:3], state="OPEN")
    report = h.rm.process_all()
    assert report.stat(LifeCycleState.CLOSED) == 3
    assert report.stat(LifeCycleState.OPEN) == 1
    assert report.stat(S.UNDER_REPLICATED) == 1 and report.samples(S.UNDER_REPLICATED) == [under]
    assert report.stat(S.OVER_REPLICATED) == 1 and report.samples(S.OVER_REPLICATED) == [over]
    # no pipeline: the open container is reported and a close asked for
    assert report.stat(S.OPEN_WITHOUT_PIPELINE) == 1
    assert report.timestamp_ms == h.clock.wall_ms()
    assert h.rm.report is report
    assert (h.rm.queue.under_size(), h.rm.queue.over_size()) == (1, 1)
    assert h.rm.container_health(healthy) is S.HEALTHY
    assert h.rm.container_health(under) is S.UNDER_REPLICATED
    assert h.rm.container_health(over) is S.OVER_REPLICATED
    assert h.scm.containers.get(opened).state is LifeCycleState.CLOSING


def test_full_scan_replaces_the_queue_and_forgets_fixed_containers():
    h = RMHarness()
    under = h.container(h.dns[:2])
    h.rm.process_all()
    assert h.rm.queue.under_size() == 1
    h.add_replica(under, h.dns[3])
    h.rm.process_all()
    assert h.rm.queue.is_empty()
    assert h.rm.container_health(under) is S.HEALTHY


def test_processors_send_throttled_repairs_and_record_pending_ops():
    h = RMHarness()
    under = h.container(h.dns[:2])
    over = h.container(h.dns[:4])
    h.rm.process_all()
    h.rm.process_under_replicated()
    h.rm.process_over_replicated()
    [(source, replicate)] = h.queued(REPLICATE)
    assert source in h.dns[:2] and replicate.container_id == under
    target = replicate.target.uuid
    assert target not in h.dns[:2]
    [add] = h.rm.pending_ops.ops(under)
    assert (add.type, add.target_dn) == (PendingOpType.ADD, target)
    [(victim, delete)] = h.queued(DELETE)
    assert delete.container_id == over and victim in h.dns[:4]
    assert h.rm.queue.is_empty()
    # the pending ADD makes the next scan report, but not queue, the container
    report = h.rm.process_all()
    assert report.stat(S.UNDER_REPLICATED) == 1 and h.rm.queue.under_size() == 0


def test_replica_reports_complete_pending_ops():
    h = RMHarness()
    under = h.container(h.dns[:2])
    h.rm.process_all()
    h.rm.process_under_replicated()
    [add] = h.rm.pending_ops.ops(under)
    h.add_replica(under, add.target_dn)
    assert h.rm.pending_ops.ops(under) == []
    assert h.rm.metrics.replicas_created_total == 1


def test_read_only_check_fills_the_report_and_changes_nothing():
    h = RMHarness()
    under = h.container(h.dns[:2])
    opened = h.container(h.dns[:3], state="OPEN")
    assert h.rm.check_container_status(under) is S.UNDER_REPLICATED
    assert h.rm.check_container_status(opened) is S.OPEN_WITHOUT_PIPELINE
    assert h.scm.containers.get(opened).state is LifeCycleState.OPEN
    assert h.rm.queue.is_empty() and h.queued() == []
    assert h.rm.container_health(under) is S.HEALTHY  # only checks that act record health


def test_should_run_needs_the_wait_after_safe_mode_and_the_running_flag():
    h = RMHarness()
    h.rm.stop()
    assert not h.rm.is_running() and not h.rm.should_run()
    h.rm.start()
    assert h.rm.should_run()


def test_becoming_ready_clears_pending_ops():
    h = RMHarness(overrides={"hdds.scm.wait.time.after.safemode.exit": "1m"})
    h.rm.pending_ops.schedule_add(1, h.dns[0], 0, None, h.clock.wall_ms() + MINUTE)
    h.rm._was_ready = False  # as after a restart into safe mode
    assert h.rm.should_run()
    assert h.rm.pending_ops.containers() == []


def test_periodic_tasks_follow_their_intervals_and_the_gate():
    h = RMHarness(overrides={"hdds.scm.replication.thread.interval": "60s"})
    h.container(h.dns[:2])
    h.rm.stop()
    h.scm.tick()
    assert h.rm.scan_task.runs == 0
    h.rm.start()
    h.clock.advance(MINUTE)
    h.scm.tick()
    assert h.rm.scan_task.runs == 1 and h.rm.report.stat(S.UNDER_REPLICATED) == 1
    # the under-replicated processor ran in the same tick, after the scan
    assert len(h.queued(REPLICATE)) == 1
    h.clock.advance(MINUTE - 1)
    h.scm.tick()
    assert h.rm.scan_task.runs == 1


def test_dead_node_containers_are_checked_and_repaired_at_once():
    h = RMHarness()
    cid = h.container(h.dns[:3])
    other = h.container(h.dns[3:6])
    h.rm.process_all()
    dead = h.dns[0]
    h.remove_replica(cid, dead)
    h.scm.events.fire(SCMEvent.REPLICATION_MANAGER_NOTIFY, (dead, [cid]))
    [(_, replicate)] = h.queued(REPLICATE)
    assert replicate.container_id == cid
    assert h.rm.container_health(cid) is S.UNDER_REPLICATED
    assert h.rm.container_health(other) is S.HEALTHY
    # the queue was empty: the full scan is woken for the next tick (notifyNodeStateChange)
    assert h.rm.scan_task.next_due_ms == h.clock.now_ms()


def test_notify_for_an_op_state_change_reads_the_nodes_containers():
    h = RMHarness()
    cid = h.container(h.dns[:3])
    h.set_op_state(h.dns[0], NodeOperationalState.DECOMMISSIONING)
    h.scm.nodes.process_heartbeat(h.dns[0])  # nothing queued for it yet
    h.scm.events.fire(SCMEvent.REPLICATION_MANAGER_NOTIFY, h.dns[0])
    [(_, replicate)] = h.queued(REPLICATE)
    assert replicate.container_id == cid
    assert replicate.target.uuid not in h.dns[:3]


def test_notify_is_ignored_until_the_manager_should_run():
    h = RMHarness()
    cid = h.container(h.dns[:2])
    h.rm.stop()
    h.scm.events.fire(SCMEvent.REPLICATION_MANAGER_NOTIFY, (h.dns[2], [cid]))
    assert h.queued() == [] and h.rm.queue.is_empty()


def test_scrubber_resends_expired_deletes_and_drops_expired_adds():
    h = RMHarness()
    under = h.container(h.dns[:2])
    over = h.container(h.dns[:4])
    h.rm.process_all()
    h.rm.process_under_replicated()
    h.rm.process_over_replicated()
    h.drain()
    h.clock.advance(13 * MINUTE)  # past the 12 minute event timeout
    h.rm.scrub_pending_ops()
    assert h.rm.pending_ops.ops(under) == []
    [delete] = h.rm.pending_ops.ops(over)
    assert delete.deadline_epoch_ms > h.clock.wall_ms()
    [(dn, resent)] = h.queued(DELETE)
    assert dn == delete.target_dn and resent.container_id == over
    assert h.rm.metrics.replica_create_timeout_total == 1
    assert h.rm.metrics.replica_delete_timeout_total == 1


def test_command_count_updates_reach_the_sender():
    h = RMHarness()
    dn = h.dns[0]
    h.rm.sender.excluded_nodes.add(dn)
    h.scm.nodes.process_heartbeat(dn, command_queue_report={SCMCommandType.replicateContainerCommand: 0})
    assert dn not in h.rm.sender.excluded_nodes


def test_block_deletion_waits_for_a_healthy_container():
    h = RMHarness()
    healthy = h.container(h.dns[:3])
    under = h.container(h.dns[:2])
    assert h.scm.deleted_blocks.container_health_ok(healthy)
    assert not h.scm.deleted_blocks.container_health_ok(under)
    assert not h.scm.deleted_blocks.container_health_ok(999)


def test_inflight_limit_counts_healthy_nodes():
    h = RMHarness(datanodes=10)
    assert h.rm.inflight_limit() == 150  # 10 x 20 x 0.75
