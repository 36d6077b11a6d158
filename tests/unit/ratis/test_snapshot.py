"""Snapshots, log purge and a lagging follower notified to install the leader's snapshot, as Ozone's OM runs
Ratis (`raft.server.log.purge.gap`; InstallSnapshotRequestProto's NotificationProto; OzoneManagerStateMachine
.notifyInstallSnapshotFromLeader)."""

import pytest

from pyozone.ratis.messages import (
    AppendEntriesRequest,
    ClientCall,
    InstallSnapshotReply,
    InstallSnapshotRequest,
    InstallSnapshotResult,
    TermIndex,
)
from pyozone.ratis.outputs import InstallSnapshot, Persist, PurgeLog, Send
from pyozone.ratis.server import PersistentState
from pyozone.ratis.settings import RaftSettings
from tests.unit.ratis.group import A, B, C, Group, entries


def write(group: Group, n: int, *down) -> None:
    for i in range(n):
        group.take(A, group.servers[A].submit(ClientCall("c", i + 1, b"w%d" % i)))
    group.settle(*down)


def lagging_group() -> Group:
    """A leads; C was away while A committed writes, took a snapshot and purged its log."""
    group = Group(A, B, C, settings=RaftSettings(purge_gap=2))
    group.elect(A)
    group.tick(A, 75)
    group.settle()
    write(group, 5, C)
    assert group.take(A, group.servers[A].snapshot_taken(TermIndex(1, 6))) == [PurgeLog(6, (A, B, C))]
    return group


def test_a_snapshot_lets_the_log_purge_once_the_gap_has_gathered():
    group = Group(A, B, C, settings=RaftSettings(purge_gap=4))
    group.elect(A)
    write(group, 5)
    leader = group.servers[A]
    assert leader.snapshot_taken(TermIndex(1, 3)) == []  # 3 entries since the last purge: below the gap
    assert leader.snapshot_taken(TermIndex(1, 5)) == [PurgeLog(5, (A, B, C))]
    assert (leader.log.first_index, leader.log.last_index, leader.log.term_at(5)) == (6, 6, 1)
    assert leader.snapshot_taken(TermIndex(1, 6)) == []


def test_a_snapshot_must_be_of_what_was_applied():
    group = Group(A, B, C)
    group.elect(A)
    with pytest.raises(ValueError, match="past the applied index 1"):
        group.servers[A].snapshot_taken(TermIndex(1, 2))
    with pytest.raises(ValueError, match="does not match"):
        group.servers[A].snapshot_taken(TermIndex(2, 1))


def test_a_restart_resumes_after_the_snapshot():
    state = PersistentState(1, A, entries(1, 1, 1)[3:] + entries(1, 1, 1, 1, 1)[3:], TermIndex(1, 3))
    group = Group(A, B, C, states={B: state})
    server = group.servers[B]
    assert (server.commit_index, server.log.first_index, server.log.last_index) == (3, 4, 5)
    group.deliver(A, B, AppendEntriesRequest(A, 1, 5, 1, (), 5, 1))
    assert [e.index for e in group.applied[B]] == [4, 5]  # the state machine holds 1..3 already


def notified(group: Group) -> InstallSnapshotRequest:
    """A's heartbeat finds C behind; A notifies it at once."""
    group.tick(A, 75)
    group.deliver(A, C, group.sent(A, C)[0])
    group.sync(C)
    group.deliver(C, A, group.sent(C, A)[0])
    (notification,) = group.sent(A, C)
    return notification


def test_a_follower_behind_the_leaders_log_is_notified_and_installs_the_leaders_snapshot():
    group = lagging_group()
    notification = notified(group)
    assert notification == InstallSnapshotRequest(A, 1, TermIndex(1, 7), notification.call_id)
    outputs = group.deliver(A, C, notification)
    assert InstallSnapshot(A, TermIndex(1, 7)) in outputs  # the state machine fetches A's checkpoint
    group.sync(C)
    (in_progress,) = group.sent(C, A)
    assert in_progress.result is InstallSnapshotResult.IN_PROGRESS
    group.deliver(C, A, in_progress)
    group.tick(A, 75)
    again = group.take(C, group.servers[C].receive(A, group.sent(A, C)[0]))
    assert not any(isinstance(o, InstallSnapshot) for o in again)  # one fetch at a time
    group.sync(C)
    group.sent(C)
    outputs = group.take(C, group.servers[C].snapshot_installed(TermIndex(1, 6)))
    assert [o for o in outputs if isinstance(o, Persist)] == [
        Persist(3, 1, A, (), TermIndex(1, 6), (A, B, C))
    ]
    follower = group.servers[C]
    assert (follower.commit_index, follower.log.first_index) == (6, 7)
    assert group.sent(C) == []  # the answer waits for the new log's durability
    group.sync(C)
    assert [m.result for m in group.sent(C, A)] == [InstallSnapshotResult.SNAPSHOT_INSTALLED]
    group.deliver(C, A, InstallSnapshotReply(C, 1, InstallSnapshotResult.SNAPSHOT_INSTALLED, 6, 99))
    group.settle()
    group.take(A, group.servers[A].submit(ClientCall("c", 9, b"after")))
    group.settle()
    group.tick(A, 75)
    group.settle()
    assert [e.index for e in group.applied[C]] == [1, 7]  # 2..6 came in the snapshot
    assert group.servers[A].commit_index == group.servers[C].commit_index == 7


def test_a_failed_download_is_tried_again_on_the_next_notification():
    group = lagging_group()
    group.deliver(A, C, notified(group))
    assert group.take(C, group.servers[C].snapshot_installed(None)) == []
    group.tick(A, 75)
    outputs = group.deliver(A, C, group.sent(A, C)[0])
    assert InstallSnapshot(A, TermIndex(1, 7)) in outputs


def test_a_follower_whose_snapshot_reaches_the_leaders_log_says_so():
    group = Group(A, B, C, states={C: PersistentState(2, A, (), TermIndex(1, 6))})
    group.deliver(A, C, InstallSnapshotRequest(A, 2, TermIndex(1, 7), 4))
    assert group.sent(C) == [InstallSnapshotReply(C, 2, InstallSnapshotResult.ALREADY_INSTALLED, 6, 4)]
    group.deliver(B, C, InstallSnapshotRequest(B, 1, TermIndex(1, 7), 5))  # a stale leader
    assert group.sent(C) == [InstallSnapshotReply(C, 2, InstallSnapshotResult.NOT_LEADER, 6, 5)]


def test_an_installed_snapshot_keeps_the_entries_after_it_when_the_log_holds_its_last_entry():
    # Figure 13, step 6: a log that holds the snapshot's last entry keeps what follows it.
    group = Group(A, B, C, states={C: PersistentState(1, A, entries(1, 1, 1, 1))})
    group.deliver(A, C, InstallSnapshotRequest(A, 1, TermIndex(1, 9), 3))
    outputs = group.take(C, group.servers[C].snapshot_installed(TermIndex(1, 2)))
    assert [o for o in outputs if isinstance(o, Persist)] == [
        Persist(1, 1, A, entries(1, 1, 1, 1)[2:], TermIndex(1, 2), (A, B, C))
    ]
    follower = group.servers[C]
    assert (follower.log.first_index, follower.log.last_index, follower.commit_index) == (3, 4, 2)


def test_an_installed_snapshot_replaces_a_log_that_conflicts_with_it():
    group = Group(A, B, C, states={C: PersistentState(2, A, entries(1, 1, 1, 1))})
    group.deliver(A, C, InstallSnapshotRequest(A, 2, TermIndex(2, 9), 3))
    outputs = group.take(C, group.servers[C].snapshot_installed(TermIndex(2, 2)))
    assert [o for o in outputs if isinstance(o, Persist)] == [
        Persist(1, 2, A, (), TermIndex(2, 2), (A, B, C))
    ]
    assert (group.servers[C].log.first_index, group.servers[C].log.last_index) == (3, 2)


def test_a_follower_that_committed_past_the_leaders_checkpoint_is_resumed_not_notified_forever():
    # R5: a reordered INCONSISTENCY answer lands after the follower's (lost) SUCCESS, after the leader purged
    # past it: the follower committed through the checkpoint, so it answers ALREADY_INSTALLED with its commit
    # index, and the leader resumes its appends (before: a checkpoint fetch every heartbeat, for ever).
    group = Group(A, B, C, settings=RaftSettings(purge_gap=1, append_element_limit=2))
    group.elect(A)
    group.tick(A, 75)
    group.settle()
    write(group, 4, C)
    group.sent(A, C)
    group.tick(A, 75)
    (heartbeat,) = group.sent(A, C)
    group.deliver(A, C, heartbeat)
    group.sync(C)
    group.deliver(C, A, group.sent(C, A)[0])
    first, second = group.sent(A, C)  # entries 2..3 and 4..5
    group.deliver(A, C, second)
    group.sync(C)
    (late,) = group.sent(C, A)
    group.deliver(A, C, first)
    group.sync(C)
    group.sent(C, A)  # lost
    assert group.servers[C].commit_index == 3
    group.take(A, group.servers[A].snapshot_taken(TermIndex(1, 3)))
    group.deliver(C, A, late)
    fetches = 0
    for _ in range(5):
        for message in group.sent(A, C):
            fetches += sum(isinstance(o, InstallSnapshot) for o in group.deliver(A, C, message))
            group.sync(C)
            for reply in group.sent(C, A):
                group.deliver(C, A, reply)
        group.sent(A, B)
        group.tick(A, 75)
    assert fetches == 0
    assert group.servers[C].log.last_index == 5


def test_a_fetched_checkpoint_not_ahead_of_what_was_applied_is_answered():
    group = lagging_group()
    notification = notified(group)
    group.deliver(A, C, notification)
    group.sync(C)
    group.sent(C, A)
    group.deliver(A, C, AppendEntriesRequest(A, 1, 0, 0, (), 1, 50))  # C commits the no-op meanwhile
    group.sync(C)
    group.sent(C, A)
    assert group.servers[C].snapshot_installed(TermIndex(1, 1)) == [
        Send(A, InstallSnapshotReply(C, 1, InstallSnapshotResult.ALREADY_INSTALLED, 1, notification.call_id))
    ]
