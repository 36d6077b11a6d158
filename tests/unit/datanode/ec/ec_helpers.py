"""Reconstruction test kit: EC block groups written into real source datanodes (Dispatchers over tmp dirs),
in-process streams to them, and in-memory targets that keep what the coordinator writes."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass, field
from pathlib import Path

from pyozone.datanode.ec.peers import Peer
from pyozone.datanode.xceiver import Dispatcher
from pyozone.hdds.checksum import ChecksumData, ChecksumType, compute, verify
from pyozone.hdds.datanode import DatanodeDetails
from pyozone.hdds.ec import StripeLayout
from pyozone.hdds.ec.codec import codec_for
from pyozone.hdds.ids import DatanodeID, ReplicationConfig
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from tests.unit.datanode.dns_helpers import Node, open_node

Request = pb.ContainerCommandRequestProto
Response = pb.ContainerCommandResponseProto
BPC = 1024
CID = 7


def details(n: int) -> DatanodeDetails:
    uuid = DatanodeID(f"00000000-0000-4000-8000-{n:012d}")
    return DatanodeDetails(uuid, f"dn{n}", "127.0.0.1", (("STANDALONE", 9000 + n),))


def index_cells(config: ReplicationConfig, data: bytes) -> dict[int, list[bytes]]:
    """Each replica index's cells of a block group holding `data`, stripe by stripe."""
    layout, codec = StripeLayout.of(config), codec_for(config)
    cells: dict[int, list[bytes]] = {i: [] for i in range(1, layout.nodes + 1)}
    for stripe in range(layout.stripes(len(data))):
        lengths = layout.stripe_cell_lengths(len(data), stripe)
        start = stripe * layout.stripe_bytes
        stripe_cells = []
        for i, length in enumerate(lengths):
            cell = data[start + i * layout.cell : start + i * layout.cell + length]
            if length:
                cells[i + 1].append(cell)
            stripe_cells.append(cell.ljust(lengths[0], b"\0"))
        for p, parity in enumerate(codec.encode(stripe_cells)):
            cells[layout.data + p + 1].append(bytes(parity))
    return cells


def chunk_info(local_id: int, stripe: int, cell: int, data: bytes) -> pb.ChunkInfo:
    sums = compute(data, ChecksumType.CRC32C, BPC)
    return pb.ChunkInfo(
        chunkName=f"{local_id}_chunk_{stripe + 1}", offset=stripe * cell, len=len(data),
        checksumData=pb.ChecksumData(type=pb.CRC32C, bytesPerChecksum=BPC, checksums=sums.checksums),
    )  # fmt: skip


def dispatch_ok(dispatcher: Dispatcher, request: Request) -> Response:
    response = dispatcher.dispatch(request)
    assert response.result == pb.SUCCESS, response.message
    return response


@dataclass
class Source:
    node: Node
    dispatcher: Dispatcher
    index: int


def open_sources(root: Path, indexes: list[int]) -> dict[int, Source]:
    sources = {}
    for index in indexes:
        node = open_node(root / f"src{index}", str(details(index).uuid), container_size="64MB")
        dispatcher = Dispatcher(node.containers, node.uuid, node.full.append)
        create = pb.CreateContainerRequestProto(replicaIndex=index)
        dispatch_ok(dispatcher, Request(cmdType=pb.CreateContainer, containerID=CID, createContainer=create))
        sources[index] = Source(node, dispatcher, index)
    return sources


def write_group(
    sources: dict[int, Source],
    config: ReplicationConfig,
    local_id: int,
    data: bytes,
    group_len: int | None = None,
) -> dict[int, list[bytes]]:
    """Writes the block group to the sources (as the striped writer does) and returns every index's cells."""
    cells = index_cells(config, data)
    cell = config.ec_chunk_size
    for index, source in sources.items():
        chunks = []
        for stripe, payload in enumerate(cells[index]):
            info = chunk_info(local_id, stripe, cell, payload)
            block = pb.DatanodeBlockID(containerID=CID, localID=local_id, replicaIndex=index)
            write = pb.WriteChunkRequestProto(blockID=block, chunkData=info, data=payload)
            dispatch_ok(source.dispatcher, Request(cmdType=pb.WriteChunk, containerID=CID, writeChunk=write))
            chunks.append(info)
        length = len(data) if group_len is None else group_len
        block_data = pb.BlockData(
            blockID=pb.DatanodeBlockID(containerID=CID, localID=local_id, replicaIndex=index),
            chunks=chunks, metadata=[pb.KeyValue(key="blockGroupLen", value=str(length))],
            size=sum(c.len for c in chunks),
        )  # fmt: skip
        put = pb.PutBlockRequestProto(blockData=block_data, eof=True)
        dispatch_ok(source.dispatcher, Request(cmdType=pb.PutBlock, containerID=CID, putBlock=put))
    return cells


def close_sources(sources: dict[int, Source]) -> None:
    for source in sources.values():
        close = pb.CloseContainerRequestProto()
        dispatch_ok(
            source.dispatcher, Request(cmdType=pb.CloseContainer, containerID=CID, closeContainer=close)
        )


class DispatcherPeer:
    """A stream to a real Dispatcher in this process: requests run one after another on the executor."""

    def __init__(self, name: str, dispatcher: Dispatcher, executor: Executor) -> None:
        self.name = name
        self.dispatcher = dispatcher
        self.executor = executor
        self.tamper: Callable[[Request, Response], None] | None = None
        self._last: asyncio.Future[Response] | None = None

    def submit(self, request: Request) -> asyncio.Future[Response]:
        previous = self._last

        async def run() -> Response:
            if previous is not None:
                await asyncio.wait([previous])
            loop = asyncio.get_running_loop()
            response = await loop.run_in_executor(self.executor, self.dispatcher.dispatch, request)
            if self.tamper is not None:
                self.tamper(request, response)
            return response

        self._last = asyncio.ensure_future(run())
        return self._last

    async def close(self) -> None:
        if self._last is not None:
            await asyncio.wait([self._last])


@dataclass
class Replica:
    index: int
    state: str = "RECOVERING"
    chunks: dict[int, dict[int, tuple[pb.ChunkInfo, bytes]]] = field(default_factory=dict)
    blocks: dict[int, pb.BlockData] = field(default_factory=dict)

    def block_bytes(self, local_id: int) -> bytes:
        """The block's committed bytes, checked against the chunk list its putBlock recorded."""
        block, written = self.blocks[local_id], self.chunks.get(local_id, {})
        return b"".join(written[c.offset][1] for c in block.chunks)


class FakeTarget:
    """A target datanode's side of contract 7, in memory: RECOVERING replicas, checked writes, close, delete.
    `fail_writes_after`: writeChunk answers IO_EXCEPTION once this many have succeeded."""

    def __init__(self, name: str, fail_writes_after: int | None = None) -> None:
        self.name = name
        self.replicas: dict[int, Replica] = {}
        self.deleted: list[int] = []
        self.fail_writes_after = fail_writes_after
        self.writes = 0

    def submit(self, request: Request) -> asyncio.Future[Response]:
        future: asyncio.Future[Response] = asyncio.get_running_loop().create_future()
        future.set_result(self._handle(request))
        return future

    async def close(self) -> None:
        pass

    def _handle(self, request: Request) -> Response:
        cid = request.containerID
        replica = self.replicas.get(cid)
        if request.cmdType == pb.CreateContainer:
            assert request.createContainer.state == pb.ContainerDataProto.RECOVERING
            if replica is not None:
                return Response(result=pb.CONTAINER_EXISTS, message="exists")
            self.replicas[cid] = Replica(request.createContainer.replicaIndex)
            return Response(result=pb.SUCCESS)
        if request.cmdType == pb.DeleteContainer:
            assert request.deleteContainer.forceDelete
            self.replicas.pop(cid, None)
            self.deleted.append(cid)
            return Response(result=pb.SUCCESS)
        if replica is None:
            return Response(result=pb.CONTAINER_NOT_FOUND, message="no such container")
        if request.cmdType == pb.CloseContainer:
            replica.state = "CLOSED"
            return Response(result=pb.SUCCESS)
        assert replica.state == "RECOVERING", "a write to a closed replica"
        if request.cmdType == pb.WriteChunk:
            if self.fail_writes_after is not None and self.writes >= self.fail_writes_after:
                return Response(result=pb.IO_EXCEPTION, message="disk on fire")
            self.writes += 1
            body = request.writeChunk
            assert body.blockID.replicaIndex == replica.index
            sums = body.chunkData.checksumData
            verify(
                body.data, ChecksumData(ChecksumType(sums.type), sums.bytesPerChecksum, tuple(sums.checksums))
            )
            assert len(body.data) == body.chunkData.len
            replica.chunks.setdefault(body.blockID.localID, {})[body.chunkData.offset] = (
                body.chunkData,
                body.data,
            )
            return Response(result=pb.SUCCESS)
        if request.cmdType == pb.PutBlock:
            block = request.putBlock.blockData
            assert block.blockID.replicaIndex == replica.index
            replica.blocks[block.blockID.localID] = block
            return Response(result=pb.SUCCESS)
        raise AssertionError(f"unexpected request {request.cmdType}")


def connector(peers: dict[str, Peer]) -> Callable[[DatanodeDetails], Peer]:
    """Routes each datanode to its in-process stream, by uuid."""
    return lambda d: peers[str(d.uuid)]


def payload(size: int, seed: int = 0) -> bytes:
    return random.Random(seed).randbytes(size)
