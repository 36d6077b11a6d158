"""An in-process SCM daemon on 127.0.0.1 with free ports, fake datanodes speaking its datanode protocol, and a
raw HTTP client: what the SCM server tests share."""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import AsyncIterator, Callable, Coroutine, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from pyozone import protocol as p
from pyozone import rpc
from pyozone.analytics.snapshot_stream import snapshot_chunks
from pyozone.config import OzoneConfiguration
from pyozone.framework.scm_admin import ADMIN_SERVICE
from pyozone.hdds.commands import ClosePipelineCommand, CreatePipelineCommand, SCMCommand
from pyozone.hdds.datanode import DatanodeDetails, LayoutVersion
from pyozone.hdds.messages import Heartbeat, PipelineReport
from pyozone.hdds.states import SCMCommandType
from pyozone.proto import ScmServerDatanodeHeartbeatProtocol_pb2 as dn_pb
from pyozone.scm.server import ScmDaemon
from pyozone.scm.server.snapshot_source import SnapshotSource
from pyozone.scm.store.version import init_scm, open_scm_store
from tests.builders import dn_id, node_report
from tests.polling import wait_for_async

LOOPBACK = {
    "ozone.scm.datanode.address": "127.0.0.1:0",
    "ozone.scm.client.address": "127.0.0.1:0",
    "ozone.scm.block.client.address": "127.0.0.1:0",
    "ozone.scm.http-address": "127.0.0.1:0",
}
FAST = {
    "hdds.heartbeat.interval": "100ms",
    "ozone.scm.heartbeat.thread.interval": "100ms",
    "ozone.scm.pipeline.creation.interval": "200ms",
    "hdds.scm.safemode.rule.refresh.interval": "200ms",
    "ozone.scm.close.container.wait.duration": "100ms",
}
RATIS_PORT = 9858
DATANODE_SERVICE = rpc.service(dn_pb, "StorageContainerDatanodeProtocolService")


def scm_conf(metadata_dir: Path, overrides: Mapping[str, str] | None = None) -> OzoneConfiguration:
    """Loopback, free ports and short intervals, then `overrides`."""
    return OzoneConfiguration(
        {"ozone.metadata.dirs": str(metadata_dir), **LOOPBACK, **FAST, **(overrides or {})}
    )


def async_test(fn: Callable[..., Coroutine[Any, Any, None]]) -> Callable[..., None]:
    """Runs an async test body in a fresh event loop (no pytest-asyncio here)."""

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> None:
        asyncio.run(asyncio.wait_for(fn(*args, **kwargs), 20))

    return run


@asynccontextmanager
async def running_scm(
    conf: OzoneConfiguration, snapshot_source: SnapshotSource | None = snapshot_chunks
) -> AsyncIterator[ScmDaemon]:
    init_scm(conf)
    storage, store = open_scm_store(conf)
    daemon = ScmDaemon(conf, storage, store, snapshot_source=snapshot_source)
    await daemon.start()
    try:
        yield daemon
    finally:
        await daemon.stop(0.5)


@asynccontextmanager
async def channel(port: int, limit: int = p.MAX_HEARTBEAT_MESSAGE_BYTES) -> AsyncIterator[rpc.Channel]:
    async with rpc.Channel(f"127.0.0.1:{port}", rpc.ChannelSettings(limit)) as ch:
        yield ch


def admin_stub(ch: rpc.Channel) -> Any:
    return rpc.Stub(ch, ADMIN_SERVICE)


def datanode_details(i: int) -> DatanodeDetails:
    """Datanode i: host dn{i}.test, IP 10.0.0.{i}; all share the RATIS port, each has its own STANDALONE."""
    return DatanodeDetails(
        dn_id(i), f"dn{i}.test", f"10.0.0.{i}", (("RATIS", RATIS_PORT), ("STANDALONE", 9860 + i))
    )


class FakeDatanode:
    """Registers and heartbeats like a datanode; creates the pipelines SCM asks for and reports them back
    (leader: SCM's suggested leader), and remembers every command it received."""

    def __init__(self, i: int, ch: rpc.Channel) -> None:
        self.details = datanode_details(i)
        self.stub: Any = rpc.Stub(ch, DATANODE_SERVICE)
        self.leads: dict[str, bool] = {}
        self.received: list[SCMCommand] = []

    @property
    def uuid(self) -> str:
        return self.details.uuid

    async def register(self, cluster_id: str | None = None) -> p.RegisterResponse:
        request = p.RegisterRequest(
            self.details, node_report(), layout=LayoutVersion(1, 1), cluster_id=cluster_id or ""
        )
        answer = await self.stub.register(p.register_request_to_proto(request))
        return p.register_response_from_proto(answer)

    async def heartbeat(self) -> list[SCMCommand]:
        reports = tuple(PipelineReport(pid, leader) for pid, leader in self.leads.items())
        hb = Heartbeat(self.details, pipeline_reports=reports)
        answer = p.heartbeat_response_from_proto(await self.stub.sendHeartbeat(p.heartbeat_to_proto(hb)))
        for command in answer.commands:
            self.received.append(command)
            if isinstance(command, CreatePipelineCommand):
                self.leads[command.pipeline_id] = (
                    len(command.nodes) == 1 or command.suggested_leader == self.uuid
                )
            elif isinstance(command, ClosePipelineCommand):
                self.leads.pop(command.pipeline_id, None)
        return list(answer.commands)

    def commands(self, kind: SCMCommandType) -> list[SCMCommand]:
        return [c for c in self.received if c.type is kind]


async def heartbeat_until(
    datanodes: list[FakeDatanode], done: Callable[[], Any], timeout_s: float = 4.0, period_s: float = 0.05
) -> None:
    """Every datanode heartbeats each period until `done()` (awaited if it is a coroutine) is true."""

    async def beat_then_check() -> Any:
        for dn in datanodes:
            await dn.heartbeat()
        result = done()
        return await result if asyncio.iscoroutine(result) else result

    await wait_for_async(beat_then_check, timeout_s, "heartbeats until the condition holds", period_s)


async def http_get(port: int, path: str = "/", raw: bytes | None = None) -> tuple[int, Any]:
    """(status, JSON body) of one request; `raw` replaces the whole request. Status 0: closed unanswered."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(raw if raw is not None else f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    writer.write_eof()  # a half-close: the server sees the request end, as with a client that gave up
    answer = await reader.read()
    writer.close()
    if not answer:
        return 0, None
    head, _, body = answer.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body) if body else None
