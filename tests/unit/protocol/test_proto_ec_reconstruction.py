"""The wire of EC reconstruction (protocol/ec.py) and a chunk's description (protocol/chunks.py): the requests
a coordinator sends carry what contract 7 asks for, a source's own block id goes back in its reads, and an
answer's result is named even when this version does not know its number."""

from __future__ import annotations

import pytest

from pyozone import rpc
from pyozone.hdds.checksum import ChecksumData, ChecksumType, compute
from pyozone.hdds.ec import BLOCK_GROUP_LEN
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from pyozone.protocol import ec as wire
from pyozone.protocol.chunks import checksum_data_from_proto, chunk_info_to_proto
from pyozone.protocol.container import XCEIVER_SERVICE
from pyozone.protocol.data import refusal

DN = "00000000-0000-4000-8000-000000000001"
SUMS = compute(b"x" * 2500, ChecksumType.CRC32C, 1024)


def test_recovering_replica_is_created_closed_and_force_deleted_by_index() -> None:
    create = wire.create_recovering(7, 4, DN)
    assert (create.cmdType, create.containerID, create.datanodeUuid) == (pb.CreateContainer, 7, DN)
    assert create.createContainer.state == pb.ContainerDataProto.RECOVERING
    assert create.createContainer.replicaIndex == 4
    assert create.createContainer.containerType == pb.KeyValueContainer
    assert wire.close_container(7, DN).cmdType == pb.CloseContainer
    delete = wire.delete_container(7, DN)
    assert delete.cmdType == pb.DeleteContainer and delete.deleteContainer.forceDelete


def test_a_source_is_listed_by_pages_and_read_with_its_own_block_id() -> None:
    listing = wire.list_blocks(7, 100, 1000, DN)
    assert (listing.listBlock.startLocalID, listing.listBlock.count) == (100, 1000)
    block = pb.BlockData(
        blockID=pb.DatanodeBlockID(containerID=7, localID=9, blockCommitSequenceId=33, replicaIndex=2)
    )
    chunk = chunk_info_to_proto("9_chunk_1", 0, 2500, SUMS)
    read = wire.read_chunk(block, chunk, DN)
    assert (read.cmdType, read.containerID) == (pb.ReadChunk, 7)
    assert read.readChunk.blockID == block.blockID
    assert read.readChunk.chunkData == chunk
    assert read.readChunk.readChunkVersion == pb.V0


def test_a_target_gets_its_cells_then_a_put_block_with_the_group_length() -> None:
    chunks = [
        chunk_info_to_proto("9_chunk_1", 0, 2500, SUMS),
        chunk_info_to_proto("9_chunk_2", 4096, 100, SUMS),
    ]
    write = wire.write_chunk(7, 9, 5, chunks[0], memoryview(b"y" * 2500), DN)
    assert write.writeChunk.blockID == pb.DatanodeBlockID(containerID=7, localID=9, replicaIndex=5)
    assert write.writeChunk.data == b"y" * 2500
    put = wire.put_block(7, 9, 5, chunks, 12345, DN)
    data = put.putBlock.blockData
    assert put.cmdType == pb.PutBlock and put.putBlock.eof
    assert data.blockID.replicaIndex == 5 and list(data.chunks) == chunks
    assert [(kv.key, kv.value) for kv in data.metadata] == [(BLOCK_GROUP_LEN, "12345")]
    assert data.size == 2600


def test_a_refusal_names_the_result_of_an_answer_that_is_not_success() -> None:
    assert refusal(pb.ContainerCommandResponseProto(result=pb.SUCCESS)) is None
    refused = refusal(pb.ContainerCommandResponseProto(result=pb.CONTAINER_EXISTS, message="exists"))
    assert refused is not None and (refused.result, refused.message) == ("CONTAINER_EXISTS", "exists")
    unknown = refusal(pb.ContainerCommandResponseProto(result=999))
    assert unknown is not None and unknown.result == "RESULT_999"


def test_the_xceiver_service_is_the_generated_one() -> None:
    spec = rpc.ServiceSpec.of(XCEIVER_SERVICE)
    assert spec == rpc.service(pb, "XceiverClientProtocolService")


def test_chunk_checksums_round_trip_and_an_unknown_type_is_refused() -> None:
    chunk = chunk_info_to_proto("1_chunk_1", 4096, 2500, SUMS)
    assert (chunk.chunkName, chunk.offset, chunk.len) == ("1_chunk_1", 4096, 2500)
    assert checksum_data_from_proto(chunk) == SUMS
    none = chunk_info_to_proto("1_chunk_1", 0, 10, ChecksumData(ChecksumType.NONE, 1024))
    assert checksum_data_from_proto(none) == ChecksumData(ChecksumType.NONE, 1024)
    chunk.checksumData.type = 99
    with pytest.raises(ValueError):
        checksum_data_from_proto(chunk)
