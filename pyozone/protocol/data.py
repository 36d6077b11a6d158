"""Converters for the data path (DatanodeClientProtocol): block ids."""

from __future__ import annotations

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
