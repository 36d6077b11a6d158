"""Helpers for the datanode data-service tests: storage in tmp dirs, live servers, request builders."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Callable, Iterable
from concurrent.futures import Executor
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

from pyozone import rpc
from pyozone.common.net import HostPort
from pyozone.common.tls import TlsStore
from pyozone.config import OzoneConfiguration
from pyozone.datanode.pipelines import Membership
from pyozone.datanode.ratis import PipelineGroup, PipelineGroups
from pyozone.datanode.settings import DatanodeSettings, PipelineRaftConfig
from pyozone.datanode.storage import ChecksumType, ContainerSet, VolumeSet, compute
from pyozone.datanode.xceiver import Dispatcher, XceiverService, add_xceiver_service, xceiver_server
from pyozone.hdds.ids import BlockID
from pyozone.hdds.limits import MAX_DATA_MESSAGE_BYTES
from pyozone.hdds.messages import ContainerReplicaReport
from pyozone.hdds.security.x509 import CertRole
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from pyozone.ratis_server.transport import RaftDivisions
from tests.polling import wait_for_async
from tests.unit.datanode.storage.dn_helpers import NO_FREE_SPACE_FLOOR

CLUSTER = "CID-dns-test"
BPC = 1024
PIPELINE = "pipeline-1"


@dataclass
class Node:
    """One datanode's storage, the replica changes it reported and the containers it called full."""

    uuid: str
    settings: DatanodeSettings
    volumes: VolumeSet
    containers: ContainerSet
    reports: list[ContainerReplicaReport] = field(default_factory=list)
    full: list[int] = field(default_factory=list)

    def close(self) -> None:
        self.volumes.close()

    def import_leftovers(self) -> list[Path]:
        return [p for v in self.volumes.data_volumes for p in v.tmp_dir.glob("import-*")]


def open_node(
    root: Path, dn_uuid: str, container_size: str = "1MB", logged: Callable[[BlockID], bool] | None = None,
    **conf: str,
) -> Node:  # fmt: skip
    """`logged`: the blocks pipeline logs name, kept at start (`ContainerSet`'s `logged`)."""
    values = {
        "hdds.datanode.dir": ",".join(str(root / f"disk{i}") for i in range(2)),
        "ozone.metadata.dirs": str(root / "meta"),
        "ozone.scm.container.size": container_size,
        **NO_FREE_SPACE_FLOOR,
        **conf,
    }
    settings = DatanodeSettings.from_conf(OzoneConfiguration(values))
    volumes = VolumeSet(settings.storage, settings.space, dn_uuid, CLUSTER)
    containers = ContainerSet(volumes) if logged is None else ContainerSet(volumes, logged=logged)
    node = Node(dn_uuid, settings, volumes, containers)
    node.containers.on_change(node.reports.append)
    return node


XCEIVER = rpc.service(pb, "XceiverClientProtocolService")


DATA_CHANNEL_SETTINGS = rpc.ChannelSettings(MAX_DATA_MESSAGE_BYTES)


@asynccontextmanager
async def started(
    server: rpc.Server, tls: TlsStore | None = None
) -> AsyncIterator[tuple[HostPort, rpc.Channel]]:
    """`server` on 127.0.0.1 and a channel to it (with `tls`, mutual TLS to a datanode's certificate);
    both closed after."""
    address = HostPort("127.0.0.1", await server.start("127.0.0.1", 0, tls))
    channel = rpc.Channel(address, DATA_CHANNEL_SETTINGS, tls, CertRole.DATANODE if tls else None)
    try:
        yield address, channel
    finally:
        await channel.close()
        await server.stop(None)


@dataclass
class Served:
    dispatcher: Dispatcher
    data_address: HostPort
    """The xceiver service's (the STANDALONE port)."""
    data_channel: rpc.Channel

    @property
    def xceiver(self) -> rpc.Stub:
        return rpc.Stub(self.data_channel, XCEIVER)


@asynccontextmanager
async def serve(node: Node, executor: Executor, close_threshold: float = 0.9) -> AsyncIterator[Served]:
    """The node's container service on 127.0.0.1, and a client channel to it (replication:
    replication/replication_helpers.py)."""
    dispatcher = Dispatcher(node.containers, node.uuid, node.full.append, close_threshold)
    data_server = xceiver_server()
    add_xceiver_service(data_server, XceiverService(dispatcher, executor))
    async with started(data_server) as (data_address, data_channel):
        yield Served(dispatcher, data_address, data_channel)


async def exchange(
    stub: rpc.Stub, requests: Iterable[pb.ContainerCommandRequestProto]
) -> list[pb.ContainerCommandResponseProto]:
    """Sends every request on one stream without waiting for answers, reading them as they come (each
    side of a stream has a window: a writer that reads nothing until it is done would wait on itself);
    returns the answers."""
    call = stub.send()

    async def send_all() -> None:
        for request in requests:
            await call.write(request)
        await call.done_writing()

    sending = asyncio.create_task(send_all())
    answers = [response async for response in call]
    await sending
    return answers


# --- request builders


def payload(seed: int, size: int) -> bytes:
    return random.Random(seed).randbytes(size)


def block_id(cid: int, lid: int, bcsid: int = 0) -> pb.DatanodeBlockID:
    return pb.DatanodeBlockID(containerID=cid, localID=lid, blockCommitSequenceId=bcsid)


def chunk(
    name: str, offset: int, data: bytes, kind: ChecksumType = ChecksumType.CRC32, bpc: int = BPC
) -> pb.ChunkInfo:
    sums = compute(data, kind, bpc)
    checksums = pb.ChecksumData(type=int(kind), bytesPerChecksum=bpc, checksums=sums.checksums)
    return pb.ChunkInfo(chunkName=name, offset=offset, len=len(data), checksumData=checksums)


def request(kind: int, cid: int, trace: str = "", **body: object) -> pb.ContainerCommandRequestProto:
    return pb.ContainerCommandRequestProto(
        cmdType=kind, containerID=cid, traceID=trace, pipelineID=PIPELINE, datanodeUuid="client", **body
    )


def create(cid: int) -> pb.ContainerCommandRequestProto:
    return request(pb.CreateContainer, cid, createContainer=pb.CreateContainerRequestProto())


def write(cid: int, lid: int, info: pb.ChunkInfo, data: bytes) -> pb.ContainerCommandRequestProto:
    body = pb.WriteChunkRequestProto(blockID=block_id(cid, lid), chunkData=info, data=data)
    return request(pb.WriteChunk, cid, writeChunk=body)


def put(cid: int, lid: int, chunks: list[pb.ChunkInfo], bcsid: int = 0) -> pb.ContainerCommandRequestProto:
    data = pb.BlockData(blockID=block_id(cid, lid, bcsid), chunks=chunks)
    return request(pb.PutBlock, cid, putBlock=pb.PutBlockRequestProto(blockData=data))


def small_file(
    cid: int, lid: int, data: bytes, info: pb.ChunkInfo | None = None
) -> pb.ContainerCommandRequestProto:
    """A putSmallFile of `data` as the whole block (`info`: its chunk, by default the chunk of `data`)."""
    info = info or chunk(f"{lid}_chunk", 0, data)
    body = pb.PutSmallFileRequestProto(
        block=pb.PutBlockRequestProto(blockData=pb.BlockData(blockID=block_id(cid, lid), chunks=[info])),
        chunkInfo=info,
        data=data,
    )
    return request(pb.PutSmallFile, cid, putSmallFile=body)


def get_small_file(cid: int, lid: int, bcsid: int = 0) -> pb.ContainerCommandRequestProto:
    body = pb.GetSmallFileRequestProto(block=pb.GetBlockRequestProto(blockID=block_id(cid, lid, bcsid)))
    return request(pb.GetSmallFile, cid, getSmallFile=body)


def get(cid: int, lid: int, bcsid: int = 0) -> pb.ContainerCommandRequestProto:
    return request(pb.GetBlock, cid, getBlock=pb.GetBlockRequestProto(blockID=block_id(cid, lid, bcsid)))


def read(cid: int, lid: int, info: pb.ChunkInfo, version: int = pb.V0) -> pb.ContainerCommandRequestProto:
    body = pb.ReadChunkRequestProto(blockID=block_id(cid, lid), chunkData=info, readChunkVersion=version)
    return request(pb.ReadChunk, cid, readChunk=body)


def close(cid: int) -> pb.ContainerCommandRequestProto:
    return request(pb.CloseContainer, cid, closeContainer=pb.CloseContainerRequestProto())


def block_writes(
    cid: int, lid: int, data: bytes, chunk_size: int, bcsid: int = 0, bpc: int = BPC
) -> tuple[list[pb.ContainerCommandRequestProto], list[pb.ChunkInfo]]:
    """WriteChunk requests for `data` in chunks of chunk_size, then the PutBlock; and the chunks."""
    requests, chunks = [], []
    for n, offset in enumerate(range(0, len(data), chunk_size)):
        piece = data[offset : offset + chunk_size]
        info = chunk(f"{lid}_chunk_{n}", offset, piece, bpc=bpc)
        chunks.append(info)
        requests.append(write(cid, lid, info, piece))
    requests.append(put(cid, lid, chunks, bcsid))
    return requests, chunks


def results(responses: Iterable[pb.ContainerCommandResponseProto]) -> list[str]:
    return [pb.Result.Name(r.result) for r in responses]


def flip_byte(path: Path, offset: int) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x40
    path.write_bytes(bytes(data))


def pipeline_groups(
    dispatcher: Dispatcher,
    directory: Path,
    executor: Executor,
    on_failure: Callable[[str, str], None] = lambda pipeline, reason: None,
) -> PipelineGroups:
    """This datanode's pipelines on a RATIS port of 127.0.0.1 (started by `lead_alone`), quick elections."""
    divisions = RaftDivisions(HostPort("127.0.0.1", 0), None, CertRole.DATANODE, 32 << 20)
    config = PipelineRaftConfig(election_timeout_ms=300, watch_timeout_ms=5000, request_timeout_ms=5000)
    return PipelineGroups(
        dispatcher.datanode_uuid, directory, dispatcher, executor, on_failure, config, divisions
    )


async def lead_alone(groups: PipelineGroups) -> PipelineGroup:
    """Starts the RATIS port and joins PIPELINE, of this datanode alone, once it leads it."""
    await groups.divisions.start()
    me = groups.self_id
    group = await groups.join(Membership(PIPELINE, (me,), me, True))
    assert group is not None
    await wait_for_async(lambda: group.is_leader, 10, "the pipeline's only member leads")
    return group
