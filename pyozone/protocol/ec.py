"""The wire of EC reconstruction (Ozone's ECReconstructionCoordinator and ECContainerOperationClient): the
container-protocol requests a coordinator datanode sends its sources and targets over their xceiver
service (contract 7: RECOVERING replicas created, written without a pipeline, closed and, after a failure,
force-deleted; sources listed and read), and the result of each answer.

A source's BlockData and ChunkInfo, as its ListBlock answered them, go back unchanged in the ReadChunk
requests for its cells, and the ChunkInfo of each rebuilt cell is the one its target's putBlock lists:
datanode/ec hands these messages through and reads their plain fields (a block's id and metadata, a chunk's
offset and length), with no conversion to kernel records and back per cell.
"""

from __future__ import annotations

from pyozone.hdds.ec import BLOCK_GROUP_LEN
from pyozone.proto import DatanodeClientProtocol_pb2 as pb

Request = pb.ContainerCommandRequestProto


def _request(kind: int, container_id: int, datanode_uuid: str, **body: object) -> Request:
    return Request(cmdType=kind, containerID=container_id, datanodeUuid=datanode_uuid, **body)


def create_recovering(container_id: int, replica_index: int, datanode_uuid: str) -> Request:
    body = pb.CreateContainerRequestProto(
        containerType=pb.KeyValueContainer,
        state=pb.ContainerDataProto.RECOVERING,
        replicaIndex=replica_index,
    )
    return _request(pb.CreateContainer, container_id, datanode_uuid, createContainer=body)


def close_container(container_id: int, datanode_uuid: str) -> Request:
    body = pb.CloseContainerRequestProto()
    return _request(pb.CloseContainer, container_id, datanode_uuid, closeContainer=body)


def delete_container(container_id: int, datanode_uuid: str) -> Request:
    body = pb.DeleteContainerRequestProto(forceDelete=True)
    return _request(pb.DeleteContainer, container_id, datanode_uuid, deleteContainer=body)


def list_blocks(container_id: int, start_local_id: int, count: int, datanode_uuid: str) -> Request:
    body = pb.ListBlockRequestProto(startLocalID=start_local_id, count=count)
    return _request(pb.ListBlock, container_id, datanode_uuid, listBlock=body)


def read_chunk(block: pb.BlockData, chunk: pb.ChunkInfo, datanode_uuid: str) -> Request:
    """ReadChunk of one cell a source listed: its own block id (BCSID and replica index included) and
    ChunkInfo."""
    body = pb.ReadChunkRequestProto(blockID=block.blockID, chunkData=chunk, readChunkVersion=pb.V0)
    return _request(pb.ReadChunk, block.blockID.containerID, datanode_uuid, readChunk=body)


def _block_id(container_id: int, local_id: int, replica_index: int) -> pb.DatanodeBlockID:
    return pb.DatanodeBlockID(containerID=container_id, localID=local_id, replicaIndex=replica_index)


def write_chunk(
    container_id: int,
    local_id: int,
    replica_index: int,
    chunk: pb.ChunkInfo,
    data: bytes | memoryview,
    datanode_uuid: str,
) -> Request:
    """WriteChunk of a rebuilt cell to its target (protobuf holds bytes: the cell's one copy)."""
    block = _block_id(container_id, local_id, replica_index)
    body = pb.WriteChunkRequestProto(blockID=block, chunkData=chunk, data=bytes(data))
    return _request(pb.WriteChunk, container_id, datanode_uuid, writeChunk=body)


def put_block(
    container_id: int,
    local_id: int,
    replica_index: int,
    chunks: list[pb.ChunkInfo],
    group_length: int,
    datanode_uuid: str,
) -> Request:
    """The putBlock (eof) of a target's replica of a block group: the chunks written to it and the group's
    length (blockGroupLen), as the striped writer records it."""
    data = pb.BlockData(
        blockID=_block_id(container_id, local_id, replica_index),
        chunks=chunks,
        metadata=[pb.KeyValue(key=BLOCK_GROUP_LEN, value=str(group_length))],
        size=sum(c.len for c in chunks),
    )
    body = pb.PutBlockRequestProto(blockData=data, eof=True)
    return _request(pb.PutBlock, container_id, datanode_uuid, putBlock=body)
