"""Membership change, one server at a time (the Raft thesis, chapter 4; Ratis's SetConfiguration with its
staging of a new member)."""

import pytest

from pyozone.ratis.messages import (
    AppendEntriesRequest,
    ClientCall,
    EntryKind,
    LogEntry,
    RequestVoteReply,
    RequestVoteRequest,
)
from pyozone.ratis.outputs import ConfigurationDone, ConfigurationRefused, NotLeader
from pyozone.ratis.roles import RaftPeerRole
from pyozone.ratis.server import PersistentState
from tests.unit.ratis.group import A, B, C, D, E, Group

CHANGE = ClientCall("admin", 1, b"")
OLD = (A, B, C)


def group_of_three_and_a_newcomer() -> Group:
    """A, B and C are the group (A leads); D is started to join it."""
    group = Group(A, B, C, D, states={m: PersistentState(configuration=OLD) for m in OLD})
    group.elect(A, D)
    group.tick(A, 75)
    group.settle(D)
    return group


def test_a_new_member_catches_up_as_a_learner_before_its_configuration_entry_is_appended():
    group = group_of_three_and_a_newcomer()
    leader = group.servers[A]
    group.take(A, leader.submit(ClientCall("c", 1, b"x")))
    group.settle(D)
    group.take(A, leader.set_configuration(CHANGE, (A, B, C, D)))
    assert leader.configuration == OLD  # staging: D is replicated to, not counted
    assert group.sent(A, D)  # D gets the log (this append is lost)
    group.tick(A, 75)
    group.settle()
    configuration_entry = leader.log.entry(leader.log.last_index)
    assert configuration_entry.kind is EntryKind.CONFIGURATION and configuration_entry.peers == (A, B, C, D)
    assert {group.servers[m].configuration for m in (A, B, C, D)} == {(A, B, C, D)}
    assert group.servers[D].log.entries() == leader.log.entries()


def test_the_change_is_answered_once_its_entry_commits():
    group = group_of_three_and_a_newcomer()
    leader = group.servers[A]
    answers = []
    answers += group.take(A, leader.set_configuration(CHANGE, (A, B, C, D)))
    while not any(isinstance(o, ConfigurationDone) for o in answers):
        for member in (A, B, C, D):
            answers += group.sync(member)
        outbox, group.outbox = group.outbox, []
        assert outbox, "the change stalled"
        for sender, send in outbox:
            answers += group.deliver(sender, send.to, send.message) if send.to == A else []
            if send.to != A:
                group.deliver(sender, send.to, send.message)
    (done,) = [o for o in answers if isinstance(o, ConfigurationDone)]
    assert done == ConfigurationDone(CHANGE, leader.log.configuration_indexes()[-1])
    assert leader.commit_index >= done.index


def test_one_change_at_a_time_and_of_one_member():
    group = group_of_three_and_a_newcomer()
    leader = group.servers[A]
    group.take(A, leader.set_configuration(CHANGE, (A, B, C, D)))
    other = ClientCall("admin", 2, b"")
    assert leader.set_configuration(other, (A, B)) == [
        ConfigurationRefused(other, "another configuration change is in progress")
    ]
    group.settle()
    group.tick(A, 75)
    group.settle()
    assert leader.configuration == (A, B, C, D)
    refused = leader.set_configuration(other, (A, B))
    assert isinstance(refused[0], ConfigurationRefused) and "other than one member" in refused[0].reason
    assert group.servers[B].set_configuration(other, (A, B, C)) == [NotLeader(other, A)]


def test_a_leader_that_removes_itself_steps_down_once_the_removal_commits_and_stands_no_more():
    group = Group(A, B, C)
    group.elect(A)
    leader = group.servers[A]
    group.take(A, leader.set_configuration(CHANGE, (B, C)))
    assert leader.configuration == (B, C) and leader.role is RaftPeerRole.LEADER  # in force as appended
    group.settle()
    assert leader.role is RaftPeerRole.FOLLOWER
    assert {group.servers[m].configuration for m in (B, C)} == {(B, C)}
    group.tick(A, 10_000)
    group.tick(A, 10_000)
    assert group.sent(A) == []  # removed: it starts no election
    group.tick(B, 10_000)
    group.settle(A)
    assert RaftPeerRole.LEADER in (group.servers[B].role, group.servers[C].role)


def test_a_member_whose_removal_has_not_committed_still_stands_without_its_own_vote():
    # The thesis, section 4.2.2: A appended its own removal and restarted; only A holds it, and no other log
    # is up to date enough for a majority of A, B, C, D (B, restarted empty, knows only A, B, C, so refuses
    # D). A must stand, win the votes of B, C and D (not its own), commit its removal and step down.
    def data(index: int) -> LogEntry:
        return LogEntry(1, index, b"%d" % index)

    add = LogEntry(1, 2, kind=EntryKind.CONFIGURATION, peers=(A, B, C, D))
    remove = LogEntry(1, 4, kind=EntryKind.CONFIGURATION, peers=(B, C, D))
    group = Group(
        A,
        B,
        C,
        D,
        states={
            A: PersistentState(1, A, (data(1), add, data(3), remove)),
            B: PersistentState(1, A, (), configuration=OLD),
            C: PersistentState(1, A, (data(1), add)),
            D: PersistentState(1, None, (data(1), add, data(3))),
        },
    )
    for member in (A, B, C, D):  # no one else can win: B, C and D each gather two grants of four
        group.tick(member, 10_000)
    assert group.sent(A)  # A stood (a pre-vote)
    group.outbox.clear()
    group.elect(A)
    removed = group.servers[A]
    assert removed.role is RaftPeerRole.FOLLOWER and removed.commit_index >= remove.index
    assert removed.current_term == 2  # it led term 2 with B, C and D's votes
    assert {group.servers[m].configuration for m in (B, C, D)} == {(B, C, D)}
    group.tick(A, 10_000)
    assert group.sent(A) == []  # its removal committed: it stands no more
    group.elect(C)
    assert group.servers[C].role is RaftPeerRole.LEADER


def test_a_removed_member_cannot_raise_the_terms_of_the_group():
    group = Group(A, B, C)
    group.elect(A)
    group.take(A, group.servers[A].set_configuration(CHANGE, (A, B)))
    group.settle(C)
    group.deliver(C, B, RequestVoteRequest(C, 9, 5, 50))
    assert group.sent(B, C) == [RequestVoteReply(B, 1, False, False)]
    assert group.servers[B].current_term == 1


def test_no_change_during_a_leadership_transfer():
    group = Group(A, B, C)
    group.elect(A)
    group.take(A, group.servers[A].transfer_leadership(ClientCall("admin", 5, b""), B))
    assert group.servers[A].set_configuration(CHANGE, (A, B)) == [
        ConfigurationRefused(CHANGE, "a leadership transfer is in progress")
    ]


def test_a_leader_the_configuration_does_not_name_yet_is_heard_but_not_a_candidate():
    # A member that missed a change learns it from the leader that made it (the thesis, section 4.2.1).
    group = Group(A, B, C, D, states={B: PersistentState(2, None, (), configuration=OLD)})
    with pytest.raises(ValueError, match="not another member"):
        group.servers[B].receive(D, RequestVoteRequest(D, 3, 0, 0))
    with pytest.raises(ValueError, match="not another member"):
        group.servers[B].receive(D, AppendEntriesRequest(D, 1, 0, 0, (), 0, 1))  # a stale one is not
    group.deliver(D, B, AppendEntriesRequest(D, 3, 0, 0, (), 0, 1))
    assert (group.servers[B].leader_id, group.servers[B].current_term) == (D, 3)


def test_the_last_member_is_not_removed():
    group = Group(A)
    group.elect(A)
    (refused,) = group.servers[A].set_configuration(CHANGE, ())
    assert isinstance(refused, ConfigurationRefused)


def test_a_learner_that_makes_no_progress_fails_the_change_and_blocks_no_later_one():
    # R5: a member that never answers staged for ever, refusing every later change. Ratis fails the staging
    # (ReconfigurationTimeoutException) once the new peer has not answered for 3 x rpc.timeout.max.
    group = group_of_three_and_a_newcomer()
    leader = group.servers[A]
    answers = group.take(A, leader.set_configuration(CHANGE, (A, B, C, D)))
    for _ in range(12):  # 900 ms: still staging; a retry of the same call waits for its outcome
        answers += group.tick(A, 75)
        group.settle(D)
    assert leader.set_configuration(CHANGE, (A, B, C, D)) == []
    answers += group.tick(A, 75)
    failed = [o for o in answers if isinstance(o, ConfigurationRefused)]
    assert [o.call for o in failed] == [CHANGE, CHANGE]
    assert "ReconfigurationTimeoutException" in failed[0].reason and D not in leader._leader.followers
    assert leader.configuration == OLD
    assert leader.set_configuration(CHANGE, (A, B, C, D)) == [ConfigurationRefused(CHANGE, failed[0].reason)]
    group.settle(D)
    answers = group.take(A, leader.set_configuration(ClientCall("admin", 2, b""), (A, B)))
    assert [o for o in answers if isinstance(o, ConfigurationRefused)] == []
    assert leader.configuration == (A, B)  # another change goes ahead (in force as appended)


def test_a_removal_that_leaves_no_answering_majority_is_refused():
    # R9: 5 members, D and E down; removing live C left A and B of four: no majority answers, no leader. The
    # leader refuses a removal after which those it heard from within raft.server.rpc.timeout.max are not a
    # majority of the new configuration; removing a member that is down leaves three of four and goes ahead.
    group = Group(A, B, C, D, E)
    group.elect(A)
    leader = group.servers[A]
    for _ in range(5):  # D and E stop answering; A, B and C (a majority) go on
        group.tick(A, 75)
        group.settle(D, E)
    (refused,) = leader.set_configuration(CHANGE, (A, B, D, E))
    assert isinstance(refused, ConfigurationRefused)
    assert "2 of the 4 members" in refused.reason and leader.configuration == (A, B, C, D, E)
    answers = group.take(A, leader.set_configuration(ClientCall("admin", 2, b""), (A, B, C, D)))
    assert [o for o in answers if isinstance(o, ConfigurationRefused)] == []
    assert leader.configuration == (A, B, C, D)
