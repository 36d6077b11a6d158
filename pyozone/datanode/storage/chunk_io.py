"""FILE_PER_BLOCK chunk files: every chunk of a block lives at its offset in <chunks>/<localID>.block.

Positional I/O (pwrite/pread) with no shared file offset, so a reader never disturbs a writer and no
file handle has to stay open between requests. Writes are not fsynced here: the container fsyncs a
block file once, at putBlock, before its metadata is committed (one fsync per block, not per chunk).
"""

from __future__ import annotations

import os
from pathlib import Path

from pyozone.datanode.storage import faults


def block_file(chunks_dir: Path, local_id: int) -> Path:
    return chunks_dir / f"{local_id}.block"


def file_size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def write_at(path: Path, offset: int, data: bytes | bytearray | memoryview) -> None:
    view = memoryview(data).cast("B")
    faults.before_write(path, len(view))
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        done = 0
        while done < len(view):
            done += os.pwrite(fd, view[done:], offset + done)
    finally:
        os.close(fd)


def read_at(path: Path, offset: int, length: int) -> bytes:
    """Up to `length` bytes at `offset`; fewer only when the file ends first."""
    fd = os.open(path, os.O_RDONLY)
    try:
        parts, done = [], 0
        while done < length:
            part = os.pread(fd, length - done, offset + done)
            if not part:
                break
            parts.append(part)
            done += len(part)
        return parts[0] if len(parts) == 1 else b"".join(parts)
    finally:
        os.close(fd)


def sync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
