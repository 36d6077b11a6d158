"""Converters for the data path (DatanodeClientProtocol): block ids, and the committed length of a block."""

from __future__ import annotations

from pyozone.hdds.errors import ProtocolError
from pyozone.hdds.ids import BlockID
from pyozone.proto import DatanodeClientProtocol_pb2 as data_pb2
from pyozone.protocol.common import container_id, guarded, int32, integer, uint64


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
