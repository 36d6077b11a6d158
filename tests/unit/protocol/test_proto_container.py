"""The container protocol as the datanode reads and answers it (protocol/container.py)."""

from __future__ import annotations

import re

import pytest

from pyozone.datanode.storage import Result
from pyozone.datanode.xceiver.dispatcher import Refusal
from pyozone.hdds.block_data import BlockData, ChunkInfo
from pyozone.hdds.checksum import ChecksumData, ChecksumType
from pyozone.hdds.errors import ProtocolError
from pyozone.hdds.ids import BlockID
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from pyozone.protocol import container as wire
from pyozone.protocol.data import result_name
from tests.unit.protocol.proto_strategies import wire as round_trip

CRC = ChecksumData(ChecksumType.CRC32, 4, (b"\0\0\0\1", b"\0\0\0\2"))
BLOCK = BlockData(BlockID(7, 3), (ChunkInfo("3_chunk_0", 0, 8, CRC),), (("type", "KEY"),))


def raises_at(field: str):
    return pytest.raises(ProtocolError, match=f"^{re.escape(field)}: ")


def test_command_types_are_the_wire_s() -> None:
    assert {t.name: t.value for t in wire.CommandType} == dict(pb.Type.items())
    assert wire.command_name(pb.PutSmallFile) == "PutSmallFile"
    assert wire.command_name(99) == "command type 99"


def test_every_result_the_datanode_answers_with_has_its_wire_number() -> None:
    """The storage layer's Results and the dispatcher's refusals are named as the wire's Results."""
    for name in [*Result, *Refusal]:
        assert result_name(wire.result_code(name)) == name


def test_the_body_of_each_command_type_is_its_own_field() -> None:
    request = pb.ContainerCommandRequestProto(cmdType=pb.GetBlock, getBlock=pb.GetBlockRequestProto())
    assert wire.request_body(request) is request.getBlock
    with raises_at("getBlock"):
        wire.request_body(pb.ContainerCommandRequestProto(cmdType=pb.GetBlock))
    wrong = pb.ContainerCommandRequestProto(cmdType=pb.GetBlock, readChunk=pb.ReadChunkRequestProto())
    with pytest.raises(ProtocolError, match="readChunk was sent instead"):
        wire.request_body(wrong)


def test_blocks_and_chunks_convert_both_ways() -> None:
    proto = round_trip(wire.block_to_proto(BLOCK.with_bcsid(5), replica_index=2))
    assert proto.blockID.blockCommitSequenceId == 5 and proto.blockID.replicaIndex == 2 and proto.size == 8
    assert wire.block_from_proto(proto, "blockData") == BLOCK


def test_a_chunk_whose_checksums_do_not_cover_it_is_malformed() -> None:
    proto = wire.chunk_to_proto(ChunkInfo("c", 0, 12, CRC))  # 12 bytes need 3 checksums of 4 bytes
    with raises_at("chunk.checksumData.checksums"):
        wire.chunk_from_proto(proto, "chunk")


def test_a_block_of_another_container_than_the_request_s_is_malformed() -> None:
    body = pb.PutBlockRequestProto(blockData=wire.block_to_proto(BLOCK))
    with raises_at("putBlock.blockData.blockID.containerID"):
        wire.put_block_from_proto(body, 8, "putBlock")
    assert wire.put_block_from_proto(body, 7, "putBlock") == BLOCK


def test_a_write_extent_covers_its_chunk_and_its_block() -> None:
    body = pb.WriteChunkRequestProto(
        blockID=wire.block_to_proto(BLOCK).blockID,
        chunkData=wire.chunk_to_proto(ChunkInfo("3_chunk_1", 8, 4, ChecksumData(ChecksumType.NONE, 1))),
        block=pb.PutBlockRequestProto(blockData=wire.block_to_proto(BLOCK)),
    )
    request = pb.ContainerCommandRequestProto(cmdType=pb.WriteChunk, containerID=7, writeChunk=body)
    assert wire.write_extent(request) == 12 and wire.request_block_id(request) == BlockID(7, 3)
    block_id, chunk, block = wire.write_chunk_from_proto(body, 7)
    assert (block_id, chunk.offset, block) == (BlockID(7, 3), 8, BLOCK)


def test_answers_carry_the_request_s_type_and_trace() -> None:
    request = pb.ContainerCommandRequestProto(cmdType=pb.PutBlock, traceID="t1")
    ok = round_trip(wire.succeeded(request, wire.put_block_answer(BLOCK.with_bcsid(4))))
    assert (ok.result, ok.cmdType, ok.traceID) == (pb.SUCCESS, pb.PutBlock, "t1")
    assert ok.putBlock.committedBlockLength.blockLength == 8
    assert ok.putBlock.committedBlockLength.blockID.blockCommitSequenceId == 4
    failed = wire.failed(request, wire.result_code(Result.NO_SUCH_BLOCK), "gone")
    assert wire.refusal(failed) == "NO_SUCH_BLOCK: gone" and wire.refusal(ok) is None


def test_a_v1_read_answers_one_buffer_per_checksum_piece() -> None:
    body = pb.ReadChunkRequestProto(chunkData=wire.chunk_to_proto(BLOCK.chunks[0]), readChunkVersion=pb.V1)
    answer = wire.read_chunk_answer(body, b"abcdefgh").readChunk
    assert list(answer.dataBuffers.buffers) == [b"abcd", b"efgh"] and answer.chunkData == body.chunkData


def test_a_list_answer_stays_within_its_budget_but_holds_one_block() -> None:
    blocks = [BlockData(BlockID(7, i), BLOCK.chunks) for i in range(1, 50)]
    one = wire.block_to_proto(blocks[0]).ByteSize()
    assert len(wire.list_block_answer(blocks, 0, 0).listBlock.blockData) == 1
    assert len(wire.list_block_answer(blocks, 0, 10 * one).listBlock.blockData) == 10
