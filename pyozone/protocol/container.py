"""The container protocol (DatanodeClientProtocol's ContainerCommandRequestProto and ResponseProto) as the
datanode reads requests and answers them (the side of Ozone's HddsDispatcher and KeyValueHandler): the
command types, a request's body, the blocks and chunks it carries as the kernel's records
(hdds/block_data.py), the answers by result code, and the service the data port serves. The requests a
client sends are built in protocol/data.py.

Reading a chunk checks what the storage layer would otherwise trust blindly: a chunk whose checksum list
does not cover it, or whose checksums have the wrong size, would be committed and then fail to load (or
verify) forever after, so it is refused here as a ProtocolError (MALFORMED_REQUEST).

Costs (every write and read passes here): the dispatcher reads the plain fields of the request it is handed
(container id, pipeline, replica index, BCSID, the data bytes, a read's chunk) rather than have them copied
into records, and a read's answer carries the request's own blockID and chunkData; data bytes are handed
through, never copied here.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import IntEnum
from typing import Any

from google.protobuf.descriptor import ServiceDescriptor

from pyozone.hdds.block_data import BlockData, ChunkInfo
from pyozone.hdds.checksum import ChecksumData, ChecksumType
from pyozone.hdds.errors import ProtocolError
from pyozone.hdds.ids import BlockID
from pyozone.hdds.states import ReplicaState
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from pyozone.protocol.common import enum_from_proto, integer, sub_message, text, uint32
from pyozone.protocol.data import block_id_from_proto, block_id_to_proto

XCEIVER_SERVICE: ServiceDescriptor = pb.DESCRIPTOR.services_by_name["XceiverClientProtocolService"]
"""The data port's service (XceiverClientProtocolService.send: one stream of requests, answered in order)."""


class CommandType(IntEnum):
    """Ozone's ContainerProtos.Type, with its numbers: a request's cmdType."""

    TYPE_UNSPECIFIED = 0
    CreateContainer = 1
    ReadContainer = 2
    UpdateContainer = 3
    DeleteContainer = 4
    ListContainer = 5
    PutBlock = 6
    GetBlock = 7
    DeleteBlock = 8
    ListBlock = 9
    ReadChunk = 10
    DeleteChunk = 11
    WriteChunk = 12
    ListChunk = 13
    CompactChunk = 14
    PutSmallFile = 15
    GetSmallFile = 16
    CloseContainer = 17
    GetCommittedBlockLength = 18
    StreamInit = 19
    StreamWrite = 20
    FinalizeBlock = 21
    Echo = 22
    WatchForCommit = 23


def command_name(kind: int) -> str:
    """A cmdType's name (Ozone's), or "command type N" for a number no type has."""
    try:
        return CommandType(kind).name
    except ValueError:
        return f"command type {kind}"


def result_code(name: str) -> int:
    """The wire number of a Result named as Ozone names it (the storage layer's Result, a refusal's)."""
    return pb.Result.Value(name)


# ------------------------------------------------------------------ requests
_BODY_FIELDS = frozenset(
    f.name for f in pb.ContainerCommandRequestProto.DESCRIPTOR.oneofs_by_name["request"].fields
)
_BODY = {
    kind: field for kind in CommandType if (field := kind.name[0].lower() + kind.name[1:]) in _BODY_FIELDS
}
"""The request field each command type's body is in (createContainer for CreateContainer, ...)."""


def request_body(request: pb.ContainerCommandRequestProto) -> Any:
    """The body of the request's cmdType (a type that has one); ProtocolError unless that one was sent."""
    field = _BODY[request.cmdType]
    present = request.WhichOneof("request")
    if present != field:
        problem = "is missing" if present is None else f"is missing ({present} was sent instead)"
        raise ProtocolError(field, problem)
    return getattr(request, field)


def _in_container(block_id: BlockID, container: int, field: str) -> BlockID:
    if block_id.container_id != container:
        raise ProtocolError(
            f"{field}.containerID", f"is {block_id.container_id}; the request is for {container}"
        )
    return block_id


def body_block(body: Any, container: int, field: str) -> BlockID:
    """The block a request body's blockID names (getBlock's, readChunk's, ...: `field`), which must be in the
    request's container."""
    proto = sub_message(body, "blockID", field)
    return _in_container(block_id_from_proto(proto, f"{field}.blockID"), container, f"{field}.blockID")


def small_file_block(body: pb.GetSmallFileRequestProto, container: int) -> BlockID:
    """The block a GetSmallFile reads, in the request's container."""
    return body_block(sub_message(body, "block", "getSmallFile"), container, "getSmallFile.block")


def put_block_from_proto(body: pb.PutBlockRequestProto, container: int, field: str) -> BlockData:
    """The block a PutBlockRequestProto commits (putBlock's, putSmallFile's block: `field`), in the
    request's container."""
    proto = sub_message(body, "blockData", field)
    block = block_from_proto(proto, f"{field}.blockData")
    _in_container(block.block_id, container, f"{field}.blockData.blockID")
    return block


def write_chunk_from_proto(
    body: pb.WriteChunkRequestProto, container: int
) -> tuple[BlockID, ChunkInfo, BlockData | None]:
    """A WriteChunk's block and chunk and, when the chunk commits its block too (Ozone's writeChunk with a
    putBlock), that block: all read before anything is written, so a bad one writes nothing."""
    block_id = body_block(body, container, "writeChunk")
    chunk = chunk_from_proto(sub_message(body, "chunkData", "writeChunk"), "writeChunk.chunkData")
    if not body.HasField("block"):
        return block_id, chunk, None
    block = block_from_proto(
        sub_message(body.block, "blockData", "writeChunk.block"), "writeChunk.block.blockData"
    )
    if block.block_id != block_id:
        raise ProtocolError("writeChunk.block.blockData.blockID", f"is not {block_id}")
    return block_id, chunk, block


def put_small_file_from_proto(
    body: pb.PutSmallFileRequestProto, container: int
) -> tuple[BlockData, ChunkInfo]:
    """A PutSmallFile's block and its one chunk."""
    block = put_block_from_proto(sub_message(body, "block", "putSmallFile"), container, "putSmallFile.block")
    return block, chunk_from_proto(sub_message(body, "chunkInfo", "putSmallFile"), "putSmallFile.chunkInfo")


def read_chunk_from_proto(body: pb.ReadChunkRequestProto, container: int) -> tuple[BlockID, pb.ChunkInfo]:
    """A ReadChunk's block and the chunk it asks for, as sent (its name, offset and length are all a read
    of committed data needs: the checksums it verifies against are the committed ones)."""
    block_id = body_block(body, container, "readChunk")
    return block_id, sub_message(body, "chunkData", "readChunk")


def container_type_supported(body: pb.CreateContainerRequestProto) -> bool:
    """KeyValueContainer (or unset): the only container type there is."""
    return body.containerType in (pb.CONTAINER_TYPE_UNSPECIFIED, pb.KeyValueContainer)


def created_state(body: pb.CreateContainerRequestProto) -> ReplicaState | None:
    """The state a CreateContainer asks for, OPEN when unset (ContainerDataProto.State numbers are
    ReplicaState numbers); None for a number that is no state."""
    if body.state == pb.ContainerDataProto.STATE_UNSPECIFIED:
        return ReplicaState.OPEN
    try:
        return ReplicaState(body.state)
    except ValueError:
        return None


def request_block_id(request: pb.ContainerCommandRequestProto) -> BlockID:
    """The block a block request names (its blockID; zeros when the body is missing, which no token names:
    the dispatcher then refuses the request as malformed); ValueError for a type that names no block."""
    kind = request.cmdType
    if kind == pb.WriteChunk:
        proto = request.writeChunk.blockID
    elif kind == pb.PutBlock:
        proto = request.putBlock.blockData.blockID
    elif kind == pb.PutSmallFile:
        proto = request.putSmallFile.block.blockData.blockID
    elif kind == pb.ReadChunk:
        proto = request.readChunk.blockID
    elif kind == pb.GetBlock:
        proto = request.getBlock.blockID
    elif kind == pb.GetCommittedBlockLength:
        proto = request.getCommittedBlockLength.blockID
    elif kind == pb.GetSmallFile:
        proto = request.getSmallFile.block.blockID
    elif kind == pb.FinalizeBlock:
        proto = request.finalizeBlock.blockID
    else:
        raise ValueError(f"{command_name(kind)} names no block")
    return BlockID(proto.containerID, proto.localID)


def write_extent(request: pb.ContainerCommandRequestProto) -> int:
    """How far into its block a write reaches: the end of its chunk and of its block's furthest chunk, and
    its block's length (the sum of its chunks), whichever is largest; 0 for a request that writes nothing."""
    kind = request.cmdType
    chunks: list[pb.ChunkInfo] = []
    blocks: list[pb.BlockData] = []
    if kind == pb.WriteChunk:
        chunks.append(request.writeChunk.chunkData)
        if request.writeChunk.HasField("block"):
            blocks.append(request.writeChunk.block.blockData)
    elif kind == pb.PutBlock:
        blocks.append(request.putBlock.blockData)
    elif kind == pb.PutSmallFile:
        chunks.append(request.putSmallFile.chunkInfo)
        blocks.append(request.putSmallFile.block.blockData)
    ends = [c.offset + c.len for c in chunks]
    for block in blocks:
        ends.append(sum(c.len for c in block.chunks))
        ends.extend(c.offset + c.len for c in block.chunks)
    return max(ends, default=0)


def replica_index_of(request: pb.ContainerCommandRequestProto) -> int:
    """The replica index a write names in its block id, or a create in its body (an EC one's is > 0)."""
    kind = request.cmdType
    if kind == pb.CreateContainer:
        return request.createContainer.replicaIndex
    if kind == pb.WriteChunk:
        return request.writeChunk.blockID.replicaIndex
    if kind == pb.PutBlock:
        return request.putBlock.blockData.blockID.replicaIndex
    if kind == pb.PutSmallFile:
        return request.putSmallFile.block.blockData.blockID.replicaIndex
    if kind == pb.FinalizeBlock:
        return request.finalizeBlock.blockID.replicaIndex
    return 0


def close_container_request(
    container_id: int, pipeline_id: str, datanode_uuid: str
) -> pb.ContainerCommandRequestProto:
    """The closeContainer a pipeline's leader puts into the pipeline's log (SCM's close command)."""
    return pb.ContainerCommandRequestProto(
        cmdType=pb.CloseContainer, containerID=container_id, pipelineID=pipeline_id,
        datanodeUuid=datanode_uuid, closeContainer=pb.CloseContainerRequestProto(),
    )  # fmt: skip


# ------------------------------------------------------------------ chunks and blocks
CHECKSUM_SIZES = {
    ChecksumType.NONE: 0,
    ChecksumType.CRC32: 4,
    ChecksumType.CRC32C: 4,
    ChecksumType.SHA256: 32,
    ChecksumType.MD5: 16,
}
"""The size of one checksum of each type (Ozone's encoding: CRCs as 4 big-endian bytes, digests raw)."""


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


def _committed_length(block: BlockData) -> pb.GetCommittedBlockLengthResponseProto:
    return committed_length_to_proto(block.block_id, block.bcsid, block.size)


def committed_length_to_proto(
    block_id: BlockID, bcsid: int, length: int
) -> pb.GetCommittedBlockLengthResponseProto:
    return pb.GetCommittedBlockLengthResponseProto(
        blockID=block_id_to_proto(block_id, bcsid), blockLength=length
    )


# ------------------------------------------------------------------ answers
def succeeded(
    request: pb.ContainerCommandRequestProto, response: pb.ContainerCommandResponseProto
) -> pb.ContainerCommandResponseProto:
    """`response` (one of the answers below) as the SUCCESS of `request`."""
    response.result = pb.SUCCESS
    response.cmdType = request.cmdType
    response.traceID = request.traceID
    return response


def failed(
    request: pb.ContainerCommandRequestProto, result: int, message: str
) -> pb.ContainerCommandResponseProto:
    """The answer to a request that failed with `result` (a Result's number), `message` saying why."""
    return pb.ContainerCommandResponseProto(
        cmdType=request.cmdType, traceID=request.traceID, result=result, message=message
    )


def refusal(response: pb.ContainerCommandResponseProto) -> str | None:
    """The result and message of an answer that is no SUCCESS ("RESULT: message"); None for a SUCCESS."""
    if response.result == pb.SUCCESS:
        return None
    return f"{pb.Result.Name(response.result)}: {response.message}"


def create_container_answer() -> pb.ContainerCommandResponseProto:
    return pb.ContainerCommandResponseProto(createContainer=pb.CreateContainerResponseProto())


def read_container_answer(
    *,
    container_id: int,
    path: str,
    bytes_used: int,
    max_size: int,
    block_count: int,
    state: ReplicaState,
    bcsid: int,
    replica_index: int,
    origin_node_id: str,
) -> pb.ContainerCommandResponseProto:
    """What ReadContainer answers: the replica's identity, state and counters (ReplicaState numbers are
    ContainerDataProto.State numbers)."""
    data = pb.ContainerDataProto(
        containerID=container_id,
        containerPath=path,
        bytesUsed=bytes_used,
        size=max_size,
        blockCount=block_count,
        state=int(state),
        containerType=pb.KeyValueContainer,
        blockCommitSequenceId=bcsid,
        replicaIndex=replica_index,
        originNodeId=origin_node_id,
    )
    return pb.ContainerCommandResponseProto(readContainer=pb.ReadContainerResponseProto(containerData=data))


def close_container_answer(container_id: int) -> pb.ContainerCommandResponseProto:
    return pb.ContainerCommandResponseProto(
        closeContainer=pb.CloseContainerResponseProto(containerID=container_id)
    )


def delete_container_answer() -> pb.ContainerCommandResponseProto:
    return pb.ContainerCommandResponseProto(deleteContainer=pb.DeleteContainerResponseProto())


def put_block_answer(block: BlockData) -> pb.ContainerCommandResponseProto:
    """The committed block's id, BCSID and length."""
    return pb.ContainerCommandResponseProto(
        putBlock=pb.PutBlockResponseProto(committedBlockLength=_committed_length(block))
    )


def get_block_answer(block: BlockData, replica_index: int) -> pb.ContainerCommandResponseProto:
    data = block_to_proto(block, replica_index)
    return pb.ContainerCommandResponseProto(getBlock=pb.GetBlockResponseProto(blockData=data))


def committed_length_answer(block_id: BlockID, bcsid: int, length: int) -> pb.ContainerCommandResponseProto:
    return pb.ContainerCommandResponseProto(
        getCommittedBlockLength=committed_length_to_proto(block_id, bcsid, length)
    )


def finalize_block_answer(block: BlockData, replica_index: int) -> pb.ContainerCommandResponseProto:
    data = block_to_proto(block, replica_index)
    return pb.ContainerCommandResponseProto(finalizeBlock=pb.FinalizeBlockResponseProto(blockData=data))


def list_block_answer(
    blocks: Iterable[BlockData], replica_index: int, budget: int
) -> pb.ContainerCommandResponseProto:
    """The blocks in order, as many as fit in `budget` bytes (at least one): the client pages on from the
    last local id + 1."""
    answer, size = pb.ListBlockResponseProto(), 0
    for block in blocks:
        proto = block_to_proto(block, replica_index)
        size += proto.ByteSize()
        if answer.blockData and size > budget:
            break
        answer.blockData.append(proto)
    return pb.ContainerCommandResponseProto(listBlock=answer)


def write_chunk_answer(block: BlockData | None) -> pb.ContainerCommandResponseProto:
    """`block`: the block the write committed with its chunk, if it did."""
    answer = pb.WriteChunkResponseProto()
    if block is not None:
        answer.committedBlockLength.CopyFrom(_committed_length(block))
    return pb.ContainerCommandResponseProto(writeChunk=answer)


def read_chunk_answer(body: pb.ReadChunkRequestProto, data: bytes) -> pb.ContainerCommandResponseProto:
    """The chunk's bytes with the request's blockID and chunkData; in one buffer (V0) or, for V1, one
    buffer per checksum piece."""
    answer = pb.ReadChunkResponseProto(blockID=body.blockID, chunkData=body.chunkData)
    if body.readChunkVersion == pb.V1:
        step = body.chunkData.checksumData.bytesPerChecksum or len(data) or 1
        answer.dataBuffers.buffers.extend(data[i : i + step] for i in range(0, len(data), step))
    else:
        answer.data = data
    return pb.ContainerCommandResponseProto(readChunk=answer)


def put_small_file_answer(block: BlockData) -> pb.ContainerCommandResponseProto:
    return pb.ContainerCommandResponseProto(
        putSmallFile=pb.PutSmallFileResponseProto(committedBlockLength=_committed_length(block))
    )


def get_small_file_answer(
    body: pb.GetSmallFileRequestProto, data: bytes, last: ChunkInfo | None
) -> pb.ContainerCommandResponseProto:
    """The whole block's bytes with the request's blockID and, as Ozone answers, the block's last chunk."""
    answer = pb.ReadChunkResponseProto(blockID=body.block.blockID, data=data)
    if last is not None:
        answer.chunkData.CopyFrom(chunk_to_proto(last))
    return pb.ContainerCommandResponseProto(getSmallFile=pb.GetSmallFileResponseProto(data=answer))


def echo_answer(payload_size: int) -> pb.ContainerCommandResponseProto:
    """freon dne's answer: `payload_size` zero bytes."""
    return pb.ContainerCommandResponseProto(echo=pb.EchoResponseProto(payload=bytes(payload_size)))
