"""The Raft core's records on disk and on the wire (proto/pyozone/Raft.proto, named after Ratis's Raft.proto).

A log entry is stored and sent as a LogEntryProto: the state machine's bytes with the client call they came
in, a configuration, or a new leader's no-op. The members' messages travel as RaftServerMessageProto, each
with a header naming its group, its sender and its receiver (`RaftEnvelope`); whatever a peer sends is
either read into a well-formed core message or refused with ProtocolError, so no damaged message reaches the
core.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from google.protobuf.message import DecodeError

from pyozone.common.varint import read_varint
from pyozone.hdds.errors import ProtocolError
from pyozone.proto import Raft_pb2 as pb
from pyozone.protocol.common import varint
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


def entry_to_proto(entry: LogEntry) -> pb.LogEntryProto:
    message = pb.LogEntryProto(term=entry.term, index=entry.index)
    if entry.kind is EntryKind.STATE_MACHINE:
        body = message.stateMachineLogEntry
        body.logData = entry.payload
        body.clientId = entry.client_id
        body.callId = entry.call_id
        body.dataSize = entry.data_size
    elif entry.kind is EntryKind.CONFIGURATION:
        message.configurationEntry.peers.extend(p.id for p in entry.peers)
        message.configurationEntry.oldPeers.extend(p.id for p in entry.old_peers)
    else:
        message.metadataEntry.SetInParent()
    return message


def entry_from_proto(message: pb.LogEntryProto) -> LogEntry:
    body = message.WhichOneof("LogEntryBody")
    if body == "stateMachineLogEntry":
        sm = message.stateMachineLogEntry
        return LogEntry(
            message.term,
            message.index,
            sm.logData,
            EntryKind.STATE_MACHINE,
            sm.clientId,
            sm.callId,
            data_size=sm.dataSize,
        )
    if body == "configurationEntry":
        conf = message.configurationEntry
        return LogEntry(
            message.term,
            message.index,
            kind=EntryKind.CONFIGURATION,
            peers=tuple(RaftPeerId(p) for p in conf.peers),
            old_peers=tuple(RaftPeerId(p) for p in conf.oldPeers),
        )
    if body == "metadataEntry":
        return LogEntry(message.term, message.index, kind=EntryKind.NOOP)
    raise ProtocolError("LogEntryBody", f"log entry {message.index} of term {message.term} carries no body")


def entry_wire_bytes(entry: LogEntry) -> int:
    """What `entry` adds to an AppendEntriesRequestProto: its LogEntryProto (term, index, payload, client id,
    call id or configuration, with their tags and lengths) and its own tag and length in `entries`. The Raft
    shell gives this to the core (`RaftServer(entry_bytes=...)`), which fills an append up to
    `raft.server.log.appender.buffer.byte-limit` by it, as Ratis's appender counts each entry's serialized
    size; `transport.split_append` counts the same, so an append the core sized is never split."""
    if entry.data_size:
        return len(append_entry_head(entry)) + entry.data_size
    size = entry_to_proto(entry).ByteSize()
    return _APPEND_ENTRY_TAG_BYTES + len(varint(size)) + size


_APPEND_ENTRY_TAG_BYTES = 1
"""The tag of AppendEntriesRequestProto.entries (field 4, length-delimited): one byte."""
_APPEND_ENTRY_TAG = bytes([(4 << 3) | 2])
_STATE_MACHINE_ENTRY_TAG = bytes([(3 << 3) | 2])  # LogEntryProto.stateMachineLogEntry
_DATA_TAG = bytes([(4 << 3) | 2])  # StateMachineLogEntryProto.stateMachineData
_APPEND_TAG = bytes([(3 << 3) | 2])  # RaftServerMessageProto.appendEntries
_MESSAGES_TAG = bytes([(1 << 3) | 2])  # RaftServerMessagesProto.messages


def append_entry_head(entry: LogEntry) -> bytes:
    """An entry of an append (AppendEntriesRequestProto.entries, tag and length included) up to its state
    machine data, which follows it to end the element: written by hand around the data, as the datanode's
    `protocol.ratis.encode_entry` does, so the data is not copied into a message first. Without data: the
    whole element."""
    if not entry.data_size:
        body = entry_to_bytes(entry)
        return b"".join((_APPEND_ENTRY_TAG, varint(len(body)), body))
    size = entry.data_size
    data_head = _DATA_TAG + varint(size)
    machine = entry_to_proto(entry).stateMachineLogEntry.SerializeToString()
    machine_size = len(machine) + len(data_head) + size
    position = pb.LogEntryProto(term=entry.term, index=entry.index).SerializeToString()
    head = b"".join((position, _STATE_MACHINE_ENTRY_TAG, varint(machine_size), machine, data_head))
    return b"".join((_APPEND_ENTRY_TAG, varint(len(head) + size), head))


def append_entry_bytes(entry: LogEntry, data: bytes | memoryview = b"") -> bytes:
    """The entry as an append carries it, with its state machine data (`entry.data_size` bytes), joined."""
    return b"".join(append_entry_pieces(entry, data))


EntryPieces = tuple[bytes | memoryview, ...]
"""An entry as an append carries it, in pieces whose bytes follow one another (`append_entry_pieces`)."""


def append_entry_pieces(entry: LogEntry, data: bytes | memoryview = b"") -> EntryPieces:
    """The entry as an append carries it (`entry_wire_bytes` long): its head and its state machine data
    (`entry.data_size` bytes) as they are, not joined, so the data is not copied; built once per entry
    and shared by every follower's append."""
    if len(data) != entry.data_size:
        raise ValueError(f"entry {entry.index} has {entry.data_size} bytes of data, given {len(data)}")
    return (append_entry_head(entry), data) if entry.data_size else (append_entry_head(entry),)


def append_message_pieces(
    group_id: str, receiver: RaftPeerId, append: AppendEntriesRequest, entries: list[EntryPieces]
) -> list[bytes | memoryview]:
    """One element of a RaftServerMessagesProto batch carrying `append`, whose entries are already encoded
    (`append_entry_pieces`, in order): its header by protobuf, the rest framed by hand, as pieces the
    caller sends with the batch's other elements, never joined (no copy of the entries' data per
    follower)."""
    header = message_to_proto(group_id, receiver, replace(append, entries=())).appendEntries
    head = header.SerializeToString()
    body_size = len(head) + sum(len(piece) for e in entries for piece in e)
    message_head = _APPEND_TAG + varint(body_size)
    message_size = len(message_head) + body_size
    return [_MESSAGES_TAG + varint(message_size) + message_head + head, *(p for e in entries for p in e)]


def entry_to_bytes(entry: LogEntry) -> bytes:
    return entry_to_proto(entry).SerializeToString()


def entry_from_bytes(data: bytes) -> LogEntry:
    """Parses a stored or received entry; damaged bytes raise ProtocolError."""
    message = pb.LogEntryProto()
    try:
        message.ParseFromString(data)
    except Exception as error:  # protobuf's DecodeError
        raise ProtocolError("LogEntryProto", f"a damaged log entry: {error}") from error
    return entry_from_proto(message)


@dataclass(frozen=True)
class RaftEnvelope:
    """A member's message with what its header says: the group, who sent it and to whom."""

    group_id: str
    sender: RaftPeerId
    receiver: RaftPeerId
    message: Message
    data: dict[int, bytes | memoryview] = field(default_factory=dict)
    """An append's state machine data, by the index of its entry (every entry with `data_size` has it)."""


_RESULTS = {
    AppendResult.SUCCESS: pb.AppendEntriesReplyProto.SUCCESS,
    AppendResult.NOT_LEADER: pb.AppendEntriesReplyProto.NOT_LEADER,
    AppendResult.INCONSISTENCY: pb.AppendEntriesReplyProto.INCONSISTENCY,
}
_RESULTS_BACK = {number: result for result, number in _RESULTS.items()}
_INSTALL_RESULTS = {result: pb.InstallSnapshotResult.Value(result.value) for result in InstallSnapshotResult}
_INSTALL_RESULTS_BACK = {number: result for result, number in _INSTALL_RESULTS.items()}


def _request(
    group_id: str, sender: RaftPeerId, receiver: RaftPeerId, call_id: int = 0
) -> pb.RaftRpcRequestProto:
    return pb.RaftRpcRequestProto(
        requestorId=sender.id, replyId=receiver.id, groupId=group_id, callId=call_id
    )


def _reply(
    group_id: str, sender: RaftPeerId, receiver: RaftPeerId, call_id: int, success: bool
) -> pb.RaftRpcReplyProto:
    """A reply's requestor is the member that asked (its receiver), its replier the one answering."""
    return pb.RaftRpcReplyProto(
        requestorId=receiver.id, replyId=sender.id, groupId=group_id, callId=call_id, success=success
    )


def message_to_proto(group_id: str, receiver: RaftPeerId, message: Message) -> pb.RaftServerMessageProto:
    """`message` of the core, sent to `receiver` in group `group_id` (its sender is the one it names)."""
    out = pb.RaftServerMessageProto()
    if isinstance(message, RequestVoteRequest):
        body = out.requestVote
        body.serverRequest.CopyFrom(_request(group_id, message.candidate_id, receiver, message.call_id))
        body.candidateTerm = message.candidate_term
        body.candidateLastEntry.term = message.last_log_term
        body.candidateLastEntry.index = message.last_log_index
        body.preVote = message.pre_vote
    elif isinstance(message, RequestVoteReply):
        vote = out.requestVoteReply
        vote.serverReply.CopyFrom(
            _reply(group_id, message.voter_id, receiver, message.call_id, message.granted)
        )
        vote.term = message.term
        vote.preVote = message.pre_vote
    elif isinstance(message, AppendEntriesRequest):
        append = out.appendEntries
        append.serverRequest.CopyFrom(_request(group_id, message.leader_id, receiver, message.call_id))
        append.leaderTerm = message.leader_term
        append.previousLog.term = message.previous_term
        append.previousLog.index = message.previous_index
        append.entries.extend(entry_to_proto(e) for e in message.entries)
        append.leaderCommit = message.leader_commit
    elif isinstance(message, AppendEntriesReply):
        answer = out.appendEntriesReply
        success = message.result is AppendResult.SUCCESS
        answer.serverReply.CopyFrom(_reply(group_id, message.follower_id, receiver, message.call_id, success))
        answer.term = message.term
        answer.nextIndex = message.next_index
        answer.result = _RESULTS[message.result]
        answer.matchIndex = message.match_index
        answer.followerCommit = message.follower_commit
    elif isinstance(message, InstallSnapshotRequest):
        install = out.installSnapshot
        install.serverRequest.CopyFrom(_request(group_id, message.leader_id, receiver, message.call_id))
        install.leaderTerm = message.leader_term
        install.notification.firstAvailableTermIndex.term = message.first_available.term
        install.notification.firstAvailableTermIndex.index = message.first_available.index
    elif isinstance(message, InstallSnapshotReply):
        installed = out.installSnapshotReply
        success = message.result in (
            InstallSnapshotResult.ALREADY_INSTALLED,
            InstallSnapshotResult.SNAPSHOT_INSTALLED,
        )
        installed.serverReply.CopyFrom(
            _reply(group_id, message.follower_id, receiver, message.call_id, success)
        )
        installed.term = message.term
        installed.result = _INSTALL_RESULTS[message.result]
        installed.snapshotIndex = message.snapshot_index
    else:
        start = out.startLeaderElection
        start.serverRequest.CopyFrom(_request(group_id, message.leader_id, receiver))
        start.leaderLastEntry.term = message.leader_term
        start.leaderLastEntry.index = message.leader_last_index
    return out


def _peer(value: str, field: str) -> RaftPeerId:
    if not value:
        raise ProtocolError(field, "a Raft message without its sender or receiver")
    return RaftPeerId(value)


def _entries(
    append: pb.AppendEntriesRequestProto, views: list[memoryview | None] | None = None
) -> tuple[tuple[LogEntry, ...], dict[int, bytes | memoryview]]:
    """The entries and their state machine data, refused unless they follow the previous entry one by one,
    in terms that never go back and none above the leader's (what the core's log takes for granted), and
    each carries all the data it counts (`dataSize`). `views`: each entry's data as a view of the bytes
    the append came in (`_without_data`: the message holds none then)."""
    entries = tuple(entry_from_proto(e) for e in append.entries)
    data: dict[int, bytes | memoryview] = {}
    for position, (proto, entry) in enumerate(zip(append.entries, entries, strict=True)):
        if entry.kind is not EntryKind.STATE_MACHINE:
            continue
        carried = proto.stateMachineLogEntry.stateMachineData if views is None else views[position] or b""
        if len(carried) != entry.data_size:
            raise ProtocolError(
                "appendEntries.entries.stateMachineData",
                f"entry {entry.index} counts {entry.data_size} bytes of data but carries {len(carried)}",
            )
        if carried:
            data[entry.index] = carried
    index, term = append.previousLog.index, append.previousLog.term
    for entry in entries:
        if entry.index != index + 1 or entry.term < term or entry.term > append.leaderTerm:
            raise ProtocolError(
                "appendEntries.entries",
                f"an append whose entry ({entry.term}, {entry.index}) does not follow ({term}, {index}) "
                f"in leader term {append.leaderTerm}",
            )
        index, term = entry.index, entry.term
    return entries, data


def _check_append_reply(
    result: AppendResult, match_index: int, next_index: int, follower_commit: int
) -> None:
    """What a follower answers (RaftServer._answer): SUCCESS matches up to `match_index`, has committed at
    most that far and wants the entry after it; any other answer matches and commits nothing and wants an
    entry from 1 on. (Indexes are unsigned on the wire: never negative.)"""
    if follower_commit > (match_index if result is AppendResult.SUCCESS else 0):
        raise ProtocolError(
            "appendEntriesReply.followerCommit",
            f"a {result.value} answer with commit index {follower_commit} past its match index {match_index}",
        )
    if result is AppendResult.SUCCESS and next_index != match_index + 1:
        raise ProtocolError(
            "appendEntriesReply.nextIndex",
            f"a SUCCESS answer whose next index {next_index} does not follow its match index {match_index}",
        )
    if result is not AppendResult.SUCCESS and (match_index != 0 or next_index < 1):
        raise ProtocolError(
            "appendEntriesReply.matchIndex",
            f"a {result.value} answer with match index {match_index} and next index {next_index}",
        )


def message_from_proto(
    message: pb.RaftServerMessageProto, views: list[memoryview | None] | None = None
) -> RaftEnvelope:
    """The core's message and its header; ProtocolError when any part is missing or inconsistent. `views`:
    an append's entries' data as views of the bytes it came in (`_entries`)."""
    kind = message.WhichOneof("Message")
    if kind in ("requestVote", "appendEntries", "startLeaderElection", "installSnapshot"):
        body = getattr(message, kind)
        if not body.HasField("serverRequest"):
            raise ProtocolError(kind, "a message without its header")
        head = body.serverRequest
        sender = _peer(head.requestorId, f"{kind}.serverRequest.requestorId")
        receiver = _peer(head.replyId, f"{kind}.serverRequest.replyId")
        core: Message
        if kind == "requestVote":
            last = body.candidateLastEntry
            core = RequestVoteRequest(
                sender, body.candidateTerm, last.term, last.index, body.preVote, head.callId
            )
        elif kind == "appendEntries":
            previous = body.previousLog
            entries, data = _entries(body, views)
            core = AppendEntriesRequest(
                sender,
                body.leaderTerm,
                previous.index,
                previous.term,
                entries,
                body.leaderCommit,
                head.callId,
            )
            return RaftEnvelope(head.groupId, sender, receiver, core, data)
        elif kind == "installSnapshot":
            if not body.HasField("notification"):
                raise ProtocolError(
                    "installSnapshot.notification",
                    "an InstallSnapshot without its notification (snapshot chunks are not taken: the "
                    "follower's state machine fetches the leader's checkpoint)",
                )
            first = body.notification.firstAvailableTermIndex
            core = InstallSnapshotRequest(
                sender, body.leaderTerm, TermIndex(first.term, first.index), head.callId
            )
        else:
            core = StartLeaderElectionRequest(sender, body.leaderLastEntry.term, body.leaderLastEntry.index)
        return RaftEnvelope(head.groupId, sender, receiver, core)
    if kind in ("requestVoteReply", "appendEntriesReply", "installSnapshotReply"):
        body = getattr(message, kind)
        if not body.HasField("serverReply"):
            raise ProtocolError(kind, "a message without its header")
        head = body.serverReply
        sender = _peer(head.replyId, f"{kind}.serverReply.replyId")
        receiver = _peer(head.requestorId, f"{kind}.serverReply.requestorId")
        if kind == "requestVoteReply":
            core = RequestVoteReply(sender, body.term, head.success, body.preVote, head.callId)
        elif kind == "installSnapshotReply":
            installed = _INSTALL_RESULTS_BACK.get(body.result)
            if installed is None:
                raise ProtocolError(f"{kind}.result", f"an unknown or unexpected result {body.result}")
            core = InstallSnapshotReply(sender, body.term, installed, body.snapshotIndex, head.callId)
        else:
            result = _RESULTS_BACK.get(body.result)
            if result is None:
                raise ProtocolError(f"{kind}.result", f"an unknown result {body.result}")
            _check_append_reply(result, body.matchIndex, body.nextIndex, body.followerCommit)
            core = AppendEntriesReply(
                sender, body.term, result, body.matchIndex, body.nextIndex, head.callId, body.followerCommit
            )
        return RaftEnvelope(head.groupId, sender, receiver, core)
    raise ProtocolError("Message", "a Raft message that carries no message")


def messages_to_proto(
    group_id: str, receiver: RaftPeerId, messages: list[Message]
) -> pb.RaftServerMessagesProto:
    return pb.RaftServerMessagesProto(messages=[message_to_proto(group_id, receiver, m) for m in messages])


def messages_from_proto(batch: pb.RaftServerMessagesProto) -> list[RaftEnvelope]:
    """Every message of a batch, or ProtocolError for the first that is not well formed (then none is
    taken: a member refuses the whole batch)."""
    return [message_from_proto(m) for m in batch.messages]


def messages_from_bytes(data: bytes) -> list[RaftEnvelope]:
    """A batch as it came off the wire; damaged or truncated bytes raise ProtocolError. The entries' state
    machine data are views of `data`: protobuf parses the batch without them (`_without_data`), as it
    would copy each chunk twice (into the message, then out of it as bytes)."""
    batch = pb.RaftServerMessagesProto()
    try:
        stripped = _without_data(data)
    except (IndexError, ValueError):
        stripped = None  # damaged: protobuf's parse says how
    try:
        batch.ParseFromString(data if stripped is None else stripped[0])
    except (DecodeError, ValueError) as error:  # ValueError: bad UTF-8 in a string field
        raise ProtocolError("RaftServerMessagesProto", f"a damaged Raft message: {error}") from error
    if stripped is None:
        return messages_from_proto(batch)
    return [message_from_proto(m, v) for m, v in zip(batch.messages, stripped[1], strict=True)]


_PATH = (1, 3, 4, 3, 4)
"""The fields down to an entry's data: RaftServerMessagesProto.messages, RaftServerMessageProto.appendEntries,
AppendEntriesRequestProto.entries, LogEntryProto.stateMachineLogEntry, StateMachineLogEntryProto
.stateMachineData."""
_MESSAGE, _APPEND, _ENTRY, _BODY, _DATA = range(5)  # depths along _PATH


class _Unmapped(ValueError):
    """A message part protobuf would merge from several occurrences: the batch is parsed whole."""


def _without_data(raw: bytes) -> tuple[bytes, list[list[memoryview | None]]] | None:
    """`raw` (a RaftServerMessagesProto) without its entries' stateMachineData fields (the enclosing lengths
    rewritten), and per message each of its append's entries' data as a view of `raw` (None: an entry
    without). None when a part along `_PATH` comes more than once (protobuf merges those: the views would
    not be what it reads); IndexError or ValueError when `raw` is not well formed."""
    view = memoryview(raw)
    found: list[list[memoryview | None]] = []
    try:
        pieces, _ = _strip(view, 0, len(raw), 0, found)
    except _Unmapped:
        return None
    return b"".join(pieces), found


def _strip(
    raw: memoryview, start: int, end: int, depth: int, found: list[list[memoryview | None]]
) -> tuple[list[memoryview | bytes], int]:
    """The fields of the message in raw[start:end] at `depth` of `_PATH` as pieces (and their bytes), the
    next field along the path rewritten without the data, the data itself left out (into `found`)."""
    pieces: list[memoryview | bytes] = []
    size = 0
    along = 0
    pos = start
    while pos < end:
        field_start = pos
        tag, pos = read_varint(raw, pos)
        wire_type = tag & 7
        if wire_type == 2:
            length, pos = read_varint(raw, pos)
            value_end = pos + length
            if value_end > end:
                raise ValueError("a field runs past its message")
            if tag >> 3 == _PATH[depth]:
                along += 1
                if along > 1 and depth != _MESSAGE and depth != _ENTRY:  # not a repeated field: merged
                    raise _Unmapped
                if depth == _MESSAGE:
                    found.append([])
                elif depth == _ENTRY:
                    found[-1].append(None)
                if depth == _DATA:
                    found[-1][-1] = raw[pos:value_end]
                else:
                    inner, inner_size = _strip(raw, pos, value_end, depth + 1, found)
                    head = varint(tag) + varint(inner_size)
                    pieces.append(head)
                    pieces += inner
                    size += len(head) + inner_size
                pos = value_end
                continue
            pos = value_end
        elif wire_type == 0:
            _, pos = read_varint(raw, pos)
        elif wire_type == 1:
            pos += 8
        elif wire_type == 5:
            pos += 4
        else:
            raise ValueError(f"wire type {wire_type}")
        pieces.append(raw[field_start:pos])
        size += pos - field_start
    if pos != end:
        raise ValueError("a field runs past its message")
    return pieces, size
