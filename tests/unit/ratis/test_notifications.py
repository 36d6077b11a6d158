"""Failure notifications for the state machine: `NoLeader` (Ratis's notifyExtendedNoLeader after
raft.server.notification.no-leader.timeout) and `FollowerSlow` (notifyFollowerSlowness after
raft.server.rpc.slowness.timeout), each once per condition and again after it cleared."""

import pytest

from pyozone.ratis.outputs import FollowerSlow, NoLeader
from pyozone.ratis.settings import RaftSettings
from tests.unit.ratis.group import A, B, C, Group

SETTINGS = RaftSettings(no_leader_timeout_ms=1000, rpc_slowness_timeout_ms=1000)


def run(group: Group, until_ms: int, down: tuple = (), cut_from_leader: tuple = ()) -> None:
    """Tick every member at its deadlines until `until_ms`, delivering everything except to and from `down`
    and from the leader A to `cut_from_leader`."""
    while True:
        member = min(
            (m for m in group.members if m not in down), key=lambda m: group.servers[m].deadline_ms()
        )
        at = group.servers[member].deadline_ms()
        if at > until_ms:
            group.clock.advance(until_ms - group.clock.now_ms())
            return
        group.tick(member, max(0, at - group.clock.now_ms()))
        for to in cut_from_leader:
            group.sent(A, to)
        group.settle(*down)


def test_a_member_without_a_leader_reports_it_once_per_leaderless_stretch():
    group = Group(A, B, C, settings=SETTINGS)
    group.elect(A)
    run(group, 900)
    assert group.notices == {A: [], B: [], C: []}  # a leader reached everyone
    stepped_down = group.clock.now_ms()
    run(group, stepped_down + 3000, down=(B, C))  # A is alone: it steps down and stays without a leader
    since = group.notices[A][0].since_ms
    assert group.notices[A] == [NoLeader(since)]  # once, not every tick
    assert stepped_down < since <= stepped_down + 375  # from its step-down (CheckQuorum), not its start
    run(group, group.clock.now_ms() + 1000)  # healed: a leader again, then a new leaderless stretch
    assert group.notices[A] == [NoLeader(since)]
    leader = next(m for m in (A, B, C) if group.servers[m].leader_id == m)
    alone = next(m for m in (A, B, C) if m != leader)
    lost = group.clock.now_ms()
    run(group, lost + 1500, down=tuple(m for m in (A, B, C) if m != alone))
    assert group.notices[alone][-1].since_ms >= lost - 75
    assert group.notices[alone][-1] != NoLeader(since)


def test_a_leader_reports_a_silent_follower_once_per_silence_and_never_one_that_answers():
    group = Group(A, B, C, settings=SETTINGS)
    group.elect(A)
    led = group.clock.now_ms()
    run(group, led + 2500, cut_from_leader=(C,))  # C hears nothing, so answers nothing
    assert group.notices[A] == [FollowerSlow(C, 1000)]
    run(group, group.clock.now_ms() + 500)  # C answers again
    answered = group.clock.now_ms()
    run(group, answered + 1500, cut_from_leader=(C,))
    assert len(group.notices[A]) == 2 and group.notices[A][1].peer == C
    assert all(n.peer != B for n in group.notices[A])


def test_a_follower_that_never_answered_is_silent_since_the_leader_began():
    group = Group(A, B, C, settings=SETTINGS)
    group.elect(A, C)
    run(group, group.clock.now_ms() + 1000, down=(C,))
    assert group.notices[A] == [FollowerSlow(C, 1000)]


def test_zero_turns_the_notifications_off():
    group = Group(A, B, C, settings=RaftSettings(no_leader_timeout_ms=0, rpc_slowness_timeout_ms=0))
    group.elect(A)
    run(group, 5000, cut_from_leader=(C,))
    run(group, 10_000, down=(B, C))
    assert group.notices == {A: [], B: [], C: []}


@pytest.mark.parametrize("field", ["no_leader_timeout_ms", "rpc_slowness_timeout_ms"])
def test_a_negative_timeout_is_refused(field):
    with pytest.raises(ValueError, match="0: off"):
        RaftSettings(**{field: -1})
