"""Ratis over-replication (Ozone's RatisOverReplicationHandler)."""

from __future__ import annotations

import pytest

from pyozone.hdds.states import NodeState
from pyozone.scm.replication.commands import CommandTargetOverloadedError
from pyozone.scm.replication.pending_ops import PendingOpType
from pyozone.scm.replication.processing import handle_over_replicated
from tests.unit.scm.replication.processing.rmp_fakes import (
    CID,
    FakeContext,
    Op,
    T,
    container,
    dn,
    over,
    replica,
)

DELETE = PendingOpType.DELETE


def ctx_on(racks: list[str]) -> FakeContext:
    ctx = FakeContext()
    for i, rack in enumerate(racks, 1):
        ctx.nodes.add(dn(i), rack)
    return ctx


def deleted(ctx: FakeContext) -> list[str]:
    return [s.to for s in ctx.sent if s.type is T.deleteContainerCommand]


def test_one_excess_closed_replica_is_deleted_force_and_throttled() -> None:
    ctx = ctx_on(["/a", "/a", "/b", "/b"])
    ctx.set_replicas(*(replica(dn(i)) for i in range(1, 5)))
    assert handle_over_replicated(over(container()), ctx) == 1
    [sent] = ctx.sent
    assert sent.fields == {"container_id": CID, "force": True, "replica_index": 0}
    assert ctx.pending() == [(DELETE, sent.to, 0)]
    assert ctx.metrics.deletion_cmds_sent_total == 1


def test_the_deletion_keeps_the_placement_satisfied() -> None:
    ctx = ctx_on(["/a", "/a", "/a", "/b"])
    ctx.set_replicas(*(replica(dn(i)) for i in range(1, 5)))
    handle_over_replicated(over(container()), ctx)
    [victim] = deleted(ctx)
    assert victim != dn(4)  # the only copy on /b stays


def test_mismatched_and_unhealthy_copies_go_first() -> None:
    ctx = ctx_on(["/a", "/a", "/b", "/b", "/b"])
    ctx.set_replicas(
        replica(dn(1)),
        replica(dn(2)),
        replica(dn(3)),
        replica(dn(4), "UNHEALTHY"),
        replica(dn(5), "UNHEALTHY"),
    )
    assert handle_over_replicated(over(container()), ctx) == 2
    assert sorted(deleted(ctx)) == [dn(4), dn(5)]


def test_copies_on_stale_nodes_do_not_count_and_are_never_deleted() -> None:
    ctx = ctx_on(["/a", "/a", "/b", "/b"])
    ctx.nodes.set_state(dn(4), health=NodeState.STALE)
    ctx.set_replicas(*(replica(dn(i)) for i in range(1, 5)))
    assert handle_over_replicated(over(container()), ctx) == 0
    ctx.nodes.add(dn(5), "/b")
    ctx.set_replicas(replica(dn(5)))
    assert handle_over_replicated(over(container()), ctx) == 1
    assert deleted(ctx) != [dn(4)]


def test_copies_on_nodes_out_of_service_are_not_eligible() -> None:
    ctx = ctx_on(["/a", "/a", "/b", "/b", "/b"])
    ctx.nodes.set_state(dn(1), op=Op.IN_MAINTENANCE)  # first in deletion order, but not eligible
    ctx.set_replicas(*(replica(dn(i)) for i in range(1, 6)))
    assert handle_over_replicated(over(container()), ctx) == 1
    assert deleted(ctx) != [dn(1)]


def test_pending_deletes_reduce_the_excess() -> None:
    ctx = ctx_on(["/a", "/a", "/b", "/b", "/b"])
    ctx.set_replicas(*(replica(dn(i)) for i in range(1, 6)))
    ctx.add_pending(DELETE, dn(5))
    assert handle_over_replicated(over(container()), ctx) == 1
    assert dn(5) not in deleted(ctx)
    ctx.add_pending(DELETE, deleted(ctx)[0])
    assert handle_over_replicated(over(container()), ctx) == 0


def test_a_refused_delete_still_uses_up_its_share_of_the_excess_and_requeues() -> None:
    ctx = ctx_on(["/a", "/a", "/b", "/b", "/b"])
    ctx.set_replicas(
        replica(dn(1)), replica(dn(2)), replica(dn(3)), replica(dn(4)), replica(dn(5), "UNHEALTHY")
    )
    ctx.nodes.report(dn(5), T.deleteContainerCommand, 40)
    with pytest.raises(CommandTargetOverloadedError):
        handle_over_replicated(over(container()), ctx)
    assert len(deleted(ctx)) == 1  # one healthy copy; the unhealthy one was not replaced by another
    assert dn(5) not in deleted(ctx)


def test_quasi_closed_containers_keep_one_copy_of_every_origin() -> None:
    ctx = ctx_on(["/a", "/a", "/b", "/b", "/b"])
    qc = container("QUASI_CLOSED")
    ctx.set_replicas(
        replica(dn(1), "QUASI_CLOSED", origin=dn(1)),
        replica(dn(2), "QUASI_CLOSED", origin=dn(2)),
        replica(dn(3), "QUASI_CLOSED", origin=dn(3)),
        replica(dn(4), "QUASI_CLOSED", origin=dn(4)),
        replica(dn(5), "QUASI_CLOSED", origin=dn(1)),
    )
    assert handle_over_replicated(over(qc), ctx) == 1
    assert deleted(ctx) in ([dn(1)], [dn(5)])  # only origin dn(1) has a spare
