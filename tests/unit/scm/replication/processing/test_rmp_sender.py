"""ReplicationCommandSender: throttling, command fields, deadlines, pending ops and metrics (Ozone's
ReplicationManager)."""

from __future__ import annotations

import pytest

from pyozone.hdds.clock import ManualClock
from pyozone.hdds.commands import ReconstructionSource, ReplicationCommandPriority
from pyozone.hdds.datanode import DatanodeDetails
from pyozone.hdds.states import NodeState
from pyozone.protocol.commands import scm_command_from_proto, scm_command_to_proto
from pyozone.scm.events import EventQueue, SCMEvent
from pyozone.scm.ha.context import ScmContext
from pyozone.scm.node.node_manager import NodeManager
from pyozone.scm.replication import throttle
from pyozone.scm.replication.commands import CommandTargetOverloadedError, ReplicationCommandSender
from pyozone.scm.replication.config import ReplicationManagerConfig
from pyozone.scm.replication.metrics import ReplicationManagerMetrics
from pyozone.scm.replication.pending_ops import ContainerReplicaPendingOps, PendingOpType
from pyozone.scm.replication.processing import cluster_inflight_limit
from pyozone.scm.settings import ScmSettings
from tests.builders import node_report
from tests.unit.scm.replication.processing.rmp_fakes import (
    CID,
    EPOCH_MS,
    MINUTE,
    USED,
    FakeContext,
    Op,
    T,
    container,
    dn,
    ec,
    pending_op,
    replica,
)

ADD, DELETE = PendingOpType.ADD, PendingOpType.DELETE
SCM_DEADLINE = EPOCH_MS + 12 * MINUTE
DN_DEADLINE = EPOCH_MS + 6 * MINUTE


def ctx_with(n: int, **kwargs) -> FakeContext:
    ctx = FakeContext(**kwargs)
    for i in range(1, n + 1):
        ctx.nodes.add(dn(i))
    return ctx


def roundtrip(command):
    return scm_command_from_proto(scm_command_to_proto(command))


# ------------------------------------------------------------------ limits and load
@pytest.mark.parametrize(
    ("op", "limit"),
    [
        (Op.IN_SERVICE, 20),
        (Op.DECOMMISSIONING, 40),
        (Op.DECOMMISSIONED, 40),
        (Op.ENTERING_MAINTENANCE, 40),
        (Op.IN_MAINTENANCE, 40),
    ],
)
def test_limit_is_20_or_40_by_persisted_op_state(op: Op, limit: int) -> None:
    ctx = FakeContext()
    ctx.nodes.add(dn(1), op=op)
    assert ctx.sender.replication_limit(dn(1)) == limit


def test_limit_uses_the_configured_out_of_service_factor_rounded_up() -> None:
    ctx = FakeContext(
        config=ReplicationManagerConfig(datanode_replication_limit=15, out_of_service_factor=1.5)
    )
    ctx.nodes.add(dn(1), op=Op.DECOMMISSIONING)
    assert ctx.sender.replication_limit(dn(1)) == 23  # ceil(22.5)


def test_load_is_replicate_plus_weight_times_reconstruct_queued_at_scm_and_reported() -> None:
    ctx = ctx_with(2)
    ctx.nodes.report(dn(1), T.replicateContainerCommand, 4)
    ctx.nodes.report(dn(1), T.reconstructECContainersCommand, 2)
    ctx.nodes.report(dn(1), T.deleteContainerCommand, 30)  # deletes have their own limit
    assert ctx.sender.replication_load(dn(1)) == 4 + 3 * 2
    ctx.sender.send_throttled_replication(container(), [dn(1)], dn(2), 0)
    assert ctx.sender.replication_load(dn(1)) == 11  # the SCM-queued command counts at once


def test_inflight_limit_worked_numbers() -> None:
    assert throttle.inflight_limit(10, 20, 1.0) == 200
    assert throttle.inflight_limit(10, 20, 0.75) == 150
    assert throttle.inflight_limit(10, 20, 0.0) == 0


def test_cluster_inflight_limit_counts_healthy_nodes_in_any_op_state_only() -> None:
    ctx = ctx_with(10)
    ctx.nodes.set_state(dn(1), op=Op.DECOMMISSIONING)  # still HEALTHY: still a source
    ctx.nodes.add(dn(11), health=NodeState.HEALTHY_READONLY)
    ctx.nodes.add(dn(12), health=NodeState.STALE)
    ctx.nodes.add(dn(13), health=NodeState.DEAD)
    assert cluster_inflight_limit(ctx.nodes, ctx.config) == 150
    assert cluster_inflight_limit(ctx.nodes, ReplicationManagerConfig(inflight_limit_factor=1.0)) == 200


# ------------------------------------------------------------------ replicate
def test_replicate_goes_to_the_least_loaded_source_and_names_the_target() -> None:
    ctx = ctx_with(4)
    ctx.nodes.report(dn(1), T.replicateContainerCommand, 5)
    ctx.nodes.report(dn(2), T.replicateContainerCommand, 2)
    ctx.nodes.report(dn(3), T.reconstructECContainersCommand, 1)  # load 3
    ctx.sender.send_throttled_replication(container(), [dn(1), dn(2), dn(3)], dn(4), 0)

    [sent] = ctx.sent
    assert sent.to == dn(2)
    assert sent.type is T.replicateContainerCommand
    assert sent.fields == {
        "container_id": CID,
        "target": ctx.nodes.get(dn(4)).details,
        "sources": (),
        "replica_index": 0,
        "priority": ReplicationCommandPriority.NORMAL,
    }
    assert sent.command.term == 7
    assert sent.command.deadline_epoch_ms == DN_DEADLINE
    [op] = ctx.pending_ops.ops(CID)
    assert (op.type, op.target_dn, op.replica_index) == (ADD, dn(4), 0)
    assert op.deadline_epoch_ms == SCM_DEADLINE
    assert op.container_size == 2 * USED
    assert op.command is sent.command
    assert ctx.pending_ops.scheduled_size(dn(4)) == 2 * USED
    assert ctx.metrics.replication_cmds_sent_total == 1
    assert ctx.metrics.ec_replication_cmds_sent_total == 0
    assert roundtrip(sent.command) == sent.command


def test_ties_go_to_the_first_source_given() -> None:
    ctx = ctx_with(3)
    ctx.sender.send_throttled_replication(container(), [dn(2), dn(1)], dn(3), 0)
    assert ctx.sent[0].to == dn(2)


def test_sources_at_their_limit_are_skipped_and_excluded() -> None:
    ctx = ctx_with(3)
    ctx.nodes.report(dn(1), T.replicateContainerCommand, 20)
    ctx.nodes.report(dn(2), T.replicateContainerCommand, 18)
    ctx.sender.send_throttled_replication(container(), [dn(1), dn(2)], dn(3), 0)
    assert ctx.sent[0].to == dn(2)
    assert ctx.sender.excluded_nodes == {dn(1)}


def test_the_source_a_command_fills_up_is_excluded() -> None:
    ctx = ctx_with(3)
    ctx.nodes.report(dn(1), T.replicateContainerCommand, 19)
    ctx.sender.send_throttled_replication(container(), [dn(1)], dn(3), 0)
    assert ctx.sent[0].to == dn(1)
    assert ctx.sender.excluded_nodes == {dn(1)}  # 19 + 1 >= 20
    with pytest.raises(CommandTargetOverloadedError):
        ctx.sender.send_throttled_replication(container(), [dn(1)], dn(2), 0)


def test_all_sources_overloaded_sends_nothing_and_counts_a_deferral() -> None:
    ctx = ctx_with(3)
    ctx.nodes.report(dn(1), T.replicateContainerCommand, 25)
    ctx.nodes.report(dn(2), T.reconstructECContainersCommand, 7)  # 21
    with pytest.raises(CommandTargetOverloadedError):
        ctx.sender.send_throttled_replication(container(), [dn(1), dn(2)], dn(3), 0)
    assert ctx.sent == []
    assert ctx.pending_ops.ops(CID) == []
    assert ctx.metrics.replicate_container_cmds_deferred_total == 1
    assert ctx.sender.excluded_nodes == {dn(1), dn(2)}


def test_a_decommissioning_source_may_hold_up_to_40() -> None:
    ctx = ctx_with(3)
    ctx.nodes.set_state(dn(1), op=Op.DECOMMISSIONING)
    ctx.nodes.report(dn(1), T.replicateContainerCommand, 30)
    ctx.nodes.report(dn(2), T.replicateContainerCommand, 20)
    ctx.sender.send_throttled_replication(container(), [dn(2), dn(1)], dn(3), 0)
    assert ctx.sent[0].to == dn(1)
    assert ctx.sender.excluded_nodes == {dn(2)}


def test_ec_replication_counts_as_ec() -> None:
    ctx = ctx_with(2)
    ctx.sender.send_throttled_replication(ec(), [dn(1)], dn(2), 4)
    assert ctx.sent[0].command.replica_index == 4
    assert ctx.pending(CID) == [(ADD, dn(2), 4)]
    assert (ctx.metrics.ec_replication_cmds_sent_total, ctx.metrics.replication_cmds_sent_total) == (1, 0)


def test_deadlines_follow_the_configured_timeout_and_offset_on_the_wall_clock() -> None:
    config = ReplicationManagerConfig(event_timeout_ms=10 * MINUTE, event_timeout_datanode_offset_ms=MINUTE)
    ctx = ctx_with(2, config=config)
    ctx.clock.advance(5_000)
    ctx.sender.send_throttled_replication(container(), [dn(1)], dn(2), 0)
    assert ctx.sent[0].command.deadline_epoch_ms == EPOCH_MS + 5_000 + 9 * MINUTE
    assert ctx.pending_ops.ops(CID)[0].deadline_epoch_ms == EPOCH_MS + 5_000 + 10 * MINUTE


# ------------------------------------------------------------------ low priority
def test_low_priority_replication_is_unthrottled_keeps_its_deadline_and_does_not_count() -> None:
    ctx = ctx_with(3)
    ctx.nodes.report(dn(1), T.replicateContainerCommand, 20)  # at its limit
    deadline = EPOCH_MS + 60 * MINUTE
    for _ in range(5):
        ctx.sender.send_low_priority_replication(container(), dn(1), dn(3), 0, deadline)
    assert [s.to for s in ctx.sent] == [dn(1)] * 5
    assert ctx.sent[0].command.priority is ReplicationCommandPriority.LOW
    assert ctx.sent[0].command.deadline_epoch_ms == deadline - 6 * MINUTE
    assert ctx.pending_ops.ops(CID)[0].deadline_epoch_ms == deadline
    assert ctx.sender.replication_load(dn(1)) == 20  # the five LOW commands are not load

    ctx.nodes.report(dn(2), T.replicateContainerCommand, 0)
    ctx.sender.send_low_priority_replication(container(), dn(2), dn(3), 0, deadline)
    ctx.sender.send_throttled_replication(container(), [dn(2)], dn(3), 0)
    assert ctx.sender.replication_load(dn(2)) == 1


# ------------------------------------------------------------------ reconstruction
def test_reconstruction_goes_to_the_least_loaded_target_with_one_add_per_missing_index() -> None:
    ctx = ctx_with(6)
    ctx.nodes.report(dn(4), T.replicateContainerCommand, 6)
    ctx.nodes.report(dn(5), T.reconstructECContainersCommand, 1)  # 3
    sources = [(dn(1), 1), (dn(2), 2), (dn(3), 3)]
    ctx.sender.send_throttled_reconstruction(ec(), sources, [dn(4), dn(5)], [4, 5])

    [sent] = ctx.sent
    assert sent.to == dn(5)
    assert sent.type is T.reconstructECContainersCommand
    assert sent.fields == {
        "container_id": CID,
        "sources": tuple(ReconstructionSource(ctx.nodes.get(d).details, i) for d, i in sources),
        "targets": (ctx.nodes.get(dn(4)).details, ctx.nodes.get(dn(5)).details),
        "missing_indexes": bytes([4, 5]),
        "replication_config": ec().replication_config,
    }
    assert ctx.pending(CID) == [(ADD, dn(4), 4), (ADD, dn(5), 5)]
    assert all(op.container_size == 2 * USED for op in ctx.pending_ops.ops(CID))
    assert ctx.metrics.ec_reconstruction_cmds_sent_total == 1
    assert ctx.sender.replication_load(dn(5)) == 3 + 3
    assert roundtrip(sent.command) == sent.command


def test_reconstruction_weight_excludes_a_target_it_fills() -> None:
    ctx = ctx_with(5)
    ctx.nodes.report(dn(4), T.replicateContainerCommand, 17)  # 17 + 3 >= 20
    ctx.sender.send_throttled_reconstruction(ec(), [(dn(1), 1), (dn(2), 2), (dn(3), 3)], [dn(4)], [4])
    assert ctx.sent[0].to == dn(4)
    assert ctx.sender.excluded_nodes == {dn(4)}


def test_reconstruction_without_a_target_below_its_limit_is_deferred() -> None:
    ctx = ctx_with(5)
    ctx.nodes.report(dn(4), T.reconstructECContainersCommand, 7)
    with pytest.raises(CommandTargetOverloadedError):
        ctx.sender.send_throttled_reconstruction(ec(), [(dn(1), 1)], [dn(4)], [4])
    assert ctx.metrics.ec_reconstruction_cmds_deferred_total == 1
    assert ctx.sent == [] and ctx.pending_ops.ops(CID) == []


# ------------------------------------------------------------------ delete and close
def test_throttled_delete_is_refused_at_the_delete_limit_of_40() -> None:
    ctx = ctx_with(2)
    ctx.nodes.report(dn(1), T.deleteContainerCommand, 39)
    ctx.sender.send_delete(container(), dn(1), 0, True, True)
    assert ctx.sender.replication_load(dn(1)) == 0
    with pytest.raises(CommandTargetOverloadedError):
        ctx.sender.send_delete(container(), dn(1), 0, True, True)  # 39 reported + 1 queued
    assert ctx.metrics.delete_container_cmds_deferred_total == 1
    ctx.sender.send_delete(container(), dn(1), 0, False, False)  # unthrottled goes through
    assert [s.fields for s in ctx.sent] == [
        {"container_id": CID, "force": True, "replica_index": 0},
        {"container_id": CID, "force": False, "replica_index": 0},
    ]
    assert ctx.pending(CID) == [(DELETE, dn(1), 0)]  # the resend replaced the op
    assert ctx.metrics.deletion_cmds_sent_total == 2
    assert ctx.metrics.deletion_bytes_total == 2 * USED


def test_ec_delete_counts_as_ec_without_bytes() -> None:
    ctx = ctx_with(1)
    ctx.sender.send_delete(ec(), dn(1), 3, True, True)
    assert ctx.pending(CID) == [(DELETE, dn(1), 3)]
    assert ctx.sent[0].command.deadline_epoch_ms == DN_DEADLINE
    assert ctx.pending_ops.ops(CID)[0].deadline_epoch_ms == SCM_DEADLINE
    assert (ctx.metrics.ec_deletion_cmds_sent_total, ctx.metrics.deletion_cmds_sent_total) == (1, 0)
    assert ctx.metrics.deletion_bytes_total == 0
    assert roundtrip(ctx.sent[0].command) == ctx.sent[0].command


def test_close_is_unthrottled_and_schedules_nothing() -> None:
    ctx = ctx_with(1)
    ctx.nodes.report(dn(1), T.closeContainerCommand, 1000)
    ctx.sender.send_close(container(), replica(dn(1)), True)
    [sent] = ctx.sent
    assert sent.fields == {"container_id": CID, "pipeline_id": "pipeline-1", "force": True}
    assert (sent.command.term, sent.command.deadline_epoch_ms) == (7, DN_DEADLINE)
    assert ctx.pending_ops.ops(CID) == []


def test_an_expired_delete_is_resent_with_fresh_deadlines_and_replaces_its_op() -> None:
    ctx = ctx_with(1)
    ctx.sender.send_delete(container(), dn(1), 0, True, True)
    ctx.clock.advance(13 * MINUTE)
    ctx.nodes.context = ScmContext.ha_leader(8)
    expired = []
    ctx.pending_ops.subscribe(lambda op, cid, timed_out: expired.append(op) if timed_out else None)
    ctx.pending_ops.remove_expired()
    [op] = expired
    ctx.sender.resend_delete(CID, op)

    first, again = ctx.sent
    assert again.to == dn(1)
    assert again.fields == first.fields
    assert again.command.id == first.command.id
    assert again.command.term == 8
    assert again.command.deadline_epoch_ms == EPOCH_MS + 13 * MINUTE + 6 * MINUTE
    [pending] = ctx.pending_ops.ops(CID)
    assert pending.deadline_epoch_ms == EPOCH_MS + 25 * MINUTE
    assert ctx.metrics.deletion_cmds_sent_total == 2
    assert ctx.metrics.deletion_bytes_total == USED  # the same bytes, counted once
    with pytest.raises(ValueError):
        ctx.sender.resend_delete(CID, pending_op(ADD, dn(1)))


# ------------------------------------------------------------------ exclusion lifecycle
def test_command_count_update_readmits_an_excluded_node_with_room() -> None:
    ctx = ctx_with(3)
    ctx.nodes.report(dn(1), T.replicateContainerCommand, 20)
    with pytest.raises(CommandTargetOverloadedError):
        ctx.sender.send_throttled_replication(container(), [dn(1)], dn(2), 0)
    ctx.sender.on_command_counts_updated(dn(1))
    assert ctx.sender.excluded_nodes == {dn(1)}  # still full
    ctx.nodes.report(dn(1), T.replicateContainerCommand, 19)
    ctx.sender.on_command_counts_updated(dn(1))
    assert ctx.sender.excluded_nodes == set()
    ctx.sender.on_command_counts_updated(dn(2))  # never excluded: nothing happens
    assert ctx.sender.excluded_nodes == set()


def test_with_the_real_node_manager_heartbeats_drive_load_and_readmission() -> None:
    clock = ManualClock()
    events = EventQueue()
    nodes = NodeManager(ScmSettings(), clock, events)
    for i in (1, 2):
        nodes.register(DatanodeDetails(dn(i), f"h{i}", f"10.0.0.{i}"), node_report())
    config = ReplicationManagerConfig(datanode_replication_limit=3, datanode_reconstruction_weight=3)
    metrics = ReplicationManagerMetrics()
    sender = ReplicationCommandSender(nodes, ContainerReplicaPendingOps(clock), config, clock, metrics)
    events.add_handler(SCMEvent.DATANODE_COMMAND_COUNT_UPDATED, sender.on_command_counts_updated)

    for _ in range(3):
        sender.send_throttled_replication(container(), [dn(1)], dn(2), 0)
    assert sender.replication_load(dn(1)) == 3
    assert sender.excluded_nodes == {dn(1)}
    with pytest.raises(CommandTargetOverloadedError):
        sender.send_throttled_replication(container(), [dn(1)], dn(2), 0)

    sent = nodes.process_heartbeat(dn(1), command_queue_report={T.replicateContainerCommand: 0})
    assert len(sent) == 3  # the drained commands count until the next report
    assert sender.replication_load(dn(1)) == 3
    assert sender.excluded_nodes == {dn(1)}
    nodes.process_heartbeat(dn(1), command_queue_report={T.replicateContainerCommand: 1})
    assert sender.replication_load(dn(1)) == 1
    assert sender.excluded_nodes == set()


# ------------------------------------------------------------------ completion metrics
def test_pending_op_completions_and_expiries_are_counted_by_kind() -> None:
    ctx = ctx_with(4)
    ctx.pending_ops.subscribe(ctx.metrics.pending_op_completed)
    ctx.sender.send_throttled_replication(container(), [dn(1)], dn(2), 0)
    ctx.sender.send_throttled_replication(ec(cid=2), [dn(1)], dn(3), 2)
    ctx.sender.send_delete(container(), dn(4), 0, True, True)
    ctx.sender.send_delete(ec(cid=2), dn(4), 1, True, True)
    ctx.pending_ops.complete_add(CID, dn(2), 0)
    ctx.pending_ops.complete_delete(2, dn(4), 1)
    ctx.clock.advance(13 * MINUTE)
    ctx.pending_ops.remove_expired()
    m = ctx.metrics
    assert (m.replicas_created_total, m.ec_replicas_deleted_total) == (1, 1)
    assert (m.ec_replica_create_timeout_total, m.replica_delete_timeout_total) == (1, 1)
    assert (m.ec_replicas_created_total, m.replicas_deleted_total, m.replica_create_timeout_total) == (
        0,
        0,
        0,
    )
