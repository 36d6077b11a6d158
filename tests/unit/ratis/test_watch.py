"""Followers' commit indexes and watches (issue 30; Ratis's followerCommit, WatchRequests and
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
from pyozone.ratis.server import PersistentState
from pyozone.ratis.settings import RaftSettings
from pyozone.ratis.watches import PendingWatches, Watch
from tests.unit.ratis.group import A, B, C, D, Group, entries

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


@pytest.mark.parametrize(
    ("index", "level", "timeout_ms", "why"),
    [
        (2, "ALL_COMMITTED", 1000, "watch level 'ALL_COMMITTED'"),
        ("2", WatchLevel.ALL, 1000, "watch index '2'"),
        (-1, WatchLevel.ALL, 1000, "watch index -1"),
        (True, WatchLevel.ALL, 1000, "watch index True"),
        (2, WatchLevel.ALL, 0, r"watch timeout \(ms\) 0"),
        (2, WatchLevel.ALL, 1.5, r"watch timeout \(ms\) 1.5"),
    ],
)
def test_a_malformed_watch_is_refused_before_it_is_kept_and_the_leader_goes_on(index, level, timeout_ms, why):
    """Kept before it failed, a malformed watch broke every later commit check: the leader then failed on
    each append answer (review R10)."""
    group = written_group()
    leader = group.servers[A]
    with pytest.raises(ValueError, match=why):
        leader.watch(WATCH, index, level, timeout_ms)
    assert leader.deadline_ms() < group.clock.now_ms() + 1000  # no watch deadline kept
    group.take(A, leader.submit(ClientCall("c", 2, b"y")))
    group.settle()
    assert leader.commit_index == 3 and group.watches == []


def test_watches_beyond_the_element_limit_of_their_level_fail_at_once():
    """raft.server.watch.element-limit bounds the watches of each level that wait (Ratis's WatchRequests:
    ResourceUnavailableException); a watch already reached never waits, so it is answered though the level
    is full."""
    group = Group(A, B, C, settings=RaftSettings(watch_element_limit=2))
    group.elect(A)
    group.tick(A, 75)
    group.settle()  # every member committed the no-op
    leader = group.servers[A]
    calls = [ClientCall("watch", n, b"") for n in range(4)]
    for call in calls[:3]:
        group.take(A, leader.watch(call, 100, WatchLevel.ALL, 1000))
    group.take(A, leader.watch(calls[3], 100, WatchLevel.MAJORITY, 1000))
    (refused,) = group.watches
    assert isinstance(refused, WatchFailed) and refused.call == calls[2]
    assert refused.reason == (
        "ResourceUnavailableException: 2 watches of ALL_COMMITTED already wait "
        "(raft.server.watch.element-limit)"
    )
    group.take(A, leader.watch(WATCH, 1, WatchLevel.ALL, 1000))
    assert group.watches[1:] == [WatchDone(WATCH, 1, WatchLevel.ALL, ((A, 1), (B, 1), (C, 1)))]
    group.tick(A, 1000)
    assert [w.call for w in group.watches[2:]] == calls[:2] + calls[3:]  # timed out, in arrival order
    group.take(A, leader.watch(calls[2], 100, WatchLevel.ALL, 1000))  # room again
    assert len(group.watches) == 5


def test_a_commit_advance_and_a_tick_touch_only_the_watches_they_end():
    """Pending watches are kept by index and by deadline (10,000 watches cost ~6 ms per write when each
    advance rescanned them all, review R10); a heap keeps at most about twice the live watches."""
    watches = PendingWatches(element_limit=100_000)
    for n in range(10_000):
        watches.add(Watch(ClientCall("w", n, b""), 10**9 - n, WatchLevel.ALL, 1000 + n, 1000))
    assert watches.reached({WatchLevel.ALL: 10**9 - 10_000, WatchLevel.MAJORITY: 10**9}) == []
    ended = watches.reached({WatchLevel.ALL: 10**9 - 9_998})
    assert [w.call.call_id for w in ended] == [9_998, 9_999]  # in arrival order
    assert watches.next_deadline_ms() == 1000
    assert [w.call.call_id for w in watches.expired(1000 + 4_999)] == list(range(5_000))
    assert len(watches) == 4_998 and watches.next_deadline_ms() == 6000
    assert all(len(heap) <= 2 * len(watches) + 64 for heap in (watches._by_index[WatchLevel.ALL],))
    assert [w.call.call_id for w in watches.drop()] == list(range(5_000, 9_998))
    assert len(watches) == 0 and watches.next_deadline_ms() is None


def test_a_majority_of_an_even_configuration_is_half_and_one():
    """While a fourth member is added, MAJORITY needs three of the four members' commit indexes (Ratis's
    getMajorityMin), not two."""
    group = Group(A, B, C, D, states={m: PersistentState(configuration=(A, B, C)) for m in (A, B, C)})
    group.elect(A, D)
    leader = group.servers[A]
    group.take(A, leader.set_configuration(ClientCall("admin", 1, b""), (A, B, C, D)))
    for _ in range(3):
        group.tick(A, 75)
        group.settle()
    assert leader.configuration == (A, B, C, D)
    group.take(A, leader.submit(ClientCall("c", 1, b"x")))
    written = leader.log.last_index
    group.sync(A)
    for follower in (B, C, D):
        for message in group.sent(A, follower):
            group.deliver(A, follower, message)
        group.sync(follower)
        for reply in group.sent(follower, A):
            group.deliver(follower, A, reply)
    assert leader.commit_index == written
    group.take(A, leader.watch(WATCH, written, WatchLevel.MAJORITY, 10_000))
    group.tick(A, leader.deadline_ms() - group.clock.now_ms())  # the heartbeat carries the commit
    for follower in (B, C):
        for message in group.sent(A, follower):
            group.deliver(A, follower, message)
        for reply in group.sent(follower, A):
            group.deliver(follower, A, reply)
        if follower == B:
            assert [c for _, c in leader.commit_infos()] == [written, written, written - 1, written - 1]
            assert group.watches == []  # two of four
    (done,) = group.watches
    assert done.level is WatchLevel.MAJORITY and [c for _, c in done.infos] == [written] * 3 + [written - 1]
