"""One log segment file, in Ratis's format (SegmentedRaftLogFormat, SegmentedRaftLogOutputStream and
SegmentedRaftLogReader), so a segment can be told apart and read by Ratis's tools.

A segment starts with the 8-byte header `RaftLog1`. Each record is an entry as a LogEntryProto
(`pyozone.protocol.raft.entry_to_bytes`): the proto's length as a varint, the proto, and a 4-byte big-endian
CRC32C of the varint and the proto together (Ratis's PureJavaCrc32C). A record's first byte is never 0 (a
varint of a length of at least 1), so zero bytes after the last record are padding (Ratis preallocates
segment files with zeros, its "terminator"), and the reader stops there. pyozone does not preallocate: a
closed segment ends at its last record, as Ratis's ends once closed.

A torn write and damage are told apart by where they can be, without scanning for records past the damage.
Segments are created with O_TRUNC and cut with ftruncate, and records are only appended, so a process
killed (-9) during a write leaves a prefix of the records it was writing: the last record runs past the end
of the file (`Damage.torn`). A complete record failing its checksum, or bytes that cannot start a record,
were written whole and changed since: damage. A record that runs past the end must also begin as a
LogEntryProto does (its fields' tags, a field no longer than the record), so random bytes after the
records (stale blocks, a hostile file) are damage rather than a record cut short.

The names are Ratis's (LogSegmentStartEnd): `log_inprogress_<start>` for the open segment,
`log_<start>-<end>` for a closed one.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import crc32c

from pyozone.hdds.errors import ProtocolError
from pyozone.protocol.common import varint
from pyozone.protocol.raft import entry_from_bytes, entry_to_bytes
from pyozone.ratis.messages import EntryKind, LogEntry

HEADER = b"RaftLog1"
_CHECKSUM_BYTES = 4
_MAX_VARINT_BYTES = 5  # a uint32 length, as Ratis's CodedOutputStream.writeUInt32NoTag writes it
_CLOSED = re.compile(r"log_(\d+)-(\d+)")
_OPEN = re.compile(r"log_inprogress_(\d+)")


def open_name(start: int) -> str:
    return f"log_inprogress_{start}"


def closed_name(start: int, end: int) -> str:
    return f"log_{start}-{end}"


@dataclass(frozen=True)
class SegmentName:
    """What a file's name says: its first index and, for a closed segment, its last."""

    start: int
    end: int | None  # None: the open (in-progress) segment


def parse_name(name: str) -> SegmentName | None:
    if m := _CLOSED.fullmatch(name):
        return SegmentName(int(m.group(1)), int(m.group(2)))
    if m := _OPEN.fullmatch(name):
        return SegmentName(int(m.group(1)), None)
    return None


def encode_record(entry: LogEntry) -> bytes:
    body = entry_to_bytes(entry)
    framed = varint(len(body)) + body
    return framed + crc32c.crc32c(framed).to_bytes(_CHECKSUM_BYTES, "big")


@dataclass(frozen=True)
class Damage:
    """Where a segment stops being readable, and why; `torn` when it is a write a crash cut short (the
    file ends inside a record) rather than bytes changed after they were written."""

    offset: int
    reason: str
    torn: bool = False


@dataclass(frozen=True)
class SegmentRead:
    """The entries a segment holds up to its end or its first damage, with each record's end offset (where
    the file is cut to keep the entries before it)."""

    entries: tuple[LogEntry, ...]
    ends: tuple[int, ...]
    damage: Damage | None

    @property
    def valid_end(self) -> int:
        """The offset just after the last good record (or the header)."""
        return self.ends[-1] if self.ends else len(HEADER)


class _Bad(Exception):
    def __init__(self, reason: str, torn: bool = False) -> None:
        self.reason = reason
        self.torn = torn


class _CutShort(Exception):
    """A varint the end of the file cuts short."""


def _varint_at(data: bytes, pos: int, max_bytes: int) -> tuple[int, int]:
    """The varint at `pos` and the offset after it; `_CutShort` at the end of the file, `_Bad` when it is
    longer than `max_bytes`."""
    value = shift = 0
    p = pos
    while True:
        if p >= len(data):
            raise _CutShort
        if p - pos == max_bytes:
            raise _Bad("the record's length is not a valid varint")
        byte = data[p]
        p += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, p


# LogEntryProto's fields as tags (term and index varints; the body a message), proto/pyozone/Raft.proto
_ENTRY_TAGS = {0x08: 0, 0x10: 0, 0x1A: 2, 0x22: 2, 0x2A: 2}
_MAX_UINT64_VARINT_BYTES = 10


def _starts_an_entry(data: bytes, pos: int, end: int) -> bool:
    """Whether `data[pos:]`, which the end of the file cuts short of `end`, can be the start of a
    LogEntryProto of `end - pos` bytes: every tag one of its fields', no field running past `end`."""
    while pos < len(data):
        wire_type = _ENTRY_TAGS.get(data[pos])
        if wire_type is None:
            return False
        try:
            value, pos = _varint_at(data, pos + 1, _MAX_UINT64_VARINT_BYTES)
        except _CutShort:
            return True
        except _Bad:
            return False
        if wire_type == 2:
            pos += value
            if pos > end:
                return False
    return True


def _read_record(data: bytes, pos: int) -> tuple[LogEntry, int]:
    """The record at `pos` and the offset after it; `_Bad` if it is cut short or damaged."""
    try:
        length, p = _varint_at(data, pos, _MAX_VARINT_BYTES)
    except _CutShort:
        raise _Bad("the record's length is cut short by the end of the file", torn=True) from None
    if length >= 1 << 32:
        raise _Bad(f"a record length of {length} bytes, more than a uint32")
    end = p + length + _CHECKSUM_BYTES
    if end > len(data):
        reason = f"a record of {length} bytes runs past the end of the file ({len(data)} bytes)"
        if _starts_an_entry(data, p, p + length):
            raise _Bad(reason, torn=True)
        raise _Bad(f"{reason}, and its bytes are not the start of a log entry")
    expected = int.from_bytes(data[p + length : end], "big")
    calculated = crc32c.crc32c(data[pos : p + length])
    if expected != calculated:
        raise _Bad(f"checksum mismatch: calculated {calculated:08X} but read {expected:08X}")
    try:
        return entry_from_bytes(data[p : p + length]), end
    except ProtocolError as error:
        raise _Bad(str(error)) from None


def read_segment(data: bytes) -> SegmentRead:
    """Reads a segment's bytes as far as they are good, as Ratis's SegmentedRaftLogReader does, in one
    pass (linear in the file's size)."""
    if data[: len(HEADER)] != HEADER:
        if _header_torn(data):
            return SegmentRead((), (), Damage(0, "the header is cut short", torn=True) if data else None)
        return SegmentRead((), (), Damage(0, f"not a Raft log segment (header {data[:8]!r}, not {HEADER!r})"))
    entries: list[LogEntry] = []
    ends: list[int] = []
    pos = len(HEADER)
    while pos < len(data):
        if data[pos] == 0:
            if data.count(0, pos) != len(data) - pos:
                return SegmentRead(tuple(entries), tuple(ends), Damage(pos, "bytes after the zero padding"))
            break
        try:
            entry, pos = _read_record(data, pos)
        except _Bad as bad:
            return SegmentRead(tuple(entries), tuple(ends), Damage(pos, bad.reason, bad.torn))
        entries.append(entry)
        ends.append(pos)
    return SegmentRead(tuple(entries), tuple(ends), None)


def _header_torn(data: bytes) -> bool:
    """A header cut short by a crash while the segment was created: part of it, then nothing or zeros."""
    head = data[: len(HEADER)].rstrip(b"\0")
    return HEADER.startswith(head) and data.count(0, len(HEADER)) == max(0, len(data) - len(HEADER))


def describe_entry(entry: LogEntry, describe_payload: Callable[[bytes], str] | None = None) -> str:
    """An entry in the shape of Ratis's LogProtoUtils.toLogEntryString that `ozone debug ratislogparser`
    prints (`(t:TERM, i:INDEX), BODY...`), with the state machine payload's size; `describe_payload` (the
    state machine's reading of its bytes, e.g. OM's request) adds Ratis's `State Machine:` line."""
    head = f"(t:{entry.term}, i:{entry.index})"
    if entry.kind is EntryKind.STATE_MACHINE:
        client = entry.client_id or "<empty clientId>"
        line = f"{head}, STATEMACHINELOGENTRY, {client}, cid={entry.call_id}, size={len(entry.payload)}"
        if describe_payload is not None:
            line += f"\n\t State Machine: {describe_payload(entry.payload)}"
        return line
    if entry.kind is EntryKind.CONFIGURATION:
        current = ",".join(p.id for p in entry.peers)
        old = ",".join(p.id for p in entry.old_peers)
        return f"{head}, CONFIGURATIONENTRY(current:{current}, old:{old})"
    return f"{head}, METADATAENTRY"


def dump_segment(path: Path, describe_payload: Callable[[bytes], str] | None = None) -> Iterator[str]:
    """What `pyozone debug ratislogparser` prints for one segment file (Ratis's ParseRatisLog): a heading,
    each entry (`describe_entry`), the counts, and where the file stops being readable, if it does."""
    data = path.read_bytes()
    yield f"Processing Raft Log file: {path.resolve()} size:{len(data)}"
    if parse_name(path.name) is None:
        yield "Invalid segment file"
        return
    read = read_segment(data)
    counts = dict.fromkeys(EntryKind, 0)
    for entry in read.entries:
        counts[entry.kind] += 1
        yield describe_entry(entry, describe_payload)
    yield f"Num Total Entries: {len(read.entries)}"
    yield f"Num Conf Entries: {counts[EntryKind.CONFIGURATION]}"
    yield f"Num Metadata Entries: {counts[EntryKind.NOOP]}"
    yield f"Num StateMachineEntries Entries: {counts[EntryKind.STATE_MACHINE]}"
    if read.damage is not None:
        how = "Torn (a write a crash cut short)" if read.damage.torn else "Damaged"
        yield f"{how} at offset {read.damage.offset}: {read.damage.reason}"
