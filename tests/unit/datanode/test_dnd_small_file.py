"""PutSmallFile through write pipeline V1 on three in-process datanodes: ONE pipeline log entry writes the
chunk and commits the block on every replica, at the entry's index; a refused one (a checksum mismatch, a
block committed already) is refused alike by every member, and the pipeline goes on."""

from __future__ import annotations

from pathlib import Path

from pyozone.hdds.ids import BlockID
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from pyozone.protocol.ratis import entry_request
from pyozone.ratis.messages import EntryKind
from tests.unit.datanode.dnd_helpers import async_test
from tests.unit.datanode.test_dnd_pipeline_log import (
    CID,
    PID,
    _applied_everywhere,
    _chunk,
    _logged,
    _ok,
    _requests,
    _send,
    _watch,
    three_datanodes,
)


def _small_file(
    local_id: int, data: bytes, chunk: pb.ChunkInfo | None = None
) -> pb.ContainerCommandRequestProto:
    chunk = chunk or _chunk(local_id, 0, 0, data)
    block = pb.BlockData(blockID=pb.DatanodeBlockID(containerID=CID, localID=local_id), chunks=[chunk])
    return pb.ContainerCommandRequestProto(
        cmdType=pb.PutSmallFile, containerID=CID, pipelineID=PID,
        putSmallFile=pb.PutSmallFileRequestProto(
            block=pb.PutBlockRequestProto(blockData=block), chunkInfo=chunk, data=data
        ),
    )  # fmt: skip


@async_test
async def test_one_entry_writes_and_commits_the_block_on_every_replica(tmp_path: Path) -> None:
    async with three_datanodes(tmp_path) as cluster:
        dns = cluster.dns
        data = bytes(range(256)) * 4
        (answer,) = await _send(dns[0], [_small_file(1, data)])
        _ok([answer])
        index = answer.logIndex
        assert answer.putSmallFile.committedBlockLength.blockID.blockCommitSequenceId == index
        assert answer.putSmallFile.committedBlockLength.blockLength == len(data)
        _ok(await _send(dns[0], [_watch(index)]))  # ALL_COMMITTED: every member logged the entry
        await _applied_everywhere(dns, index)
        for dn in dns:
            container = dn.containers.require(CID)
            block = container.get_block(BlockID(CID, 1))
            assert (container.bcsid, block.bcsid, block.size) == (index, index, len(data))
            assert container.read_chunk(BlockID(CID, 1), block.chunks[0]) == data
            records = [e for e in _logged(dn) if e.kind is EntryKind.STATE_MACHINE]
            requests = [entry_request(r.payload) for r in records]
            assert [r.cmdType for r in requests] == [pb.PutSmallFile]  # one entry, no data in it
            assert records[0].index == index and not requests[0].putSmallFile.data
            assert records[0].data_size == len(data)
            assert dn.dispatcher.ops.counts()["PutSmallFile"] == 1
            assert "WriteChunk" not in dn.dispatcher.ops.counts()


@async_test
async def test_a_refused_small_file_is_refused_by_every_member_and_the_pipeline_goes_on(
    tmp_path: Path,
) -> None:
    async with three_datanodes(tmp_path) as cluster:
        dns, scms = cluster.dns, cluster.scms
        damaged = _small_file(1, b"d" * 1000)
        damaged.putSmallFile.data = b"e" + b"d" * 999
        committed = _requests(2, b"c" * 2000, 1000)
        (refused,) = await _send(dns[0], [damaged])
        assert pb.Result.Name(refused.result) == "CHECKSUM_MISMATCH", refused.message
        _ok(await _send(dns[0], committed))
        (replaced,) = await _send(dns[0], [_small_file(2, b"c" * 1000, committed[0].writeChunk.chunkData)])
        assert pb.Result.Name(replaced.result) == "PUT_SMALL_FILE_ERROR", replaced.message
        (answer,) = await _send(dns[0], [_small_file(3, b"s" * 500)])
        _ok([answer])
        _ok(await _send(dns[0], [_watch(answer.logIndex)]))  # no member failed
        await _applied_everywhere(dns, answer.logIndex)
        for dn in dns:
            container = dn.containers.require(CID)
            assert container.get_block(BlockID(CID, 2)).size == 2000
            assert container.get_block(BlockID(CID, 3)).size == 500
            assert [b.block_id.local_id for b in container.list_blocks()] == [2, 3]
        assert not any(beat.pipeline_actions for scm in scms for beat in scm.beats())
