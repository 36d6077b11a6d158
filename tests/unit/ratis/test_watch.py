"""Followers' commit indexes and watches (issue 30, design S2; Ratis's followerCommit, WatchRequests and
ReplicationLevel MAJORITY_COMMITTED / ALL_COMMITTED, as Ozone's XceiverClientRatis.watchForCommit uses them),
and `push_commit`: the leader tells its followers a new commit index at once."""

import pytest

from pyozone.ratis.messages import (
    AppendEntriesReply,
    AppendEntriesRequest,
    AppendResult,
    ClientCall,
    WatchLevel,
)
from pyozone.ratis.outputs import NotLeader, WatchDone, WatchFailed
from pyozone.ratis.settings import RaftSettings
from tests.unit.ratis.group import A, B, C, Group, entries

WATCH = ClientCall("watch", 1, b"")


def test_a_followers_answer_names_its_commit_once_its_append_is_durable():
    group = Group(A, B, C)
    group.deliver(A, B, AppendEntriesRequest(A, 1, 0, 0, entries(1, 1), 1, 1))
    assert group.sent(B) == []  # held until durable
    group.sync(B)
    # Committed (1) once durable, as the reply leaves, though 1 was not durable when the append arrived.
    assert group.sent(B) == [AppendEntriesReply(B, 1, AppendResult.SUCCESS, 2, 3, 1, follower_commit=1)]
    group.deliver(A, B, AppendEntriesRequest(A, 1, 2, 1, (), 5, 2))  # the commit reaches only what matches
    assert group.sent(B) == [AppendEntriesReply(B, 1, AppendResult.SUCCESS, 2, 3, 2, follower_commit=2)]


def test_a_reply_naming_a_commit_past_its_match_is_refused():
    group = Group(A, B, C)
    group.elect(A)
    leader = group.servers[A]
    with pytest.raises(ValueError, match="commit index 2 past its match index 1"):
        leader.receive(B, AppendEntriesReply(B, leader.current_term, AppendResult.SUCCESS, 1, 2, 1, 2))


def written_group(push_commit: bool = False) -> Group:
    """A leader (A) with a write at index 2 that it and B hold and committed; C is cut off, B does not know
    the commit yet."""
    group = Group(A, B, C, settings=RaftSettings(push_commit=push_commit))
    group.elect(A)
    group.tick(A, 75)
    group.settle()  # B and C learn the no-op's commit
    group.take(A, group.servers[A].submit(ClientCall("c", 1, b"x")))
    group.sync(A)
    group.sent(A, C)
    for message in group.sent(A, B):
        group.deliver(A, B, message)
    group.sync(B)
    for reply in group.sent(B, A):
        group.deliver(B, A, reply)
    assert group.servers[A].commit_index == 2
    return group


def test_a_majority_watch_is_done_once_a_majority_committed_and_all_waits_for_every_member():
    group = written_group()
    leader = group.servers[A]
    assert leader.commit_infos() == ((A, 2), (B, 1), (C, 1))
    group.take(A, leader.watch(WATCH, 2, WatchLevel.MAJORITY, 1000))
    group.take(A, leader.watch(WATCH, 2, WatchLevel.ALL, 1000))
    assert group.watches == []  # only A committed 2
    group.tick(A, 75)  # the heartbeat carries the commit to B
    for message in group.sent(A, B):
        group.deliver(A, B, message)
    for reply in group.sent(B, A):
        group.deliver(B, A, reply)
    assert group.watches == [WatchDone(WATCH, 2, WatchLevel.MAJORITY, ((A, 2), (B, 2), (C, 1)))]
    group.settle()  # C is back: it catches up, and commits 2 with the next heartbeat
    group.tick(A, 75)
    group.settle()
    assert group.watches[1:] == [WatchDone(WATCH, 2, WatchLevel.ALL, ((A, 2), (B, 2), (C, 2)))]
    assert leader.deadline_ms() < 1000  # no watch deadline left


def test_a_watch_times_out_with_the_commit_indexes_naming_who_lags():
    group = written_group()
    leader = group.servers[A]
    group.take(A, leader.watch(WATCH, 2, WatchLevel.ALL, 300))
    assert leader.deadline_ms() <= group.clock.now_ms() + 300
    group.tick(A, 300)
    reason = "NotReplicatedException: index 2 not ALL_COMMITTED within 300 ms"
    assert group.watches == [WatchFailed(WATCH, 2, WatchLevel.ALL, ((A, 2), (B, 1), (C, 1)), reason)]


def test_a_watch_is_refused_by_a_follower_and_a_leader_stepping_down_answers_its_watches_not_leader():
    group = written_group()
    assert group.take(B, group.servers[B].watch(WATCH, 2, WatchLevel.ALL, 300)) == [NotLeader(WATCH, A)]
    leader = group.servers[A]
    group.take(A, leader.watch(WATCH, 2, WatchLevel.ALL, 10_000))
    outputs = group.deliver(C, A, AppendEntriesReply(C, 9, AppendResult.NOT_LEADER, 0, 1, 1))
    assert NotLeader(WATCH, None) in outputs


@pytest.mark.parametrize("push_commit", [False, True])
def test_with_push_commit_the_leader_sends_a_new_commit_at_once(push_commit):
    group = written_group(push_commit)
    sent = group.sent(A, B)
    if push_commit:  # B heard of 2's commit the moment it advanced
        assert [(m.entries, m.leader_commit) for m in sent] == [((), 2)]
    else:  # B learns it with the next heartbeat
        assert sent == []
