"""A minimal, test-only data client: container and block commands to one datanode's STANDALONE port over
XceiverClientProtocolService.send (the bidirectional stream). Chunk checksums are CRC32 per 16 KiB, as
an Ozone client computes them by default. The real client (issue #4) lives in pyozone."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pyozone import rpc
from pyozone.hdds.checksum import ChecksumType, compute
from pyozone.hdds.ids import BlockID
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from pyozone.protocol import MAX_DATA_MESSAGE_BYTES

BYTES_PER_CHECKSUM = 16 * 1024
XCEIVER = rpc.service(pb, "XceiverClientProtocolService")


class XceiverError(Exception):
    def __init__(self, result: int, message: str) -> None:
        super().__init__(f"{pb.Result.Name(result)}: {message}")
        self.result = result


def block_id(block: BlockID) -> pb.DatanodeBlockID:
    return pb.DatanodeBlockID(containerID=block.container_id, localID=block.local_id)


def chunk_info(name: str, offset: int, data: bytes) -> pb.ChunkInfo:
    sums = compute(data, ChecksumType.CRC32, BYTES_PER_CHECKSUM)
    return pb.ChunkInfo(
        chunkName=name,
        offset=offset,
        len=len(data),
        checksumData=pb.ChecksumData(
            type=pb.CRC32, bytesPerChecksum=BYTES_PER_CHECKSUM, checksums=list(sums.checksums)
        ),
    )


class XceiverClient:
    """One channel to one datanode; every call is one stream carrying one or more requests."""

    def __init__(self, host: str, port: int, pipeline_id: str = "", timeout_s: float = 30) -> None:
        """`pipeline_id` goes with every request (a container's first write creates it on that pipeline)."""
        self.address = f"{host}:{port}"
        self.pipeline_id = pipeline_id
        self.timeout_s = timeout_s
        self._channel = rpc.SyncChannel(self.address, rpc.ChannelSettings(MAX_DATA_MESSAGE_BYTES))
        self._stub = rpc.Stub(self._channel, XCEIVER)

    def close(self) -> None:
        self._channel.close()

    def __enter__(self) -> XceiverClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def send(
        self, requests: Sequence[pb.ContainerCommandRequestProto]
    ) -> list[pb.ContainerCommandResponseProto]:
        """All requests on one stream; the answers in request order. Raises XceiverError for the first
        answer that is not SUCCESS."""
        answers = list(self._stub.send(iter(requests), timeout=self.timeout_s))
        if len(answers) != len(requests):
            raise AssertionError(f"{len(requests)} requests got {len(answers)} answers from {self.address}")
        for answer in answers:
            if answer.result != pb.SUCCESS:
                raise XceiverError(answer.result, answer.message)
        return answers

    def call(self, request: pb.ContainerCommandRequestProto) -> pb.ContainerCommandResponseProto:
        return self.send([request])[0]

    def request(self, kind: int, container_id: int, **body: Any) -> pb.ContainerCommandRequestProto:
        return pb.ContainerCommandRequestProto(
            cmdType=kind, containerID=container_id, pipelineID=self.pipeline_id, **body
        )

    # ------------------------------------------------------------------ requests
    def create_request(self, container_id: int) -> pb.ContainerCommandRequestProto:
        body = pb.CreateContainerRequestProto(containerType=pb.KeyValueContainer)
        return self.request(pb.CreateContainer, container_id, createContainer=body)

    def write_chunk_request(
        self, block: BlockID, chunk: pb.ChunkInfo, data: bytes
    ) -> pb.ContainerCommandRequestProto:
        body = pb.WriteChunkRequestProto(blockID=block_id(block), chunkData=chunk, data=data)
        return self.request(pb.WriteChunk, block.container_id, writeChunk=body)

    def put_block_request(
        self, block: BlockID, chunks: Sequence[pb.ChunkInfo]
    ) -> pb.ContainerCommandRequestProto:
        data = pb.BlockData(blockID=block_id(block), chunks=chunks, size=sum(c.len for c in chunks))
        return self.request(pb.PutBlock, block.container_id, putBlock=pb.PutBlockRequestProto(blockData=data))

    # ------------------------------------------------------------------ calls
    def create_container(self, container_id: int) -> None:
        self.call(self.create_request(container_id))

    def write_chunk(self, block: BlockID, name: str, offset: int, data: bytes) -> pb.ChunkInfo:
        chunk = chunk_info(name, offset, data)
        self.call(self.write_chunk_request(block, chunk, data))
        return chunk

    def put_block(self, block: BlockID, chunks: Sequence[pb.ChunkInfo]) -> int:
        """Commits the block; returns its committed length."""
        return self.call(self.put_block_request(block, chunks)).putBlock.committedBlockLength.blockLength

    def write_block(self, block: BlockID, data: bytes, chunk_size: int = 64 * 1024) -> list[pb.ChunkInfo]:
        """Every chunk and the putBlock on one stream (the datanode runs them in order)."""
        chunks, requests = [], []
        for i, offset in enumerate(range(0, len(data), chunk_size)):
            piece = data[offset : offset + chunk_size]
            chunk = chunk_info(f"{block.local_id}_chunk_{i + 1}", offset, piece)
            chunks.append(chunk)
            requests.append(self.write_chunk_request(block, chunk, piece))
        requests.append(self.put_block_request(block, chunks))
        answers = self.send(requests)
        if self.pipeline_id:  # through the pipeline log: wait until every member applied the block
            watch = pb.WatchForCommitRequestProto(index=answers[-1].logIndex, replication=pb.ALL_COMMITTED)
            self.call(self.request(pb.WatchForCommit, block.container_id, watchForCommit=watch))
        return chunks

    def get_block(self, block: BlockID) -> pb.BlockData:
        body = pb.GetBlockRequestProto(blockID=block_id(block))
        return self.call(self.request(pb.GetBlock, block.container_id, getBlock=body)).getBlock.blockData

    def read_chunk(self, block: BlockID, chunk: pb.ChunkInfo) -> bytes:
        body = pb.ReadChunkRequestProto(blockID=block_id(block), chunkData=chunk)
        return self.call(self.request(pb.ReadChunk, block.container_id, readChunk=body)).readChunk.data

    def read_block(self, block: BlockID) -> bytes:
        return b"".join(self.read_chunk(block, c) for c in self.get_block(block).chunks)

    def read_container(self, container_id: int) -> pb.ContainerDataProto:
        body = pb.ReadContainerRequestProto()
        return self.call(
            self.request(pb.ReadContainer, container_id, readContainer=body)
        ).readContainer.containerData

    def close_container(self, container_id: int) -> None:
        self.call(
            self.request(pb.CloseContainer, container_id, closeContainer=pb.CloseContainerRequestProto())
        )
