"""Priorities (Ratis's RaftPeer.priority): the vote rule of VoteContext.decideVote at equal logs, a leader
yielding to a caught-up follower of higher priority (LeaderStateImpl.yieldLeaderToHigherPriorityPeer), and
the first election's timeout (raft.server.rpc.first-election.timeout.*)."""

import random

import pytest

from pyozone.hdds.clock import ManualClock
from pyozone.ratis.messages import (
    ClientCall,
    RequestVoteReply,
    RequestVoteRequest,
    StartLeaderElectionRequest,
)
from pyozone.ratis.roles import RaftPeerRole
from pyozone.ratis.server import PersistentState, RaftServer
from pyozone.ratis.settings import RaftSettings
from tests.unit.ratis.group import A, B, C, Group, entries


def test_at_equal_logs_a_voter_refuses_a_candidate_of_lower_priority_and_one_of_equal_priority_grants():
    log = PersistentState(1, None, entries(1, 1))
    group = Group(A, B, C, states={m: log for m in (A, B, C)}, priorities={B: 1})
    group.clock.advance(300)  # no leader heard within the minimum timeout: pre-votes are open
    for pre_vote in (True, False):
        group.deliver(A, B, RequestVoteRequest(A, 2, 1, 2, pre_vote=pre_vote, call_id=7))
        group.deliver(A, C, RequestVoteRequest(A, 2, 1, 2, pre_vote=pre_vote, call_id=7))
        group.sync(B)
        group.sync(C)
        assert group.sent(B) == [RequestVoteReply(B, 2 if not pre_vote else 1, False, pre_vote, 7)]
        assert group.sent(C) == [RequestVoteReply(C, 2 if not pre_vote else 1, True, pre_vote, 7)]


def test_the_log_decides_before_the_priority():
    group = Group(A, B, C, states={B: PersistentState(1, None, entries(1, 1))}, priorities={B: 1})
    group.clock.advance(300)
    group.deliver(A, B, RequestVoteRequest(A, 2, 1, 3))  # A's log is longer: B's priority does not count
    group.sync(B)
    assert group.sent(B) == [RequestVoteReply(B, 2, True, False)]
    group.deliver(C, B, RequestVoteRequest(C, 3, 1, 1))  # behind B's: refused whatever its priority
    group.sync(B)
    assert group.sent(B) == [RequestVoteReply(B, 3, False, False)]


def test_a_leader_yields_to_a_caught_up_follower_of_higher_priority_and_writes_go_on_meanwhile():
    group = Group(A, B, C, priorities={B: 1})
    group.elect(A, B)  # B is down: A wins (C, of equal priority, grants)
    assert group.servers[A].role is RaftPeerRole.LEADER
    write = ClientCall("c", 1, b"x")
    group.take(A, group.servers[A].submit(write))
    group.settle(B)
    # B is back, behind: no hand-over while it lacks entries
    group.tick(A, 75)
    to_b = group.sent(A, B)
    assert not any(isinstance(m, StartLeaderElectionRequest) for m in to_b)
    for message in to_b:  # the heartbeat finds B behind; A catches it up, then hands over at once
        group.deliver(A, B, message)
    group.settle()
    assert group.servers[B].role is RaftPeerRole.LEADER and group.servers[B].current_term == 2
    assert group.servers[A].role is RaftPeerRole.FOLLOWER
    assert [r.call for r in group.replies] == [write]


def test_a_leader_hands_over_at_most_once_per_rpc_timeout_max_while_its_target_does_not_stand():
    group = Group(A, B, C, priorities={B: 1})
    group.elect(A, B)
    handovers = []
    for _ in range(8):  # 600 ms: B answers appends but its StartLeaderElection requests are lost
        group.tick(A, 75)
        for _ in range(3):
            for sender, to in ((A, B), (B, A), (A, C), (C, A)):
                for message in group.sent(sender, to):
                    if isinstance(message, StartLeaderElectionRequest):
                        handovers.append(group.clock.now_ms())
                    else:
                        group.deliver(sender, to, message)
            for member in (A, B, C):
                group.sync(member)
    assert len(handovers) == 2 and handovers[1] - handovers[0] >= 300
    assert group.servers[A].role is RaftPeerRole.LEADER


def test_the_top_priority_member_does_not_yield_and_a_lower_one_is_not_told_to_stand():
    group = Group(A, B, C, priorities={A: 2, B: 1})
    group.elect(A)
    for _ in range(6):
        group.tick(A, 75)
        group.settle()
    assert group.servers[A].role is RaftPeerRole.LEADER and group.servers[A].current_term == 1


def test_the_first_election_timeout_holds_until_the_member_first_stands_or_hears_a_leader():
    settings = RaftSettings(first_election_timeout_min_ms=0, first_election_timeout_max_ms=10)
    clock = ManualClock()
    fresh = RaftServer(A, (A, B, C), settings, clock, random.Random(1))
    assert fresh.deadline_ms() <= 10  # SCM's suggested leader of a new pipeline stands at once
    fresh.tick()
    clock.advance(fresh.deadline_ms())
    fresh.tick()  # its first pre-vote round timed out: from now on the usual timeouts
    assert 150 <= fresh.deadline_ms() - clock.now_ms() <= 300
    group = Group(A, B, C, settings=settings)
    group.elect(A)
    follower = group.servers[B]
    assert 150 <= follower.deadline_ms() - group.clock.now_ms() <= 300  # it heard from a leader


@pytest.mark.parametrize(
    ("low", "high"),
    [(-1, 10), (20, 10), (None, 100)],  # None: raft.server.rpc.timeout.min (150 ms), above the max given
)
def test_a_first_election_timeout_range_must_be_ordered_and_not_negative(low, high):
    with pytest.raises(ValueError, match="first-election"):
        RaftSettings(first_election_timeout_min_ms=low, first_election_timeout_max_ms=high)
