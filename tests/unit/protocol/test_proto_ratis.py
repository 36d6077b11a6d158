"""protocol/ratis.py: the pipeline log's wire (entries serialized by hand, followers' answers, log records)
and what the log reads and answers of the container protocol."""

from __future__ import annotations

import pytest

from pyozone.hdds.errors import ProtocolError
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from pyozone.protocol.data import result_name
from pyozone.protocol.ratis import (
    LogResult,
    Watch,
    commits,
    committed_answer,
    entry_data,
    entry_payload,
    entry_request,
    metadata_only,
    not_leader,
    refusal,
    refused_alike,
    routed,
    watch_answer,
    watch_from_proto,
)


def _write_chunk(data: bytes) -> pb.ContainerCommandRequestProto:
    chunk = pb.ChunkInfo(chunkName="1_chunk_0", offset=0, len=len(data))
    body = pb.WriteChunkRequestProto(
        blockID=pb.DatanodeBlockID(containerID=1, localID=1), chunkData=chunk, data=data
    )
    return pb.ContainerCommandRequestProto(cmdType=pb.WriteChunk, containerID=1, writeChunk=body)


def test_metadata_only_keeps_every_other_field() -> None:
    request = _write_chunk(b"data")
    request.traceID, request.pipelineID, request.datanodeUuid = "t", "p", "d"
    request.writeChunk.block.blockData.size = 4
    stripped = metadata_only(request)
    request.writeChunk.ClearField("data")
    assert stripped == request


def test_an_entry_keeps_the_request_without_its_data_which_travels_beside_it() -> None:
    entry = _write_chunk(b"x" * 100)
    kept = entry_request(entry_payload(entry))
    assert kept.writeChunk.data == b"" and kept.writeChunk.chunkData == entry.writeChunk.chunkData
    assert entry_data(entry) == b"x" * 100
    with pytest.raises(ProtocolError, match="not a ContainerCommandRequestProto"):
        entry_request(b"\xff\xff")


def test_not_leader_names_the_leader_when_known() -> None:
    request = pb.ContainerCommandRequestProto(cmdType=pb.PutBlock, traceID="t")
    named = not_leader(request, "p1", "dn2", "dn1")
    assert (named.result, named.traceID) == (pb.NOT_LEADER, "t") and "the leader is dn1" in named.message
    assert "no leader is known" in not_leader(request, "p1", "dn2", None).message


def test_entries_that_commit_a_block_or_close_a_container_sync_the_log() -> None:
    put = pb.ContainerCommandRequestProto(cmdType=pb.PutBlock, putBlock=pb.PutBlockRequestProto())
    close = pb.ContainerCommandRequestProto(
        cmdType=pb.CloseContainer, closeContainer=pb.CloseContainerRequestProto()
    )
    chunk_only = _write_chunk(b"x")
    chunk_and_block = _write_chunk(b"x")
    chunk_and_block.writeChunk.block.blockData.size = 1
    assert [commits(r) for r in (put, close, chunk_only, chunk_and_block)] == [True, True, False, True]


def test_only_a_logged_or_watch_request_naming_a_pipeline_is_routed() -> None:
    def request(kind: int, pipeline: str = "p") -> pb.ContainerCommandRequestProto:
        return pb.ContainerCommandRequestProto(cmdType=kind, pipelineID=pipeline)

    assert routed(request(pb.PutBlock)) and routed(request(pb.WatchForCommit))
    assert not routed(request(pb.PutBlock, "")) and not routed(request(pb.ReadChunk))


def test_results_have_names_even_unknown_ones() -> None:
    assert result_name(pb.IO_EXCEPTION) == "IO_EXCEPTION" and result_name(127) == "RESULT_127"
    assert refused_alike(pb.CHECKSUM_MISMATCH) and not refused_alike(pb.IO_EXCEPTION)
    assert not refused_alike(pb.SUCCESS)


def test_the_logs_answers_keep_the_requests_type_and_trace() -> None:
    request = pb.ContainerCommandRequestProto(cmdType=pb.PutBlock, traceID="t1")
    assert refusal(request, LogResult.NOT_LEADER, "follower") == pb.ContainerCommandResponseProto(
        cmdType=pb.PutBlock, traceID="t1", result=pb.NOT_LEADER, message="follower"
    )
    answer = committed_answer(
        pb.ContainerCommandResponseProto(result=pb.SUCCESS), 9, ["a", "b"], {"a": 9, "b": 8}
    )
    assert answer.logIndex == 9
    assert [(c.datanodeUuid, c.commitIndex) for c in answer.commitInfos] == [("a", 9), ("b", 8)]


def test_a_watch_is_read_and_answered() -> None:
    request = pb.ContainerCommandRequestProto(cmdType=pb.WatchForCommit, traceID="w")
    with pytest.raises(ProtocolError, match="watchForCommit: is missing"):
        watch_from_proto(request)
    request.watchForCommit.index, request.watchForCommit.replication = 4, pb.ALL_COMMITTED
    assert watch_from_proto(request) == Watch(4, majority=False)
    done = watch_answer(request, 4, ["a"], {"a": 4}, None)
    assert (done.result, done.watchForCommit.index, done.traceID) == (pb.SUCCESS, 4, "w")
    behind = watch_answer(request, 4, ["a"], {"a": 3}, "a is behind")
    assert (behind.result, behind.message, behind.HasField("watchForCommit")) == (
        pb.NOT_REPLICATED, "a is behind", False
    )  # fmt: skip
    assert [(c.datanodeUuid, c.commitIndex) for c in behind.commitInfos] == [("a", 3)]
