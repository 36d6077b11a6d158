"""Log replication and commit (Raft paper Figure 2, sections 5.3, 5.4.2 and Figure 8; Ratis's LogAppender)."""

import pytest

from pyozone.ratis.messages import (
    AppendEntriesReply,
    AppendEntriesRequest,
    AppendResult,
    ClientCall,
    EntryKind,
    LogEntry,
)
from pyozone.ratis.outputs import Apply, Reply
from pyozone.ratis.server import PersistentState
from pyozone.ratis.settings import RaftSettings
from tests.unit.ratis.group import A, B, C, D, E, Group, entries


def test_a_write_is_answered_with_the_state_machines_result_once_applied_on_the_leader():
    group = Group(A, B, C)
    group.elect(A)
    call = ClientCall("c", 7, b"put k v")
    group.take(A, group.servers[A].submit(call))
    assert group.replies == []
    group.settle()
    assert group.replies == [Reply(call, 2, "result 2")]
    for member in (A, B, C):  # the followers learn the commit with the next append
        group.tick(A, 75)
        group.settle()
        assert [e.payload for e in group.applied[member]] == [b"", b"put k v"]
    assert [e.kind for e in group.applied[A]] == [EntryKind.NOOP, EntryKind.STATE_MACHINE]


def test_a_majority_commits_without_the_slowest_members():
    group = Group(A, B, C, D, E)
    group.elect(A, D, E)
    call = ClientCall("c", 1, b"x")
    group.take(A, group.servers[A].submit(call))
    group.settle(D, E)
    assert group.servers[A].commit_index == 2 and group.replies == [Reply(call, 2, "result 2")]


def test_the_leader_sends_its_appends_before_its_own_write_is_durable_but_counts_itself_only_after():
    group = Group(A, B, C, D, E)
    group.elect(A)
    group.take(A, group.servers[A].submit(ClientCall("c", 1, b"x")))
    appends = {to: group.sent(A, to) for to in (B, C, D, E)}  # every append left at once
    assert all([m.entries[0].payload for m in sent] == [b"x"] for sent in appends.values())
    for follower in (B, C):
        group.deliver(A, follower, appends[follower][0])
        group.sync(follower)
        for reply in group.sent(follower, A):
            group.deliver(follower, A, reply)
    assert group.servers[A].commit_index == 1  # B and C hold it, but the leader's own disk does not yet
    group.sync(A)
    assert group.servers[A].commit_index == 2


def test_a_follower_answers_an_append_only_after_its_disk_holds_the_entries():
    group = Group(A, B, C)
    request = AppendEntriesRequest(A, 1, 0, 0, entries(1), 0, 1)
    outputs = group.deliver(A, B, request)
    assert group.sent(B) == [] and outputs[-1].entries == entries(1)
    group.sync(B)
    assert group.sent(B) == [AppendEntriesReply(B, 1, AppendResult.SUCCESS, 1, 2, 1)]


def test_a_persisted_report_for_a_write_never_issued_is_refused_and_acks_still_wait_for_their_writes():
    """Taken, a `persisted(seq)` past every Persist issued (a shell bug) would release later acknowledgements
    before their writes are durable (review R10)."""
    group = Group(A, B, C)
    follower = group.servers[B]
    with pytest.raises(ValueError, match="no Persist of that number was issued"):
        follower.persisted(100)
    group.deliver(A, B, AppendEntriesRequest(A, 1, 0, 0, entries(1, 1), 2, 1))
    with pytest.raises(ValueError, match="no Persist of that number was issued"):
        follower.persisted(group.persists[B][-1].seq + 1)
    assert group.sent(B) == []  # the ack waits for its Persist
    group.sync(B)
    assert [m.result for m in group.sent(B)] == [AppendResult.SUCCESS]


def test_an_append_from_a_stale_term_is_refused_with_the_current_term():
    group = Group(A, B, C, states={B: PersistentState(3, None, ())})
    group.deliver(A, B, AppendEntriesRequest(A, 2, 0, 0, (), 0, 1))
    assert group.sent(B) == [AppendEntriesReply(B, 3, AppendResult.NOT_LEADER, 0, 1, 1)]


def test_a_diverged_follower_names_the_start_of_its_conflicting_term_and_is_repaired():
    # Figure 7 (f)-like: B holds entries of terms 2 and 3 the leader never had.
    group = Group(
        A,
        B,
        C,
        states={
            A: PersistentState(5, A, entries(1, 1, 4, 4)),
            B: PersistentState(5, A, entries(1, 1, 2, 3, 3, 3)),
            C: PersistentState(5, A, entries(1, 1, 4, 4)),
        },
    )
    group.elect(A, B)
    leader = group.servers[A]
    assert leader.current_term == 6 and leader.log.last_index == 5  # with its no-op at 5
    group.tick(A, 75)
    heartbeat = group.sent(A, B)[0]
    assert (heartbeat.previous_index, heartbeat.previous_term) == (5, 6)
    group.deliver(A, B, heartbeat)
    group.sync(B)  # B's new term is written before it answers
    assert group.sent(B)[0].next_index == 4  # B's term 3 starts at 4: one round trip per term, not per entry
    group.deliver(B, A, AppendEntriesReply(B, 6, AppendResult.INCONSISTENCY, 0, 4, heartbeat.call_id))
    retry = group.sent(A, B)[0]
    assert retry.previous_index == 3
    group.deliver(A, B, retry)
    assert group.sent(B)[0].next_index == 3
    group.deliver(B, A, AppendEntriesReply(B, 6, AppendResult.INCONSISTENCY, 0, 3, retry.call_id))
    group.settle()
    assert group.servers[B].log.last_index == 5
    assert [group.servers[B].log.term_at(i) for i in range(1, 6)] == [1, 1, 4, 4, 6]


def test_an_inconsistency_answer_to_an_append_of_an_abandoned_pipeline_is_ignored():
    settings = RaftSettings(append_element_limit=1, outstanding_appends_max=4)
    group = Group(A, B, C, settings=settings)
    group.elect(A)
    for n in range(4):
        group.take(A, group.servers[A].submit(ClientCall("c", n, b"%d" % n)))
    group.sync(A)
    pipeline = group.sent(A, B)
    assert [m.previous_index for m in pipeline] == [1, 2, 3, 4]  # four appends in flight at once
    group.sent(A, C)
    # The first is lost: the other three each fail; only the first failure restarts the pipeline.
    for message in pipeline[1:]:
        group.deliver(B, A, AppendEntriesReply(B, 1, AppendResult.INCONSISTENCY, 0, 2, message.call_id))
    assert [m.previous_index for m in group.sent(A, B)] == [1, 2, 3, 4]


def test_appends_are_batched_up_to_the_byte_limit():
    group = Group(A, B, C, settings=RaftSettings(append_byte_limit=8, outstanding_appends_max=1))
    group.elect(A)
    for n in range(6):
        group.take(A, group.servers[A].submit(ClientCall("c", n, b"abcd")))
    group.sync(A)
    first = group.sent(A, B)
    assert [len(m.entries) for m in first] == [1]  # the first went at once; the others wait for its answer
    group.deliver(A, B, first[0])
    group.sync(B)
    group.deliver(B, A, group.sent(B)[0])
    assert [len(m.entries) for m in group.sent(A, B)] == [2]  # then two 4-byte entries per append


def test_appends_count_each_entrys_state_machine_data_toward_the_byte_limit():
    group = Group(A, B, C, settings=RaftSettings(append_byte_limit=8, outstanding_appends_max=1))
    group.elect(A)
    for n in range(6):
        group.take(A, group.servers[A].submit(ClientCall("", n, b"ab", data_size=2)))
    group.sync(A)
    first = group.sent(A, B)
    group.deliver(A, B, first[0])
    group.sync(B)
    group.deliver(B, A, group.sent(B)[0])
    assert [len(m.entries) for m in group.sent(A, B)] == [2]  # 4 bytes each with their data, not 2


def test_a_follower_applies_a_committed_entry_only_once_its_own_disk_holds_it():
    # Ratis's RaftLogBase.updateCommitIndex: min(majority index, flush index). A chunk written beside the
    # entry at append is on this member's disk before the entry is applied.
    group = Group(A, B, C)
    group.deliver(A, B, AppendEntriesRequest(A, 1, 0, 0, entries(1, 1), 2, 1))
    assert group.applied[B] == [] and group.servers[B].commit_index == 0
    outputs = group.sync(B)
    assert group.applied[B] == list(entries(1, 1)) and group.servers[B].commit_index == 2
    assert any(isinstance(o, Apply) for o in outputs) and group.sent(B)  # the ack leaves with it


def test_a_follower_rewriting_its_log_commits_the_rewritten_entries_once_the_rewrite_is_durable():
    # B's disk holds 1..3 of term 1; the leader of term 2 replaces 2 and 3 and says 3 is committed: only
    # entry 1 is durable as the leader's log has it until the rewrite is.
    group = Group(A, B, C, states={B: PersistentState(2, A, entries(1, 1, 1))})
    rewrite = (LogEntry(2, 2, b"2@2"), LogEntry(2, 3, b"3@2"))
    group.deliver(A, B, AppendEntriesRequest(A, 2, 1, 1, rewrite, 3, 1))
    assert group.applied[B] == list(entries(1))
    group.sync(B)
    assert group.applied[B] == [*entries(1), *rewrite]


def test_the_leader_commits_only_once_its_own_disk_holds_the_entry_though_a_majority_of_followers_do():
    group = Group(A, B, C)
    group.elect(A)
    call = ClientCall("c", 1, b"x")
    group.take(A, group.servers[A].submit(call))
    for follower in (B, C):
        exchange_one_way(group, A, follower)
    assert group.servers[A].commit_index == 1 and group.replies == []  # B and C hold 2; A's disk not yet
    group.sync(A)
    assert group.servers[A].commit_index == 2 and group.replies == [Reply(call, 2, "result 2")]


def exchange_one_way(group: Group, sender, to) -> None:
    """Deliver what `sender` sent `to`, `to` writes to disk, and its answers come back (`sender` does not
    write)."""
    for message in group.sent(sender, to):
        group.deliver(sender, to, message)
    group.sync(to)
    for answer in group.sent(to, sender):
        group.deliver(to, sender, answer)


def exchange(group: Group, sender, to) -> None:
    """Deliver what `sender` sent `to`, and the answers back, each side writing to disk first."""
    for message in group.sent(sender, to):
        group.deliver(sender, to, message)
    group.sync(to)
    for answer in group.sent(to, sender):
        group.deliver(to, sender, answer)
    group.sync(sender)


def test_an_entry_of_an_earlier_term_commits_only_with_one_of_the_current_term():
    # Figure 8: A leads term 4 holding an entry of term 2 at index 2, which B holds too. That majority may not
    # commit it: C, with term 3 at index 2, could still be elected and erase it.
    group = Group(
        A,
        B,
        C,
        states={
            A: PersistentState(3, A, entries(1, 2)),
            B: PersistentState(3, A, entries(1, 2)),
            C: PersistentState(3, C, entries(1, 3)),
        },
    )
    group.tick(A, group.servers[A].deadline_ms())
    exchange(group, A, B)  # pre-vote
    exchange(group, A, B)  # vote: A leads term 4 and appends its no-op at 3
    leader = group.servers[A]
    assert (leader.current_term, leader.log.last_index) == (4, 3)
    group.sent(A)  # the no-op's appends are lost
    group.take(A, leader.receive(B, AppendEntriesReply(B, 4, AppendResult.SUCCESS, 2, 3, 1)))
    assert leader.commit_index == 0  # index 2 is on a majority, but of term 2
    group.take(A, leader.receive(B, AppendEntriesReply(B, 4, AppendResult.SUCCESS, 3, 4, 2)))
    assert leader.commit_index == 3  # the no-op of term 4 commits, and index 2 with it
    assert [e.index for e in group.applied[A]] == [1, 2, 3]


def test_a_restarted_follower_relearns_the_commit_and_replays_its_state_machine():
    group = Group(A, B, C)
    group.elect(A)
    for n in range(3):
        group.take(A, group.servers[A].submit(ClientCall("c", n, b"%d" % n)))
    group.settle()
    group.tick(A, 75)
    group.settle()
    log = group.servers[B].log
    restarted = Group(A, B, C, states={B: PersistentState(1, A, tuple(log.entry(i) for i in range(1, 5)))})
    follower = restarted.servers[B]
    assert follower.commit_index == 0
    outputs = follower.receive(A, AppendEntriesRequest(A, 1, 4, 1, (), 4, 1))
    assert [o.entries for o in outputs if isinstance(o, Apply)] == [tuple(log.entry(i) for i in range(1, 5))]


def test_duplicate_and_reordered_appends_do_not_cut_the_log():
    group = Group(A, B, C)
    later = AppendEntriesRequest(A, 1, 0, 0, entries(1, 1), 0, 2)
    earlier = AppendEntriesRequest(A, 1, 0, 0, entries(1), 0, 1)
    group.deliver(A, B, later)
    group.deliver(A, B, earlier)
    group.deliver(A, B, later)
    assert group.servers[B].log.last_index == 2
    assert LogEntry(1, 2, b"2@1") == group.servers[B].log.entry(2)


def test_a_group_of_one_elects_itself_and_commits_on_its_own_disk():
    group = Group(A)
    group.elect(A)
    assert group.servers[A].deadline_ms() is None  # no follower to send heartbeats to
    call = ClientCall("c", 1, b"x")
    group.take(A, group.servers[A].submit(call))
    assert group.replies == []
    group.sync(A)
    assert group.replies == [Reply(call, 2, "result 2")]


@pytest.mark.parametrize(
    ("request_", "why"),
    [
        (
            AppendEntriesRequest(A, 1, 0, 0, (LogEntry(1, 1), LogEntry(1, 3)), 0, 1),
            "index 3 does not follow 1",
        ),
        (AppendEntriesRequest(A, 1, 1, 1, (LogEntry(1, 1),), 0, 1), "index 1 does not follow 1"),
        (AppendEntriesRequest(A, 1, -1, 0, (), 0, 1), "negative previous index"),
        (AppendEntriesRequest(A, 1, 0, 0, (LogEntry(1, 0),), 0, 1), "index 0 does not follow 0"),
        (AppendEntriesRequest(A, 1, 0, 0, (LogEntry(2, 1),), 0, 1), "entry 1 has term 2"),
        (AppendEntriesRequest(A, 1, 0, 0, (LogEntry(1, 1), LogEntry(0, 2)), 0, 1), "entry 2 has term 0"),
        (AppendEntriesRequest(A, 1, 3, 2, (), 0, 1), "previous term 2 is impossible"),
        (AppendEntriesRequest(A, 1, 0, 0, (), -1, 1), "negative previous index or commit"),
        (AppendEntriesRequest(A, 1, 0, 0, (LogEntry(1, 1, data_size=-1),), 0, 1), "-1 bytes of data"),
    ],
)
def test_a_malformed_append_is_refused_before_it_changes_anything(request_, why):
    group = Group(A, B, C)
    with pytest.raises(ValueError, match=f"refused a AppendEntriesRequest from a: .*{why}"):
        group.servers[B].receive(A, request_)
    server = group.servers[B]
    assert (server.current_term, server.log.last_index, server.leader_id) == (0, 0, None)


def test_an_answer_claiming_entries_the_leader_never_sent_is_refused():
    """A SUCCESS past the leader's log would have it commit an entry only it holds (review R6, D5)."""
    group = Group(A, B, C)
    group.elect(A)
    leader = group.servers[A]
    commit = leader.commit_index
    lie = AppendEntriesReply(B, leader.current_term, AppendResult.SUCCESS, 10**6, 10**6 + 1, 1)
    with pytest.raises(ValueError, match="never sent"):
        leader.receive(B, lie)
    assert leader.commit_index == commit
    assert leader._leader.followers[B].match_index <= leader.log.last_index


def test_a_follower_knows_the_leaders_commit_index_beyond_the_entries_it_holds() -> None:
    """SCM HA's catch-up target (Ozone's SCMStateMachine.getLeaderCommitIndex reads the leader's commit
    info): what the leader's last append said is committed, not capped at this follower's log as
    `known_committed_index` is (review R17 D1: a restarted SCM judged itself caught up at the end of the
    first batch it received)."""
    group = Group(A, B, C)
    group.elect(A, B)
    for n in range(4):
        group.take(A, group.servers[A].submit(ClientCall("c", n, b"w%d" % n)))
    group.settle(B)
    leader = group.servers[A]
    assert leader.commit_index == 5
    follower = group.servers[B]
    heartbeat = AppendEntriesRequest(A, leader.current_term, 0, 0, (), leader.commit_index, 1)
    group.deliver(A, B, heartbeat)
    assert (follower.known_committed_index, follower.leader_commit_index) == (0, 5)
