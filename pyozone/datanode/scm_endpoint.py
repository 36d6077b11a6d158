"""The datanode's connection to one SCM: getVersion, then register, then the heartbeat loop (Ozone's
VersionEndpointTask, RegisterEndpointTask, HeartbeatEndpointTask);
a datanode of an SCM HA service runs one per SCM (scm_connections.py).

SCM being unreachable is never fatal: every call is retried with a capped exponential backoff, and the
log says when SCM goes away and when it comes back, not every attempt. What is fatal is what retrying
cannot fix: SCM refusing the datanode, or SCM answering for another cluster.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

from pyozone import __version__, rpc
from pyozone.common.net import HostPort
from pyozone.common.tls import TlsStore
from pyozone.datanode.command_queue import CommandQueue
from pyozone.datanode.errors import DatanodeError
from pyozone.datanode.identity import IdentityStore
from pyozone.datanode.pipelines import PipelineSet
from pyozone.datanode.reports import LONE_SCM, Outgoing, PendingReports, Periodic
from pyozone.datanode.settings import HeartbeatSettings
from pyozone.datanode.storage import ContainerSet, VolumeSet
from pyozone.datanode.storage.volume import LAYOUT_VERSION
from pyozone.hdds.commands import ReregisterCommand
from pyozone.hdds.datanode import LayoutVersion
from pyozone.hdds.messages import Heartbeat
from pyozone.hdds.security.x509 import CertRole
from pyozone.protocol import (
    MAX_HEARTBEAT_MESSAGE_BYTES,
    ProtocolError,
    RegisterRequest,
    VersionResponse,
    heartbeat_to_proto,
    register_request_to_proto,
    register_response_from_proto,
    version_response_from_proto,
)
from pyozone.protocol.heartbeat import (
    DATANODE_SERVICE,
    heartbeat_commands_from_proto,
    version_request_to_proto,
)

if TYPE_CHECKING:
    from pyozone.proto.ScmServerDatanodeHeartbeatProtocol_pb2 import SCMHeartbeatResponseProto

log = logging.getLogger(__name__)
T = TypeVar("T")

DATANODE_LAYOUT = LayoutVersion(LAYOUT_VERSION, LAYOUT_VERSION)


async def wait_or_stop(stop: asyncio.Event, seconds: float, wake: asyncio.Event | None = None) -> None:
    """Sleeps `seconds`, returning early when `stop` (or `wake`) is set."""
    events = [stop] if wake is None else [stop, wake]
    waiters = [asyncio.ensure_future(e.wait()) for e in events]
    try:
        await asyncio.wait(waiters, timeout=max(0.0, seconds), return_when=asyncio.FIRST_COMPLETED)
    finally:
        for w in waiters:
            w.cancel()


async def until_stopped(coro: Coroutine[Any, Any, T], stop: asyncio.Event) -> T | None:
    """Runs `coro`, cancelling it once `stop` is set (None then): an RPC to an unresponsive SCM must not
    hold up a shutdown for its whole timeout."""
    task = asyncio.ensure_future(coro)
    stopped = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait([task, stopped], return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopped.cancel()
    if task.done():
        return task.result()
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    return None


class ScmEndpoint:
    """One channel to SCM's datanode protocol; calls return None on failure, after logging the first
    failure of a run of them (and, later, the recovery). The channel reconnects by itself, its backoff
    capped at a second, and a renewed certificate is used by its next connection."""

    def __init__(self, address: HostPort, heartbeat: HeartbeatSettings, tls: TlsStore | None = None) -> None:
        """`tls`: the datanode's certificate, when hdds.grpc.tls.enabled."""
        self.address = address
        self._heartbeat = heartbeat
        self._channel = rpc.Channel(
            address, rpc.ChannelSettings(MAX_HEARTBEAT_MESSAGE_BYTES), tls, CertRole.SCM
        )
        self._stub: Any = rpc.Stub(self._channel, rpc.ServiceSpec.of(DATANODE_SERVICE))
        self._reachable: bool | None = None
        self._failures = 0

    async def call(self, method: str, request: Any) -> Any | None:
        call = getattr(self._stub, method)
        try:
            response = await call(request, timeout=self._heartbeat.rpc_timeout_ms / 1000)
        except rpc.RpcError as e:
            self._failures += 1
            if self._reachable is not False:
                log.warning(
                    "SCM at %s: %s failed (%s: %s); retrying with backoff up to %.1fs",
                    self.address, method, e.code().name, e.details(), self._max_delay(),
                )  # fmt: skip
            self._reachable = False
            return None
        if self._reachable is False:
            log.info("SCM at %s answers again", self.address)
        self._reachable, self._failures = True, 0
        return response

    def _max_delay(self) -> float:
        return max(self._heartbeat.interval_ms, self._heartbeat.initial_interval_ms) / 1000

    def retry_delay(self) -> float:
        """initial interval, doubling per consecutive failure, capped at the heartbeat interval."""
        exponent = min(max(0, self._failures - 1), 30)
        return min(self._heartbeat.initial_interval_ms / 1000 * 2**exponent, self._max_delay())

    async def close(self) -> None:
        await self._channel.close()


async def ask_version(endpoint: ScmEndpoint) -> VersionResponse | None:
    """One getVersion: SCM's cluster id and layout, None when SCM did not answer or sent what cannot be
    read."""
    proto = await endpoint.call("getVersion", version_request_to_proto())
    if proto is None:
        return None
    try:
        return version_response_from_proto(proto)
    except ProtocolError as e:
        log.error("SCM at %s sent an unreadable version response: %s", endpoint.address, e)
        return None


async def fetch_version(endpoint: ScmEndpoint, stop: asyncio.Event) -> VersionResponse | None:
    """SCM's cluster id and layout, waiting for SCM as long as it takes; None once `stop` is set."""
    while not stop.is_set():
        version = await ask_version(endpoint)
        if version is not None:
            return version
        await wait_or_stop(stop, endpoint.retry_delay())
    return None


class HeartbeatLoop:
    """Check the SCM's cluster id, register, then heartbeat every interval (or at once when a report is
    urgent); a reregister command (SCM restarted or forgot this node) goes back to registration with full
    reports. `scm` names this SCM's outbox in `reports`; the command queue is the datanode's, shared by
    the loops of every SCM (it refuses a command of a term older than one any SCM told of)."""

    def __init__(
        self,
        endpoint: ScmEndpoint,
        heartbeat: HeartbeatSettings,
        cluster_id: str,
        identity: IdentityStore,
        volumes: VolumeSet,
        containers: ContainerSet,
        pipelines: PipelineSet,
        reports: PendingReports,
        queue: CommandQueue,
        observe: Callable[[float, bool], None] = lambda seconds, ok: None,
        scm: str = LONE_SCM,
        version_checked: bool = False,
    ) -> None:
        """`observe(seconds, ok)`: each heartbeat's round trip, and whether SCM answered it (metrics);
        `version_checked`: this SCM's cluster id is already known to be the datanode's."""
        self.endpoint = endpoint
        self.scm = scm
        self.version_checked = version_checked
        self.heartbeat = heartbeat
        self.cluster_id = cluster_id
        self.identity = identity
        self.volumes = volumes
        self.containers = containers
        self.pipelines = pipelines
        self.reports = reports
        self.queue = queue
        self.registered = False
        self.registrations = 0
        self.heartbeats = 0
        self.last_heartbeat_ms = 0
        """When SCM last answered a heartbeat (epoch ms; 0: not yet)."""
        self._observe = observe
        self._loop = asyncio.get_running_loop()
        self._wake = asyncio.Event()

    def trigger_heartbeat(self) -> None:
        """Thread-safe: the next heartbeat goes now rather than at the end of the interval."""
        with contextlib.suppress(RuntimeError):  # the loop has closed: the datanode is shutting down
            self._loop.call_soon_threadsafe(self._wake.set)

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            if not self.version_checked:
                ok = await self._check_version()
            else:
                ok = await (self._heartbeat() if self.registered else self._register())
            if not ok:
                await wait_or_stop(stop, self.endpoint.retry_delay())
            elif self.registered:  # else a reregister command arrived: register again at once
                await wait_or_stop(stop, self.heartbeat.interval_ms / 1000, self._wake)

    # ------------------------------------------------------------------ registration
    async def _check_version(self) -> bool:
        """getVersion: an SCM answering for another cluster is fatal (Ozone's VersionEndpointTask)."""
        version = await ask_version(self.endpoint)
        if version is None:
            return False
        if version.cluster_id != self.cluster_id:
            raise DatanodeError(
                f"datanode {self.identity.uuid} belongs to cluster {self.cluster_id}, SCM at "
                f"{self.endpoint.address} manages cluster {version.cluster_id}"
            )
        self.version_checked = True
        return True

    async def _register(self) -> bool:
        details = self.identity.identity.details()
        built_at = self.reports.now()
        self.reports.discard_incremental(self.scm)
        request = RegisterRequest(
            datanode=details,
            node_report=self.volumes.node_report(),
            container_report=tuple(self.containers.replica_reports()),
            pipeline_reports=self.pipelines.reports(),
            layout=DATANODE_LAYOUT,
            setup_time_ms=self.identity.identity.setup_time_ms,
            revision=__version__,
            cluster_id=self.cluster_id,
        )
        proto = await self.endpoint.call("register", register_request_to_proto(request))
        if proto is None:
            return False
        try:
            response = register_response_from_proto(proto)
        except ProtocolError as e:
            log.error("SCM at %s sent an unreadable registration response: %s", self.endpoint.address, e)
            return False
        if not response.success:
            raise DatanodeError(
                f"SCM at {self.endpoint.address} refused datanode {details.uuid}: {response.error}"
            )
        if response.cluster_id != self.cluster_id:
            raise DatanodeError(
                f"datanode {details.uuid} belongs to cluster {self.cluster_id}, SCM at "
                f"{self.endpoint.address} is now cluster {response.cluster_id}"
            )
        self.reports.mark_sent(frozenset(Periodic), built_at, self.scm)
        self.registered = True
        self.registrations += 1
        log.info(
            "registered with SCM at %s as %s (%s, %d containers, %d pipelines)",
            self.endpoint.address, details.uuid, details.ip_address, len(request.container_report),
            len(request.pipeline_reports),
        )  # fmt: skip
        return True

    # ------------------------------------------------------------------ heartbeat
    def _build(self, out: Outgoing) -> Heartbeat:
        details = self.identity.identity.details()
        return Heartbeat(
            datanode=details,
            node_report=self.volumes.node_report() if Periodic.NODE in out.periodic else None,
            container_report=(
                tuple(self.containers.replica_reports()) if Periodic.CONTAINERS in out.periodic else None
            ),
            incremental_container_reports=out.incremental,
            command_status_reports=out.statuses,
            container_actions=out.actions,
            pipeline_actions=out.pipeline_actions,
            pipeline_reports=self.pipelines.reports() if Periodic.PIPELINES in out.periodic else None,
            layout=DATANODE_LAYOUT,
            command_queue_report=self.queue.queue_report(),
            persisted_op_state=details.persisted_op_state,
        )

    async def _heartbeat(self) -> bool:
        self._wake.clear()
        out = self.reports.take(self.scm)
        try:
            request = heartbeat_to_proto(self._build(out))
        except ProtocolError:
            log.exception("cannot encode the heartbeat; its reports are dropped")
            return False
        started = time.perf_counter()
        proto = await self.endpoint.call("sendHeartbeat", request)
        self._observe(time.perf_counter() - started, proto is not None)
        if proto is None:
            self.reports.put_back(out, self.scm)
            return False
        self.heartbeats += 1
        self.last_heartbeat_ms = time.time_ns() // 1_000_000
        self._process(proto)
        return True

    def _process(self, proto: SCMHeartbeatResponseProto) -> None:
        response, unreadable = heartbeat_commands_from_proto(proto)
        for e in unreadable:
            log.error("SCM sent a command this datanode cannot read; skipped: %s", e)
        self.queue.observe_term(max([response.term, *(c.term for c in response.commands)]))
        for command in response.commands:
            if isinstance(command, ReregisterCommand):
                if self.registered:
                    log.info("SCM at %s asks this datanode to register again", self.endpoint.address)
                self.registered = False
            else:
                self.queue.submit(command)
