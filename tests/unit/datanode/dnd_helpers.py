"""What the datanode daemon tests share: a fake SCM (an rpc servicer on its own thread and event loop
that records every request and answers with scripted commands), a datanode configuration on 127.0.0.1
with port 0 and millisecond intervals, an in-process datanode runner, and a wait for a matching heartbeat
(polling through tests/polling.py)."""

from __future__ import annotations

import asyncio
import functools
import threading
import time
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from pyozone import rpc
from pyozone.config import OzoneConfiguration
from pyozone.datanode.daemon import Datanode
from pyozone.datanode.settings import DatanodeSettings
from pyozone.datanode.storage import BlockData, ChecksumType, ChunkInfo, KeyValueContainer, compute
from pyozone.datanode.xceiver.allocations import ScmContainer
from pyozone.hdds.commands import ReregisterCommand, SCMCommand
from pyozone.hdds.container import ContainerInfo
from pyozone.hdds.datanode import LayoutVersion
from pyozone.hdds.ids import RATIS_THREE, BlockID
from pyozone.hdds.messages import Heartbeat
from pyozone.hdds.states import LifeCycleState
from pyozone.proto import ScmServerDatanodeHeartbeatProtocol_pb2 as dn_pb
from pyozone.protocol import (
    MAX_HEARTBEAT_MESSAGE_BYTES,
    HeartbeatResponse,
    RegisterRequest,
    RegisterResponse,
    VersionResponse,
    heartbeat_from_proto,
    heartbeat_response_to_proto,
    register_request_from_proto,
    register_response_to_proto,
    version_response_to_proto,
)
from tests.polling import wait_for_async
from tests.unit.datanode.storage.dn_helpers import NO_FREE_SPACE_FLOOR

CLUSTER = "CID-dnd-test"


class FakeScm:
    """SCM's datanode protocol, scripted. Heartbeats from a datanode it has not registered get a
    reregisterCommand, as the real SCM answers them."""

    def __init__(self, cluster_id: str = CLUSTER) -> None:
        self.cluster_id = cluster_id
        self.register_error = ""
        self.down = False  # answer every call with UNAVAILABLE
        self.refused = 0  # calls answered so
        self.term = 0
        self.versions = 0
        self.registrations: list[RegisterRequest] = []
        self.heartbeats: list[tuple[float, Heartbeat]] = []
        self.port = 0
        self._known: set[str] = set()
        self._commands: list[tuple[str | None, SCMCommand]] = []
        self._lock = threading.Lock()
        self._loop = asyncio.new_event_loop()
        self._server: rpc.Server | None = None
        self._thread = threading.Thread(target=self._main, name="fake-scm", daemon=True)

    # ------------------------------------------------------------------ lifecycle
    def __enter__(self) -> FakeScm:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(5)
        return self

    def __exit__(self, *_: object) -> None:
        if self._server is not None:
            asyncio.run_coroutine_threadsafe(self._server.stop(0), self._loop).result(5)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)
        self._loop.close()

    def _main(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_forever()

    async def _start(self) -> None:
        self._server = rpc.Server(rpc.ServerSettings(MAX_HEARTBEAT_MESSAGE_BYTES))
        self._server.add_service(
            rpc.service(dn_pb, "StorageContainerDatanodeProtocolService"), _Servicer(self)
        )
        self.port = await self._server.start("127.0.0.1", 0)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    # ------------------------------------------------------------------ scripting and inspection
    def send(self, *commands: SCMCommand, to: str | None = None) -> None:
        """Commands for the next heartbeat response (of datanode `to`, or whichever beats first)."""
        with self._lock:
            self._commands.extend((to, command) for command in commands)

    def forget(self, uuid: str) -> None:
        """As an SCM restart does: the next heartbeat is answered with reregister."""
        with self._lock:
            self._known.discard(uuid)

    def beats(self, since: float = 0.0) -> list[Heartbeat]:
        with self._lock:
            return [hb for at, hb in self.heartbeats if at >= since]

    def beat_times(self) -> list[tuple[float, Heartbeat]]:
        with self._lock:
            return list(self.heartbeats)


class _Servicer:
    def __init__(self, scm: FakeScm) -> None:
        self.scm = scm

    async def _check_up(self, context: rpc.CallContext) -> None:
        if self.scm.down:
            self.scm.refused += 1
            await context.abort(rpc.StatusCode.UNAVAILABLE, "fake SCM is down")

    async def getVersion(self, request: Any, context: rpc.CallContext) -> Any:
        await self._check_up(context)
        self.scm.versions += 1
        return version_response_to_proto(VersionResponse(self.scm.cluster_id, "scm-1", LayoutVersion(1, 1)))

    async def register(self, request: Any, context: rpc.CallContext) -> Any:
        await self._check_up(context)
        req = register_request_from_proto(request)
        scm = self.scm
        with scm._lock:
            scm.registrations.append(req)
            if not scm.register_error:
                scm._known.add(req.datanode.uuid)
        return register_response_to_proto(
            RegisterResponse(scm.cluster_id, req.datanode.uuid, error=scm.register_error)
        )

    async def sendHeartbeat(self, request: Any, context: rpc.CallContext) -> Any:
        await self._check_up(context)
        hb = heartbeat_from_proto(request)
        scm = self.scm
        with scm._lock:
            scm.heartbeats.append((time.monotonic(), hb))
            if hb.datanode.uuid in scm._known:
                uuid = hb.datanode.uuid
                commands = tuple(c for to, c in scm._commands if to in (None, uuid))
                scm._commands = [(to, c) for to, c in scm._commands if to not in (None, uuid)]
            else:
                commands = (ReregisterCommand(),)
        return heartbeat_response_to_proto(HeartbeatResponse(hb.datanode.uuid, commands, scm.term))


def allocated_on(pipeline_id: str) -> Callable[[int], ScmContainer]:
    """A ContainerLookup by which SCM allocated every container, OPEN, on `pipeline_id`."""
    return lambda cid: ScmContainer(
        ContainerInfo(cid, LifeCycleState.OPEN, 0, pipeline_id, RATIS_THREE, "om")
    )


# ---------------------------------------------------------------------- the datanode under test
def dn_conf(root: Path, scm_address: str, **overrides: str) -> OzoneConfiguration:
    """Two data volumes, loopback, port 0 everywhere and short intervals; `overrides` use '_' for '.'."""
    values = {
        "ozone.scm.datanode.address": scm_address,
        "ozone.metadata.dirs": str(root / "meta"),
        "hdds.datanode.dir": f"{root / 'disk0'},{root / 'disk1'}",
        "hdds.container.ipc.port": "0",
        "hdds.datanode.replication.port": "0",
        "hdds.container.ratis.ipc.port": "0",
        "hdds.container.ratis.datastream.port": "0",
        "hdds.datanode.http-address": "127.0.0.1:0",
        "hdds.heartbeat.interval": "100ms",
        "hdds.heartbeat.initial-interval": "50ms",
        "ozone.scm.heartbeat.rpc-timeout": "2s",
        "ozone.scm.container.size": "1MB",
        "ozone.scm.block.size": "256KB",
        "hdds.container.scrub.enabled": "false",
        "hdds.ratis.leader.election.minimum.timeout.duration": "300ms",  # pipelines elect quickly
        **NO_FREE_SPACE_FLOOR,
    }
    values.update(overrides)
    return OzoneConfiguration(values)


def cli_overrides(conf: OzoneConfiguration) -> list[str]:
    """The configuration as `-D key=value` arguments for `pyozone datanode`."""
    return [f"-D{name}={conf.get_raw(name)}" for name in conf.names() if conf.source(name) == "override"]


def new_datanode(conf: OzoneConfiguration, **kwargs: Any) -> Datanode:
    """A datanode of `conf`, its settings built as `pyozone datanode` builds them."""
    return Datanode(conf, DatanodeSettings.from_conf(conf), **kwargs)


@asynccontextmanager
async def running(
    conf: OzoneConfiguration, until_started: bool = True, **kwargs: Any
) -> AsyncIterator[Datanode]:
    """A running datanode, stopped and awaited on exit. With `until_started`, it has also heard from
    SCM and bound its servers; else only its HTTP endpoint is known to be up."""
    datanode = new_datanode(conf, **kwargs)
    stop = asyncio.Event()
    task = asyncio.create_task(datanode.run(stop))
    up = (lambda: datanode.started.is_set()) if until_started else (lambda: datanode.http_port)
    await wait_for_async(lambda: up() or task.done(), what="datanode start")
    if task.done():
        await task  # raises what stopped it
    try:
        yield datanode
    finally:
        stop.set()
        await asyncio.wait_for(task, 15)


async def wait_for_beat(
    scm: FakeScm, predicate: Callable[[Heartbeat], object], since: float = 0.0, timeout: float = 10.0
) -> Heartbeat:
    """The first heartbeat at or after `since` that satisfies `predicate`."""
    found = await wait_for_async(
        lambda: [hb for hb in scm.beats(since) if predicate(hb)], timeout, "a matching heartbeat"
    )
    return found[0]


def async_test(fn: Callable[..., Coroutine[Any, Any, None]]) -> Callable[..., None]:
    """Runs an async test body in a fresh event loop (there is no pytest-asyncio here)."""

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> None:
        asyncio.run(asyncio.wait_for(fn(*args, **kwargs), 30))

    return run


def put_block(container: KeyValueContainer, local_id: int, data: bytes, bcsid: int) -> None:
    """One single-chunk block, committed at `bcsid`."""
    block_id = BlockID(container.container_id, local_id)
    chunk = ChunkInfo(f"{local_id}_chunk_0", 0, len(data), compute(data, ChecksumType.CRC32, 1024))
    container.write_chunk(block_id, chunk, data)
    container.put_block(BlockData(block_id, (chunk,)), bcsid)
