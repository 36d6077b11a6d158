"""FILE_PER_BLOCK chunk files: every chunk of a block lives at its offset in <chunks>/<localID>.block.

Positional I/O (pwrite/pread) with no shared file offset, so a reader never disturbs a writer and no
file handle has to stay open between requests. Writes are not fsynced here: the container fsyncs a
block file once, at putBlock, before its metadata is committed (one fsync per block, not per chunk).

Every chunk a client, a pipeline member, a datastream or an EC reconstruction writes or reads passes
through write_at, read_at or send_at, so these time it and tell the volume's IOStats (bytes, ops, latency:
datanode/metrics.py): one perf_counter pair per chunk. The scanner's reads pass no stats: they are not
client I/O, and their throttled pace would only blur the latencies.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from time import perf_counter
from typing import BinaryIO, Protocol

from pyozone.datanode.storage import faults


class IOStats(Protocol):
    """Where a volume's chunk I/O is counted (thread-safe; called once per chunk, after it succeeded)."""

    def wrote(self, nbytes: int, seconds: float) -> None: ...

    def read(self, nbytes: int, seconds: float) -> None: ...


class _Uncounted:
    def wrote(self, nbytes: int, seconds: float) -> None:
        pass

    def read(self, nbytes: int, seconds: float) -> None:
        pass


UNCOUNTED: IOStats = _Uncounted()
"""A volume's stats until the daemon gives it its own (tools and storage tests count nothing)."""


def block_file(chunks_dir: Path, local_id: int) -> Path:
    return chunks_dir / f"{local_id}.block"


def file_size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def write_at(
    path: Path, offset: int, data: bytes | bytearray | memoryview, stats: IOStats = UNCOUNTED
) -> None:
    view = memoryview(data).cast("B")
    faults.before_write(path, len(view))
    started = perf_counter()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        done = 0
        while done < len(view):
            done += os.pwrite(fd, view[done:], offset + done)
    finally:
        os.close(fd)
    stats.wrote(len(view), perf_counter() - started)


def read_at(path: Path, offset: int, length: int, stats: IOStats = UNCOUNTED) -> bytes:
    """Up to `length` bytes at `offset`; fewer only when the file ends first."""
    started = perf_counter()
    fd = os.open(path, os.O_RDONLY)
    try:
        parts, done = [], 0
        while done < length:
            part = os.pread(fd, length - done, offset + done)
            if not part:
                break
            parts.append(part)
            done += len(part)
    finally:
        os.close(fd)
    stats.read(done, perf_counter() - started)
    return parts[0] if len(parts) == 1 else b"".join(parts)


def send_at(conn: socket.socket, file: BinaryIO, offset: int, length: int, stats: IOStats = UNCOUNTED) -> int:
    """Sends `length` bytes of `file` at `offset` with sendfile (page cache to socket, no copy into
    Python); returns the bytes sent, fewer only when the file ends first. Timed as a read (the time
    includes the socket's)."""
    started = perf_counter()
    sent = conn.sendfile(file, offset, length)
    stats.read(sent, perf_counter() - started)
    return sent


def sync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
