"""The container protocol as the datanode client sends and reads it (protocol/data.py): what a block's writer
and reader send, and what an answer says."""

from __future__ import annotations

import pytest

from pyozone.hdds.checksum import ChecksumData, ChecksumType, compute
from pyozone.hdds.chunks import ChunkInfo
from pyozone.hdds.errors import ProtocolError
from pyozone.hdds.locations import DatanodeRef, KeyLocation, PipelineRef
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from pyozone.protocol import data
from pyozone.protocol.chunks import chunk_info_to_proto

MEMBER = DatanodeRef("dn-1", "h1", "127.0.0.1", 9859)
LOCATION = KeyLocation(7, 11, 5, 0, 100, PipelineRef("p-1", (MEMBER,), "dn-1"), "OPEN", "tok")


def test_a_writers_requests_name_the_block_its_index_and_carry_the_data() -> None:
    sums = compute(b"a" * 100, ChecksumType.CRC32C, 32)
    chunk = chunk_info_to_proto("11_chunk_1", 0, 100, sums)
    write = data.write_chunk_request(LOCATION, 3, chunk, memoryview(b"a" * 100))
    assert write.cmdType == pb.WriteChunk and write.containerID == 7 and write.pipelineID == "p-1"
    assert write.writeChunk.blockID.localID == 11 and write.writeChunk.blockID.replicaIndex == 3
    assert write.writeChunk.data == b"a" * 100
    assert tuple(write.writeChunk.chunkData.checksumData.checksums) == sums.checksums
    put = data.put_block_request(LOCATION, 3, [chunk], 100, {"blockGroupLen": "300"}, eof=True)
    assert put.putBlock.eof and put.putBlock.blockData.size == 100
    assert [(kv.key, kv.value) for kv in put.putBlock.blockData.metadata] == [("blockGroupLen", "300")]
    small = data.put_small_file_request(LOCATION, 0, chunk, b"a" * 100, {})
    assert small.cmdType == pb.PutSmallFile and small.putSmallFile.block.eof
    assert (
        list(small.putSmallFile.block.blockData.chunks) == [chunk] and small.putSmallFile.data == b"a" * 100
    )
    watch = data.watch_request(LOCATION, 9, all_committed=False)
    assert watch.watchForCommit.index == 9 and watch.watchForCommit.replication == pb.MAJORITY_COMMITTED


def test_a_read_asks_the_committed_bcsid_and_a_ranges_own_checksums() -> None:
    get = data.get_block_request(LOCATION, 2)
    assert get.getBlock.blockID.blockCommitSequenceId == 5 and get.getBlock.blockID.replicaIndex == 2
    assert data.get_small_file_request(LOCATION).getSmallFile.block.blockID.blockCommitSequenceId == 5
    sums = ChecksumData(ChecksumType.CRC32, 10, tuple(bytes([i]) * 4 for i in range(10)))
    read = data.read_chunk_request(LOCATION, ChunkInfo("c", 200, 100, sums), 20, 45)
    wanted = read.readChunk.chunkData
    assert (wanted.offset, wanted.len) == (220, 25)
    assert list(wanted.checksumData.checksums) == [bytes([i]) * 4 for i in (2, 3, 4)]


def test_a_block_answer_becomes_its_chunks_by_offset() -> None:
    answer = pb.ContainerCommandResponseProto(result=pb.SUCCESS)
    block = answer.getBlock.blockData
    block.blockID.replicaIndex = 4
    block.chunks.add(chunkName="b", offset=50, len=50, checksumData=pb.ChecksumData(type=pb.NONE))
    block.chunks.add(chunkName="a", offset=0, len=50, checksumData=pb.ChecksumData())  # type unset: NONE
    held, chunks = data.block_from_proto(answer)
    assert held == 4 and [c.name for c in chunks] == ["a", "b"]
    assert all(c.checksum_data.type is ChecksumType.NONE for c in chunks)
    block.chunks[0].checksumData.type = 99
    with pytest.raises(ProtocolError, match=r"getBlock.blockData.chunks\[0\].checksumData.type"):
        data.block_from_proto(answer)


def test_an_answer_says_whether_it_refused_and_where_it_committed() -> None:
    assert data.refusal(pb.ContainerCommandResponseProto(result=pb.SUCCESS)) is None
    lagging = pb.ContainerCommandResponseProto(result=pb.NOT_REPLICATED, message="behind")
    lagging.commitInfos.add(datanodeUuid="dn-1", commitIndex=8)
    assert data.refusal(lagging) == data.Refusal("NOT_REPLICATED", "behind", {"dn-1": 8})
    assert data.refusal(pb.ContainerCommandResponseProto(result=999)).result == "RESULT_999"  # type: ignore[arg-type]
    put = pb.ContainerCommandResponseProto(result=pb.SUCCESS)
    put.putBlock.committedBlockLength.blockID.blockCommitSequenceId = 6
    assert data.committed_index(put) == 6
    put.logIndex = 12
    assert data.committed_index(put) == 12
    small = pb.ContainerCommandResponseProto(result=pb.SUCCESS)
    small.putSmallFile.committedBlockLength.blockID.blockCommitSequenceId = 3
    assert data.committed_index(small) == 3


def test_a_chunk_range_widens_to_whole_checksum_pieces() -> None:
    chunk = ChunkInfo("c", 0, 100, ChecksumData(ChecksumType.CRC32, 16))
    assert chunk.aligned_range(20, 100) == (16, 100)
    assert chunk.aligned_range(20, 40) == (16, 48)
    assert ChunkInfo("c", 0, 100, ChecksumData(ChecksumType.NONE, 16)).aligned_range(20, 40) == (20, 40)


def test_a_get_block_answer_names_the_checksum_field_it_cannot_read() -> None:
    """A chunk's checksum type and length are read from its checksumData: an unknown type or a checksum
    length of 0 is a ProtocolError naming that field (the reader then tries another replica), not a
    ValueError from verifying a read against it."""
    for sums, field in (
        (pb.ChecksumData(type=77, bytesPerChecksum=1024), "checksumData.type"),
        (pb.ChecksumData(type=pb.CRC32, bytesPerChecksum=0), "checksumData.bytesPerChecksum"),
    ):
        chunk = pb.ChunkInfo(chunkName="1_chunk_1", offset=0, len=10, checksumData=sums)
        with pytest.raises(ProtocolError, match=rf"chunks\[0\]\.{field}"):
            data.chunk_from_proto(chunk, "getBlock.blockData.chunks[0]")
