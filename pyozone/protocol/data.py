"""The data path's wire (DatanodeClientProtocol) as its clients send and read it: block ids; the requests of a
block's writer and reader (framework/datanode.py's streams carry them) and what their answers say; the
committed length of a block (OM's probes).

A writer's chunk records stay messages (protocol/chunks.py's `chunk_info_to_proto`): every putBlock lists
all chunks so far, and copying messages costs less than converting each chunk again per putBlock; the
writer never reads them. A request's data is set in place, its one copy into the message (bytes only in
protobuf). A reader's chunk list is converted once per block to the kernel's ChunkInfo, which it ranges
and verifies reads against.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pyozone.hdds.checksum import ChecksumData, ChecksumType
from pyozone.hdds.chunks import ChunkInfo
from pyozone.hdds.errors import ProtocolError
from pyozone.hdds.ids import BlockID
from pyozone.hdds.locations import KeyLocation
from pyozone.proto import DatanodeClientProtocol_pb2 as data_pb2
from pyozone.protocol.common import container_id, enum_from_proto, guarded, int32, integer, uint64

Request = data_pb2.ContainerCommandRequestProto
Response = data_pb2.ContainerCommandResponseProto


@guarded("BlockID")
def block_id_to_proto(
    block: BlockID, block_commit_sequence_id: int = 0, replica_index: int = 0
) -> data_pb2.DatanodeBlockID:
    return data_pb2.DatanodeBlockID(
        containerID=container_id(block.container_id, "container_id"),
        localID=integer(block.local_id, "local_id", 1),
        blockCommitSequenceId=uint64(block_commit_sequence_id, "block_commit_sequence_id"),
        replicaIndex=int32(replica_index, "replica_index"),
    )


def block_id_from_proto(proto: data_pb2.DatanodeBlockID, field: str = "blockID") -> BlockID:
    """The block a DatanodeBlockID names (its BCSID and replica index are read from the message itself)."""
    integer(proto.replicaIndex, f"{field}.replicaIndex")
    return BlockID(
        container_id(proto.containerID, f"{field}.containerID"), integer(proto.localID, f"{field}.localID", 1)
    )


def committed_length_request(
    block: BlockID, datanode_uuid: str, token: str = ""
) -> data_pb2.ContainerCommandRequestProto:
    """GetCommittedBlockLength of `block` on one datanode; `token`: a READ block token (encodedToken) where
    the datanode requires one."""
    return data_pb2.ContainerCommandRequestProto(
        cmdType=data_pb2.GetCommittedBlockLength,
        containerID=block.container_id,
        datanodeUuid=datanode_uuid,
        getCommittedBlockLength=data_pb2.GetCommittedBlockLengthRequestProto(
            blockID=block_id_to_proto(block)
        ),
        encodedToken=token,
    )


def committed_length_from_proto(response: data_pb2.ContainerCommandResponseProto) -> int:
    """The length the replica holds of the block; ProtocolError when it answered a failure instead."""
    if response.result != data_pb2.SUCCESS:
        raise ProtocolError("result", f"{data_pb2.Result.Name(response.result)}: {response.message}")
    if not response.HasField("getCommittedBlockLength"):
        raise ProtocolError("getCommittedBlockLength", "missing")
    return integer(response.getCommittedBlockLength.blockLength, "getCommittedBlockLength.blockLength")


def finalize_block_request(
    block: BlockID, pipeline_id: str, datanode_uuid: str, token: str = ""
) -> data_pb2.ContainerCommandRequestProto:
    """FinalizeBlock of `block` through its pipeline's log (sent to the pipeline's leader); `token`: a WRITE
    block token (encodedToken) where the datanodes require one."""
    return data_pb2.ContainerCommandRequestProto(
        cmdType=data_pb2.FinalizeBlock,
        containerID=block.container_id,
        datanodeUuid=datanode_uuid,
        pipelineID=pipeline_id,
        finalizeBlock=data_pb2.FinalizeBlockRequestProto(blockID=block_id_to_proto(block)),
        encodedToken=token,
    )


def finalized_length_from_proto(response: data_pb2.ContainerCommandResponseProto) -> int:
    """The committed length of the block a FinalizeBlock finalized (the sum of its chunks' lengths: what
    the replicas hold, final from then on); ProtocolError when it answered a failure instead."""
    if response.result != data_pb2.SUCCESS:
        raise ProtocolError("result", f"{data_pb2.Result.Name(response.result)}: {response.message}")
    if not response.HasField("finalizeBlock"):
        raise ProtocolError("finalizeBlock", "missing")
    chunks = response.finalizeBlock.blockData.chunks
    return sum(integer(c.len, f"finalizeBlock.blockData.chunks[{i}].len") for i, c in enumerate(chunks))


# ------------------------------------------------------------------ answers
def result_name(code: int) -> str:
    """A Result's name; RESULT_n for a number this version does not know (a newer peer's)."""
    try:
        return data_pb2.Result.Name(code)
    except ValueError:
        return f"RESULT_{code}"


@dataclass(frozen=True, slots=True)
class Refusal:
    """An answer other than SUCCESS: Ozone's Result name, the datanode's message, and each member's applied
    log index it reported (commitInfos; a NOT_REPLICATED watch names the members behind), and on NOT_LEADER
    the pipeline's leader the datanode named (suggestedLeader), if any."""

    result: str
    message: str
    commit_indexes: Mapping[str, int]
    leader: str | None = None


def refusal(response: Response) -> Refusal | None:
    """None for SUCCESS, else what the datanode refused with."""
    if response.result == data_pb2.SUCCESS:
        return None
    return Refusal(
        result_name(response.result),
        response.message,
        commit_indexes(response),
        response.suggestedLeader or None,
    )


def commit_indexes(response: Response) -> dict[str, int]:
    """Each pipeline member's applied log index, as the answer reports them (commitInfos)."""
    return {c.datanodeUuid: c.commitIndex for c in response.commitInfos}


def committed_index(response: Response) -> int:
    """The log index a putBlock's or putSmallFile's answer was applied at (its BCSID without a log)."""
    if response.logIndex:
        return response.logIndex
    if response.HasField("putSmallFile"):
        return response.putSmallFile.committedBlockLength.blockID.blockCommitSequenceId
    return response.putBlock.committedBlockLength.blockID.blockCommitSequenceId


# ------------------------------------------------------------------ a block's writer
def _block_id(location: KeyLocation, replica_index: int, bcsid: int = 0) -> data_pb2.DatanodeBlockID:
    return data_pb2.DatanodeBlockID(
        containerID=location.container_id,
        localID=location.local_id,
        blockCommitSequenceId=bcsid,
        replicaIndex=replica_index,
    )


def container_request(cmd_type: int, location: KeyLocation, **body: Any) -> Request:
    """A request about the block at `location`: its container, pipeline and block token; `body` the
    command's own field."""
    return Request(
        cmdType=cmd_type,
        containerID=location.container_id,
        pipelineID=location.pipeline.id,
        encodedToken=location.token,
        **body,
    )


def block_data(
    location: KeyLocation,
    replica_index: int,
    chunks: Iterable[data_pb2.ChunkInfo],
    size: int,
    metadata: Mapping[str, str],
) -> data_pb2.BlockData:
    """What a putBlock records: the block's chunks so far, its length and metadata."""
    return data_pb2.BlockData(
        blockID=_block_id(location, replica_index),
        chunks=chunks,
        size=size,
        metadata=[data_pb2.KeyValue(key=k, value=v) for k, v in metadata.items()],
    )


def write_chunk_request(
    location: KeyLocation, replica_index: int, chunk: data_pb2.ChunkInfo, data: bytes | memoryview
) -> Request:
    # Bodies are filled in place: one built apart would be copied, data and all.
    request = container_request(data_pb2.WriteChunk, location)
    body = request.writeChunk
    body.blockID.CopyFrom(_block_id(location, replica_index))
    body.chunkData.CopyFrom(chunk)
    body.data = bytes(data)
    return request


def put_block_request(
    location: KeyLocation,
    replica_index: int,
    chunks: Iterable[data_pb2.ChunkInfo],
    size: int,
    metadata: Mapping[str, str],
    eof: bool,
) -> Request:
    body = data_pb2.PutBlockRequestProto(
        blockData=block_data(location, replica_index, chunks, size, metadata), eof=eof
    )
    return container_request(data_pb2.PutBlock, location, putBlock=body)


def put_small_file_request(
    location: KeyLocation,
    replica_index: int,
    chunk: data_pb2.ChunkInfo,
    data: bytes | memoryview,
    metadata: Mapping[str, str],
) -> Request:
    """The block's one chunk written and the block committed (eof) in one request (Ozone's
    ContainerProtocolCalls.writeSmallFile)."""
    request = container_request(data_pb2.PutSmallFile, location)
    small = request.putSmallFile
    small.block.blockData.CopyFrom(block_data(location, replica_index, [chunk], len(data), metadata))
    small.block.eof = True
    small.chunkInfo.CopyFrom(chunk)
    small.data = bytes(data)
    return request


def watch_request(location: KeyLocation, index: int, all_committed: bool) -> Request:
    """WatchForCommit of log index `index`: ALL_COMMITTED, else MAJORITY_COMMITTED."""
    level = data_pb2.ALL_COMMITTED if all_committed else data_pb2.MAJORITY_COMMITTED
    body = data_pb2.WatchForCommitRequestProto(index=index, replication=level)
    return container_request(data_pb2.WatchForCommit, location, watchForCommit=body)


# ------------------------------------------------------------------ a block's reader
def chunk_from_proto(proto: data_pb2.ChunkInfo, field: str) -> ChunkInfo:
    sums = proto.checksumData
    where = f"{field}.checksumData"
    kind = ChecksumType.NONE if sums.type == 0 else enum_from_proto(ChecksumType, sums.type, f"{where}.type")
    if kind is not ChecksumType.NONE and sums.bytesPerChecksum <= 0:
        raise ProtocolError(f"{where}.bytesPerChecksum", f"{sums.bytesPerChecksum} is not a checksum length")
    return ChunkInfo(
        proto.chunkName,
        integer(proto.offset, f"{field}.offset"),
        integer(proto.len, f"{field}.len"),
        ChecksumData(kind, sums.bytesPerChecksum, tuple(sums.checksums)),
    )


def get_block_request(location: KeyLocation, replica_index: int) -> Request:
    """GetBlock at the committed BCSID; `replica_index`: the EC index expected (0: replicated)."""
    body = data_pb2.GetBlockRequestProto(blockID=_block_id(location, replica_index, location.bcsid))
    return container_request(data_pb2.GetBlock, location, getBlock=body)


def block_from_proto(response: Response) -> tuple[int, tuple[ChunkInfo, ...]]:
    """A GetBlock's answer: the replica index the datanode holds and the block's chunks by offset."""
    data = response.getBlock.blockData
    chunks = (chunk_from_proto(c, f"getBlock.blockData.chunks[{i}]") for i, c in enumerate(data.chunks))
    return data.blockID.replicaIndex, tuple(sorted(chunks, key=lambda c: c.offset))


def get_small_file_request(location: KeyLocation) -> Request:
    """GetSmallFile of a replicated block at its committed BCSID (Ozone's
    ContainerProtocolCalls.readSmallFile)."""
    block = data_pb2.GetBlockRequestProto(blockID=_block_id(location, 0, location.bcsid))
    return container_request(
        data_pb2.GetSmallFile, location, getSmallFile=data_pb2.GetSmallFileRequestProto(block=block)
    )


def small_file_from_proto(response: Response) -> tuple[ChunkInfo, bytes]:
    """A GetSmallFile's answer: the chunk it describes (the block's last) and its data."""
    answer = response.getSmallFile.data
    return chunk_from_proto(answer.chunkData, "getSmallFile.data.chunkData"), answer.data


def read_chunk_request(location: KeyLocation, chunk: ChunkInfo, start: int, end: int) -> Request:
    """ReadChunk of [start, end) of `chunk` (whole checksum pieces), with the checksums of that range."""
    sums = chunk.checksum_data
    bpc = sums.bytes_per_checksum or max(chunk.length, 1)
    wanted = data_pb2.ChunkInfo(
        chunkName=chunk.name,
        offset=chunk.offset + start,
        len=end - start,
        checksumData=data_pb2.ChecksumData(
            type=int(sums.type),
            bytesPerChecksum=sums.bytes_per_checksum,
            checksums=sums.checksums[start // bpc : -(-end // bpc)],
        ),
    )
    block = data_pb2.DatanodeBlockID(containerID=location.container_id, localID=location.local_id)
    body = data_pb2.ReadChunkRequestProto(blockID=block, chunkData=wanted)
    return container_request(data_pb2.ReadChunk, location, readChunk=body)


def read_chunk_data(response: Response) -> bytes:
    """A ReadChunk's bytes (one buffer, or the buffers joined)."""
    answer = response.readChunk
    if answer.WhichOneof("responseData") != "dataBuffers":
        return answer.data
    return b"".join(answer.dataBuffers.buffers)


# ------------------------------------------------------------------ echo (freon dne)
def echo_request(datanode_uuid: str, payload: bytes, response_size: int, pipeline_id: str = "") -> Request:
    """An Echo: the data port's round trip with no container work; `response_size` bytes come back."""
    echo = data_pb2.EchoRequestProto(payload=payload, payloadSizeResp=response_size, readOnly=True)
    return Request(cmdType=data_pb2.Echo, datanodeUuid=datanode_uuid, pipelineID=pipeline_id, echo=echo)


def echo_payload(response: Response) -> bytes:
    return response.echo.payload
