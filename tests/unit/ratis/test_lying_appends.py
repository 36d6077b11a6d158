"""Appends that are well formed but lie (validation.py passes them): a higher term under the leader's name,
a second leader in one term, entries or a previous entry that contradict what the member committed. The
member refuses them (ValueError, which the shell logs and drops) or answers a failure; it never crashes and
never loses an entry it knows is committed: its own commit, or what its leader said is committed over entries
it holds, before its own write of them is durable (`known_committed_index`)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pyozone.ratis.messages import (
    AppendEntriesReply,
    AppendEntriesRequest,
    AppendResult,
    ClientCall,
    InstallSnapshotRequest,
    LogEntry,
    RaftPeerId,
    TermIndex,
)
from pyozone.ratis.roles import RaftPeerRole
from pyozone.ratis.server import RaftServer
from pyozone.ratis.validation import validate
from tests.unit.ratis.group import A, B, C, Group

COMMITTED_WRITES = 4


def committed_writes(keep: Callable[[Group], None]) -> Group:
    """A leads term 1 (after its election) and B and C committed its no-op and four writes (index 1-5);
    A then appends two more (6-7) and `keep` decides where they go."""
    group = Group(A, B, C)
    group.elect(A)
    for n in range(COMMITTED_WRITES):
        group.take(A, group.servers[A].submit(ClientCall("c", n, b"w%d" % n)))
    group.settle()
    group.tick(A, group.servers[A].deadline_ms() - group.clock.now_ms())  # a heartbeat carries the commit
    group.settle()
    for n in range(COMMITTED_WRITES, COMMITTED_WRITES + 2):
        group.take(A, group.servers[A].submit(ClientCall("c", n, b"w%d" % n)))
    keep(group)
    group.outbox.clear()
    return group


def committed_group() -> Group:
    """No one but A holds 6-7."""
    return committed_writes(lambda group: None)


def known_committed_group() -> Group:
    """A and C commit 6-7; B holds them as A's and heard they are committed, its write of them not durable
    yet: B knows 1-7 are committed, but commits (and applies) only 1-5."""

    def to_c_and_b(group: Group) -> None:
        leader = group.servers[A]
        group.sync(A)
        for message in group.sent(A, C):
            group.deliver(A, C, message)
        group.sync(C)
        for reply in group.sent(C, A):
            group.deliver(C, A, reply)
        assert leader.commit_index == COMMITTED_WRITES + 3
        for message in group.sent(A, B):
            group.deliver(A, B, message)
        group.tick(A, leader.deadline_ms() - group.clock.now_ms())  # a heartbeat names the commit
        for message in group.sent(A, B):
            group.deliver(A, B, message)

    group = committed_writes(to_c_and_b)
    follower = group.servers[B]
    assert follower.commit_index == COMMITTED_WRITES + 1
    assert follower.known_committed_index == COMMITTED_WRITES + 3
    return group


def committed(server: RaftServer) -> list[LogEntry]:
    """The entries the member knows are committed."""
    return [server.log.entry(i) for i in range(server.log.first_index, server.known_committed_index + 1)]


@st.composite
def lying_appends(draw: st.DrawFn) -> tuple[RaftPeerId, AppendEntriesRequest]:
    """A well-formed append from A or C, in any term around the group's, after any previous entry, carrying
    entries in any terms that never go back."""
    sender = draw(st.sampled_from([A, C]))
    term = draw(st.integers(0, 4))
    previous_index = draw(st.integers(0, 9))
    previous_term = 0 if previous_index == 0 else draw(st.integers(0, term))
    terms = draw(st.lists(st.integers(previous_term, term), max_size=6).map(sorted))
    entries = tuple(
        LogEntry(t, previous_index + 1 + n, draw(st.binary(max_size=3))) for n, t in enumerate(terms)
    )
    commit = draw(st.integers(0, 12))
    request = AppendEntriesRequest(sender, term, previous_index, previous_term, entries, commit, 99)
    validate(request)  # well formed: only its claims lie
    return sender, request


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(
    appends=st.lists(lying_appends(), min_size=1, max_size=4),
    to=st.sampled_from([A, B]),
    build=st.sampled_from([committed_group, known_committed_group]),
)
@example(  # a later term's "leader" rewrites what B knows is committed but has not made durable yet
    appends=[(C, AppendEntriesRequest(C, 2, 5, 1, (LogEntry(2, 6, b"lie"),), 6, 99))],
    to=B,
    build=known_committed_group,
)
def test_a_lying_append_is_refused_or_answered_never_a_crash_nor_a_lost_committed_entry(appends, to, build):
    group = build()
    server = group.servers[to]
    before = committed(server)
    assert len(before) >= COMMITTED_WRITES + 1
    for sender, request in appends:
        if sender == to:
            continue
        commit, known = server.commit_index, server.known_committed_index
        with contextlib.suppress(ValueError):  # refused: the shell logs it and drops it
            group.deliver(sender, to, request)
        assert server.commit_index >= commit and server.known_committed_index >= known
        assert committed(server)[: len(before)] == before
        group.sync(to)


def test_an_append_cannot_rewrite_entries_the_leader_said_are_committed_before_they_are_durable_here():
    """Before a member committed only what its disk holds, `check_leader_claim` protected what it committed
    at once; it must still protect everything it knows is committed (review R10)."""
    group = known_committed_group()
    follower = group.servers[B]
    lie = AppendEntriesRequest(C, 2, 5, 1, (LogEntry(2, 6, b"lie"),), 6, 99)
    with pytest.raises(ValueError, match="entry 6 of term 2 contradicts committed entry 6 of term 1"):
        group.deliver(C, B, lie)
    assert follower.log.entry(6).payload == b"w4" and follower.current_term == 1


def test_an_append_that_would_overwrite_a_committed_entry_is_refused_before_it_changes_anything():
    group = committed_group()
    follower = group.servers[B]
    term, role, leader = follower.current_term, follower.role, follower.leader_id
    lie = AppendEntriesRequest(A, 3, 2, 1, (LogEntry(3, 3, b"forged"),), 3, 99)
    with pytest.raises(ValueError, match="entry 3 of term 3 contradicts committed entry 3 of term 1"):
        follower.receive(A, lie)
    assert (follower.current_term, follower.role, follower.leader_id) == (term, role, leader)
    assert follower.log.entry(3).payload == b"w1"


def test_a_previous_entry_that_contradicts_a_committed_one_is_refused():
    group = committed_group()
    lie = AppendEntriesRequest(A, 2, 4, 2, (), 4, 99)
    why = "previous entry 4 of term 2 contradicts committed entry 4 of term 1"
    with pytest.raises(ValueError, match=why):
        group.servers[B].receive(A, lie)
    assert group.servers[B].current_term == 1


def test_a_second_leader_in_a_term_is_refused_by_the_leader_and_its_followers():
    group = committed_group()
    leader, follower = group.servers[A], group.servers[B]
    claim = AppendEntriesRequest(C, 1, 5, 1, (), 5, 99)
    with pytest.raises(ValueError, match="a leads term 1"):
        follower.receive(C, claim)
    with pytest.raises(ValueError, match="a leads term 1"):
        leader.receive(C, claim)
    install = InstallSnapshotRequest(C, 1, TermIndex(1, 4), 99)
    with pytest.raises(ValueError, match="a leads term 1"):
        leader.receive(C, install)
    assert (leader.role, follower.leader_id) == (RaftPeerRole.LEADER, A)


def test_a_higher_term_under_the_leaders_name_is_followed_when_it_contradicts_nothing():
    group = committed_group()
    follower = group.servers[B]
    group.deliver(A, B, AppendEntriesRequest(A, 2, 5, 1, (LogEntry(2, 6, b"x"),), 5, 99))
    group.sync(B)
    assert (follower.current_term, follower.log.last_index) == (2, 6)
    reply = group.sent(B, A)[-1]
    assert isinstance(reply, AppendEntriesReply) and reply.result is AppendResult.SUCCESS
