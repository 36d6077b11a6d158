"""`SegmentedRaftLog`: a member's log, term and vote on disk (Ratis's SegmentedRaftLog with its
SegmentedRaftLogWorker, RaftStorageDirectory and RaftStorageMetadataFile), the shell's `RaftStorage`.

Layout of a group's directory (Ratis's): `in_use.lock` (one process at a time), and `current/` holding
`raft-meta` (pyozone/ratis_server/raft_meta.py), the closed segments `log_<start>-<end>` and the open one
`log_inprogress_<start>` (the record format: pyozone/ratis_server/segment_file.py). A segment is closed
(renamed) and the next one opened when the next record would take it past `raft.server.log.segment.size.max`.

Durability. `write` runs on the event loop thread and only reaches the page cache: records are appended
with `pwrite`, segments created, renamed, cut or deleted. The one sync it makes is a roll's: the segment
being closed is fdatasynced before its rename (as Ratis finalizes a segment), so a power loss never leaves
a closed name on a segment missing its last records; that is one fdatasync on the loop per
`raft.server.log.segment.size.max` bytes of log (measured on this project's ext4 VM: 1 to 2 ms median, up
to 15 ms on a busy disk). `flush`, on a worker thread, is the group commit:
it writes `raft-meta` if the term or vote changed, fdatasyncs every segment file written since the last
flush, and fsyncs the directory if segments were created, renamed or deleted. A process killed with -9
keeps everything `write` did (the kernel holds it); a machine that loses power keeps what was flushed. Two
writes are durable at once, because their order against the segments matters: a snapshot installed from
the leader (`Persist.snapshot`: the old segments are deleted, newest first, the directory fsynced, then
`raft-meta` records the snapshot, so a crash leaves a prefix of the old log or the reset, never old entries
after the new snapshot), and `purge` (`raft-meta` records where the log now starts before the segments go,
so a crash leaves only segments the snapshot covers, which `load` deletes). Both are rare. A truncation
deletes segments newest first and renames before it cuts, so every crash point leaves a prefix of the log;
after a power loss this relies on the file system keeping directory operations in order (ext4 and xfs
journal them so).

Loading. `load` reads each segment once (linear in the log's size: no search past damage), checks the
whole log, and only then changes files: it deletes the segments a purge left behind, cuts a record torn at
the open segment's end (`segment_file.py` says which damage is torn), and cuts zero padding. A damaged
`raft-meta` (it carries a checksum) is refused before any of that, since the segments deleted follow from
the snapshot it names.

The term and vote are written by `flush`, so entries of a later term may reach the disk (a flush syncs a
whole file) before the `raft-meta` naming that term: `load` then takes the last entry's term, with no vote
in it. That is safe: a vote that was not flushed was never sent.

Concurrency. One lock guards the segments' bookkeeping. `flush` holds it only to take the list of files to
sync (duplicating their descriptors, so the loop may close, cut or delete a segment meanwhile) and the
metadata to write; the fsyncs run outside it, while the loop keeps writing. A sync of a file the loop is
appending to makes durable at least what was written before the flush began, which is all `flush`
promises. `raft-meta` writes are serialized by their own lock and carry a version, so a flush never
replaces a newer `raft-meta` (written by a reset or a purge) with the older one it took.

Known cost: `load` returns every entry of the log, and the core keeps its log in memory; the log is
bounded only by snapshots and `purge`.
"""

from __future__ import annotations

import fcntl
import logging
import os
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path

from pyozone.hdds.store.table import StoreError
from pyozone.ratis.messages import LogEntry, RaftPeerId, TermIndex
from pyozone.ratis.outputs import Persist
from pyozone.ratis.server import PersistentState
from pyozone.ratis_server.raft_meta import RaftMeta, fsync_directory, read_meta, write_meta
from pyozone.ratis_server.segment_file import (
    HEADER,
    Damage,
    closed_name,
    encode_record,
    open_name,
    parse_name,
    read_segment,
)

log = logging.getLogger(__name__)

SEGMENT_SIZE_MAX = 32 * 1024 * 1024  # raft.server.log.segment.size.max, Ratis's default
CURRENT_DIR = "current"
LOCK_FILE = "in_use.lock"


_REJOIN = (
    "take the member out of its group and add it back with empty storage (OM: `pyozone admin om "
    "decommission`, then `pyozone om --bootstrap`): deleting its log in place is not enough, as the leader "
    "counts the entries the member acknowledged as held there and never sends them again, and the member "
    "would forget its vote"
)
"""The safe way out of a Raft log that cannot be loaded."""


class RaftLogCorruptError(StoreError):
    """A segment is damaged where a crash cannot have torn it (`offset` in `path`), or the segments do not
    fit together (`offset` None: a gap, an overlap): the member refuses to start."""

    def __init__(self, group_dir: Path, path: Path, offset: int | None, reason: str) -> None:
        self.path = path
        self.offset = offset
        self.reason = reason
        if offset is None:
            super().__init__(
                f"{path}: the Raft log's segments do not fit together ({reason}), refusing to load it. "
                f"`pyozone repair ratislog` does not delete intact segments: restore the missing or "
                f"misnamed segment, or {_REJOIN}"
            )
            return
        super().__init__(
            f"{path}: corrupt Raft log at offset {offset} ({reason}), refusing to load it. Loading past the "
            f"damage could lose entries this member acknowledged; to keep the entries before it, stop the "
            f"member and run `pyozone repair ratislog --dir {group_dir}` (or {_REJOIN})"
        )


@dataclass
class _Segment:
    start: int
    path: Path
    terms: list[int] = field(default_factory=list)  # each entry's term, from `start`
    ends: list[int] = field(default_factory=list)  # each record's end offset in the file
    fd: int | None = None  # the open segment's descriptor; None once closed

    @property
    def end(self) -> int:
        return self.start + len(self.terms) - 1

    @property
    def size(self) -> int:
        return self.ends[-1] if self.ends else len(HEADER)


class SegmentedRaftLog:
    """The `RaftStorage` of one group's member, in `group_dir` (created if missing)."""

    def __init__(self, group_dir: Path, segment_size_max: int = SEGMENT_SIZE_MAX) -> None:
        if segment_size_max <= len(HEADER):
            raise ValueError(f"raft.server.log.segment.size.max ({segment_size_max}) is too small")
        self._group_dir = group_dir
        self._dir = group_dir / CURRENT_DIR
        self._segment_size_max = segment_size_max
        self._lock = threading.Lock()
        self._meta_lock = threading.Lock()
        self._segments: list[_Segment] = []
        self._meta = RaftMeta()
        self._meta_version = 0  # bumped at every change of `_meta`
        self._meta_written = 0  # the version `raft-meta` holds (under `_meta_lock`)
        self._unsynced: dict[int, bool] = {}  # descriptor written since the last flush -> close once synced
        self._dir_dirty = False
        self._lock_fd: int | None = None

    # ---- RaftStorage

    def load(self) -> PersistentState:
        """Reads `raft-meta` and every segment, checking each record's checksum and that the indexes
        follow on from the snapshot without a gap. A record the crash tore at the end of the open segment
        is cut off (with a warning); any other damage raises RaftLogCorruptError, and a damaged raft-meta
        a StoreError, before anything on disk is changed. Every entry is read into memory (the core keeps
        its whole log there: a known cost, bounded by snapshots and purges)."""
        with self._lock:
            self._dir.mkdir(parents=True, exist_ok=True)
            self._lock_fd = _take_lock(self._group_dir)
            try:
                meta = read_meta(self._dir)
                scan = _scan(self._group_dir, meta.snapshot)
                self._recover(scan)
            except BaseException:
                self._close_files()
                raise
            entries = scan.entries
            if entries and entries[-1].term > meta.term:
                meta = RaftMeta(entries[-1].term, None, meta.snapshot, meta.configuration)
                self._meta_version += 1  # the next flush writes it
            self._meta = meta
            return PersistentState(
                meta.term, meta.voted_for, tuple(entries), meta.snapshot, meta.configuration
            )

    def write(self, persist: Persist) -> None:
        """Carries out one Persist in the page cache (a reset durably, see the module's docstring). An
        OSError (a full disk) leaves the files behind the bookkeeping: the member must stop."""
        with self._lock:
            if self._lock_fd is None:
                raise RuntimeError(f"{self._group_dir}: the log is written before it was loaded")
            if persist.snapshot is not None:
                self._reset(
                    RaftMeta(persist.term, persist.voted_for, persist.snapshot, persist.configuration)
                )
            elif (persist.term, persist.voted_for) != (self._meta.term, self._meta.voted_for):
                self._meta = replace(self._meta, term=persist.term, voted_for=persist.voted_for)
                self._meta_version += 1
            if persist.entries:
                self._append(persist.entries)

    def flush(self) -> None:
        """The group commit (see the module's docstring). An error here is the member's end: after a
        failed fsync the kernel may have dropped the dirty pages, so nothing written can be trusted."""
        with self._lock:
            fds = [fd if close else os.dup(fd) for fd, close in self._unsynced.items()]
            self._unsynced.clear()
            dir_dirty, self._dir_dirty = self._dir_dirty, False
            meta, version = self._meta, self._meta_version
        try:
            self._write_meta(meta, version)
            for fd in fds:
                os.fdatasync(fd)
            if dir_dirty:
                fsync_directory(self._dir)
        finally:
            for fd in fds:
                os.close(fd)

    def purge(self, up_to_index: int, configuration: tuple[RaftPeerId, ...] = ()) -> None:
        """Deletes the closed segments whose entries are all at or before `up_to_index`, after `raft-meta`
        records that the log starts after the last of them, with `configuration` (the members in force at
        `up_to_index`; a configuration entry between the new start and it stays in the log and wins) —
        synchronously: purges are rare."""
        with self._lock:
            victims: list[_Segment] = []
            for segment in self._segments:
                if segment.fd is not None or segment.end > up_to_index:
                    break
                victims.append(segment)
            if not victims:
                return
            start = TermIndex(victims[-1].terms[-1], victims[-1].end)
            self._meta = replace(self._meta, snapshot=start, configuration=configuration)
            self._meta_version += 1
            self._write_meta(self._meta, self._meta_version)
            for segment in victims:
                self._drop(segment)
            del self._segments[: len(victims)]

    def close(self) -> None:
        """Closes the files without syncing them (call `flush` first to make the last writes durable)."""
        with self._lock:
            self._close_files()

    def _close_files(self) -> None:
        for segment in self._segments:
            if segment.fd is not None:
                self._unsynced.pop(segment.fd, None)
                os.close(segment.fd)
                segment.fd = None
        for fd in self._unsynced:
            os.close(fd)
        self._unsynced.clear()
        self._segments.clear()
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # releases the flock
            self._lock_fd = None

    # ---- loading

    def _recover(self, scan: _Scan) -> None:
        """Carries out what a crash left to finish, once the whole log is known to load: deletes the
        segments a purge left behind and the empty ones, cuts the torn tail and the zero padding."""
        for path, why in scan.deletions:
            log.info("%s: deleting %s", path, why)
            path.unlink()
            self._dir_dirty = True
        if scan.torn is not None:
            path, damage, length = scan.torn
            log.warning(
                "%s: cutting off a record a crash tore at offset %d (%s); it was never acknowledged",
                path,
                damage.offset,
                damage.reason,
            )
            _cut_torn_tail(path, length)
        for segment in scan.segments:
            self._segments.append(segment)
            if segment.path.name == open_name(segment.start):
                segment.fd = os.open(segment.path, os.O_RDWR)
                if os.fstat(segment.fd).st_size != segment.size:
                    os.ftruncate(segment.fd, segment.size)  # the zero padding a preallocating writer left
                    self._unsynced[segment.fd] = False
        if self._dir_dirty:
            fsync_directory(self._dir)
            self._dir_dirty = False

    # ---- writing (under `_lock`)

    def _last_index(self) -> int:
        return self._segments[-1].end if self._segments else self._meta.snapshot.index

    def _append(self, entries: tuple[LogEntry, ...]) -> None:
        first = entries[0].index
        if any(e.index != first + i for i, e in enumerate(entries)):
            raise ValueError(f"entries to persist are not consecutive: {[e.index for e in entries]}")
        if not self._meta.snapshot.index < first <= self._last_index() + 1:
            raise ValueError(
                f"entries from {first} would leave a gap: the log holds {self._meta.snapshot.index + 1} "
                f"to {self._last_index()}"
            )
        if first <= self._last_index():
            self._truncate(first)
        segment = self._open_segment(first)
        buffer = bytearray()
        for entry in entries:
            record = encode_record(entry)
            if segment.terms and segment.size + len(record) > self._segment_size_max:
                self._pwrite(segment, buffer)
                buffer.clear()
                self._roll(segment)
                segment = self._open_segment(entry.index)
            buffer += record
            segment.ends.append(segment.size + len(record))
            segment.terms.append(entry.term)
        self._pwrite(segment, buffer)

    def _pwrite(self, segment: _Segment, buffer: bytearray) -> None:
        """Writes the records just added to `segment` (`buffer`, which ends at `segment.size`)."""
        assert segment.fd is not None
        offset = segment.size - len(buffer)
        written = os.pwrite(segment.fd, buffer, offset)
        if written != len(buffer):
            raise OSError(f"{segment.path}: wrote {written} of {len(buffer)} bytes at offset {offset}")
        self._unsynced.setdefault(segment.fd, False)

    def _open_segment(self, start: int) -> _Segment:
        if self._segments and self._segments[-1].fd is not None:
            return self._segments[-1]
        path = self._dir / open_name(start)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
        os.pwrite(fd, HEADER, 0)
        segment = _Segment(start, path, fd=fd)
        self._segments.append(segment)
        self._unsynced[fd] = False
        self._dir_dirty = True
        return segment

    def _roll(self, segment: _Segment) -> None:
        """Closes the open segment as Ratis finalizes one: its data synced, then renamed to its closed
        name (the rename reaches the disk at the next flush's directory fsync). Synced first, so a power
        loss never leaves a closed name on a segment missing its last records. It costs one fdatasync per
        roll (every `raft.server.log.segment.size.max` bytes) on the caller's thread: the records written
        since the last group commit, and the device's flush."""
        assert segment.fd is not None
        os.fdatasync(segment.fd)
        closed = self._dir / closed_name(segment.start, segment.end)
        os.rename(segment.path, closed)
        segment.path = closed
        self._unsynced.pop(segment.fd, None)
        os.close(segment.fd)
        segment.fd = None
        self._dir_dirty = True

    def _truncate(self, first: int) -> None:
        """Drops the entries from `first` on, as Ratis's truncate: the segments after it are deleted,
        newest first, and the one holding it is cut; a closed one is renamed back to in-progress first
        (and appended to from there on), so a crash at any point leaves a prefix of the log."""
        while self._segments and self._segments[-1].start >= first:
            self._drop(self._segments.pop())
        if not self._segments:
            return
        segment = self._segments[-1]
        keep = first - segment.start
        if segment.fd is None:
            reopened = self._dir / open_name(segment.start)
            os.rename(segment.path, reopened)
            segment.path = reopened
            segment.fd = os.open(reopened, os.O_RDWR)
            self._dir_dirty = True
        del segment.terms[keep:]
        del segment.ends[keep:]
        os.ftruncate(segment.fd, segment.size)
        self._unsynced.setdefault(segment.fd, False)

    def _drop(self, segment: _Segment) -> None:
        if segment.fd is not None:
            self._unsynced.pop(segment.fd, None)
            os.close(segment.fd)
            segment.fd = None
        segment.path.unlink()
        self._dir_dirty = True

    def _reset(self, meta: RaftMeta) -> None:
        """A snapshot from the leader replaced the log: every segment goes (newest first), durably, before
        `raft-meta` records the snapshot the log now starts after."""
        while self._segments:
            self._drop(self._segments.pop())
        fsync_directory(self._dir)
        self._meta = meta
        self._meta_version += 1
        self._write_meta(meta, self._meta_version)

    def _write_meta(self, meta: RaftMeta, version: int) -> None:
        with self._meta_lock:
            if version > self._meta_written:
                write_meta(self._dir, meta)
                self._meta_written = version


def _take_lock(group_dir: Path) -> int:
    """Takes `in_use.lock` (one process at a time on a member's log, as Ratis's RaftStorageDirectory)."""
    fd = os.open(group_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise StoreError(
            f"{group_dir}: locked by another process (is a member of this group running on it?)"
        ) from None
    return fd


@dataclass
class _Scan:
    """A log as `_scan` read it, and what `load` must do to the files before it is written to."""

    segments: list[_Segment]
    entries: list[LogEntry]
    deletions: list[tuple[Path, str]]  # each file to delete, and why
    torn: tuple[Path, Damage, int] | None  # the open segment's torn record, and where the file is cut


def _scan(group_dir: Path, snapshot: TermIndex) -> _Scan:
    """Reads every segment (each once: linear in the log's size) and checks they make one log after
    `snapshot`; RaftLogCorruptError on damage a crash cannot leave. Changes nothing on disk."""
    directory = group_dir / CURRENT_DIR

    def corrupt(path: Path, offset: int | None, reason: str) -> RaftLogCorruptError:
        return RaftLogCorruptError(group_dir, path, offset, reason)

    scan = _Scan([], [], [], None)
    found = []
    for path in directory.iterdir():
        name = parse_name(path.name)
        if name is None:
            continue
        if name.end is None and path.stat().st_size == 0:
            scan.deletions.append((path, "an empty open segment (a crash while it was created)"))
            continue
        found.append((name.start, name.end is None, name.end, path))
    found.sort()
    expected = snapshot.index + 1
    for position, (start, is_open, end, path) in enumerate(found):
        last = position == len(found) - 1
        if end is not None and end <= snapshot.index:
            why = f"a segment the snapshot at {snapshot} covers (a purge a crash cut short)"
            scan.deletions.append((path, why))
            continue
        if is_open and not last:
            raise corrupt(path, None, "an open segment followed by other segments")
        if start != expected:
            raise corrupt(
                path,
                None,
                f"the segment starts at index {start} but the log, after the snapshot at "
                f"{snapshot.index}, continues at {expected}: a gap or an overlap between segments",
            )
        data = path.read_bytes()
        read = read_segment(data)
        for i, entry in enumerate(read.entries):
            offset = read.ends[i - 1] if i else len(HEADER)
            if entry.index != start + i:
                raise corrupt(path, offset, f"entry {entry.index} where entry {start + i} belongs")
            previous_term = read.entries[i - 1].term if i else (scan.entries[-1].term if scan.entries else 0)
            if entry.term < previous_term:
                raise corrupt(
                    path,
                    offset,
                    f"entry {entry.index}'s term {entry.term} is lower "
                    f"than the term {previous_term} before it",
                )
        if read.damage is not None:
            if not is_open or not read.damage.torn:
                raise corrupt(path, read.damage.offset, read.damage.reason)
            scan.torn = (path, read.damage, read.valid_end)
        if end is not None and end != start + len(read.entries) - 1:
            named = end - start + 1  # the entries the name says it holds: cut after them, if it holds more
            offset = read.ends[named - 1] if 0 < named < len(read.entries) else read.valid_end
            raise corrupt(
                path,
                offset,
                f"the segment holds entries {start} to {start + len(read.entries) - 1}, its name says "
                f"{start} to {end}",
            )
        scan.segments.append(_Segment(start, path, [e.term for e in read.entries], list(read.ends)))
        scan.entries.extend(read.entries)
        expected = start + len(read.entries)
    return scan


def stored_entries(group_dir: Path) -> list[LogEntry]:
    """The entries a member's log holds (those after its snapshot), read before its member starts, without
    its lock and without changing anything on disk; RaftLogCorruptError or a StoreError as `load`."""
    directory = group_dir / CURRENT_DIR
    if not directory.is_dir():
        return []
    return _scan(group_dir, read_meta(directory).snapshot).entries


def _cut_torn_tail(path: Path, length: int) -> None:
    """Cuts the open segment at its last good record (or rewrites a torn header) and syncs it."""
    fd = os.open(path, os.O_RDWR)
    try:
        os.ftruncate(fd, length)
        if length == len(HEADER):
            os.pwrite(fd, HEADER, 0)
        os.fdatasync(fd)
    finally:
        os.close(fd)


def repair_log(group_dir: Path) -> list[str]:
    """What `pyozone repair ratislog --dir GROUP_DIR` does (the operator's choice, the member stopped),
    holding `in_use.lock` throughout: the log is cut at its first damage, as far as it can be read (point
    in time, as `pyozone repair db` replays a RocksDB log): the damaged segment is cut before the damaged
    record (a closed one renamed back to in-progress) and every segment after it deleted. Returns what it
    did, a line each. It refuses (StoreError) a damaged raft-meta, and segments that do not fit together
    (a gap, an overlap): those are intact, and cutting there would delete them.

    The member may have acknowledged entries after the damage; it gets them back from the leader, but it
    may have counted in a majority for them: with a majority of members repaired, committed entries can
    be lost. Taking the member out of its group and adding it back with empty storage is the safe way
    out (`_REJOIN`)."""
    directory = group_dir / CURRENT_DIR
    lock_fd = _take_lock(group_dir)
    try:
        done: list[str] = []
        previous: tuple[Path, int | None, str] | None = None
        while True:
            snapshot = read_meta(directory).snapshot
            try:
                scan = _scan(group_dir, snapshot)
            except RaftLogCorruptError as damage:
                if damage.offset is None:
                    raise StoreError(f"{damage}. Nothing more was repaired") from None
                if (damage.path, damage.offset, damage.reason) == previous:
                    raise StoreError(f"{damage}. Cutting there did not repair it") from None
                previous = (damage.path, damage.offset, damage.reason)
                done.extend(_cut_at(directory, damage))
                continue
            last = scan.entries[-1].index if scan.entries else snapshot.index
            done.append(f"{group_dir}: the log loads, up to index {last}")
            return done
    finally:
        os.close(lock_fd)


def _cut_at(directory: Path, damage: RaftLogCorruptError) -> list[str]:
    """Cuts the log at damage inside a segment (each cut deletes a file or shortens one, so the repair
    ends)."""
    name = parse_name(damage.path.name)
    assert name is not None and damage.offset is not None
    done = []
    for path in sorted(directory.iterdir()):
        later = parse_name(path.name)
        if later is not None and later.start > name.start:
            path.unlink()
            done.append(f"deleted {path}")
    if damage.offset <= len(HEADER):
        damage.path.unlink()
        done.append(f"deleted {damage.path} (damaged from its start: {damage.reason})")
    else:
        path = damage.path
        if name.end is not None:
            path = directory / open_name(name.start)
            os.rename(damage.path, path)
            done.append(f"renamed {damage.path.name} to {path.name}")
        fd = os.open(path, os.O_RDWR)
        try:
            os.ftruncate(fd, damage.offset)
            os.fdatasync(fd)
        finally:
            os.close(fd)
        done.append(f"cut {path} at offset {damage.offset} ({damage.reason})")
    fsync_directory(directory)
    return done
