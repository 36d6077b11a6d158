"""SegmentedRaftLog: the member's log, term and vote on real files (Ratis's SegmentedRaftLog)."""

from __future__ import annotations

import logging
import os
import random
import tempfile
import threading
from pathlib import Path

import crc32c
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pyozone.hdds.store.table import StoreError
from pyozone.protocol.raft import entry_from_bytes
from pyozone.ratis.messages import EntryKind, LogEntry, RaftPeerId, TermIndex
from pyozone.ratis.outputs import Persist
from pyozone.ratis.server import PersistentState
from pyozone.ratis_server import segmented_log
from pyozone.ratis_server.raft_meta import RaftMeta, RaftMetaCorruptError, read_meta, write_meta
from pyozone.ratis_server.segment_file import HEADER, dump_segment, encode_record, parse_name
from pyozone.ratis_server.segmented_log import RaftLogCorruptError, SegmentedRaftLog, repair_log

A, B = RaftPeerId("om1"), RaftPeerId("om2")
SMALL = 200  # bytes per segment: a few entries each
MEMORY_DIR = "/dev/shm" if os.path.isdir("/dev/shm") else None  # for the tests of many flushes


def entry(term: int, index: int, payload: bytes = b"x" * 20) -> LogEntry:
    return LogEntry(term, index, payload, client_id="client-1", call_id=index)


def entries(term: int, first: int, last: int) -> tuple[LogEntry, ...]:
    return tuple(entry(term, i) for i in range(first, last + 1))


def persist(term: int, voted: RaftPeerId | None, items: tuple[LogEntry, ...] = (), snapshot=None) -> Persist:
    return Persist(0, term, voted, items, snapshot)


def opened(group: Path, size: int = SMALL) -> tuple[SegmentedRaftLog, PersistentState]:
    storage = SegmentedRaftLog(group, segment_size_max=size)
    return storage, storage.load()


def reopen(storage: SegmentedRaftLog, group: Path, size: int = SMALL) -> PersistentState:
    storage.close()
    again, state = opened(group, size)
    again.close()
    return state


def segment_names(group: Path) -> list[str]:
    """The segment files in index order."""
    names = {p.name: parse_name(p.name) for p in (group / "current").iterdir()}
    return sorted((n for n, parsed in names.items() if parsed), key=lambda n: names[n].start)


def test_an_empty_directory_is_a_new_member(tmp_path: Path) -> None:
    storage, state = opened(tmp_path / "g")
    assert state == PersistentState()
    storage.close()


def test_term_vote_and_entries_survive_a_restart(tmp_path: Path) -> None:
    group = tmp_path / "g"
    storage, _ = opened(group)
    storage.write(persist(1, A, entries(1, 1, 3)))
    storage.write(persist(2, None))
    storage.write(persist(2, B, (entry(2, 4),)))
    storage.flush()
    state = reopen(storage, group)
    assert state == PersistentState(2, B, (*entries(1, 1, 3), entry(2, 4)))
    meta = (group / "current" / "raft-meta").read_text()
    assert "term=2\n" in meta and "votedFor=om2\n" in meta  # Ratis's keys


def test_a_segment_is_ratis_format_header_then_varint_proto_and_crc32c(tmp_path: Path) -> None:
    group = tmp_path / "g"
    storage, _ = opened(group)
    storage.write(persist(1, A, (entry(1, 1),)))
    storage.flush()
    storage.close()
    data = (group / "current" / "log_inprogress_1").read_bytes()
    assert data[:8] == HEADER == b"RaftLog1"
    length = data[8]  # one varint byte: a short entry
    body = data[9 : 9 + length]
    assert entry_from_bytes(body) == entry(1, 1)
    assert int.from_bytes(data[9 + length : 13 + length], "big") == crc32c.crc32c(data[8 : 9 + length])
    assert len(data) == 13 + length


def test_segments_roll_at_the_size_limit_with_ratis_names(tmp_path: Path) -> None:
    group = tmp_path / "g"
    storage, _ = opened(group)
    storage.write(persist(1, A, entries(1, 1, 20)))
    storage.flush()
    names = segment_names(group)
    assert names[-1].startswith("log_inprogress_")
    closed = [n for n in names if not n.startswith("log_inprogress_")]
    assert len(closed) >= 3
    for name in closed:
        assert (group / "current" / name).stat().st_size <= SMALL
    state = reopen(storage, group)
    assert state.entries == entries(1, 1, 20)


def test_entries_replace_the_open_segments_tail(tmp_path: Path) -> None:
    group = tmp_path / "g"
    storage, _ = opened(group, size=1 << 20)
    storage.write(persist(1, A, entries(1, 1, 5)))
    storage.write(persist(2, B, entries(2, 4, 6)))
    storage.flush()
    assert segment_names(group) == ["log_inprogress_1"]
    assert reopen(storage, group, 1 << 20).entries == (*entries(1, 1, 3), *entries(2, 4, 6))


def test_entries_replace_across_closed_segments(tmp_path: Path) -> None:
    """The segments after the replaced index are deleted; the closed one holding it is cut and renamed
    back to in-progress, and the log continues in it."""
    group = tmp_path / "g"
    storage, _ = opened(group)
    storage.write(persist(1, A, entries(1, 1, 20)))
    first_closed = segment_names(group)[0]  # log_1-N
    end = int(first_closed.split("-")[1])
    storage.write(persist(2, B, entries(2, end - 1, end - 1)))
    assert segment_names(group) == ["log_inprogress_1"]
    storage.write(persist(2, B, entries(2, end, end + 1)))  # the segment is full again: rolled
    storage.flush()
    assert segment_names(group) == [f"log_1-{end}", f"log_inprogress_{end + 1}"]
    expected = (*entries(1, 1, end - 2), *entries(2, end - 1, end + 1))
    assert reopen(storage, group).entries == expected


def test_a_snapshot_from_the_leader_resets_the_log(tmp_path: Path) -> None:
    group = tmp_path / "g"
    storage, _ = opened(group)
    storage.write(persist(1, A, entries(1, 1, 20)))
    storage.flush()
    storage.write(persist(3, B, entries(3, 31, 32), snapshot=TermIndex(3, 30)))
    storage.flush()
    assert segment_names(group) == ["log_inprogress_31"]
    state = reopen(storage, group)
    assert state == PersistentState(3, B, entries(3, 31, 32), TermIndex(3, 30))


def test_purge_deletes_whole_closed_segments_and_records_where_the_log_starts(tmp_path: Path) -> None:
    group = tmp_path / "g"
    storage, _ = opened(group)
    storage.write(persist(1, A, entries(1, 1, 20)))
    storage.flush()
    before = segment_names(group)
    first_end = int(before[0].split("-")[1])
    second_end = int(before[1].split("-")[1])
    storage.purge(second_end - 1)  # the second segment still holds an entry after it: kept
    assert segment_names(group) == before[1:]
    state = reopen(storage, group)
    assert state.snapshot == TermIndex(1, first_end)
    assert state.entries == entries(1, first_end + 1, 20)


def test_purge_keeps_the_open_segment(tmp_path: Path) -> None:
    group = tmp_path / "g"
    storage, _ = opened(group, size=1 << 20)
    storage.write(persist(1, A, entries(1, 1, 5)))
    storage.purge(5)
    assert segment_names(group) == ["log_inprogress_1"]
    storage.close()


def test_a_crash_between_a_resets_deletions_and_its_raft_meta_leaves_a_loadable_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The old segments go first, durably, then raft-meta names the snapshot: a crash in between leaves
    the old term and vote with an empty log (never old entries after the new snapshot)."""
    group = tmp_path / "g"
    storage, _ = opened(group)
    storage.write(persist(1, A, entries(1, 1, 20)))
    storage.flush()

    def crash(directory: Path, meta: object) -> None:
        raise OSError("killed")

    monkeypatch.setattr(segmented_log, "write_meta", crash)
    with pytest.raises(OSError, match="killed"):
        storage.write(persist(3, B, entries(3, 31, 32), snapshot=TermIndex(3, 30)))
    monkeypatch.undo()
    assert reopen(storage, group) == PersistentState(1, A)


def test_segments_a_purge_left_behind_are_deleted_at_load(tmp_path: Path) -> None:
    """raft-meta records the new start before the segments go: a crash leaves only covered segments."""
    group = tmp_path / "g"
    storage, _ = opened(group)
    storage.write(persist(1, A, entries(1, 1, 20)))
    storage.flush()
    first = group / "current" / segment_names(group)[0]
    kept = first.read_bytes()
    end = int(first.name.split("-")[1])
    storage.purge(end)
    first.write_bytes(kept)  # its deletion never reached the disk
    state = reopen(storage, group)
    assert (state.snapshot, state.entries) == (TermIndex(1, end), entries(1, end + 1, 20))
    assert not first.exists()


def test_raft_meta_is_replaced_atomically(tmp_path: Path) -> None:
    group = tmp_path / "g"
    storage, _ = opened(group)
    storage.write(persist(5, B))
    storage.flush()
    (group / "current" / "raft-meta.tmp").write_text("term=9\nvot")  # a write a crash cut short
    assert reopen(storage, group) == PersistentState(5, B)
    (group / "current" / "raft-meta").write_text("term=five\nvotedFor=\n")
    with pytest.raises(StoreError, match="raft-meta: damaged \\(no checksum line\\)"):
        SegmentedRaftLog(group).load()


def test_a_process_killed_before_the_flush_keeps_what_it_wrote(tmp_path: Path) -> None:
    """kill -9: the page cache keeps every write, but the term and vote only reach raft-meta at a flush;
    the member restarts in the last entry's term with no vote (a vote not flushed was never sent)."""
    group = tmp_path / "g"
    storage, _ = opened(group)
    storage.write(persist(1, A, entries(1, 1, 3)))
    storage.flush()
    storage.write(persist(4, B, entries(4, 4, 6)))
    storage.close()  # no flush
    assert read_meta(group / "current").term == 1
    again, state = opened(group)
    again.close()
    assert state == PersistentState(4, None, (*entries(1, 1, 3), *entries(4, 4, 6)))


def test_a_record_torn_at_the_open_segments_end_is_cut_off(tmp_path: Path, caplog) -> None:
    group = tmp_path / "g"
    storage, _ = opened(group, size=1 << 20)
    storage.write(persist(1, A, entries(1, 1, 3)))
    storage.flush()
    storage.close()
    path = group / "current" / "log_inprogress_1"
    size = path.stat().st_size
    os.truncate(path, size - len(encode_record(entry(1, 3))) // 2)
    with caplog.at_level(logging.WARNING):
        storage, state = opened(group, size=1 << 20)
    assert state.entries == entries(1, 1, 2)
    assert "torn" in caplog.text
    storage.write(persist(1, A, (entry(1, 3),)))
    storage.flush()
    assert reopen(storage, group, 1 << 20).entries == entries(1, 1, 3)


def test_zero_padding_after_the_records_is_the_segments_end(tmp_path: Path) -> None:
    """Ratis preallocates segments with zeros (its terminator): a reader stops there."""
    group = tmp_path / "g"
    storage, _ = opened(group, size=1 << 20)
    storage.write(persist(1, A, entries(1, 1, 3)))
    storage.flush()
    storage.close()
    with open(group / "current" / "log_inprogress_1", "ab") as f:
        f.write(b"\0" * 4096)
    storage, state = opened(group, size=1 << 20)
    assert state.entries == entries(1, 1, 3)
    storage.write(persist(1, A, (entry(1, 4),)))
    storage.flush()
    assert reopen(storage, group, 1 << 20).entries == entries(1, 1, 4)


def flip(path: Path, offset: int) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x40
    path.write_bytes(bytes(data))


def test_a_flipped_byte_in_a_closed_segment_is_refused_with_the_repair_command(tmp_path: Path) -> None:
    group = tmp_path / "g"
    storage, _ = opened(group)
    storage.write(persist(1, A, entries(1, 1, 20)))
    storage.flush()
    storage.close()
    closed = group / "current" / segment_names(group)[0]
    record = len(encode_record(entry(1, 1)))
    flip(closed, 8 + record + 12)  # inside the second record
    with pytest.raises(RaftLogCorruptError) as refused:
        SegmentedRaftLog(group, segment_size_max=SMALL).load()
    message = str(refused.value)
    assert str(closed) in message
    assert f"offset {8 + record}" in message
    assert f"pyozone repair ratislog --dir {group}" in message
    assert "checksum" in message


def test_repair_cuts_the_log_at_its_first_damage(tmp_path: Path) -> None:
    """`pyozone repair ratislog`: the operator keeps what precedes the damage."""
    group = tmp_path / "g"
    storage, _ = opened(group)
    storage.write(persist(1, A, entries(1, 1, 20)))
    storage.flush()
    storage.close()
    names = segment_names(group)
    second = group / "current" / names[1]
    start = int(names[1].split("_")[1].split("-")[0])
    record = len(encode_record(entry(1, 1)))
    flip(second, 8 + record + 12)  # the segment's second record
    done = repair_log(group)
    assert done[-1] == f"{group}: the log loads, up to index {start}"
    assert segment_names(group) == [names[0], f"log_inprogress_{start}"]
    storage, state = opened(group)
    assert state.entries == entries(1, 1, start)
    storage.write(persist(1, A, (entry(1, start + 1),)))  # the member carries on from there
    storage.flush()
    assert reopen(storage, group).entries == entries(1, 1, start + 1)


def test_damage_in_the_middle_of_the_open_segment_is_refused(tmp_path: Path) -> None:
    group = tmp_path / "g"
    storage, _ = opened(group, size=1 << 20)
    storage.write(persist(1, A, entries(1, 1, 5)))
    storage.flush()
    storage.close()
    record = len(encode_record(entry(1, 1)))
    flip(group / "current" / "log_inprogress_1", 8 + record + 12)  # the second of five records
    with pytest.raises(RaftLogCorruptError, match=f"offset {8 + record}"):
        SegmentedRaftLog(group, segment_size_max=1 << 20).load()


def test_a_missing_segment_is_a_gap_and_refused(tmp_path: Path) -> None:
    group = tmp_path / "g"
    storage, _ = opened(group)
    storage.write(persist(1, A, entries(1, 1, 20)))
    storage.flush()
    storage.close()
    second = group / "current" / segment_names(group)[1]
    second.unlink()
    with pytest.raises(RaftLogCorruptError, match="a gap or an overlap"):
        SegmentedRaftLog(group, segment_size_max=SMALL).load()


# ---- a torn write is only a record the end of the file cuts short; anything else is damage


def closed_log(group: Path, size: int = 1 << 20, last: int = 3) -> Path:
    """A flushed (acknowledged) log of entries 1 to `last` in one open segment; its path."""
    storage, _ = opened(group, size)
    storage.write(persist(1, A, entries(1, 1, last)))
    storage.flush()
    storage.close()
    return group / "current" / "log_inprogress_1"


def test_a_complete_last_record_failing_its_checksum_is_damage_not_a_torn_write(tmp_path: Path) -> None:
    """A kill -9 leaves a record's start, never a whole record with a wrong checksum: the acknowledged
    entry is refused with the repair command, and the file left as it was (the evidence)."""
    group = tmp_path / "g"
    path = closed_log(group)
    before = path.read_bytes()
    record = len(encode_record(entry(1, 3)))
    flip(path, len(before) - record + 10)  # inside entry 3's payload: every byte of it is there
    damaged = path.read_bytes()
    with pytest.raises(RaftLogCorruptError, match=f"offset {len(before) - record} \\(checksum mismatch"):
        SegmentedRaftLog(group, segment_size_max=1 << 20).load()
    assert path.read_bytes() == damaged


@pytest.mark.parametrize("size", [100, 16384, 262144])
def test_random_bytes_after_the_records_are_damage(tmp_path: Path, size: int) -> None:
    """Non-zero bytes that do not start a log entry (stale blocks, a hostile file) are refused, whether
    their first bytes read as a short record failing its checksum or a long one running past the end."""
    group = tmp_path / "g"
    path = closed_log(group)
    good = path.stat().st_size
    with open(path, "ab") as f:
        f.write(bytes(b % 255 + 1 for b in random_bytes(size)))
    with pytest.raises(RaftLogCorruptError, match=f"offset {good} "):
        SegmentedRaftLog(group, segment_size_max=1 << 20).load()
    assert path.stat().st_size == good + size


def random_bytes(size: int) -> bytes:
    return random.Random(size).randbytes(size)


def count_checksummed_bytes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    counted = [0]
    real = crc32c.crc32c

    def counting(data: bytes, *args: int) -> int:
        counted[0] += len(data)
        return real(data, *args)

    monkeypatch.setattr(crc32c, "crc32c", counting)
    return counted


def test_a_record_length_flipped_to_run_past_the_end_is_damage(tmp_path: Path) -> None:
    """A bit flip that makes an acknowledged record's length run past the end of the file: the bytes after
    the length do not start an entry as a torn record's would, so it is refused, not cut."""
    group = tmp_path / "g"
    path = closed_log(group, last=5)
    record = len(encode_record(entry(1, 1)))
    flip_bit = bytearray(path.read_bytes())
    flip_bit[8 + record] |= 0x80  # the second record's one-byte length now reads two bytes, past the end
    path.write_bytes(bytes(flip_bit))
    with pytest.raises(RaftLogCorruptError, match=f"offset {8 + record} .*not the start of a log entry"):
        SegmentedRaftLog(group, segment_size_max=1 << 20).load()


def test_load_reads_a_damaged_segment_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No search for a good record after the damage: load (and so the repair) is linear in the file's
    size, however the bytes after the damage read (here each one the length of a 127-byte record)."""
    group = tmp_path / "g"
    path = closed_log(group)
    with open(path, "ab") as f:
        f.write(b"\x7f" * 65536)
    counted = count_checksummed_bytes(monkeypatch)
    with pytest.raises(RaftLogCorruptError):
        SegmentedRaftLog(group, segment_size_max=1 << 20).load()
    assert counted[0] <= path.stat().st_size


def test_a_big_record_torn_by_a_kill_is_cut_in_one_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    group = tmp_path / "g"
    storage, _ = opened(group, size=64 << 20)
    storage.write(persist(1, A, entries(1, 1, 3)))
    storage.flush()
    big = LogEntry(1, 4, random_bytes(1 << 20), client_id="c", call_id=4)
    storage.write(persist(1, A, (big,)))
    storage.close()  # killed (-9) while writing entry 4: a prefix of it on disk
    path = group / "current" / "log_inprogress_1"
    torn = path.stat().st_size * 3 // 4
    os.truncate(path, torn)
    counted = count_checksummed_bytes(monkeypatch)
    storage, state = opened(group, size=64 << 20)
    storage.close()
    assert state.entries == entries(1, 1, 3)
    assert counted[0] <= torn


def test_a_torn_record_whose_payload_frames_a_record_is_still_torn(tmp_path: Path) -> None:
    """A client chooses its payload, so it may hold the bytes of a valid record: a kill -9 during its
    write is a torn write all the same (the record runs past the end of the file), never damage."""
    group = tmp_path / "g"
    storage, _ = opened(group, size=1 << 20)
    storage.write(persist(1, A, entries(1, 1, 3)))
    storage.flush()
    payload = b"key=" + encode_record(entry(1, 77)) + b"v" * 20000
    storage.write(persist(1, A, (LogEntry(1, 4, payload, client_id="c", call_id=4),)))
    storage.close()  # not flushed: entry 4 was never acknowledged
    path = group / "current" / "log_inprogress_1"
    os.truncate(path, 2 * 4096)  # the pages the kill let through
    storage, state = opened(group, size=1 << 20)
    storage.close()
    assert state.entries == entries(1, 1, 3)


def test_a_segment_is_synced_before_it_is_renamed_closed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A power loss may keep a rename and lose unsynced data: a segment renamed to its closed name must
    already hold every record on disk (Ratis finalizes a segment, flush and sync, before it renames it)."""
    group = tmp_path / "g"
    storage, _ = opened(group, size=400)
    storage.write(persist(1, A, entries(1, 1, 3)))
    storage.flush()
    synced: dict[int, int] = {}  # inode -> the size its last sync made durable
    renamed: list[tuple[str, int, int]] = []
    real_sync, real_rename = os.fdatasync, os.rename

    def fdatasync(fd: int) -> None:
        real_sync(fd)
        stat = os.fstat(fd)
        synced[stat.st_ino] = stat.st_size

    def rename(src: os.PathLike[str], dst: os.PathLike[str]) -> None:
        stat = os.stat(src)
        renamed.append((Path(dst).name, stat.st_size, synced.get(stat.st_ino, 0)))
        real_rename(src, dst)

    monkeypatch.setattr(os, "fdatasync", fdatasync)
    monkeypatch.setattr(os, "rename", rename)
    storage.write(persist(1, A, entries(1, 4, 9)))  # fills the open segment: it is closed, the next opened
    monkeypatch.undo()
    storage.close()
    closing = [r for r in renamed if not r[0].startswith("log_inprogress_")]
    assert closing and all(size == durable for _, size, durable in closing)


# ---- raft-meta: checked before the log acts on it


def test_a_damaged_raft_meta_is_refused_and_no_segment_is_deleted(tmp_path: Path) -> None:
    """A flipped bit in snapshotIndex would make load delete the segments it seems to cover: the checksum
    refuses the file first, and `repair ratislog` refuses it too."""
    group = tmp_path / "g"
    storage, _ = opened(group)
    storage.write(persist(1, A, entries(1, 1, 20)))
    storage.flush()
    storage.close()
    names = segment_names(group)
    meta = group / "current" / "raft-meta"
    meta.write_bytes(meta.read_bytes().replace(b"snapshotIndex=0", b"snapshotIndex=8"))
    with pytest.raises(RaftMetaCorruptError, match=f"{meta}: damaged \\(checksum mismatch"):
        SegmentedRaftLog(group, segment_size_max=SMALL).load()
    with pytest.raises(RaftMetaCorruptError):
        repair_log(group)
    assert segment_names(group) == names


def test_a_raft_meta_naming_an_impossible_snapshot_is_refused(tmp_path: Path) -> None:
    """No entry after index 0 has term 0: a snapshot there is damage even with a good checksum."""
    group = tmp_path / "g"
    opened(group)[0].close()
    write_meta(group / "current", RaftMeta(1, None, TermIndex(0, 8)))
    with pytest.raises(RaftMetaCorruptError, match="no log can start after"):
        SegmentedRaftLog(group).load()


def test_a_raft_meta_that_is_not_utf8_is_refused_with_its_path(tmp_path: Path) -> None:
    group = tmp_path / "g"
    opened(group)[0].close()
    meta = group / "current" / "raft-meta"
    body = b"term=\xff\nvotedFor=\n"
    meta.write_bytes(body + b"checksum=" + f"{crc32c.crc32c(body):08X}\n".encode())
    with pytest.raises(RaftMetaCorruptError, match=f"{meta}: damaged \\(not UTF-8 text"):
        SegmentedRaftLog(group).load()


def test_repair_refuses_segments_that_overlap_the_snapshot_and_deletes_nothing(tmp_path: Path) -> None:
    """A gap or an overlap is no damage inside a segment: there is nothing to cut, and the segments
    are intact, so the repair names why and leaves them."""
    group = tmp_path / "g"
    storage, _ = opened(group)
    storage.write(persist(1, A, entries(1, 1, 20)))
    storage.flush()
    storage.close()
    names = segment_names(group)
    write_meta(group / "current", RaftMeta(1, A, TermIndex(1, 2)))  # inside the first segment
    with pytest.raises(RaftLogCorruptError, match="do not fit together") as refused:
        SegmentedRaftLog(group, segment_size_max=SMALL).load()
    assert "pyozone repair ratislog" in str(refused.value) and "does not delete intact" in str(refused.value)
    with pytest.raises(StoreError, match=r"a gap or an overlap between segments.*Nothing more was repaired"):
        repair_log(group)
    assert segment_names(group) == names


def test_repair_holds_the_members_lock_while_it_cuts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    group = tmp_path / "g"
    storage, _ = opened(group)
    storage.write(persist(1, A, entries(1, 1, 20)))
    storage.flush()
    storage.close()
    flip(group / "current" / segment_names(group)[1], 8 + len(encode_record(entry(1, 1))) + 12)
    real_cut = segmented_log._cut_at
    refused: list[str] = []

    def cut_at(directory: Path, damage: RaftLogCorruptError) -> list[str]:
        with pytest.raises(StoreError, match="locked by another process") as error:
            SegmentedRaftLog(group).load()  # a member started during the repair
        refused.append(str(error.value))
        return real_cut(directory, damage)

    monkeypatch.setattr(segmented_log, "_cut_at", cut_at)
    assert repair_log(group)[-1].startswith(f"{group}: the log loads")
    assert refused


def test_a_second_process_cannot_open_the_same_log(tmp_path: Path) -> None:
    storage, _ = opened(tmp_path / "g")
    with pytest.raises(StoreError, match="locked by another process"):
        SegmentedRaftLog(tmp_path / "g").load()
    storage.close()


def test_entries_that_would_leave_a_gap_are_a_bug_in_the_caller(tmp_path: Path) -> None:
    storage, _ = opened(tmp_path / "g")
    with pytest.raises(ValueError, match="gap"):
        storage.write(persist(1, A, entries(1, 3, 4)))
    storage.close()
    with pytest.raises(RuntimeError, match="before it was loaded"):
        SegmentedRaftLog(tmp_path / "g").write(persist(1, A))


def test_a_flush_racing_writes_that_roll_and_cut_segments_loses_nothing(tmp_path: Path) -> None:
    """The shell's worker flushes while the loop writes: no record lost, reordered or left unsynced."""
    with tempfile.TemporaryDirectory(dir=MEMORY_DIR) as tmp:  # the race, not the disk's speed
        race(Path(tmp) / "g")


def race(group: Path) -> None:
    storage, _ = opened(group, size=400)
    stop = threading.Event()
    flushes = 0
    errors: list[BaseException] = []

    def flusher() -> None:
        nonlocal flushes
        try:
            while not stop.is_set():
                storage.flush()
                flushes += 1
        except BaseException as error:  # reported by the main thread
            errors.append(error)

    worker = threading.Thread(target=flusher)
    worker.start()
    model: list[LogEntry] = []
    try:
        term = 1
        for round_ in range(300):
            first = len(model) + 1
            if round_ % 25 == 24:  # a new leader replaces the last few entries
                term += 1
                first = max(1, len(model) - 6)
            batch = entries(term, first, first + 4)
            storage.write(persist(term, A, batch))
            del model[first - 1 :]
            model.extend(batch)
    finally:
        stop.set()
        worker.join()
    assert not errors
    assert flushes > 0
    storage.flush()
    state = reopen(storage, group, 400)
    assert state.entries == tuple(model)
    assert state.current_term == term


# ---- a random sequence of Persists, then load, equals the core's PersistentState


def apply(state: PersistentState, p: Persist) -> PersistentState:
    """What `Persist` means (pyozone/ratis/outputs.py): term and vote; a reset; then the log from the first
    entry's index on."""
    items, snapshot = list(state.entries), state.snapshot
    if p.snapshot is not None:
        items, snapshot = [], p.snapshot
    if p.entries:
        del items[p.entries[0].index - snapshot.index - 1 :]
        items.extend(p.entries)
    return PersistentState(p.term, p.voted_for, tuple(items), snapshot)


@st.composite
def persists(draw) -> list[tuple[Persist, bool]]:
    """Valid Persists as a core issues them (terms only grow, entries never leave a gap), each with
    whether a flush follows it."""
    state = PersistentState()
    out: list[tuple[Persist, bool]] = []
    for _ in range(draw(st.integers(1, 25))):
        term = state.current_term + draw(st.sampled_from([0, 0, 1]))
        voted = draw(st.sampled_from([None, A, B])) if term != state.current_term else state.voted_for
        snapshot = None
        last = state.snapshot.index + len(state.entries)
        if term and draw(st.integers(0, 9)) == 0:  # a snapshot's entry has a term (at least 1)
            snapshot = TermIndex(term, last + draw(st.integers(0, 5)))
            last = snapshot.index
        items: tuple[LogEntry, ...] = ()
        if draw(st.booleans()):
            low = (snapshot or state.snapshot).index + 1
            first = draw(st.integers(max(low, last - 5), last + 1))
            size = draw(st.integers(1, 6))
            payload = draw(st.binary(max_size=40))
            indexes = range(first, first + size)
            items = tuple(LogEntry(term, i, payload, client_id="c", call_id=i) for i in indexes)
        p = Persist(len(out) + 1, term, voted, items, snapshot)
        state = apply(state, p)
        out.append((p, draw(st.booleans())))
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(persists(), st.booleans())
def test_random_persists_then_load_equal_the_model(
    sequence: list[tuple[Persist, bool]], final_flush: bool
) -> None:
    with tempfile.TemporaryDirectory(dir=MEMORY_DIR) as tmp:
        group = Path(tmp) / "g"
        storage, state = opened(group, size=150)
        for p, flush in sequence:
            storage.write(p)
            state = apply(state, p)
            if flush:
                storage.flush()
        if final_flush:
            storage.flush()
            assert reopen(storage, group, 150) == state
            return
        # killed (-9) before the last flush: the page cache kept every write, raft-meta the flushed term
        loaded = reopen(storage, group, 150)
        assert (loaded.entries, loaded.snapshot) == (state.entries, state.snapshot)
        assert loaded.current_term <= state.current_term


# ---- `pyozone debug ratislogparser`


def test_dump_prints_each_entry_in_ratis_log_parser_shape(tmp_path: Path) -> None:
    group = tmp_path / "g"
    storage, _ = opened(group, size=1 << 20)
    storage.write(
        persist(
            2,
            A,
            (
                LogEntry(2, 1, kind=EntryKind.NOOP),
                LogEntry(2, 2, kind=EntryKind.CONFIGURATION, peers=(A, B)),
                LogEntry(2, 3, b"abc", client_id="client-7", call_id=11),
            ),
        )
    )
    storage.close()
    path = group / "current" / "log_inprogress_1"
    lines = list(dump_segment(path))
    assert lines == [
        f"Processing Raft Log file: {path.resolve()} size:{path.stat().st_size}",
        "(t:2, i:1), METADATAENTRY",
        "(t:2, i:2), CONFIGURATIONENTRY(current:om1,om2, old:)",
        "(t:2, i:3), STATEMACHINELOGENTRY, client-7, cid=11, size=3",
        "Num Total Entries: 3",
        "Num Conf Entries: 1",
        "Num Metadata Entries: 1",
        "Num StateMachineEntries Entries: 1",
    ]
    described = list(dump_segment(path, describe_payload=lambda payload: f"CreateKey {payload!r}"))
    assert (
        described[3]
        == "(t:2, i:3), STATEMACHINELOGENTRY, client-7, cid=11, size=3\n\t State Machine: CreateKey b'abc'"
    )
    flip(path, path.stat().st_size - 2)
    assert list(dump_segment(path))[-1].startswith("Damaged at offset ")


def test_the_members_in_force_at_the_log_start_survive_a_purge_and_a_reset(tmp_path: Path) -> None:
    """A member change whose configuration entry was purged, or came in a snapshot, is not forgotten at a
    restart: raft-meta keeps the members with the snapshot the log starts after."""
    group = tmp_path / "g"
    members = (A, B, RaftPeerId("om4"))
    storage, _ = opened(group)
    storage.write(persist(1, A, entries(1, 1, 20)))
    storage.flush()
    storage.purge(int(segment_names(group)[1].split("-")[1]), members)
    state = reopen(storage, group)
    assert state.configuration == members
    storage, _ = opened(group)
    storage.write(Persist(0, 3, B, entries(3, 41, 42), TermIndex(3, 40), (A, B)))
    storage.flush()
    assert reopen(storage, group).configuration == (A, B)
