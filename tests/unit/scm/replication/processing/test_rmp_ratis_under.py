"""Ratis under-replication (Ozone's RatisUnderReplicationHandler) through the processing entry point."""

from __future__ import annotations

import pytest

from pyozone.hdds.exceptions import ResultCode, SCMException
from pyozone.hdds.states import NodeState
from pyozone.scm.replication.commands import CommandTargetOverloadedError, InsufficientDatanodesError
from pyozone.scm.replication.pending_ops import PendingOpType
from pyozone.scm.replication.processing import handle_under_replicated
from tests.unit.scm.replication.processing.rmp_fakes import (
    CID,
    FakeContext,
    Op,
    T,
    container,
    dn,
    replica,
    under,
)

ADD, DELETE = PendingOpType.ADD, PendingOpType.DELETE


def ctx_of(n: int, racks: int = 2) -> FakeContext:
    ctx = FakeContext()
    for i in range(1, n + 1):
        ctx.nodes.add(dn(i), f"/r{i % racks}")
    return ctx


def replicate_sources(ctx: FakeContext) -> list[str]:
    return [s.to for s in ctx.sent if s.type is T.replicateContainerCommand]


def replicate_targets(ctx: FakeContext) -> list[str]:
    return [s.command.target.uuid for s in ctx.sent if s.type is T.replicateContainerCommand]


def test_two_closed_replicas_get_one_copy_from_the_least_loaded_source() -> None:
    ctx = ctx_of(6)
    ctx.set_replicas(replica(dn(1)), replica(dn(2)))
    ctx.nodes.report(dn(1), T.replicateContainerCommand, 3)
    assert handle_under_replicated(under(container()), ctx) == 1
    assert replicate_sources(ctx) == [dn(2)]
    [target] = replicate_targets(ctx)
    assert target not in (dn(1), dn(2))
    assert ctx.pending() == [(ADD, target, 0)]
    assert ctx.metrics.replication_cmds_sent_total == 1


def test_one_replica_left_gets_two_copies_on_distinct_nodes() -> None:
    ctx = ctx_of(6)
    ctx.set_replicas(replica(dn(1)))
    assert handle_under_replicated(under(container()), ctx) == 2
    targets = replicate_targets(ctx)
    assert len(set(targets)) == 2 and dn(1) not in targets
    assert replicate_sources(ctx) == [dn(1), dn(1)]


def test_nothing_to_do_once_pending_adds_cover_it() -> None:
    ctx = ctx_of(6)
    ctx.set_replicas(replica(dn(1)), replica(dn(2)))
    ctx.add_pending(ADD, dn(3))
    assert handle_under_replicated(under(container()), ctx) == 0
    assert ctx.sent == []


def test_an_empty_quasi_closed_container_is_not_copied() -> None:
    ctx = ctx_of(6)
    qc = container("QUASI_CLOSED")
    ctx.set_replicas(replica(dn(1), "QUASI_CLOSED", empty=True))
    assert handle_under_replicated(under(qc), ctx) == 0
    assert ctx.sent == []


def test_sources_are_the_closed_replicas_with_the_highest_bcsid() -> None:
    ctx = ctx_of(8)
    ctx.set_replicas(
        replica(dn(1), seq=10),
        replica(dn(2), seq=9),  # lower BCSID: may miss blocks
        replica(dn(3), "UNHEALTHY", seq=10),
    )
    ctx.nodes.report(dn(1), T.replicateContainerCommand, 10)
    assert handle_under_replicated(under(container(seq=10)), ctx) == 1
    assert replicate_sources(ctx) == [dn(1)]


def test_quasi_closed_copies_are_not_sources_of_a_container_with_a_closed_copy() -> None:
    ctx = ctx_of(8)
    ctx.set_replicas(replica(dn(1)), replica(dn(2), "QUASI_CLOSED"))
    ctx.nodes.report(dn(1), T.replicateContainerCommand, 10)
    assert handle_under_replicated(under(container()), ctx) == 1
    assert replicate_sources(ctx) == [dn(1)]


def test_replicas_on_nodes_that_do_not_heartbeat_are_not_sources() -> None:
    ctx = ctx_of(8)
    ctx.nodes.set_state(dn(1), health=NodeState.STALE)
    ctx.set_replicas(replica(dn(1)), replica(dn(2)))
    ctx.nodes.report(dn(2), T.replicateContainerCommand, 10)
    assert handle_under_replicated(under(container()), ctx) == 1
    assert replicate_sources(ctx) == [dn(2)]


def test_sources_exclude_replicas_being_deleted() -> None:
    ctx = ctx_of(6)
    ctx.set_replicas(replica(dn(1)), replica(dn(2)))
    ctx.add_pending(DELETE, dn(2))
    ctx.nodes.report(dn(1), T.replicateContainerCommand, 10)
    handle_under_replicated(under(container()), ctx)
    assert set(replicate_sources(ctx)) == {dn(1)}


def test_a_quasi_closed_container_copies_quasi_closed_replicas() -> None:
    ctx = ctx_of(6)
    qc = container("QUASI_CLOSED")
    # three origins seen: not stuck, so the ordinary Ratis handler runs
    ctx.set_replicas(
        replica(dn(1), "QUASI_CLOSED", origin=dn(1)),
        replica(dn(2), "UNHEALTHY", origin=dn(2)),
        replica(dn(3), "UNHEALTHY", origin=dn(3)),
    )
    assert handle_under_replicated(under(qc), ctx) == 2
    assert set(replicate_sources(ctx)) == {dn(1)}


def test_only_unhealthy_replicas_are_copied_when_nothing_healthy_is_left() -> None:
    ctx = ctx_of(6)
    ctx.set_replicas(replica(dn(1), "UNHEALTHY"), replica(dn(2), "UNHEALTHY", seq=8))
    assert handle_under_replicated(under(container()), ctx) == 1
    assert replicate_sources(ctx) == [dn(1)]


def test_a_decommissioning_replica_is_replaced_and_may_be_the_source() -> None:
    ctx = ctx_of(6)
    ctx.nodes.set_state(dn(3), op=Op.DECOMMISSIONING)
    ctx.set_replicas(replica(dn(1)), replica(dn(2)), replica(dn(3)))
    ctx.nodes.report(dn(1), T.replicateContainerCommand, 19)
    ctx.nodes.report(dn(2), T.replicateContainerCommand, 19)
    ctx.nodes.report(dn(3), T.replicateContainerCommand, 25)  # below its limit of 40
    assert handle_under_replicated(under(container()), ctx) == 1
    assert replicate_sources(ctx) == [dn(1)]
    assert replicate_targets(ctx)[0] not in (dn(1), dn(2), dn(3))


def test_all_sources_overloaded_requeues() -> None:
    ctx = ctx_of(6)
    ctx.set_replicas(replica(dn(1)), replica(dn(2)))
    ctx.nodes.report(dn(1), T.replicateContainerCommand, 20)
    ctx.nodes.report(dn(2), T.replicateContainerCommand, 20)
    with pytest.raises(CommandTargetOverloadedError):
        handle_under_replicated(under(container()), ctx)
    assert ctx.metrics.replicate_container_cmds_deferred_total == 1


def test_partial_targets_are_sent_then_reported() -> None:
    ctx = ctx_of(2)
    ctx.set_replicas(replica(dn(1)))
    with pytest.raises(InsufficientDatanodesError) as e:
        handle_under_replicated(under(container()), ctx)
    assert (e.value.required, e.value.available) == (2, 1)
    assert len(replicate_targets(ctx)) == 1
    assert ctx.metrics.partial_replication_total == 1


def test_no_target_at_all_deletes_one_unhealthy_replica_then_requeues() -> None:
    ctx = ctx_of(3)
    ctx.set_replicas(replica(dn(1)), replica(dn(2)), replica(dn(3), "UNHEALTHY"))
    ctx.nodes.report(dn(3), T.deleteContainerCommand, 100)  # unthrottled: sent anyway
    with pytest.raises(SCMException) as e:
        handle_under_replicated(under(container()), ctx)
    assert e.value.code is ResultCode.FAILED_TO_FIND_SUITABLE_NODE
    [sent] = ctx.sent
    assert (sent.to, sent.type, sent.fields) == (
        dn(3),
        T.deleteContainerCommand,
        {"container_id": CID, "force": True, "replica_index": 0},
    )
    assert ctx.pending() == [(DELETE, dn(3), 0)]


def test_vulnerable_unhealthy_replicas_are_copied_one_target_each() -> None:
    ctx = ctx_of(8)
    qc = container("QUASI_CLOSED")
    ctx.nodes.set_state(dn(3), op=Op.DECOMMISSIONING)
    ctx.nodes.set_state(dn(4), op=Op.DECOMMISSIONING)
    ctx.set_replicas(
        replica(dn(1), "QUASI_CLOSED", origin=dn(1)),
        replica(dn(2), "QUASI_CLOSED", origin=dn(2)),
        replica(dn(3), "UNHEALTHY", origin=dn(3)),  # its origin's only copies leave the cluster
        replica(dn(4), "UNHEALTHY", origin=dn(4)),
    )
    assert handle_under_replicated(under(qc, vulnerable=True), ctx) == 2
    assert sorted(replicate_sources(ctx)) == [dn(3), dn(4)]
    targets = replicate_targets(ctx)
    assert len(set(targets)) == 2 and not set(targets) & {dn(1), dn(2), dn(3), dn(4)}


def test_vulnerable_replicas_wait_for_pending_adds() -> None:
    ctx = ctx_of(8)
    qc = container("QUASI_CLOSED")
    ctx.nodes.set_state(dn(3), op=Op.DECOMMISSIONING)
    ctx.set_replicas(
        replica(dn(1), "QUASI_CLOSED", origin=dn(1)),
        replica(dn(2), "QUASI_CLOSED", origin=dn(2)),
        replica(dn(3), "UNHEALTHY", origin=dn(3)),
    )
    ctx.add_pending(ADD, dn(5))
    assert handle_under_replicated(under(qc, vulnerable=True), ctx) == 0


def test_an_overloaded_vulnerable_source_is_skipped_and_raised_after_the_rest() -> None:
    ctx = ctx_of(8)
    qc = container("QUASI_CLOSED")
    for i in (3, 4):
        ctx.nodes.set_state(dn(i), op=Op.DECOMMISSIONING)
    ctx.nodes.report(dn(3), T.replicateContainerCommand, 40)
    ctx.set_replicas(
        replica(dn(1), "QUASI_CLOSED", origin=dn(1)),
        replica(dn(2), "QUASI_CLOSED", origin=dn(2)),
        replica(dn(3), "UNHEALTHY", origin=dn(3)),
        replica(dn(4), "UNHEALTHY", origin=dn(4)),
    )
    with pytest.raises(CommandTargetOverloadedError):
        handle_under_replicated(under(qc, vulnerable=True), ctx)
    assert replicate_sources(ctx) == [dn(4)]
