"""EC under-replication (three phases) and EC over-replication (ECUnderReplicationHandler,
ECOverReplicationHandler)."""

from __future__ import annotations

import pytest

from pyozone.hdds.commands import ReconstructionSource
from pyozone.hdds.exceptions import ResultCode, SCMException
from pyozone.hdds.states import NodeState
from pyozone.scm.replication.commands import CommandTargetOverloadedError, InsufficientDatanodesError
from pyozone.scm.replication.pending_ops import PendingOpType
from pyozone.scm.replication.processing import handle_over_replicated, handle_under_replicated
from tests.unit.scm.replication.processing.rmp_fakes import (
    CID,
    FakeContext,
    Op,
    T,
    dn,
    ec,
    over,
    replica,
    under,
)

ADD, DELETE = PendingOpType.ADD, PendingOpType.DELETE


def ctx_of(n: int) -> FakeContext:
    """n nodes, each on its own rack."""
    ctx = FakeContext()
    for i in range(1, n + 1):
        ctx.nodes.add(dn(i), f"/r{i}")
    return ctx


def with_indexes(ctx: FakeContext, indexes: dict[int, int], state: str = "CLOSED") -> None:
    """{node number: replica index}."""
    ctx.set_replicas(*(replica(dn(n), state, index=i) for n, i in indexes.items()))


def of_type(ctx: FakeContext, command_type: T):
    return [s for s in ctx.sent if s.type is command_type]


# ------------------------------------------------------------------ phase 1: reconstruction
def test_one_missing_index_is_rebuilt_by_one_reconstruction_command() -> None:
    ctx = ctx_of(6)
    with_indexes(ctx, {1: 1, 2: 2, 3: 3, 4: 4})
    assert handle_under_replicated(under(ec()), ctx) == 1
    [sent] = ctx.sent
    assert sent.type is T.reconstructECContainersCommand
    target = dn(5) if sent.to == dn(5) else dn(6)
    assert sent.fields == {
        "container_id": CID,
        "sources": tuple(ReconstructionSource(ctx.nodes.get(dn(i)).details, i) for i in (1, 2, 3, 4)),
        "targets": (ctx.nodes.get(target).details,),
        "missing_indexes": b"\x05",
        "replication_config": ec().replication_config,
    }
    assert ctx.pending() == [(ADD, target, 5)]
    assert ctx.metrics.ec_reconstruction_cmds_sent_total == 1


def test_two_missing_indexes_share_one_command_coordinated_by_the_least_loaded_target() -> None:
    ctx = ctx_of(5)
    with_indexes(ctx, {1: 1, 2: 2, 3: 3})
    ctx.nodes.add(dn(6), "/r6")
    ctx.nodes.report(dn(4), T.replicateContainerCommand, 9)
    assert handle_under_replicated(under(ec()), ctx) == 1
    [sent] = ctx.sent
    assert sent.to != dn(4)
    targets = [d.uuid for d in sent.command.targets]
    assert sent.command.missing_indexes == bytes([4, 5])
    assert ctx.pending() == [(ADD, targets[0], 4), (ADD, targets[1], 5)]


def test_fewer_sources_than_data_reconstructs_nothing() -> None:
    ctx = ctx_of(6)
    with_indexes(ctx, {1: 1, 2: 2})
    ctx.set_replicas(replica(dn(3), "UNHEALTHY", index=3))
    assert handle_under_replicated(under(ec()), ctx) == 0
    assert ctx.sent == []


def test_too_few_targets_rebuild_what_they_can_then_requeue() -> None:
    ctx = ctx_of(4)
    with_indexes(ctx, {1: 1, 2: 2, 3: 3})
    with pytest.raises(InsufficientDatanodesError) as e:
        handle_under_replicated(under(ec()), ctx)
    assert (e.value.required, e.value.available) == (2, 1)
    [sent] = ctx.sent
    assert sent.command.missing_indexes == b"\x04"
    assert ctx.pending() == [(ADD, dn(4), 4)]
    assert ctx.metrics.ec_partial_reconstruction_none_overloaded_total == 1


def test_a_partial_rebuild_caused_by_busy_nodes_waits_while_not_critical() -> None:
    ctx = ctx_of(9)
    with_indexes(ctx, {i: i for i in range(1, 8)})  # RS-6-3: 8 and 9 missing, 2 < parity 3
    ctx.sender.excluded_nodes.add(dn(9))
    ctx.set_replicas()
    with pytest.raises(InsufficientDatanodesError):
        handle_under_replicated(under(ec(scheme="RS-6-3")), ctx)
    assert ctx.sent == []
    assert ctx.metrics.ec_partial_reconstruction_skipped_total == 1


def test_a_critical_partial_rebuild_goes_ahead_despite_busy_nodes() -> None:
    ctx = ctx_of(8)
    with_indexes(ctx, {i: i for i in range(1, 7)})  # RS-6-3: 7, 8, 9 missing == parity
    ctx.sender.excluded_nodes.add(dn(8))
    with pytest.raises(InsufficientDatanodesError):
        handle_under_replicated(under(ec(scheme="RS-6-3")), ctx)
    [sent] = ctx.sent
    assert sent.command.targets == (ctx.nodes.get(dn(7)).details,)
    assert sent.command.missing_indexes == b"\x07"
    assert ctx.metrics.ec_partial_reconstruction_critical_total == 1


def test_sufficient_once_pending_adds_land_sends_nothing() -> None:
    ctx = ctx_of(6)
    with_indexes(ctx, {1: 1, 2: 2, 3: 3, 4: 4})
    ctx.add_pending(ADD, dn(6), 5)
    assert handle_under_replicated(under(ec()), ctx) == 0


# ------------------------------------------------------------------ phase 2 and 3: offline indexes
def test_a_decommissioning_only_index_is_copied_not_reconstructed() -> None:
    ctx = ctx_of(6)
    ctx.nodes.set_state(dn(2), op=Op.DECOMMISSIONING)
    with_indexes(ctx, {1: 1, 2: 2, 3: 3, 4: 4, 5: 5})
    assert handle_under_replicated(under(ec()), ctx) == 1
    [sent] = ctx.sent
    assert (sent.to, sent.type) == (dn(2), T.replicateContainerCommand)
    assert sent.command.replica_index == 2
    assert sent.command.target.uuid == dn(6)
    assert ctx.pending() == [(ADD, dn(6), 2)]
    assert ctx.metrics.ec_replication_cmds_sent_total == 1


def test_maintenance_only_indexes_get_only_the_copies_redundancy_requires() -> None:
    ctx = ctx_of(7)
    for n in (1, 2):
        ctx.nodes.set_state(dn(n), op=Op.IN_MAINTENANCE)
    with_indexes(ctx, {1: 1, 2: 2, 3: 3, 4: 4, 5: 5})
    # RS-3-2 keeping 1 redundancy in maintenance: 2 maintenance-only indexes, 2 - (2 - 1) = 1 copy
    assert handle_under_replicated(under(ec()), ctx) == 1
    [sent] = ctx.sent
    assert (sent.to, sent.command.replica_index) == (dn(1), 1)
    assert sent.command.target.uuid in (dn(6), dn(7))


def test_one_maintenance_only_index_within_the_allowance_needs_nothing() -> None:
    ctx = ctx_of(6)
    ctx.nodes.set_state(dn(1), op=Op.IN_MAINTENANCE)
    with_indexes(ctx, {1: 1, 2: 2, 3: 3, 4: 4, 5: 5})
    assert handle_under_replicated(under(ec()), ctx) == 0


def test_missing_and_decommissioning_indexes_are_repaired_in_one_pass_on_distinct_targets() -> None:
    ctx = ctx_of(7)
    ctx.nodes.set_state(dn(2), op=Op.DECOMMISSIONING)
    with_indexes(ctx, {1: 1, 2: 2, 3: 3, 4: 4})
    assert handle_under_replicated(under(ec()), ctx) == 2
    reconstruct = of_type(ctx, T.reconstructECContainersCommand)
    replicate = of_type(ctx, T.replicateContainerCommand)
    assert len(reconstruct) == len(replicate) == 1
    targets = {reconstruct[0].command.targets[0].uuid, replicate[0].command.target.uuid}
    assert len(targets) == 2 and targets <= {dn(5), dn(6), dn(7)}
    assert sorted(i for _, _, i in ctx.pending()) == [2, 5]


def test_busy_nodes_are_not_targets_for_offline_copies() -> None:
    ctx = ctx_of(7)
    ctx.nodes.set_state(dn(2), op=Op.DECOMMISSIONING)
    with_indexes(ctx, {1: 1, 2: 2, 3: 3, 4: 4, 5: 5})
    ctx.sender.excluded_nodes.update({dn(6)})
    handle_under_replicated(under(ec()), ctx)
    assert ctx.sent[0].command.target.uuid == dn(7)


def test_a_busy_decommissioning_source_requeues() -> None:
    ctx = ctx_of(6)
    ctx.nodes.set_state(dn(2), op=Op.DECOMMISSIONING)
    ctx.nodes.report(dn(2), T.replicateContainerCommand, 40)
    with_indexes(ctx, {1: 1, 2: 2, 3: 3, 4: 4, 5: 5})
    with pytest.raises(CommandTargetOverloadedError):
        handle_under_replicated(under(ec()), ctx)
    assert ctx.sent == []


def test_no_target_at_all_deletes_an_unhealthy_copy_of_an_index_with_a_closed_copy() -> None:
    ctx = ctx_of(5)
    with_indexes(ctx, {1: 1, 2: 2, 3: 3, 4: 4})
    ctx.set_replicas(replica(dn(5), "UNHEALTHY", index=1))
    with pytest.raises(SCMException) as e:
        handle_under_replicated(under(ec()), ctx)
    assert e.value.code is ResultCode.FAILED_TO_FIND_SUITABLE_NODE
    [sent] = ctx.sent
    assert (sent.to, sent.fields) == (dn(5), {"container_id": CID, "force": True, "replica_index": 1})


def test_no_target_at_all_on_an_over_replicated_container_removes_the_extra_copy() -> None:
    ctx = ctx_of(5)
    with_indexes(ctx, {1: 1, 2: 2, 3: 3, 4: 4})
    ctx.set_replicas(replica(dn(5), index=1))
    with pytest.raises(SCMException):
        handle_under_replicated(under(ec()), ctx)
    [sent] = ctx.sent
    assert sent.type is T.deleteContainerCommand and sent.command.replica_index == 1


# ------------------------------------------------------------------ over-replication
def test_an_extra_copy_of_an_index_is_deleted_from_the_most_crowded_rack() -> None:
    ctx = FakeContext()
    for n, rack in enumerate(["/a", "/a", "/b", "/c", "/d", "/e"], 1):
        ctx.nodes.add(dn(n), rack)
    ctx.set_replicas(*(replica(dn(n), index=i) for n, i in [(1, 1), (2, 1), (3, 2), (4, 3), (5, 4), (6, 5)]))
    assert handle_over_replicated(over(ec()), ctx) == 1
    [sent] = ctx.sent
    assert sent.to in (dn(1), dn(2))
    assert sent.fields == {"container_id": CID, "force": True, "replica_index": 1}
    assert ctx.metrics.ec_deletion_cmds_sent_total == 1


def test_copies_on_stale_or_leaving_nodes_or_pending_delete_are_never_candidates() -> None:
    ctx = ctx_of(7)
    with_indexes(ctx, {1: 1, 2: 2, 3: 3, 4: 4, 5: 5})
    ctx.set_replicas(replica(dn(6), index=1), replica(dn(7), index=2))
    ctx.nodes.set_state(dn(6), health=NodeState.STALE)
    ctx.nodes.set_state(dn(7), op=Op.DECOMMISSIONING)
    assert handle_over_replicated(over(ec()), ctx) == 0
    ctx.nodes.set_state(dn(6), health=NodeState.HEALTHY)
    ctx.add_pending(DELETE, dn(6), 1)
    assert handle_over_replicated(over(ec()), ctx) == 0


def test_an_overloaded_delete_is_raised_after_the_others() -> None:
    ctx = ctx_of(7)
    with_indexes(ctx, {1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 6: 1, 7: 2})
    for n in (1, 6):
        ctx.nodes.report(dn(n), T.deleteContainerCommand, 40)
    with pytest.raises(CommandTargetOverloadedError):
        handle_over_replicated(over(ec()), ctx)
    assert [s.command.replica_index for s in ctx.sent] == [2]
