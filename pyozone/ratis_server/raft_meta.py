"""A member's term and vote on disk: `current/raft-meta`, as Ratis's RaftStorageMetadataFile keeps them.

The file is a Java properties file (`term=`, `votedFor=`: Ratis's keys, so Ratis's reader would read it),
plus two keys of ours, `snapshotTerm` and `snapshotIndex`: the entry the log starts after. Ratis keeps that
with the state machine's snapshot (the log only knows its first index); here the log must restart with
`PersistentState.snapshot`, and a snapshot installed from the leader (`Persist.snapshot`) or a purge moves
it, so it is recorded with the term and vote, in the same atomic write.

Every write replaces the file atomically (Ratis's AtomicFileOutputStream): the new contents go to
`raft-meta.tmp`, which is fsynced, renamed over `raft-meta`, and the directory is fsynced, so a crash leaves
the old file or the new one, never a torn one.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from pyozone.hdds.store.table import StoreError
from pyozone.ratis.messages import RaftPeerId, TermIndex

META_FILE = "raft-meta"
_TMP_SUFFIX = ".tmp"
_LOG_START = TermIndex(0, 0)


@dataclass(frozen=True)
class RaftMeta:
    term: int = 0
    voted_for: RaftPeerId | None = None
    snapshot: TermIndex = _LOG_START  # the log starts after this entry


def read_meta(directory: Path) -> RaftMeta:
    """The member's metadata, or the initial one (term 0, no vote) when the file does not exist yet."""
    path = directory / META_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return RaftMeta()
    values: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith(("#", "!")):
            continue
        key, sep, value = line.partition("=")
        if not sep:
            raise StoreError(f"{path}: not a properties line: {line!r}")
        values[key.strip()] = value.strip()
    try:
        voted = values["votedFor"]
        return RaftMeta(
            int(values["term"]),
            RaftPeerId(voted) if voted else None,
            TermIndex(int(values.get("snapshotTerm", "0")), int(values.get("snapshotIndex", "0"))),
        )
    except (KeyError, ValueError) as error:
        raise StoreError(f"{path}: cannot read the term and vote ({error!r} in {values})") from None


def write_meta(directory: Path, meta: RaftMeta) -> None:
    """Replaces `raft-meta` atomically and durably (temp file, fsync, rename, fsync of the directory)."""
    text = (
        "#raft-meta: the member's term and vote (Ratis's RaftStorageMetadataFile)\n"
        f"term={meta.term}\n"
        f"votedFor={meta.voted_for.id if meta.voted_for else ''}\n"
        f"snapshotTerm={meta.snapshot.term}\n"
        f"snapshotIndex={meta.snapshot.index}\n"
    )
    path = directory / META_FILE
    tmp = directory / (META_FILE + _TMP_SUFFIX)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        data = text.encode("utf-8")
        if os.write(fd, data) != len(data):
            raise OSError(f"{tmp}: short write")
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    fsync_directory(directory)


def fsync_directory(directory: Path) -> None:
    """Makes the directory's entries durable: files created, renamed or deleted in it."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
