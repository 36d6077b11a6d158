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
from tests.unit.ratis.group import A, B, C, D, E, Group, entries


def test_a_follower_times_out_within_the_randomized_window_and_first_asks_for_pre_votes():
    group = Group(A, B, C)
    deadline = group.servers[A].deadline_ms()
    assert 150 <= deadline <= 300  # raft.server.rpc.timeout.min / .max
    assert group.tick(A, deadline - 1) == []
    outputs = group.tick(A, 1)
    assert not any(isinstance(o, Persist) for o in outputs)  # a pre-vote changes nothing durable
    requests = group.sent(A)
    assert requests == [RequestVoteRequest(A, 1, 0, 0, pre_vote=True, call_id=1)] * 2
    assert (group.servers[A].current_term, group.servers[A].role) == (0, RaftPeerRole.CANDIDATE)


def test_timeouts_differ_between_members():
    group = Group(A, B, C)
    assert len({server.deadline_ms() for server in group.servers.values()}) > 1


def test_a_pre_vote_majority_starts_the_election_whose_requests_wait_for_the_persisted_vote():
    group = Group(A, B, C)
    group.tick(A, group.servers[A].deadline_ms())
    (request, _) = group.sent(A)
    outputs = group.deliver(B, A, RequestVoteReply(B, 0, True, pre_vote=True, call_id=request.call_id))
    assert [o for o in outputs if isinstance(o, Persist)] == [Persist(1, 1, A, ())]
    assert not any(isinstance(o, Send) for o in outputs)  # nothing leaves before term and vote are durable
    released = group.sync(A)
    assert [o.message for o in released] == [RequestVoteRequest(A, 1, 0, 0, call_id=request.call_id + 1)] * 2


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
        group.tick(A)
        group.settle(C)
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


def test_a_leader_cut_off_from_the_majority_steps_down_and_does_not_stand_again_at_once():
    # Ratis's LeaderStateImpl.checkLeadership: no majority of answers within raft.server.rpc.timeout.max.
    group = Group(A, B, C)
    group.elect(A)
    write, read = ClientCall("c", 1, b"x"), ClientCall("c", 2, b"")
    group.take(A, group.servers[A].submit(write))
    group.take(A, group.servers[A].read(read))
    outputs = []
    for _ in range(4):  # heartbeats go unanswered: A is cut off
        outputs += group.tick(A, 75)
        group.sent(A)
    assert group.servers[A].role is RaftPeerRole.LEADER  # 300 ms: still within the window
    outputs += group.tick(A, 75)
    assert group.servers[A].role is RaftPeerRole.FOLLOWER and group.servers[A].current_term == 1
    assert NotLeader(write, None) in outputs and NotLeader(read, None) in outputs  # the clients try elsewhere
    # raft.server.leaderelection.leader.step-down.wait-time (10 s): its timeouts start no election meanwhile.
    stepped_down = group.clock.now_ms()
    while group.servers[A].deadline_ms() < stepped_down + 10_000:
        group.tick(A, group.servers[A].deadline_ms() - group.clock.now_ms())
        assert group.sent(A) == []
    group.tick(A, stepped_down + 10_300 - group.clock.now_ms())
    group.sync(A)  # its requests wait for its log's write (the one of the refused call)
    assert [m.pre_vote for m in group.sent(A)] == [True, True]


def test_a_follower_that_never_answered_is_not_counted_as_heard():
    # R5: a follower counted as heard at the election (or as a learner when added) kept a leader that heard
    # from nobody leading one heartbeat past the window the simulation's CheckQuorum check allows.
    group = Group(A, B, C)
    group.tick(A, group.servers[A].deadline_ms())
    while group.servers[A].role is not RaftPeerRole.LEADER:  # the votes arrive, no append is answered
        for member in (A, B, C):
            group.sync(member)
        for sender in (A, B, C):
            for message in group.sent(sender):
                if not isinstance(message, AppendEntriesRequest):
                    group.deliver(sender, B if sender == A else A, message)
    for _ in range(3):
        group.tick(A, 75)
        group.sync(A)
        group.sent(A)
    assert group.servers[A].role is RaftPeerRole.LEADER
    group.tick(A, 75)  # the window has passed: nobody answered
    assert group.servers[A].role is RaftPeerRole.FOLLOWER


def test_a_leader_that_hears_from_a_majority_keeps_leading():
    group = Group(A, B, C)
    group.elect(A)
    for _ in range(20):
        group.tick(A, 75)
        for message in group.sent(A, B):
            group.deliver(A, B, message)
        group.settle(C)  # C is cut off; B and A are a majority
    assert group.servers[A].role is RaftPeerRole.LEADER


def test_a_late_pre_vote_grant_from_an_earlier_round_does_not_count():
    group = Group(A, B, C, D, E)  # three grants are a majority
    group.tick(A, group.servers[A].deadline_ms())
    first_round = group.sent(A, B)[0]
    group.sent(A)
    group.tick(A, group.servers[A].deadline_ms() - group.clock.now_ms())  # that round timed out
    second_round = group.sent(A, C)[0]
    assert second_round.call_id != first_round.call_id
    group.deliver(B, A, RequestVoteReply(B, 0, True, True, first_round.call_id))  # late
    group.deliver(C, A, RequestVoteReply(C, 0, True, True, second_round.call_id))
    assert group.servers[A].current_term == 0  # A and C are two: no election yet
    group.deliver(D, A, RequestVoteReply(D, 0, True, True, second_round.call_id))
    assert group.servers[A].current_term == 1


def test_a_deposed_leader_refuses_its_pending_calls_naming_the_new_leader():
    group = Group(A, B, C)
    group.elect(A)
    call = ClientCall("c", 1, b"x")
    group.take(A, group.servers[A].submit(call))
    outputs = group.deliver(B, A, AppendEntriesRequest(B, 2, 0, 0, (), 0, 1))
    assert NotLeader(call, B) in outputs
    assert group.servers[A].submit(ClientCall("c", 2, b"y")) == [NotLeader(ClientCall("c", 2, b"y"), B)]


def test_a_reply_naming_no_round_does_not_count():
    # The wire carries every vote's round (RaftRpcRequestProto.callId): a reply naming none answers no round.
    group = Group(A, B, C)
    group.tick(A, group.servers[A].deadline_ms())
    group.sent(A)
    group.deliver(B, A, RequestVoteReply(B, 0, True, True))
    assert group.servers[A].current_term == 0


def test_a_stepped_down_leader_that_follows_a_new_leader_stands_again_once_that_one_is_lost():
    # R11 defect 4: a leader that lost its majority waited out the step-down wait (10 s) before standing
    # even after it had followed a newer leader, so when that one was cut off too, the two connected members
    # elected nobody: the other's pre-vote was refused (our log is ahead of its) and we would not stand. Ratis
    # applies raft.server.leaderelection.leader.step-down.wait-time only to the FollowerState its step-down
    # started; an append from a leader starts a new one (changeToFollower(force) in appendEntries).
    group = Group(A, B, C)
    group.elect(A)
    while group.servers[A].role is RaftPeerRole.LEADER:  # A is cut off: it steps down, lost majority
        group.tick(A, 75)
        group.sent(A)
    group.elect(B, A)
    group.tick(B, group.servers[B].deadline_ms() - group.clock.now_ms())
    group.settle()  # healed: A follows B
    assert group.servers[A].leader_id == B
    group.take(B, group.servers[B].submit(ClientCall("c", 1, b"x")))
    group.sync(B)
    for message in group.sent(B, A):  # the entry reaches A, not C: A's log is ahead of C's
        group.deliver(B, A, message)
    group.sync(A)
    group.sent(B)
    group.sent(A)
    cut_off = group.clock.now_ms()  # B is cut off; A and C are a majority
    while not any(group.servers[m].role is RaftPeerRole.LEADER for m in (A, C)):
        assert group.clock.now_ms() - cut_off < 10 * 300, "no leader within 10 election timeouts"
        member = min((A, C), key=lambda m: group.servers[m].deadline_ms())
        group.tick(member, max(0, group.servers[member].deadline_ms() - group.clock.now_ms()))
        group.settle(B)
    assert group.servers[A].role is RaftPeerRole.LEADER  # C's log lacks the entry: only A can win
