"""The xceiver requests of a reconstruction (contract 7): RECOVERING replicas are created, written without a
pipeline, closed and, after a failure, force-deleted; sources are listed and read."""

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
    body = pb.ReadChunkRequestProto(blockID=block.blockID, chunkData=chunk, readChunkVersion=pb.V0)
    return _request(pb.ReadChunk, block.blockID.containerID, datanode_uuid, readChunk=body)


def block_id(container_id: int, local_id: int, replica_index: int) -> pb.DatanodeBlockID:
    return pb.DatanodeBlockID(containerID=container_id, localID=local_id, replicaIndex=replica_index)


def write_chunk(
    block: pb.DatanodeBlockID, chunk: pb.ChunkInfo, data: bytes | memoryview, datanode_uuid: str
) -> Request:
    body = pb.WriteChunkRequestProto(blockID=block, chunkData=chunk, data=bytes(data))
    return _request(pb.WriteChunk, block.containerID, datanode_uuid, writeChunk=body)


def put_block(
    block: pb.DatanodeBlockID, chunks: list[pb.ChunkInfo], group_length: int, datanode_uuid: str
) -> Request:
    data = pb.BlockData(
        blockID=block,
        chunks=chunks,
        metadata=[pb.KeyValue(key=BLOCK_GROUP_LEN, value=str(group_length))],
        size=sum(c.len for c in chunks),
    )
    body = pb.PutBlockRequestProto(blockData=data, eof=True)
    return _request(pb.PutBlock, block.containerID, datanode_uuid, putBlock=body)
