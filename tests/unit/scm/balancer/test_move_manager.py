"""MoveManager over a real core: a move is a LOW-priority replicate with the replication deadline, then,
once the copy is reported, a delete of the source's replica with the move deadline, only if the container
stays HEALTHY; each way a move can fail ends it with Ozone's MoveResult and leaves nothing
under-replicated."""

from __future__ import annotations

import pytest

from pyozone.hdds.commands import ReplicationCommandPriority
from pyozone.hdds.container_health import ContainerHealthState
from pyozone.hdds.states import LifeCycleEvent, NodeOperationalState, NodeState
from pyozone.scm.balancer import move_manager
from pyozone.scm.balancer.move_manager import MoveResult
from pyozone.scm.replication.pending_ops import PendingOpType
from tests.unit.scm.balancer.balancer_harness import BalancerHarness

MINUTE = 60_000


@pytest.fixture
def h() -> BalancerHarness:
    return BalancerHarness(datanodes=5)


def test_move_replicates_low_priority_then_deletes_the_source(h: BalancerHarness) -> None:
    d = h.dns
    cid = h.container(d[0:3])
    start = h.clock.wall_ms()
    assert h.moves.move(cid, d[0], d[3]) is None
    [(dn, replicate)] = h.replicates()
    assert dn == d[0] and replicate.target.uuid == d[3]
    assert replicate.priority is ReplicationCommandPriority.LOW
    # the datanode's deadline: the SCM deadline (now + move.replication.timeout) less the offset
    assert replicate.deadline_epoch_ms == start + 50 * MINUTE - 6 * MINUTE
    assert h.deletes() == []

    h.clock.advance(MINUTE)
    h.report_copy(cid, d[3])
    [(dn, delete)] = h.deletes()
    assert dn == d[0] and delete.container_id == cid and delete.force
    assert delete.deadline_epoch_ms == start + 65 * MINUTE - 6 * MINUTE
    assert h.results == []

    h.remove_replica(cid, d[0])
    assert h.results == [(cid, "COMPLETED")]
    assert not h.moves.is_moving(cid)
    assert {r.datanode for r in h.scm.containers.replicas(cid)} == {d[1], d[2], d[3]}


@pytest.mark.parametrize(
    ("setup", "expected"),
    [
        (lambda h, cid: None, None),
        (lambda h, cid: h.add_replica(cid, h.dns[3]), MoveResult.REPLICATION_FAIL_EXIST_IN_TARGET),
        (lambda h, cid: h.remove_replica(cid, h.dns[0]), MoveResult.REPLICATION_FAIL_NOT_EXIST_IN_SOURCE),
        (
            lambda h, cid: h.set_op_state(h.dns[3], NodeOperationalState.DECOMMISSIONING),
            MoveResult.REPLICATION_FAIL_NODE_NOT_IN_SERVICE,
        ),
    ],
    ids=["ok", "exists-in-target", "not-in-source", "target-not-in-service"],
)
def test_move_refused_before_it_starts(h: BalancerHarness, setup, expected) -> None:
    cid = h.container(h.dns[0:3])
    setup(h, cid)
    assert h.moves.move(cid, h.dns[0], h.dns[3]) is expected
    assert bool(h.replicates()) is (expected is None)


def test_move_of_an_under_replicated_container_is_refused(h: BalancerHarness) -> None:
    cid = h.container(h.dns[0:2])
    assert h.moves.move(cid, h.dns[0], h.dns[3]) is MoveResult.REPLICATION_NOT_HEALTHY_BEFORE_MOVE


def test_second_move_of_a_moving_container_is_refused(h: BalancerHarness) -> None:
    cid = h.container(h.dns[0:3])
    assert h.moves.move(cid, h.dns[0], h.dns[3]) is None
    assert h.moves.move(cid, h.dns[1], h.dns[4]) is MoveResult.FAIL_CONTAINER_ALREADY_BEING_MOVED


def test_move_with_the_replication_managers_pending_add_is_refused(h: BalancerHarness) -> None:
    # an ADD of the RM's own in flight (a pending ADD makes no container over-replicated): not moved now
    cid = h.container(h.dns[0:3])
    h.rm.pending_ops.schedule_add(cid, h.dns[4], 0, None, h.clock.wall_ms() + 600_000)
    assert h.moves.move(cid, h.dns[0], h.dns[3]) is MoveResult.REPLICATION_FAIL_INFLIGHT_REPLICATION
    assert h.replicates() == []


def test_move_breaking_rack_placement_is_refused() -> None:
    h = BalancerHarness(datanodes=6, racks=2)  # racks alternate: dns 0, 2, 4 on rack1
    d = h.dns
    cid = h.container([d[0], d[2], d[1]])  # two racks
    assert h.moves.move(cid, d[1], d[4]) is MoveResult.REPLICATION_NOT_HEALTHY_AFTER_MOVE
    assert h.moves.move(cid, d[1], d[3]) is None


def test_target_dying_mid_move_fails_it(h: BalancerHarness) -> None:
    cid = h.container(h.dns[0:3])
    assert h.moves.move(cid, h.dns[0], h.dns[3]) is None
    h.scm.nodes.node(h.dns[3]).status = h.scm.nodes.node(h.dns[3]).status.with_health(NodeState.DEAD)
    h.moves.check()
    assert h.results == [(cid, "REPLICATION_FAIL_NODE_UNHEALTHY")]
    # a late copy is the Replication Manager's over-replication: the source keeps its replica
    h.report_copy(cid, h.dns[3])
    assert h.deletes() == []
    assert len(h.scm.containers.replicas(cid)) == 4


def test_source_decommissioned_mid_move_keeps_its_replica(h: BalancerHarness) -> None:
    cid = h.container(h.dns[0:3])
    assert h.moves.move(cid, h.dns[0], h.dns[3]) is None
    h.set_op_state(h.dns[0], NodeOperationalState.DECOMMISSIONING)
    h.report_copy(cid, h.dns[3])
    assert h.results == [(cid, "DELETION_FAIL_NODE_NOT_IN_SERVICE")]
    assert h.deletes() == []


def test_container_deleted_mid_move_fails_it(h: BalancerHarness) -> None:
    cid = h.container(h.dns[0:3])
    assert h.moves.move(cid, h.dns[0], h.dns[3]) is None
    h.scm.containers.update_state(cid, LifeCycleEvent.DELETE)
    h.moves.check()
    assert h.results == [(cid, "REPLICATION_FAIL_CONTAINER_NOT_CLOSED")]


def test_container_under_replicated_mid_move_keeps_the_source(h: BalancerHarness) -> None:
    """Another replica is lost while the copy is made: deleting the source would leave two copies."""
    cid = h.container(h.dns[0:3])
    assert h.moves.move(cid, h.dns[0], h.dns[3]) is None
    h.remove_replica(cid, h.dns[1])
    h.report_copy(cid, h.dns[3])
    assert h.results == [(cid, "DELETE_FAIL_POLICY")]
    assert h.deletes() == []
    assert (
        h.scm.replication.replication_health(h.scm.containers.get(cid), h.scm.containers.replicas(cid))
        is ContainerHealthState.HEALTHY
    )


def test_replication_timing_out_fails_the_move(h: BalancerHarness) -> None:
    cid = h.container(h.dns[0:3])
    assert h.moves.move(cid, h.dns[0], h.dns[3]) is None
    h.clock.advance(50 * MINUTE + 1)
    h.scm.replication.scrub_pending_ops()
    assert h.results == [(cid, "REPLICATION_FAIL_TIME_OUT")]


def test_ec_move_keeps_the_replica_index() -> None:
    h = BalancerHarness(datanodes=7)
    d = h.dns
    cid = h.container(d[0:5], config="EC/rs-3-2-1024k")
    assert h.moves.move(cid, d[2], d[5]) is None
    [(dn, replicate)] = h.replicates()
    assert dn == d[2] and replicate.replica_index == 3
    h.report_copy(cid, d[5], index=3)
    [(dn, delete)] = h.deletes()
    assert dn == d[2] and delete.replica_index == 3


def _dead(h: BalancerHarness, index: int) -> None:
    node = h.scm.nodes.node(h.dns[index])
    node.status = node.status.with_health(NodeState.DEAD)


@pytest.mark.parametrize(
    ("breakage", "expected", "short"),
    [
        (lambda h, cid: _dead(h, 0), "REPLICATION_FAIL_NODE_UNHEALTHY", False),
        (lambda h, cid: h.remove_replica(cid, h.dns[0]), "REPLICATION_FAIL_NOT_EXIST_IN_SOURCE", True),
        (lambda h, cid: h.remove_replica(cid, h.dns[1]), "REPLICATION_NOT_HEALTHY_AFTER_MOVE", True),
        (lambda h, cid: _dead(h, 3), "REPLICATION_FAIL_NODE_UNHEALTHY", False),
        # R25 D1: a holder's replica turned UNHEALTHY (its node still HEALTHY, the replica still listed)
        (
            lambda h, cid: h.add_replica(cid, h.dns[0], "UNHEALTHY"),
            "REPLICATION_NOT_HEALTHY_AFTER_MOVE",
            True,
        ),
        (
            lambda h, cid: h.add_replica(cid, h.dns[1], "UNHEALTHY"),
            "REPLICATION_NOT_HEALTHY_AFTER_MOVE",
            True,
        ),
        # R25 D3: a holder decommissioned: its replica no longer counts, the RM must copy it now
        (
            lambda h, cid: h.set_op_state(h.dns[0], NodeOperationalState.DECOMMISSIONING),
            "REPLICATION_FAIL_NODE_NOT_IN_SERVICE",
            True,
        ),
        (
            lambda h, cid: h.set_op_state(h.dns[1], NodeOperationalState.DECOMMISSIONING),
            "REPLICATION_FAIL_NODE_NOT_IN_SERVICE",
            True,
        ),
    ],
    ids=[
        "source-dead",
        "source-lost-replica",
        "other-lost-replica",
        "target-dead",
        "source-replica-unhealthy",
        "other-replica-unhealthy",
        "source-decommissioning",
        "other-decommissioning",
    ],
)
def test_move_that_cannot_complete_withdraws_its_add_and_the_rm_checks_at_once(
    h: BalancerHarness, breakage, expected: str, short: bool
) -> None:
    """R24 D1: the move's pending ADD must not count toward sufficiency once the move cannot complete;
    a container left short of copies is found UNDER_REPLICATED by the RM's targeted check at once."""
    cid = h.container(h.dns[0:3])
    assert h.moves.move(cid, h.dns[0], h.dns[3]) is None
    h.drain()
    breakage(h, cid)
    h.moves.check()
    assert h.results == [(cid, expected)]
    assert [op for op in h.rm.pending_ops.ops(cid) if op.type is PendingOpType.ADD] == []
    if short:
        assert h.rm.container_health(cid) is ContainerHealthState.UNDER_REPLICATED


def test_a_copy_in_maintenance_or_closing_meanwhile_does_not_end_a_move() -> None:
    """R27 D1: what the move relies on is what counted when it started: a copy already on a datanode in
    maintenance stays counted, a QUASI_CLOSED copy the RM closes meanwhile counts all along, and a copy
    whose datanode enters maintenance mid-move still counts toward the maintenance minimum."""
    h = BalancerHarness(datanodes=8)
    in_maintenance, closing = h.container(h.dns[0:3]), h.container(h.dns[0:3])
    entering = h.container([h.dns[0], h.dns[2], h.dns[5]])
    # an extra UNHEALTHY copy that never counted, and one on a datanode already decommissioning
    extra_unhealthy = h.container([*h.dns[0:3], h.dns[6]])
    h.add_replica(extra_unhealthy, h.dns[6], "UNHEALTHY")
    extra_decommissioning = h.container([h.dns[0], h.dns[2], h.dns[3], h.dns[7]])
    h.set_op_state(h.dns[7], NodeOperationalState.DECOMMISSIONING)
    h.add_replica(closing, h.dns[2], "QUASI_CLOSED")
    h.set_op_state(h.dns[1], NodeOperationalState.ENTERING_MAINTENANCE)
    h.set_op_state(h.dns[1], NodeOperationalState.IN_MAINTENANCE)
    assert h.rm.container_health(in_maintenance) is ContainerHealthState.HEALTHY
    assert h.rm.container_health(closing) is ContainerHealthState.HEALTHY
    assert h.moves.move(in_maintenance, h.dns[0], h.dns[3]) is None
    assert h.moves.move(closing, h.dns[0], h.dns[4]) is None
    assert h.moves.move(entering, h.dns[0], h.dns[6]) is None
    started = [
        h.moves.move(extra_unhealthy, h.dns[0], h.dns[4]),
        h.moves.move(extra_decommissioning, h.dns[0], h.dns[6]),
    ]
    h.add_replica(closing, h.dns[2], "CLOSED")
    h.set_op_state(h.dns[5], NodeOperationalState.ENTERING_MAINTENANCE)
    h.moves.check()
    assert started == [None, None] and h.results == []
    h.report_copy(in_maintenance, h.dns[3])
    h.report_copy(closing, h.dns[4])
    assert sorted(d.container_id for _, d in h.deletes()) == sorted([in_maintenance, closing])


def test_check_looks_at_a_bounded_number_of_moves_a_tick(
    h: BalancerHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """R25 D5: a tick's check costs CHECK_STEP moves at most, round robin, so every move is looked at."""
    monkeypatch.setattr(move_manager, "CHECK_STEP", 2)
    cids = [h.container(h.dns[0:3]) for _ in range(5)]
    for cid in cids:
        assert h.moves.move(cid, h.dns[0], h.dns[3]) is None
    _dead(h, 3)  # every move can no longer complete
    ended = []
    for _ in range(3):
        h.moves.check()
        ended.append(len(h.results))
    assert ended == [2, 4, 5]
    assert sorted(cid for cid, _ in h.results) == sorted(cids)


def test_moves_ending_between_checks_make_none_wait_longer(
    h: BalancerHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """R27 D3: with moves ending ahead of the others between ticks, each move is still looked at within
    len(pending) / CHECK_STEP ticks (an index into `pending` skipped as many as had ended)."""
    monkeypatch.setattr(move_manager, "CHECK_STEP", 2)
    cids = [h.container(h.dns[0:3]) for _ in range(6)]
    for cid in cids:
        assert h.moves.move(cid, h.dns[0], h.dns[3]) is None
    looked: list[int] = []
    monkeypatch.setattr(h.moves, "_cannot_complete", lambda cid, move: looked.append(cid))
    h.moves.check()  # the first two
    for ended in cids[:2]:
        h.moves.cancel(ended)  # two moves end ahead of the rest
    h.moves.check()
    h.moves.check()
    assert looked == cids  # 3 ticks for 6 moves, none skipped


def test_a_container_moved_again_after_a_cancel_is_checked_once_a_round(
    h: BalancerHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reread A6: the entry a cancelled move left in the check queue is dropped, not checked for the
    container's next move (which had two entries, so twice each round, while it ran)."""
    cid = h.container(h.dns[0:3])
    assert h.moves.move(cid, h.dns[0], h.dns[3]) is None
    h.moves.cancel(cid)
    assert h.moves.move(cid, h.dns[0], h.dns[4]) is None
    looked: list[int] = []
    monkeypatch.setattr(h.moves, "_cannot_complete", lambda cid, move: looked.append(cid))
    h.moves.check()
    h.moves.check()
    assert looked == [cid, cid]  # two rounds, once each


def test_cancel_and_clear_withdraw_the_adds_of_replicating_moves(h: BalancerHarness) -> None:
    """R24 D11: a move the balancer forgets (iteration end, `stop`) leaves no pending ADD behind."""
    first, second = h.container(h.dns[0:3]), h.container(h.dns[0:3])
    assert h.moves.move(first, h.dns[0], h.dns[3]) is None
    assert h.moves.move(second, h.dns[0], h.dns[4]) is None
    assert h.rm.pending_ops.pending_add_count() == 2
    h.moves.cancel(first)
    assert h.rm.pending_ops.ops(first) == []
    h.moves.clear()
    assert h.rm.pending_ops.pending_add_count() == 0
    assert h.results == []  # forgotten, not completed: no delete of a source follows
    assert h.deletes() == []


def test_source_delete_does_not_count_a_stale_holder(h: BalancerHarness) -> None:
    """R24 D8: with another holder STALE, the source's copy is kept (the RM's over-replication rule:
    only copies on heartbeating nodes count when a spare is deleted)."""
    cid = h.container(h.dns[0:3])
    assert h.moves.move(cid, h.dns[0], h.dns[3]) is None
    node = h.scm.nodes.node(h.dns[1])
    node.status = node.status.with_health(NodeState.STALE)
    h.report_copy(cid, h.dns[3])
    assert h.results == [(cid, "DELETE_FAIL_POLICY")]
    assert h.deletes() == []


def test_move_is_not_started_while_a_holder_is_stale(h: BalancerHarness) -> None:
    """R24 D8: the same rule before the move: its delete could not be sent."""
    cid = h.container(h.dns[0:3])
    node = h.scm.nodes.node(h.dns[1])
    node.status = node.status.with_health(NodeState.STALE)
    assert h.moves.move(cid, h.dns[0], h.dns[3]) is MoveResult.REPLICATION_NOT_HEALTHY_AFTER_MOVE
