"""The members' messages on the wire (protocol/raft.py): every core message round-trips through
RaftServerMessageProto with its header, and damaged or truncated bytes are a ProtocolError, never a crash
and never a malformed message for the core."""

from __future__ import annotations

import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pyozone.hdds.errors import ProtocolError
from pyozone.proto import Raft_pb2 as pb
from pyozone.protocol.raft import (
    RaftEnvelope,
    append_entry_pieces,
    append_message_pieces,
    entry_wire_bytes,
    message_from_proto,
    message_to_proto,
    messages_from_bytes,
    messages_from_proto,
    messages_to_proto,
)
from pyozone.ratis.messages import (
    AppendEntriesReply,
    AppendEntriesRequest,
    AppendResult,
    EntryKind,
    InstallSnapshotReply,
    InstallSnapshotRequest,
    InstallSnapshotResult,
    LogEntry,
    Message,
    RaftPeerId,
    RequestVoteReply,
    RequestVoteRequest,
    StartLeaderElectionRequest,
    TermIndex,
)

U64 = st.integers(min_value=0, max_value=2**64 - 1)
SMALL = st.integers(min_value=0, max_value=1000)
peers = st.builds(RaftPeerId, st.text(min_size=1, max_size=12))
groups = st.text(max_size=40)


@st.composite
def appends(draw: st.DrawFn) -> AppendEntriesRequest:
    """An append whose entries follow its previous entry, in terms between the previous one's and the
    leader's (what a leader sends)."""
    previous_index, previous_term = draw(SMALL), draw(SMALL)
    leader_term = previous_term + draw(SMALL)
    entries = []
    term = previous_term
    for index in range(previous_index + 1, previous_index + 1 + draw(st.integers(0, 5))):
        term = draw(st.integers(term, leader_term))
        kind = draw(st.sampled_from(EntryKind))
        if kind is EntryKind.STATE_MACHINE:
            entry = LogEntry(
                term, index, draw(st.binary(max_size=64)), kind, draw(st.text(max_size=8)), draw(U64)
            )
        elif kind is EntryKind.CONFIGURATION:
            entry = LogEntry(
                term,
                index,
                kind=kind,
                peers=tuple(draw(st.lists(peers, max_size=3))),
                old_peers=tuple(draw(st.lists(peers, max_size=3))),
            )
        else:
            entry = LogEntry(term, index, kind=kind)
        entries.append(entry)
    return AppendEntriesRequest(
        draw(peers), leader_term, previous_index, previous_term, tuple(entries), draw(U64), draw(U64)
    )


@st.composite
def append_replies(draw: st.DrawFn) -> AppendEntriesReply:
    """What a follower answers: SUCCESS wants the entry after its match index, having committed at most that
    far; any other answer matches and commits nothing."""
    result = draw(st.sampled_from(AppendResult))
    if result is AppendResult.SUCCESS:
        match = draw(st.integers(0, 2**64 - 2))
        commit = draw(st.integers(0, match))
        return AppendEntriesReply(draw(peers), draw(U64), result, match, match + 1, draw(U64), commit)
    return AppendEntriesReply(draw(peers), draw(U64), result, 0, draw(st.integers(1, 2**64 - 1)), draw(U64))


messages: st.SearchStrategy[Message] = st.one_of(
    st.builds(RequestVoteRequest, peers, U64, U64, U64, st.booleans(), U64),
    st.builds(RequestVoteReply, peers, U64, st.booleans(), st.booleans(), U64),
    appends(),
    append_replies(),
    st.builds(StartLeaderElectionRequest, peers, U64, U64),
    st.builds(InstallSnapshotRequest, peers, U64, st.builds(TermIndex, U64, U64), U64),
    st.builds(InstallSnapshotReply, peers, U64, st.sampled_from(InstallSnapshotResult), U64, U64),
)


def _named(message: Message) -> RaftPeerId:
    for name in ("candidate_id", "voter_id", "leader_id", "follower_id"):
        if hasattr(message, name):
            return getattr(message, name)
    raise AssertionError(message)


@settings(max_examples=300, deadline=None)
@given(messages, groups, peers)
def test_every_core_message_round_trips_with_its_header(message: Message, group: str, to: RaftPeerId) -> None:
    data = message_to_proto(group, to, message).SerializeToString()
    assert message_from_proto(pb.RaftServerMessageProto.FromString(data)) == RaftEnvelope(
        group, _named(message), to, message
    )


@settings(max_examples=100, deadline=None)
@given(st.lists(messages, max_size=5), groups, peers)
def test_a_batch_round_trips_in_order(batch: list[Message], group: str, to: RaftPeerId) -> None:
    data = messages_to_proto(group, to, batch).SerializeToString()
    assert [e.message for e in messages_from_bytes(data)] == batch


def _well_formed(envelope: RaftEnvelope) -> None:
    """What the core takes for granted of a received message."""
    assert envelope.sender.id and envelope.receiver.id
    message = envelope.message
    if isinstance(message, AppendEntriesRequest):
        index, term = message.previous_index, message.previous_term
        for entry in message.entries:
            assert entry.index == index + 1 and term <= entry.term <= message.leader_term
            index, term = entry.index, entry.term


@settings(max_examples=400, deadline=None)
@given(st.lists(messages, min_size=1, max_size=3), groups, peers, st.data())
def test_damaged_or_truncated_bytes_are_a_protocol_error_never_a_crash(
    batch: list[Message], group: str, to: RaftPeerId, data: st.DataObject
) -> None:
    raw = bytearray(messages_to_proto(group, to, batch).SerializeToString())
    if data.draw(st.booleans(), "truncate"):
        raw = raw[: data.draw(st.integers(0, max(0, len(raw) - 1)), "cut")]
    else:
        for _ in range(data.draw(st.integers(1, 4), "flips")):
            position = data.draw(st.integers(0, len(raw) - 1), "position")
            raw[position] = data.draw(st.integers(0, 255), "byte")
    try:
        envelopes = messages_from_bytes(bytes(raw))
    except ProtocolError:
        return
    for envelope in envelopes:
        _well_formed(envelope)


@pytest.mark.parametrize(
    "damaged",
    [
        pb.RaftServerMessageProto(),
        pb.RaftServerMessageProto(requestVote=pb.RequestVoteRequestProto(candidateTerm=1)),
        pb.RaftServerMessageProto(
            appendEntries=pb.AppendEntriesRequestProto(serverRequest=pb.RaftRpcRequestProto(requestorId="a"))
        ),
        pb.RaftServerMessageProto(
            appendEntriesReply=pb.AppendEntriesReplyProto(
                serverReply=pb.RaftRpcReplyProto(requestorId="a", replyId="b"), result=7
            )
        ),
        pb.RaftServerMessageProto(
            installSnapshot=pb.InstallSnapshotRequestProto(
                serverRequest=pb.RaftRpcRequestProto(requestorId="a", replyId="b"), leaderTerm=1
            )
        ),
        pb.RaftServerMessageProto(
            installSnapshotReply=pb.InstallSnapshotReplyProto(
                serverReply=pb.RaftRpcReplyProto(requestorId="a", replyId="b"), result=pb.SUCCESS
            )
        ),
    ],
    ids=["empty", "no header", "no receiver", "unknown result", "snapshot chunk", "chunk's answer"],
)
def test_a_message_missing_a_part_is_refused(damaged: pb.RaftServerMessageProto) -> None:
    with pytest.raises(ProtocolError):
        message_from_proto(damaged)


def test_entries_that_do_not_follow_the_previous_one_are_refused() -> None:
    append = AppendEntriesRequest(RaftPeerId("a"), 3, 5, 2, (LogEntry(3, 7),), 0, 1)
    with pytest.raises(ProtocolError, match="does not follow"):
        message_from_proto(message_to_proto("g", RaftPeerId("b"), append))
    newer = AppendEntriesRequest(RaftPeerId("a"), 3, 5, 2, (LogEntry(4, 6),), 0, 1)
    with pytest.raises(ProtocolError, match="does not follow"):
        message_from_proto(message_to_proto("g", RaftPeerId("b"), newer))


@pytest.mark.parametrize(
    ("result", "match_index", "next_index", "commit"),
    [
        (AppendResult.SUCCESS, 10**6, 5, 0),  # matched past where it asks to resume
        (AppendResult.SUCCESS, 4, 4, 0),
        (AppendResult.SUCCESS, 4, 5, 5),  # committed past what it matched
        (AppendResult.INCONSISTENCY, 7, 3, 0),  # a refusal matches nothing
        (AppendResult.INCONSISTENCY, 0, 3, 2),  # nor names a commit
        (AppendResult.NOT_LEADER, 0, 0, 0),
    ],
)
def test_an_append_answer_no_follower_sends_is_refused(
    result: AppendResult, match_index: int, next_index: int, commit: int
) -> None:
    reply = AppendEntriesReply(RaftPeerId("b"), 3, result, match_index, next_index, 1, commit)
    with pytest.raises(ProtocolError, match="appendEntriesReply"):
        message_from_proto(message_to_proto("g", RaftPeerId("a"), reply))


def test_a_vote_and_its_reply_carry_the_candidates_round() -> None:
    """RaftRpcRequestProto.callId names the round, so a late grant from an earlier round does not count."""
    vote = RequestVoteRequest(RaftPeerId("a"), 4, 3, 9, pre_vote=True, call_id=17)
    grant = RequestVoteReply(RaftPeerId("b"), 4, True, True, call_id=17)
    for message in (vote, grant):
        wire = message_to_proto("g", RaftPeerId("c"), message).SerializeToString()
        assert message_from_proto(pb.RaftServerMessageProto.FromString(wire)).message.call_id == 17


@settings(max_examples=200, deadline=None)
@given(appends(), groups, peers)
def test_an_entrys_wire_bytes_are_what_it_adds_to_an_append(append: AppendEntriesRequest, group, to) -> None:
    """The cost the core fills an append by (`entry_wire_bytes`) is exact, framing and client id included."""
    empty = message_to_proto(group, to, AppendEntriesRequest(**{**append.__dict__, "entries": ()}))
    full = message_to_proto(group, to, append)
    assert sum(entry_wire_bytes(e) for e in append.entries) == (
        full.appendEntries.ByteSize() - empty.appendEntries.ByteSize()
    )


def _data_batch(sizes: list[int]) -> bytes:
    """A batch of two appends whose entries carry state machine data of `sizes`, as a leader frames it."""
    pieces: list[bytes | memoryview] = []
    previous = 0
    for half in (sizes[: len(sizes) // 2], sizes[len(sizes) // 2 :]):
        entries = tuple(
            LogEntry(2, previous + i + 1, b"p%d" % i, client_id="c", call_id=i, data_size=size)
            for i, size in enumerate(half)
        )
        append = AppendEntriesRequest(RaftPeerId("dn1"), 2, previous, 2 if previous else 0, entries, 0, 7)
        data = [append_entry_pieces(e, bytes([e.index % 256]) * e.data_size) for e in entries]
        pieces += append_message_pieces("g", RaftPeerId("dn2"), append, data)
        previous += len(half)
    return b"".join(pieces)


def _parsed_data(raw: bytes) -> list[dict[int, bytes]]:
    """Each envelope's data as protobuf's parse of `raw` holds it (copied out of the message)."""
    return [e.data for e in messages_from_proto(pb.RaftServerMessagesProto.FromString(raw))]


def test_an_appends_data_are_views_of_the_bytes_it_came_in() -> None:
    """No copy (issue 30): a follower takes each entry's data in place, a view of the call's bytes: protobuf
    parses the batch without the data (it would copy each chunk into the message, then out of it)."""
    raw = _data_batch([5, 0, 4 << 20, 300])
    tracemalloc.start()
    try:
        envelopes = messages_from_bytes(raw)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 << 10  # the batch without its data, never a chunk
    views = [d for e in envelopes for d in e.data.values()]
    assert len(views) == 3 and all(isinstance(v, memoryview) and v.obj is raw for v in views)
    assert [e.data for e in envelopes] == _parsed_data(raw)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 200), min_size=1, max_size=4), st.data())
def test_damaged_data_batches_decode_as_protobuf_parses_them_or_are_refused(
    sizes: list[int], data: st.DataObject
) -> None:
    """Bytes protobuf still parses after a flip (a field repeated, a tag changed) give each entry the data
    protobuf's message holds, read in place or, where the walk cannot map it alike, from the message."""
    raw = bytearray(_data_batch(sizes))
    for _ in range(data.draw(st.integers(1, 3), "flips")):
        raw[data.draw(st.integers(0, len(raw) - 1), "position")] = data.draw(st.integers(0, 255), "byte")
    try:
        envelopes = messages_from_bytes(bytes(raw))
    except ProtocolError:
        return
    assert [e.data for e in envelopes] == _parsed_data(bytes(raw))


def test_an_entry_whose_body_comes_twice_takes_protobufs_merged_data() -> None:
    """A stateMachineLogEntry written twice is merged by protobuf (the data of the second joins the first's
    fields): the data is taken from the message, never from a part the walk would have picked."""
    first = pb.LogEntryProto(term=1, index=1)
    first.stateMachineLogEntry.dataSize = 3
    second = pb.LogEntryProto()
    second.stateMachineLogEntry.stateMachineData = b"new"
    append = pb.AppendEntriesRequestProto(leaderTerm=1)
    append.serverRequest.requestorId, append.serverRequest.replyId = "a", "b"
    entry = first.SerializeToString() + second.SerializeToString()
    body = append.SerializeToString() + _field(4, entry)
    raw = _field(1, _field(3, body))
    [envelope] = messages_from_bytes(raw)
    assert envelope.data == {1: b"new"} and not isinstance(envelope.data[1], memoryview)


def _field(number: int, value: bytes) -> bytes:
    """A length-delimited field (values under 128 bytes)."""
    assert len(value) < 128
    return bytes([(number << 3) | 2, len(value)]) + value
