"""Converters between the data-path protobuf messages and the storage layer's records.

Reading a message checks what the storage layer would otherwise trust blindly: a chunk whose checksum
list does not cover it, or whose checksums have the wrong size, would be committed and then fail to
load (or verify) forever after, so it is refused here as a ProtocolError (MALFORMED_REQUEST).
"""

from __future__ import annotations

from pyozone.datanode.storage import BlockData, ChecksumData, ChecksumType, ChunkInfo, KeyValueContainer
from pyozone.hdds.errors import ProtocolError
from pyozone.hdds.ids import BlockID
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from pyozone.protocol.common import enum_from_proto, integer, sub_message, text, uint32
from pyozone.protocol.data import block_id_from_proto, block_id_to_proto

# The size of one checksum of each type (Ozone's encoding: CRCs as 4 big-endian bytes, digests raw).
CHECKSUM_SIZES = {
    ChecksumType.NONE: 0,
    ChecksumType.CRC32: 4,
    ChecksumType.CRC32C: 4,
    ChecksumType.SHA256: 32,
    ChecksumType.MD5: 16,
}


def checksum_data_from_proto(proto: pb.ChecksumData, length: int, field: str) -> ChecksumData:
    """Checksums covering exactly `length` bytes: one per bytesPerChecksum piece, each of its type's size."""
    kind = enum_from_proto(ChecksumType, proto.type, f"{field}.type")
    bpc = uint32(proto.bytesPerChecksum, f"{field}.bytesPerChecksum")
    sums = tuple(proto.checksums)
    if kind is ChecksumType.NONE:
        if sums:
            raise ProtocolError(f"{field}.checksums", "must be empty for checksum type NONE")
        return ChecksumData(kind, bpc or 1)
    if bpc == 0:
        raise ProtocolError(f"{field}.bytesPerChecksum", "is missing")
    expected = -(-length // bpc)
    if len(sums) != expected:
        raise ProtocolError(
            f"{field}.checksums", f"{len(sums)} checksums for {length} bytes; need {expected}"
        )
    size = CHECKSUM_SIZES[kind]
    if any(len(s) != size for s in sums):
        raise ProtocolError(f"{field}.checksums", f"every {kind.name} checksum is {size} bytes")
    return ChecksumData(kind, bpc, sums)


def checksum_data_to_proto(data: ChecksumData) -> pb.ChecksumData:
    return pb.ChecksumData(
        type=int(data.type), bytesPerChecksum=data.bytes_per_checksum, checksums=data.checksums
    )


def chunk_from_proto(proto: pb.ChunkInfo, field: str) -> ChunkInfo:
    length = integer(proto.len, f"{field}.len")
    checksums = checksum_data_from_proto(
        sub_message(proto, "checksumData", field), length, field + ".checksumData"
    )
    return ChunkInfo(
        text(proto.chunkName, f"{field}.chunkName"),
        integer(proto.offset, f"{field}.offset"),
        length,
        checksums,
    )


def chunk_to_proto(chunk: ChunkInfo) -> pb.ChunkInfo:
    return pb.ChunkInfo(
        chunkName=chunk.name,
        offset=chunk.offset,
        len=chunk.length,
        checksumData=checksum_data_to_proto(chunk.checksum_data),
    )


def block_from_proto(proto: pb.BlockData, field: str) -> BlockData:
    block_id = block_id_from_proto(sub_message(proto, "blockID", field), f"{field}.blockID")
    chunks = tuple(chunk_from_proto(c, f"{field}.chunks[{i}]") for i, c in enumerate(proto.chunks))
    metadata = tuple((kv.key, kv.value) for kv in proto.metadata)
    return BlockData(block_id, chunks, metadata)


def block_to_proto(block: BlockData, replica_index: int = 0) -> pb.BlockData:
    return pb.BlockData(
        blockID=block_id_to_proto(block.block_id, block.bcsid, replica_index),
        metadata=[pb.KeyValue(key=k, value=v) for k, v in block.metadata],
        chunks=[chunk_to_proto(c) for c in block.chunks],
        size=block.size,
    )


def committed_length(block_id: BlockID, bcsid: int, length: int) -> pb.GetCommittedBlockLengthResponseProto:
    return pb.GetCommittedBlockLengthResponseProto(
        blockID=block_id_to_proto(block_id, bcsid), blockLength=length
    )


def container_data_to_proto(container: KeyValueContainer) -> pb.ContainerDataProto:
    """What ReadContainer answers: the replica's identity, state and counters (ReplicaState numbers
    are ContainerDataProto.State numbers)."""
    data = container.data
    return pb.ContainerDataProto(
        containerID=container.container_id,
        containerPath=str(container.directory),
        bytesUsed=container.used_bytes,
        size=data.max_size,
        blockCount=container.key_count,
        state=int(container.state),
        containerType=pb.KeyValueContainer,
        blockCommitSequenceId=container.bcsid,
        replicaIndex=data.replica_index,
        originNodeId=data.origin_node_id,
    )
