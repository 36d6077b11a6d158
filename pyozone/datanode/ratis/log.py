"""RaftLog: one pipeline's log of entry metadata on one member, in an append-only file.

Each record is (term, index, the request without its chunk data), framed as
`<u32 length><u32 crc32c><payload>`: the chunk data is written once, into the container's block file, and
only metadata goes into the log (seed 004's data/metadata separation). Records are written as they
are applied; an entry that commits a block (putBlock, a writeChunk carrying its putBlock, putSmallFile)
or closes a container is answered only once the log is fsynced past it, as the block file and its
metadata were. The group shares one fsync among the entries written while the previous one ran (group
commit: RaftGroup._synced), so a burst of small keys costs one fsync, not one each. Entries
of different containers apply in parallel and are logged in index order after them, so a kill can leave a
container's BCSID past the log's end; the group checks that on restart (RaftGroup). On open, a torn or
corrupt tail (a crash mid-append) is cut off: the last whole record gives the index to go on from.

Nothing is ever read back but that last record (a failed member is not caught up from the log), so once
the file passes SEGMENT_BYTES it is replaced by one holding only its last record: the log stays bounded
however much data the pipeline carries, and a restart reads at most one segment.
"""

from __future__ import annotations

import os
import struct
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import crc32c

from pyozone.common.fsutil import atomic_write
from pyozone.protocol.ratis import decode_record, encode_record

if TYPE_CHECKING:
    from pyozone.proto.DatanodeClientProtocol_pb2 import ContainerCommandRequestProto

_HEADER = struct.Struct(">II")
LOG_FILE = "log"
SEGMENT_BYTES = 64 << 20
"""About 17 GB of data written in 4 MB chunks (a putBlock record lists its block's chunks)."""


@dataclass(frozen=True, slots=True)
class LogRecord:
    term: int
    index: int
    entry: ContainerCommandRequestProto


class RaftLog:
    def __init__(self, directory: Path, segment_bytes: int = SEGMENT_BYTES) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.path = directory / LOG_FILE
        self._segment_bytes = segment_bytes
        self._lock = threading.Lock()
        self.term, self.last_index = 0, 0
        good = self._recover()
        self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        if good < os.fstat(self._fd).st_size:
            os.ftruncate(self._fd, good)
        self._size = good

    def _recover(self) -> int:
        """Reads every whole record; returns the byte length of the good prefix."""
        good = 0
        for record, end in self._scan():
            self.term, self.last_index, good = record.term, record.index, end
        return good

    def _scan(self) -> Iterator[tuple[LogRecord, int]]:
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return
        pos = 0
        while pos + _HEADER.size <= len(raw):
            length, crc = _HEADER.unpack_from(raw, pos)
            payload = raw[pos + _HEADER.size : pos + _HEADER.size + length]
            if len(payload) < length or crc32c.crc32c(payload) != crc:
                return
            decoded = decode_record(payload)
            if decoded is None:
                return
            record = LogRecord(*decoded)
            pos += _HEADER.size + length
            yield record, pos

    def records(self) -> list[LogRecord]:
        """Every whole record (for tools and tests)."""
        return [record for record, _ in self._scan()]

    def append(self, term: int, index: int, entry: ContainerCommandRequestProto) -> None:
        """Appends entry `index` (without its chunk data: protocol.ratis.encode_record), which must follow
        the last one."""
        payload = encode_record(term, index, entry)
        record = _HEADER.pack(len(payload), crc32c.crc32c(payload)) + payload
        with self._lock:
            if index != self.last_index + 1:
                raise ValueError(f"log {self.path}: entry {index} does not follow {self.last_index}")
            os.write(self._fd, record)
            self.term, self.last_index = term, index
            self._size += len(record)
            if self._size > self._segment_bytes:
                self._restart_with(record)

    def _restart_with(self, record: bytes) -> None:
        """Replaces the file by one holding only `record` (written, synced, renamed over it)."""
        atomic_write(self.path, record)
        old, self._fd = self._fd, os.open(self.path, os.O_WRONLY | os.O_APPEND)
        os.close(old)
        self._size = len(record)

    def sync(self) -> None:
        """Forces the records written so far to disk (after an entry that commits a block). The fsync runs
        on a duplicate of the file descriptor, outside the lock: appends go on meanwhile (they land in the
        next sync), and a segment restart or close may replace the descriptor under it. A closed log
        raises ValueError: what it did not sync must not be acknowledged."""
        with self._lock:
            if self._fd < 0:
                raise ValueError(f"{self.path}: the log is closed")
            fd = os.dup(self._fd)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def close(self) -> None:
        with self._lock:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1
