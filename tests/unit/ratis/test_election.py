"""Elections (Raft paper Figure 2 and section 5.2, 5.4.1; Ratis's pre-vote)."""

import pytest

from pyozone.ratis.messages import (
    AppendEntriesRequest,
    ClientCall,
    RaftPeerId,
    RequestVoteReply,
    RequestVoteRequest,
)
from pyozone.ratis.outputs import NotLeader, Persist, Send
from pyozone.ratis.roles import RaftPeerRole
from pyozone.ratis.server import PersistentState
from pyozone.ratis.settings import RaftSettings
from tests.unit.ratis.group import A, B, C, Group, entries


def test_a_follower_times_out_within_the_randomized_window_and_first_asks_for_pre_votes():
    group = Group(A, B, C)
    deadline = group.servers[A].deadline_ms()
    assert 150 <= deadline <= 300  # raft.server.rpc.timeout.min / .max
    assert group.tick(A, deadline - 1) == []
    outputs = group.tick(A, 1)
    assert not any(isinstance(o, Persist) for o in outputs)  # a pre-vote changes nothing durable
    requests = group.sent(A)
    assert requests == [RequestVoteRequest(A, 1, 0, 0, pre_vote=True)] * 2
    assert (group.servers[A].current_term, group.servers[A].role) == (0, RaftPeerRole.CANDIDATE)


def test_timeouts_differ_between_members():
    group = Group(A, B, C)
    assert len({server.deadline_ms() for server in group.servers.values()}) > 1


def test_a_pre_vote_majority_starts_the_election_whose_requests_wait_for_the_persisted_vote():
    group = Group(A, B, C)
    group.tick(A, group.servers[A].deadline_ms())
    group.sent(A)
    outputs = group.deliver(B, A, RequestVoteReply(B, 0, True, pre_vote=True))
    assert [o for o in outputs if isinstance(o, Persist)] == [Persist(1, 1, A, ())]
    assert not any(isinstance(o, Send) for o in outputs)  # nothing leaves before term and vote are durable
    released = group.sync(A)
    assert [o.message for o in released] == [RequestVoteRequest(A, 1, 0, 0)] * 2


def test_a_vote_is_persisted_before_the_reply_leaves_and_only_one_is_given_per_term():
    group = Group(A, B, C)
    outputs = group.deliver(A, B, RequestVoteRequest(A, 1, 0, 0))
    assert outputs == [Persist(1, 1, A, ())]
    assert group.sync(B) == [Send(A, RequestVoteReply(B, 1, True, False))]
    group.sent(B)
    group.deliver(C, B, RequestVoteRequest(C, 1, 0, 0))
    assert group.sent(B) == [RequestVoteReply(B, 1, False, False)]
    group.deliver(A, B, RequestVoteRequest(A, 1, 0, 0))  # a repeated request gets the same answer
    assert group.sent(B) == [RequestVoteReply(B, 1, True, False)]


def test_a_candidate_with_a_less_up_to_date_log_gets_no_vote_but_raises_the_term():
    group = Group(A, B, C, states={B: PersistentState(2, None, entries(1, 2))})
    group.deliver(A, B, RequestVoteRequest(A, 3, 1, 5))
    group.sync(B)
    assert group.sent(B) == [RequestVoteReply(B, 3, False, False)]
    assert group.servers[B].current_term == 3


def test_an_election_is_won_by_a_majority_and_the_leader_appends_a_no_op_of_its_term():
    group = Group(A, B, C)
    group.elect(A)
    leader = group.servers[A]
    assert (leader.role, leader.current_term, leader.leader_id) == (RaftPeerRole.LEADER, 1, A)
    assert leader.commit_index == 1  # the no-op committed
    followers = (group.servers[B], group.servers[C])
    assert [(s.role, s.leader_id) for s in followers] == [(RaftPeerRole.FOLLOWER, A)] * 2


def test_pre_vote_keeps_a_rejoining_member_from_disrupting_the_term():
    group = Group(A, B, C)
    group.elect(A)
    # C is cut off and times out again and again: its pre-votes fail, its term stays.
    for _ in range(5):
        group.tick(C, 300)
        group.sent(C)
    assert group.servers[C].current_term == 1
    # B, hearing from its leader, refuses C's pre-vote; the term of the group stays 1 when C rejoins.
    group.tick(A, 75)
    group.settle(C)
    group.tick(C, 1 + group.servers[C].deadline_ms() - group.clock.now_ms())
    group.settle()
    assert {s.current_term for s in group.servers.values()} == {1}
    assert group.servers[A].role is RaftPeerRole.LEADER


def test_without_pre_vote_a_timeout_raises_the_term_at_once():
    group = Group(A, B, C, settings=RaftSettings(pre_vote=False))
    group.tick(A, 300)
    assert group.servers[A].current_term == 1


def test_a_leader_sends_heartbeats_every_half_minimum_timeout_and_followers_stay_put():
    group = Group(A, B, C)
    group.elect(A)
    for _ in range(20):
        group.tick(A, 75)
        heartbeats = group.sent(A)
        assert len(heartbeats) == 2 and all(
            isinstance(m, AppendEntriesRequest) and not m.entries for m in heartbeats
        )
        for message, to in zip(heartbeats, (B, C), strict=True):
            group.deliver(A, to, message)
        for follower in (B, C):
            assert group.tick(follower) == []  # no election: the leader was heard
        group.settle()
    assert group.servers[B].role is RaftPeerRole.FOLLOWER


def test_a_leader_steps_down_on_a_higher_term_and_fails_its_pending_calls():
    group = Group(A, B, C)
    group.elect(A)
    call = ClientCall("c", 1, b"x")
    group.take(A, group.servers[A].submit(call))
    outputs = group.deliver(B, A, RequestVoteRequest(B, 5, 0, 0))
    assert NotLeader(call, None) in outputs
    assert (group.servers[A].role, group.servers[A].current_term) == (RaftPeerRole.FOLLOWER, 5)


def test_a_follower_refuses_a_client_naming_the_leader():
    group = Group(A, B, C)
    group.elect(A)
    call = ClientCall("c", 1, b"x")
    assert group.servers[B].submit(call) == [NotLeader(call, A)]


def test_a_restarted_member_keeps_its_term_and_vote():
    group = Group(A, B, C, states={B: PersistentState(4, C, entries(1, 4))})
    group.deliver(A, B, RequestVoteRequest(A, 4, 4, 9))
    assert group.sent(B) == [RequestVoteReply(B, 4, False, False)]


def test_a_message_from_outside_the_group_or_naming_another_sender_is_refused():
    group = Group(A, B, C)
    stranger = RaftPeerId("x")
    with pytest.raises(ValueError, match=r"from x .*not another member"):
        group.servers[A].receive(stranger, RequestVoteReply(stranger, 0, True, True))
    with pytest.raises(ValueError, match=r"from b \(naming c\)"):
        group.servers[A].receive(B, RequestVoteRequest(C, 1, 0, 0))
    with pytest.raises(ValueError, match="from a"):
        group.servers[A].receive(A, RequestVoteRequest(A, 1, 0, 0))
    assert group.servers[A].current_term == 0
