"""Small durable-file helpers: datanode volumes, containers and identity, SCM and OM VERSION files."""

from __future__ import annotations

import os
import uuid
from pathlib import Path


def fsync_dir(directory: Path) -> None:
    """Makes renames and new entries in `directory` durable, not only the files' bytes."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(path: Path, data: bytes) -> None:
    """tmp + fsync + rename + fsync(dir): readers see the old file or the new one, never a torn one."""
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)
