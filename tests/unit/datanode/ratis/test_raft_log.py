"""RaftLog: metadata only, indexes without gaps, a torn tail cut off on reopen."""

from __future__ import annotations

from pathlib import Path

import pytest

from pyozone.datanode.ratis.log import RaftLog
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from pyozone.protocol.ratis import metadata_only


def _write_chunk(data: bytes) -> pb.ContainerCommandRequestProto:
    chunk = pb.ChunkInfo(chunkName="1_chunk_0", offset=0, len=len(data))
    body = pb.WriteChunkRequestProto(
        blockID=pb.DatanodeBlockID(containerID=1, localID=1), chunkData=chunk, data=data
    )
    return pb.ContainerCommandRequestProto(cmdType=pb.WriteChunk, containerID=1, writeChunk=body)


def test_entries_keep_metadata_but_not_chunk_data(tmp_path: Path) -> None:
    log = RaftLog(tmp_path)
    entry = _write_chunk(b"x" * 4096)
    log.append(1, 1, entry)
    log.close()
    (record,) = RaftLog(tmp_path).records()
    assert (record.term, record.index) == (1, 1)
    assert record.entry.writeChunk.data == b"" and record.entry.writeChunk.chunkData.len == 4096
    assert entry.writeChunk.data == b"x" * 4096  # the caller's request is left alone
    assert metadata_only(record.entry) == record.entry


def test_an_entry_must_follow_the_last(tmp_path: Path) -> None:
    log = RaftLog(tmp_path)
    log.append(1, 1, _write_chunk(b"a"))
    with pytest.raises(ValueError, match="does not follow"):
        log.append(1, 3, _write_chunk(b"b"))


def test_reopen_continues_after_the_last_whole_record_and_cuts_a_torn_tail(tmp_path: Path) -> None:
    log = RaftLog(tmp_path)
    for i in range(1, 6):
        log.append(1, i, _write_chunk(b"y"))
    log.close()
    whole = log.path.stat().st_size
    with open(log.path, "ab") as f:
        f.write(b"\x00\x00\x01\x00garbage")  # a crash in the middle of an append
    reopened = RaftLog(tmp_path)
    assert reopened.last_index == 5 and log.path.stat().st_size == whole
    reopened.append(1, 6, _write_chunk(b"z"))
    reopened.close()
    assert [r.index for r in RaftLog(tmp_path).records()] == [1, 2, 3, 4, 5, 6]


def test_the_log_restarts_from_its_last_record_past_the_segment_size(tmp_path: Path) -> None:
    """Nothing but the last record is read back, so a full segment is replaced by that record alone:
    the file stays bounded, and a reopened log goes on from the right index."""
    log = RaftLog(tmp_path, segment_bytes=2000)
    for index in range(1, 201):
        log.append(1, index, _write_chunk(b"x" * 100))
        assert (tmp_path / "log").stat().st_size <= 2000 + 200
    log.close()
    again = RaftLog(tmp_path, segment_bytes=2000)
    assert again.last_index == 200 and again.term == 1
    records = again.records()
    assert records[-1].index == 200 and [r.index for r in records] == list(range(records[0].index, 201))
    again.append(1, 201, _write_chunk(b"y"))
    with pytest.raises(ValueError, match="does not follow"):
        again.append(1, 203, _write_chunk(b"z"))
    again.close()
    assert RaftLog(tmp_path).last_index == 201
