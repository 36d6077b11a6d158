"""The Raft core's records on disk and on the wire (proto/pyozone/Raft.proto, named after Ratis's Raft.proto).

A log entry is stored and sent as a LogEntryProto: the state machine's bytes with the client call they came
in, a configuration, or a new leader's no-op.
"""

from __future__ import annotations

from pyozone.hdds.errors import ProtocolError
from pyozone.proto import Raft_pb2 as pb
from pyozone.ratis.messages import EntryKind, LogEntry, RaftPeerId


def entry_to_proto(entry: LogEntry) -> pb.LogEntryProto:
    message = pb.LogEntryProto(term=entry.term, index=entry.index)
    if entry.kind is EntryKind.STATE_MACHINE:
        body = message.stateMachineLogEntry
        body.logData = entry.payload
        body.clientId = entry.client_id
        body.callId = entry.call_id
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
            message.term, message.index, sm.logData, EntryKind.STATE_MACHINE, sm.clientId, sm.callId
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
    raise ProtocolError(f"log entry {message.index} of term {message.term} carries no body")


def entry_to_bytes(entry: LogEntry) -> bytes:
    return entry_to_proto(entry).SerializeToString()


def entry_from_bytes(data: bytes) -> LogEntry:
    """Parses a stored or received entry; damaged bytes raise ProtocolError."""
    message = pb.LogEntryProto()
    try:
        message.ParseFromString(data)
    except Exception as error:  # protobuf's DecodeError
        raise ProtocolError(f"a damaged log entry: {error}") from error
    return entry_from_proto(message)
