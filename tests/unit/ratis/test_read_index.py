"""Linearizable reads by ReadIndex (Raft paper section 6.4; Ratis's LINEARIZABLE read option)."""

import time

from pyozone.ratis.messages import AppendEntriesRequest, AppendResult, ClientCall
from pyozone.ratis.outputs import NotLeader, ReadReady, Send
from tests.unit.ratis.group import A, B, C, Group

READ = ClientCall("c", 9, b"")


def leader_group() -> Group:
    group = Group(A, B, C)
    group.elect(A)
    group.tick(A, 75)
    group.settle()  # the followers know the commit too
    return group


def test_a_follower_refuses_a_read_naming_the_leader():
    group = leader_group()
    assert group.servers[B].read(READ) == [NotLeader(READ, A)]


def test_a_read_is_served_only_after_a_majority_answers_a_heartbeat_sent_after_it():
    group = leader_group()
    group.tick(A, 75)
    earlier = {to: group.sent(A, to) for to in (B, C)}  # sent before the read: their answers prove nothing
    group.take(A, group.servers[A].read(READ))
    confirming = {to: group.sent(A, to) for to in (B, C)}
    assert all(len(m) == 1 and isinstance(m[0], AppendEntriesRequest) for m in confirming.values())
    for to, messages in earlier.items():
        group.deliver(A, to, messages[0])
    for answer in group.sent(to=A):
        group.deliver(answer.follower_id, A, answer)
    assert group.reads == []
    group.deliver(A, B, confirming[B][0])
    group.deliver(B, A, group.sent(B, A)[0])
    assert group.reads == [ReadReady(READ, 1)]  # A and B: a majority of three


def test_a_new_leader_holds_reads_until_an_entry_of_its_term_commits():
    group = Group(A, B, C)
    group.tick(A, group.servers[A].deadline_ms())
    for _ in range(2):  # pre-vote, then the vote, with B only
        for message in group.sent(A, B):
            group.deliver(A, B, message)
        group.sync(B)
        for answer in group.sent(B, A):
            group.deliver(B, A, answer)
        group.sync(A)
    assert group.servers[A].commit_index == 0
    assert [o for o in group.take(A, group.servers[A].read(READ)) if isinstance(o, ReadReady)] == []
    group.settle()
    assert group.reads == [ReadReady(READ, 1)]  # the no-op committed, the read confirmed and served


def test_a_read_waits_for_the_state_machine_to_reach_the_read_index():
    group = leader_group()
    leader = group.servers[A]
    group.take(A, leader.submit(ClientCall("c", 1, b"w")))
    group.settle()
    assert leader.commit_index == 2
    read = leader.read(READ)  # shell applies nothing more: index 2 is applied already
    group.take(A, read)
    group.settle()
    assert group.reads == [ReadReady(READ, 2)]


def test_a_deposed_leader_cannot_confirm_a_read_and_refuses_it():
    group = leader_group()
    group.tick(B, 300)  # B, cut off from A, wins term 2 with C
    group.settle(A)
    assert group.servers[B].current_term == 2
    group.take(A, group.servers[A].read(READ))
    for to in (B, C):
        for message in group.sent(A, to):
            group.deliver(A, to, message)
        group.sync(to)
    answers = group.sent(to=A)
    assert len(answers) == 2 and all(a.result is AppendResult.NOT_LEADER for a in answers)
    refusals = []
    for answer in answers:
        refusals += group.deliver(answer.follower_id, A, answer)
    assert NotLeader(READ, None) in refusals and group.reads == []


def answer_last(group: Group, follower) -> list:
    """`follower` answers the last append A sent it; the others' are lost."""
    group.deliver(A, follower, group.sent(A, follower)[-1])
    group.sync(follower)
    (answer,) = group.sent(follower, A)
    return group.deliver(follower, A, answer)


def test_reads_arriving_while_a_round_is_in_flight_share_the_next_round_not_that_one():
    # R5: each read sent its own heartbeat to every follower. Ratis's ReadIndexHeartbeats batches them; a
    # read never joins a round sent before it arrived.
    group = leader_group()
    leader = group.servers[A]
    first = [o for o in group.take(A, leader.read(ClientCall("r", 0, b""))) if isinstance(o, Send)]
    assert [s.to for s in first] == [B, C]  # the first read starts a round
    later = [ClientCall("r", i, b"") for i in range(1, 1000)]
    for call in later:
        assert not any(isinstance(o, Send) for o in group.take(A, leader.read(call)))
    group.sent(A, C)
    served = answer_last(group, B)  # answers the first round
    assert [o.call.call_id for o in served if isinstance(o, ReadReady)] == [0]
    assert [s.to for s in served if isinstance(s, Send)] == [B, C]  # the next round, for all the others
    group.sent(A, C)
    assert [o.call for o in answer_last(group, B) if isinstance(o, ReadReady)] == later


def test_serving_many_confirmed_reads_is_linear():
    # R5: serving N confirmed reads compared every read with every other (seconds for 4,000).
    group = leader_group()
    leader = group.servers[A]
    calls = [ClientCall("r", i, b"") for i in range(4001)]
    for call in calls:
        group.take(A, leader.read(call))
    answer_last(group, B)
    group.sent(A, C)
    started = time.perf_counter()
    served = answer_last(group, B)
    assert time.perf_counter() - started < 1.0  # milliseconds; quadratic took seconds
    assert [o.call for o in served if isinstance(o, ReadReady)] == calls[1:]
