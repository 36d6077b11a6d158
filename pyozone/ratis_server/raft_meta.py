"""A member's term and vote on disk: `current/raft-meta`, as Ratis's RaftStorageMetadataFile keeps them.

The file is a Java properties file (`term=`, `votedFor=`: Ratis's keys, so Ratis's reader would read it),
plus keys of ours, `snapshotTerm` and `snapshotIndex`: the entry the log starts after, and `snapshotPeers`:
the members in force there. Ratis keeps those with the state machine's snapshot (the log only knows its
first index); here the log must restart with `PersistentState.snapshot` and `.configuration` (a member
change whose configuration entry was purged must not fall back to the group's first members), and a snapshot
installed from the leader (`Persist.snapshot`) or a purge moves them, so they are recorded with the term
and vote, in the same atomic write.

The last line, `checksum=`, is the CRC32C of the bytes before it (ours too; Ratis keeps no checksum): the
log acts on the snapshot this file names (it deletes the segments the snapshot covers), so a damaged file
must be refused rather than believed. A file that fails it, is not UTF-8 text, or names what no member can
have written (a snapshot in term 0 after index 0, a snapshot's term after the member's) is refused with
`RaftMetaCorruptError`.

Every write replaces the file atomically (Ratis's AtomicFileOutputStream): the new contents go to
`raft-meta.tmp`, which is fsynced, renamed over `raft-meta`, and the directory is fsynced, so a crash leaves
the old file or the new one, never a torn one.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import crc32c

from pyozone.hdds.store.table import StoreError
from pyozone.ratis.messages import RaftPeerId, TermIndex

META_FILE = "raft-meta"
_TMP_SUFFIX = ".tmp"
_LOG_START = TermIndex(0, 0)
_CHECKSUM_KEY = b"checksum="


class RaftMetaCorruptError(StoreError):
    """`raft-meta` is damaged: the member refuses to start rather than trust a term, vote or snapshot
    that may be wrong (a wrong term or vote could make it vote twice in one term)."""

    def __init__(self, path: Path, reason: str) -> None:
        self.path = path
        super().__init__(
            f"{path}: damaged ({reason}), refusing to load the member's term, vote and log start. Restore "
            f"the file, or delete the member's Raft storage ({path.parent.parent}) and add the member to "
            f"its group again"
        )


@dataclass(frozen=True)
class RaftMeta:
    term: int = 0
    voted_for: RaftPeerId | None = None
    snapshot: TermIndex = _LOG_START  # the log starts after this entry
    configuration: tuple[RaftPeerId, ...] = ()  # the members in force at `snapshot` (empty: the first ones)


def read_meta(directory: Path) -> RaftMeta:
    """The member's metadata, or the initial one (term 0, no vote) when the file does not exist yet;
    RaftMetaCorruptError when it is damaged."""
    path = directory / META_FILE
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return RaftMeta()
    at = data.rfind(_CHECKSUM_KEY)
    if at < 0 or (at and data[at - 1 : at] != b"\n"):
        raise RaftMetaCorruptError(path, "no checksum line")
    body, written = data[:at], data[at + len(_CHECKSUM_KEY) :].strip()
    calculated = f"{crc32c.crc32c(body):08X}".encode()
    if written != calculated:
        raise RaftMetaCorruptError(path, f"checksum mismatch: calculated {calculated!r} but read {written!r}")
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as error:
        raise RaftMetaCorruptError(path, f"not UTF-8 text: {error}") from None
    values: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith(("#", "!")):
            continue
        key, sep, value = line.partition("=")
        if not sep:
            raise RaftMetaCorruptError(path, f"not a properties line: {line!r}")
        values[key.strip()] = value.strip()
    try:
        voted = values["votedFor"]
        meta = RaftMeta(
            int(values["term"]),
            RaftPeerId(voted) if voted else None,
            TermIndex(int(values.get("snapshotTerm", "0")), int(values.get("snapshotIndex", "0"))),
            tuple(RaftPeerId(p) for p in values.get("snapshotPeers", "").split(",") if p),
        )
    except (KeyError, ValueError) as error:
        raise RaftMetaCorruptError(path, f"cannot read the term and vote: {error!r} in {values}") from None
    snapshot = meta.snapshot
    if min(meta.term, snapshot.term, snapshot.index) < 0 or (snapshot.term == 0 and snapshot.index > 0):
        raise RaftMetaCorruptError(path, f"no log can start after {snapshot} (term {meta.term})")
    if snapshot.term > meta.term:
        raise RaftMetaCorruptError(path, f"the snapshot's term {snapshot.term} is after the term {meta.term}")
    return meta


def write_meta(directory: Path, meta: RaftMeta) -> None:
    """Replaces `raft-meta` atomically and durably (temp file, fsync, rename, fsync of the directory)."""
    body = (
        "#raft-meta: the member's term and vote (Ratis's RaftStorageMetadataFile)\n"
        f"term={meta.term}\n"
        f"votedFor={meta.voted_for.id if meta.voted_for else ''}\n"
        f"snapshotTerm={meta.snapshot.term}\n"
        f"snapshotIndex={meta.snapshot.index}\n"
        f"snapshotPeers={','.join(p.id for p in meta.configuration)}\n"
    ).encode()
    path = directory / META_FILE
    tmp = directory / (META_FILE + _TMP_SUFFIX)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        data = body + _CHECKSUM_KEY + f"{crc32c.crc32c(body):08X}\n".encode()
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
