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


def atomic_write(path: Path, data: bytes, mode: int = 0o644) -> None:
    """tmp + fsync + rename + fsync(dir): readers see the old file or the new one, never a torn one. The
    file is created at `mode` (0600 for a private key: never readable by others, even for an instant)."""
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        os.fchmod(fd, mode)  # the umask may have taken bits away
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)


def write_file(path: Path, data: bytes, private: bool = False) -> None:
    """atomic_write into a directory made if missing, at 0600 when `private` (keys, secrets), else 0644:
    how certificates, keys and secret keys are stored."""
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, data, 0o600 if private else 0o644)
