"""Mis-replication (Ratis and EC) and quasi-closed stuck under/over-replication (Ozone's handlers of those
names)."""

from __future__ import annotations

import pytest

from pyozone.hdds.exceptions import SCMException
from pyozone.scm.replication.commands import CommandTargetOverloadedError, InsufficientDatanodesError
from pyozone.scm.replication.pending_ops import PendingOpType
from pyozone.scm.replication.processing import handle_over_replicated, handle_under_replicated
from tests.unit.scm.replication.processing.rmp_fakes import (
    FakeContext,
    T,
    container,
    dn,
    ec,
    over,
    replica,
    under,
)

ADD, DELETE = PendingOpType.ADD, PendingOpType.DELETE


def ctx_on(racks: list[str]) -> FakeContext:
    ctx = FakeContext()
    for i, rack in enumerate(racks, 1):
        ctx.nodes.add(dn(i), rack)
    return ctx


def rack(ctx: FakeContext, node: str) -> str:
    return ctx.nodes.get(node).details.network_location


def targets(ctx: FakeContext) -> list[str]:
    return [s.command.target.uuid for s in ctx.sent if s.type is T.replicateContainerCommand]


# ------------------------------------------------------------------ mis-replication
def test_ratis_replicas_on_one_rack_get_a_copy_on_another() -> None:
    ctx = ctx_on(["/a", "/a", "/a", "/b", "/b"])
    ctx.set_replicas(replica(dn(1)), replica(dn(2)), replica(dn(3)))
    assert handle_under_replicated(under(container(), mis=True), ctx) == 1
    [target] = targets(ctx)
    assert rack(ctx, target) == "/b"
    assert ctx.sent[0].to in (dn(1), dn(2), dn(3))
    assert ctx.pending() == [(ADD, target, 0)]


@pytest.mark.parametrize("case", ["pending", "under", "over", "satisfied"])
def test_mis_replication_waits_for_pending_ops_and_exact_replication(case: str) -> None:
    ctx = ctx_on(["/a", "/a", "/a", "/a", "/b"])
    replicas = [replica(dn(1)), replica(dn(2)), replica(dn(3))]
    if case == "pending":
        ctx.add_pending(ADD, dn(5))
    elif case == "under":
        replicas.pop()
    elif case == "over":
        replicas.append(replica(dn(4)))
    else:
        replicas[0] = replica(dn(5))
    ctx.set_replicas(*replicas)
    assert handle_under_replicated(under(container(), mis=True), ctx) == 0
    assert ctx.sent == []


def test_ec_mis_replication_copies_each_crowded_index_from_its_own_node() -> None:
    ctx = ctx_on(["/a", "/a", "/b", "/c", "/d", "/e"])
    ctx.set_replicas(*(replica(dn(n), index=n) for n in range(1, 6)))  # indexes 1 and 2 share /a
    assert handle_under_replicated(under(ec(), mis=True), ctx) == 1
    [sent] = ctx.sent
    assert sent.command.replica_index in (1, 2)
    assert sent.to == dn(sent.command.replica_index)
    assert sent.command.target.uuid == dn(6)
    assert ctx.metrics.ec_replication_cmds_sent_total == 1


def test_ec_mis_replication_with_too_few_targets_copies_what_it_can() -> None:
    ctx = ctx_on(["/a", "/a", "/a", "/b", "/c", "/d"])
    ctx.nodes.add(dn(7), "/e", remaining=0)  # the only node on /e is full
    ctx.set_replicas(*(replica(dn(n), index=n) for n in range(1, 6)))  # 1, 2, 3 on /a
    with pytest.raises(InsufficientDatanodesError) as e:
        handle_under_replicated(under(ec(), mis=True), ctx)
    assert (e.value.required, e.value.available) == (2, 1)
    assert targets(ctx) == [dn(6)]
    assert ctx.metrics.ec_partial_replication_for_mis_replication_total == 1


def test_ratis_mis_replication_with_busy_sources_requeues() -> None:
    ctx = ctx_on(["/a", "/a", "/a", "/b"])
    ctx.set_replicas(replica(dn(1)), replica(dn(2)), replica(dn(3)))
    for n in (1, 2, 3):
        ctx.nodes.report(dn(n), T.replicateContainerCommand, 20)
    with pytest.raises(CommandTargetOverloadedError):
        handle_under_replicated(under(container(), mis=True), ctx)


# ------------------------------------------------------------------ quasi-closed stuck
def stuck_replicas():
    """Two origins (never force-closable with factor 3): A at the best BCSID, B behind."""
    return [
        replica(dn(1), "QUASI_CLOSED", seq=10, origin=dn(1)),
        replica(dn(2), "QUASI_CLOSED", seq=9, origin=dn(2)),
    ]


def test_stuck_under_replication_copies_every_origin_from_its_own_replicas() -> None:
    ctx = ctx_on(["/a", "/a", "/b", "/b", "/c", "/c"])
    ctx.set_replicas(*stuck_replicas())
    # best origin dn(1) needs 3 copies (has 1), the other 2 (has 1): 3 commands
    assert handle_under_replicated(under(container("QUASI_CLOSED")), ctx) == 3
    by_source = sorted(s.to for s in ctx.sent)
    assert by_source == [dn(1), dn(1), dn(2)]
    new = targets(ctx)
    assert len(set(new)) == 3 and not set(new) & {dn(1), dn(2)}


def test_stuck_under_replication_waits_for_pending_adds_and_ignores_empty_containers() -> None:
    ctx = ctx_on(["/a", "/a", "/b", "/b", "/c"])
    ctx.set_replicas(*stuck_replicas())
    ctx.add_pending(ADD, dn(3))
    assert handle_under_replicated(under(container("QUASI_CLOSED")), ctx) == 0
    empty = ctx_on(["/a", "/a", "/b", "/b", "/c"])
    empty.set_replicas(
        *(replica(r.datanode, "QUASI_CLOSED", r.sequence_id, empty=True) for r in stuck_replicas())
    )
    assert handle_under_replicated(under(container("QUASI_CLOSED")), empty) == 0
    assert ctx.sent == empty.sent == []


def test_stuck_under_replication_raises_the_first_failure_after_sending_the_rest() -> None:
    ctx = ctx_on(["/a", "/a", "/b", "/b"])
    ctx.set_replicas(*stuck_replicas())
    with pytest.raises(SCMException):  # origin dn(2) found no node after dn(1) took both
        handle_under_replicated(under(container("QUASI_CLOSED")), ctx)
    assert sorted(s.to for s in ctx.sent) == [dn(1), dn(1)]
    assert ctx.metrics.partial_replication_total == 1


def test_stuck_under_replication_with_too_few_targets_for_one_origin() -> None:
    ctx = ctx_on(["/a", "/a", "/b", "/b"])
    ctx.set_replicas(
        replica(dn(1), "QUASI_CLOSED", seq=10, origin=dn(1)),  # best origin: 1 of 3
        replica(dn(2), "QUASI_CLOSED", seq=9, origin=dn(2)),  # other origin: 2 of 2
        replica(dn(3), "QUASI_CLOSED", seq=9, origin=dn(2)),
    )
    with pytest.raises(InsufficientDatanodesError) as e:
        handle_under_replicated(under(container("QUASI_CLOSED")), ctx)
    assert (e.value.required, e.value.available) == (2, 1)
    assert targets(ctx) == [dn(4)]
    assert ctx.metrics.partial_replication_total == 1


def test_stuck_over_replication_deletes_each_origins_excess() -> None:
    ctx = ctx_on(["/a", "/a", "/b", "/b", "/c", "/c", "/d"])
    ctx.set_replicas(
        *(replica(dn(n), "QUASI_CLOSED", seq=10, origin=dn(1)) for n in (1, 3, 4, 5)),  # best: 4 > 3
        replica(dn(2), "QUASI_CLOSED", seq=9, origin=dn(2)),
        replica(dn(6), "QUASI_CLOSED", seq=9, origin=dn(2)),
    )
    assert handle_over_replicated(over(container("QUASI_CLOSED")), ctx) == 1
    [sent] = ctx.sent
    assert sent.to == dn(1)  # first in deterministic order
    assert sent.fields == {"container_id": 1, "force": True, "replica_index": 0}
    ctx.add_pending(DELETE, dn(3))
    assert handle_over_replicated(over(container("QUASI_CLOSED")), ctx) == 0
