"""`pyozone datanode`: wiring and lifecycle of one datanode process.

Start-up follows Ozone's datanode state machine: with ozone.security.enabled, obtain the datanode's
certificate from SCM's CA (first start) and renew it in the background; learn the cluster from SCM
(getVersion) and refuse another cluster's SCM before touching any data; format or load the volumes for that
cluster; load the containers; bind the data (STANDALONE) and replication servers and advertise the ports
actually bound; then register and heartbeat, with every SCM of an HA service (scm_connections.py). With
hdds.grpc.tls.enabled every port (RPC, datastream, HTTP) and every channel (to SCM, pipeline followers,
replication and EC peers) is mutual TLS. Shutdown (SIGTERM/SIGINT) stops accepting RPCs, gives running RPCs
and commands a grace period, waits for in-flight storage work and closes the volumes' databases.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import signal
import socket
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from pyozone import rpc
from pyozone.common.http_json import JsonResponse
from pyozone.common.http_server import HttpServer
from pyozone.common.net import HostPort, address, parse_host_port, scm_client_address, scm_datanode_address
from pyozone.common.scm_ha import ScmProtocol, scm_service_id, scm_service_nodes
from pyozone.common.tls import TlsStore
from pyozone.common.tls_mode import mtls_enabled, security_enabled, service_hosts
from pyozone.common.web.app import daemon_app
from pyozone.common.web.metrics import MetricsSystem
from pyozone.common.web.ops import administrators_only, readers_only
from pyozone.config import OzoneConfiguration
from pyozone.config.dirs import metadata_dir
from pyozone.datanode.addresses import ANY, advertised_ip, bind_host
from pyozone.datanode.command_queue import CommandQueue
from pyozone.datanode.commands import CommandContext, build_handlers
from pyozone.datanode.commands.replicate import Push
from pyozone.datanode.datastream import DatastreamServer
from pyozone.datanode.errors import DatanodeError
from pyozone.datanode.identity import IdentityStore
from pyozone.datanode.metrics import DatanodeMetrics
from pyozone.datanode.pipelines import PipelineSet
from pyozone.datanode.ratis import PipelineGroups, blocks_in_logs
from pyozone.datanode.replication.push import push_container
from pyozone.datanode.replication.service import SERVER_SETTINGS as REPLICATION_SERVER_SETTINGS
from pyozone.datanode.replication.service import ReplicationService, add_replication_service
from pyozone.datanode.reports import PendingReports, Periodic
from pyozone.datanode.scanner_service import ContainerScannerService, RecoveringScrubService
from pyozone.datanode.scm_connections import ScmConnections
from pyozone.datanode.scm_endpoint import until_stopped
from pyozone.datanode.settings import DatanodeSettings
from pyozone.datanode.storage import ContainerSet, VolumeSet
from pyozone.datanode.storage.witnessed import WitnessedContainers
from pyozone.datanode.traffic import TRAFFIC
from pyozone.datanode.volume_monitor import VolumeMonitor
from pyozone.datanode.web import UI, datanode_api
from pyozone.datanode.xceiver.allocations import (
    LOOKUP_FAILOVER_S,
    ContainerAllocations,
    ContainerLookup,
    ScmContainerLookup,
)
from pyozone.datanode.xceiver.dispatcher import Dispatcher
from pyozone.datanode.xceiver.service import XceiverService, add_xceiver_service, xceiver_server
from pyozone.datanode.xceiver.tokens import DatanodeTokens
from pyozone.framework.scm_failover import ScmNodes
from pyozone.hdds.messages import (
    ContainerAction,
    ContainerActionReason,
    ContainerReplicaReport,
    PipelineAction,
)
from pyozone.hdds.replication_limits import out_of_service_limit
from pyozone.hdds.security.x509 import CertRole
from pyozone.hdds.states import NodeOperationalState, ReplicaState
from pyozone.hdds.store import StoreError
from pyozone.ratis_server.transport import RaftDivisions
from pyozone.rpc.loop import run as run_loop
from pyozone.security.cert_client import CertRenewer, daemon_tls
from pyozone.security.secret_keys import SecretKeyCache

log = logging.getLogger(__name__)

SHUTDOWN_GRACE_S = 5.0
"""Running RPCs, commands and background services get this long after SIGTERM; then they are cancelled
(`pyozone cluster down` waits 15 s before it kills)."""
BASE_WORKERS = 32
"""Executor threads besides one per replication stream: client I/O, command handlers, scanner, checks."""


@dataclass(frozen=True, slots=True)
class Ports:
    standalone: int
    ratis: int
    replication: int
    http: int
    datastream: int = 0  # 0: hdds.container.ratis.datastream.enabled is false

    def advertised(self) -> dict[str, int]:
        """By Ozone's DatanodeDetails port names."""
        ports = {
            "STANDALONE": self.standalone,
            "RATIS": self.ratis,
            "REPLICATION": self.replication,
            "HTTP": self.http,
        }
        if self.datastream:
            ports["RATIS_DATASTREAM"] = self.datastream
        return ports


class Datanode:
    """One datanode; `run(stop)` returns once `stop` is set and everything is shut down.

    The components are attributes once `started` is set, so tests and tools can observe them. This is the
    datanode's edge: it alone reads the configuration, for what pyozone.common and pyozone.security
    resolve (SCM's addresses, security, the web server); every component takes its group of `settings`.
    """

    def __init__(
        self,
        conf: OzoneConfiguration,
        settings: DatanodeSettings,
        push: Push = push_container,
        lookup: ContainerLookup | None = None,
    ) -> None:
        """`settings`: DatanodeSettings.from_conf(conf), built once by the caller (`pyozone datanode` builds
        it before it logs anything); `lookup`: SCM's record of a container a write would create (default:
        SCM's getContainer, once the datanode has its certificate)."""
        self.conf = conf
        self.settings = settings
        self.metrics = MetricsSystem("HddsDatanode")
        self.dn_metrics = DatanodeMetrics(self.metrics)
        self.secure = security_enabled(conf)
        self.mtls = mtls_enabled(conf)  # refused here when it comes without security
        self.push = push
        self.lookup = lookup
        self.identity = IdentityStore(settings.storage)
        self.scm_nodes = scm_datanode_nodes(conf)
        """The SCMs the datanode reports to: every SCM of the service, or the lone SCM."""
        self.bind_host = bind_host(scm_hosts(conf))
        self.certificate: TlsStore | None = None
        """The datanode's certificate (ozone.security.enabled); `tls` is it when hdds.grpc.tls.enabled."""
        self.tls: TlsStore | None = None
        self.tokens: DatanodeTokens | None = None
        """Block and container tokens: what requests must carry, and what this datanode signs for its own."""
        self.started = asyncio.Event()
        self.phase = "starting"
        self.http_port = 0
        self.scm_connections: ScmConnections | None = None
        self.volumes: VolumeSet
        self.containers: ContainerSet
        self.witnessed: WitnessedContainers | None = None
        self.pipelines: PipelineSet
        self.reports: PendingReports
        self.queue: CommandQueue
        self.dispatcher: Dispatcher
        self.groups: PipelineGroups
        self.scanner: ContainerScannerService
        self.ports: Ports

    @property
    def uuid(self) -> str:
        return self.identity.uuid

    @property
    def scm_addresses(self) -> tuple[HostPort, ...]:
        """Every SCM's datanode address, in the service's order."""
        return tuple(e.address for e in self.scm_nodes.endpoints)

    @property
    def registered(self) -> bool:
        return self.scm_connections is not None and self.scm_connections.registered

    async def run(self, stop: asyncio.Event) -> None:
        """Raises DatanodeError for what the datanode cannot run with (wrong cluster, no usable disk)."""
        renewer = None
        if self.secure:
            self.phase = "waiting for a certificate"
            renewer = await until_stopped(self._obtain_certificate(), stop)
            if renewer is None:
                return
        if self.lookup is None:
            self.lookup = ScmContainerLookup(scm_lookup_nodes(self.conf), tls=self.tls)
        secret_keys = functools.partial(SecretKeyCache.connect, self.conf)
        self.tokens = DatanodeTokens.connect(self.settings.tokens, self.certificate, secret_keys)
        if self.tls is not None or self.tokens is not None:
            signer = self.tokens.signer if self.tokens is not None else None
            self.push = functools.partial(self.push, tls=self.tls, tokens=signer)
        http = HttpServer(
            daemon_app(
                self.metrics,
                self.conf,
                {"/ready": self._ready, "/health": self._health, "/traffic": self._traffic},
                datanode_api(self, readers_only(self.conf)),
                UI,
                administrators_only(self.conf),
            )
        )
        self.http_port = await self._start_http(http)  # pollers see 503, not a refused connection
        scms = self.scm_connections = ScmConnections(self.scm_nodes, self.settings.heartbeat, self.tls)
        log.info("datanode %s starting; SCM: %s", self.uuid, scms.describe())
        renewing = asyncio.create_task(renewer.run(stop), name="cert-renewer") if renewer else None
        try:
            self.phase = "waiting for SCM"
            answer = await until_stopped(scms.fetch_version(stop), stop)
            if answer is None:
                return
            answered, version = answer
            self.identity.check_cluster(version.cluster_id, str(answered))
            await self._run_storage(version.cluster_id, scms, stop)
        finally:
            self.phase = "stopping"
            if renewing is not None:
                renewing.cancel()
                await asyncio.gather(renewing, return_exceptions=True)
            if self.tokens is not None:
                self.tokens.close()
            await scms.close()
            await http.stop()
        log.info("datanode %s stopped", self.uuid)

    async def _obtain_certificate(self) -> CertRenewer:
        """The datanode's certificate from SCM's CA (waiting for SCM), named by the address it advertises
        and naming its UUID, with the renewer that keeps it valid."""
        hostname = self.settings.ports.hostname or socket.gethostname()
        hosts = service_hosts(advertised_ip(self.scm_addresses, self.bind_host), hostname)
        directory = metadata_dir(self.conf, "datanode", "its key pair and certificate")
        self.certificate = await asyncio.to_thread(
            daemon_tls, self.conf, CertRole.DATANODE, directory, hosts, datanode=self.uuid
        )
        if self.mtls:
            self.tls = self.certificate
        return CertRenewer(self.conf, self.certificate, CertRole.DATANODE, hosts, datanode=self.uuid)

    # ------------------------------------------------------------------ storage and services
    async def _run_storage(self, cluster_id: str, scms: ScmConnections, stop: asyncio.Event) -> None:
        self.phase = "loading volumes"
        loop = asyncio.get_running_loop()
        settings = self.settings
        limits = settings.admission
        most_workers = out_of_service_limit(limits.replication_streams, limits.out_of_service_factor)
        executor = ThreadPoolExecutor(BASE_WORKERS + most_workers, thread_name_prefix="dn")
        self.volumes = await loop.run_in_executor(
            executor, lambda: VolumeSet(settings.storage, settings.space, self.uuid, cluster_id)
        )
        self.dn_metrics.attach(self.volumes.data_volumes)
        try:
            if not self.volumes.healthy_volumes():
                reasons = "; ".join(f"{v.root}: {v.failure_reason}" for v in self.volumes.data_volumes)
                raise DatanodeError(f"datanode {self.uuid} has no healthy data volume ({reasons})")
            try:
                self.witnessed = await loop.run_in_executor(
                    executor, lambda: WitnessedContainers(settings.storage.identity_dir())
                )
                ratis_dir = settings.storage.ratis_storage_dir()
                logged = await loop.run_in_executor(executor, blocks_in_logs, ratis_dir)
                self.containers = await loop.run_in_executor(
                    executor, lambda: ContainerSet(self.volumes, self.witnessed, logged=logged)
                )
            except StoreError as e:
                raise DatanodeError(str(e)) from None
            self.reports = PendingReports(settings.reports, scms=scms.names)
            self.volumes.on_full = self.reports.volume_full
            self.containers.on_change(self._replica_changed)
            self.pipelines = PipelineSet(settings.storage.identity_dir(), self.uuid)
            assert self.lookup is not None  # set in run()
            self.dispatcher = Dispatcher(
                self.containers,
                self.uuid,
                self._container_full,
                settings.space.close_threshold,
                ContainerAllocations(self.lookup, self.pipelines),
                self.tokens.verifier if self.tokens is not None else None,
            )
            divisions = RaftDivisions(
                HostPort(self.bind_host, settings.ports.ratis_port),
                self.tls, CertRole.DATANODE, settings.ratis.appender_queue_bytes,
            )  # fmt: skip
            self.groups = PipelineGroups(
                self.uuid, ratis_dir, self.dispatcher, executor,
                self._pipeline_failed, settings.ratis, divisions, self._pipeline_leader_changed,
            )  # fmt: skip
            self.pipelines.leading = self.groups.leading
            self.queue = self._command_queue(executor)
            self.scanner = ContainerScannerService(self.containers, settings.scanner, executor)
            parts = (self.volumes, self.containers, self.pipelines, self.queue, self.scanner)
            self.dn_metrics.watch(*parts, self.dispatcher.ops.counts, self.groups.raft_statuses)
            await self._serve(cluster_id, scms, executor, stop)
        finally:
            await loop.run_in_executor(None, lambda: executor.shutdown(wait=True, cancel_futures=True))
            _close_volumes(self.volumes)
            if self.witnessed is not None:
                self.witnessed.close()
            if isinstance(self.lookup, ScmContainerLookup):
                self.lookup.close()

    def _command_queue(self, executor: ThreadPoolExecutor) -> CommandQueue:
        ctx = CommandContext(
            self.containers, self.pipelines, self.identity, self.reports, executor, self._op_state_changed,
            self.groups, self.tls, self.tokens.signer if self.tokens is not None else None,
        )  # fmt: skip
        in_service = self.identity.identity.persisted_op_state is NodeOperationalState.IN_SERVICE
        return CommandQueue(
            build_handlers(ctx, self.push), self.settings.admission, out_of_service=not in_service
        )

    async def _serve(
        self,
        cluster_id: str,
        scms: ScmConnections,
        executor: ThreadPoolExecutor,
        stop: asyncio.Event,
    ) -> None:
        xceiver = xceiver_server()
        add_xceiver_service(xceiver, XceiverService(self.dispatcher, executor, groups=self.groups))
        replication = rpc.Server(REPLICATION_SERVER_SETTINGS)
        verifier = self.tokens.verifier if self.tokens is not None else None
        add_replication_service(replication, ReplicationService(self.containers, executor, tokens=verifier))
        scms.start(
            cluster_id, self.identity, self.volumes, self.containers, self.pipelines, self.reports,
            self.queue, self.dn_metrics.heartbeat,
        )  # fmt: skip
        datastream = self._datastream()
        ports = self.settings.ports
        try:
            self.ports = Ports(
                await self._serve_rpc(xceiver, ports.container_port, "hdds.container.ipc.port"),
                await self._serve_raft(self.groups.divisions),
                await self._serve_rpc(replication, ports.replication_port, "hdds.datanode.replication.port"),
                self.http_port,
                self._listen(datastream),
            )
            for membership in self.pipelines.all():  # once the RATIS port listens: its members rejoin
                await self.groups.join(membership, rejoin=True)
            self._advertise(cluster_id)
            self.phase = "running"
            self.started.set()
            log.info("datanode %s serving on %s: %s", self.uuid, self.bind_host, self.ports.advertised())
            check_interval_s = self.settings.reports.node_interval_ms / 1000
            monitor = VolumeMonitor(
                self.volumes, self.containers, self.reports, executor, check_interval_s, self.groups.fail
            )
            recovering = RecoveringScrubService(self.containers, self.settings.recovering, executor)
            background = {
                "volume-monitor": monitor.run(stop),
                "container-scanner": self.scanner.run(stop),
                "recovering-scrubber": recovering.run(stop),
            }
            await _supervise(scms.run(stop), background, stop)
        finally:
            self.phase = "stopping"
            log.info("datanode %s shutting down", self.uuid)
            if datastream is not None:  # first: no new stream starts while the rest stops
                datastream.stop()
            await asyncio.gather(
                xceiver.stop(SHUTDOWN_GRACE_S),
                replication.stop(SHUTDOWN_GRACE_S),
                self.queue.close(SHUTDOWN_GRACE_S),
                self.groups.close(),
            )

    def _datastream(self) -> DatastreamServer | None:
        ports = self.settings.ports
        if not ports.datastream_enabled:
            return None
        timeout_s = self.settings.ratis.request_timeout_ms / 1000
        return DatastreamServer(
            self.dispatcher, self.bind_host, ports.datastream_port, timeout_s, tls=self.tls
        )

    def _listen(self, datastream: DatastreamServer | None) -> int:
        if datastream is None:
            return 0
        try:
            return datastream.start()
        except OSError as e:
            target = f"{self.bind_host}:{self.settings.ports.datastream_port}"
            raise DatanodeError(
                f"cannot listen on {target} (hdds.container.ratis.datastream.port): {e}"
            ) from None

    async def _serve_rpc(self, server: rpc.Server, port: int, port_key: str) -> int:
        """Listens now so the advertised port is the real one (port 0 picks a free port)."""
        try:
            return await server.start(self.bind_host, port, self.tls)
        except OSError as e:
            target = f"{self.bind_host}:{port}"
            raise DatanodeError(f"cannot listen on {target} ({port_key}): {e.strerror or e}") from None

    async def _serve_raft(self, divisions: RaftDivisions) -> int:
        """The RATIS port (hdds.container.ratis.ipc.port), every pipeline's Raft member on it."""
        try:
            return await divisions.start()
        except OSError as e:
            target = f"{divisions.address}"
            raise DatanodeError(
                f"cannot listen on {target} (hdds.container.ratis.ipc.port): {e.strerror or e}"
            ) from None

    async def _start_http(self, http: HttpServer) -> int:
        """hdds.datanode.http-address; its wildcard default follows the bind rule of the data ports."""
        where = address(self.conf, "hdds.datanode.http-address")
        host = self.bind_host if where.host == ANY else where.host
        if self.conf.source("hdds.datanode.http-bind-host") != "default":
            host = str(self.conf.get("hdds.datanode.http-bind-host"))
        context = self.tls.server_context() if self.tls is not None else None
        try:
            return await http.start(host, where.port, ssl_context=context)
        except OSError as e:
            raise DatanodeError(
                f"cannot listen on {host}:{where.port} (hdds.datanode.http-address): {e.strerror}"
            ) from None

    def _advertise(self, cluster_id: str) -> None:
        hostname = self.settings.ports.hostname or socket.gethostname()
        ip = advertised_ip(self.scm_addresses, self.bind_host)
        self.identity.update(
            hostname=hostname, ip_address=ip, ports=self.ports.advertised(), cluster_id=cluster_id
        )

    # ------------------------------------------------------------------ callbacks (any thread)
    def _replica_changed(self, report: ContainerReplicaReport) -> None:
        self.reports.replica_changed(report)
        if report.state is ReplicaState.UNHEALTHY:
            self.reports.add_container_action(
                ContainerAction(report.container_id, ContainerActionReason.CONTAINER_UNHEALTHY)
            )

    def _container_full(self, container_id: int) -> None:
        """A container asks to close (once: the dispatcher's `_report_full`): it is full, or its volume is
        (then SCM hears of the volume at once). The heartbeat carrying the action goes at once, so SCM
        closes the container and places no more blocks in it before the next interval (Ozone's
        HddsDispatcher.sendCloseContainerActionIfNeeded with ContainerData's immediateCloseActionSent)."""
        self.reports.add_container_action(ContainerAction(container_id, ContainerActionReason.CONTAINER_FULL))
        self.reports.on_urgent()
        container = self.containers.get(container_id)
        if container is not None and container.volume.is_full:
            self.reports.volume_full()

    def _pipeline_failed(self, pipeline_id: str, reason: str) -> None:
        """A member of the pipeline failed: ask SCM to close it (Ozone's triggerPipelineClose)."""
        self.reports.add_pipeline_action(PipelineAction(pipeline_id, reason))

    def _pipeline_leader_changed(self, pipeline_id: str) -> None:
        """Ozone's handleLeaderChangedNotification: the pipeline report goes at once, so SCM's pipeline
        leader follows the elected one."""
        self.reports.request(Periodic.PIPELINES, urgent=True)

    def _op_state_changed(self, state: NodeOperationalState) -> None:
        self.queue.set_out_of_service(state is not NodeOperationalState.IN_SERVICE)
        if self.scm_connections is not None:
            self.scm_connections.trigger_heartbeat()

    # ------------------------------------------------------------------ HTTP (on the event loop)
    def _ready(self) -> JsonResponse:
        """200 once registered with SCM: the datanode then serves data and takes commands."""
        body = {
            "ready": self.registered,
            "phase": self.phase,
            "uuid": self.uuid,
            "scm": ",".join(map(str, self.scm_addresses)),
        }
        return JsonResponse(200 if self.registered else 503, body)

    def _traffic(self) -> JsonResponse:
        """Bytes sent to each peer datanode, by write pipeline (datanode/traffic.py)."""
        return JsonResponse(200, {"uuid": self.uuid, "sent": TRAFFIC.snapshot()})

    def _health(self) -> JsonResponse:
        """200 while the process runs; the body says how it is doing."""
        body: dict[str, object] = {"uuid": self.uuid, "phase": self.phase, "registered": self.registered}
        if self.started.is_set() and self.scm_connections is not None:
            body |= {
                "heartbeats": self.scm_connections.heartbeats,
                "scms": self.scm_connections.status(),
                "containers": len(self.containers),
                "pipelines": len(self.pipelines.reports()),
                "healthyVolumes": len(self.volumes.healthy_volumes()),
                "volumes": len(self.volumes.data_volumes),
                "queuedCommands": sum(self.queue.counts().values()),
            }
        return JsonResponse(200, body)


def _close_volumes(volumes: VolumeSet) -> None:
    """Each volume on its own: closing a failed disk's DB may fail, and must not keep the others open."""
    for volume in volumes.data_volumes:
        try:
            volume.close()
        except Exception as e:
            log.warning("closing volume %s: %s", volume.root, e)


async def _supervise(
    main: Coroutine[Any, Any, None], background: dict[str, Coroutine[Any, Any, None]], stop: asyncio.Event
) -> None:
    """Runs the heartbeat loop and the background services until `stop`; a fatal error of the loop
    stops everything and propagates, a failing background service is logged and the datanode goes on."""
    loop = asyncio.get_running_loop()
    tasks = [loop.create_task(coro, name=name) for name, coro in background.items()]
    for task in tasks:
        task.add_done_callback(_log_failure)
    try:
        await until_stopped(main, stop)
    finally:
        stop.set()
        _, late = await asyncio.wait(tasks, timeout=SHUTDOWN_GRACE_S)
        for task in late:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def _log_failure(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("%s stopped: %r", task.get_name(), task.exception(), exc_info=task.exception())


async def serve(conf: OzoneConfiguration, settings: DatanodeSettings) -> None:
    """The process: a datanode until SIGTERM or SIGINT."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await Datanode(conf, settings).run(stop)


def run_datanode(conf: OzoneConfiguration, settings: DatanodeSettings) -> int:
    run_loop(serve(conf, settings))
    return 0


# ---------------------------------------------------------------------- SCM's addresses (configuration)
def scm_datanode_nodes(conf: OzoneConfiguration) -> ScmNodes:
    """The SCMs a datanode reports to: every SCM of the service at its datanode port
    (`ozone.scm.datanode.port[.SERVICE.NODE]`), else the lone SCM (`ozone.scm.datanode.address`, else the
    first of `ozone.scm.names`)."""
    return ScmNodes.configured(conf, ScmProtocol.DATANODE)


def scm_lookup_address(conf: OzoneConfiguration) -> HostPort:
    """SCM's client port: ozone.scm.client.address or ozone.scm.names, else the host the datanode
    reaches SCM on (ozone.scm.datanode.address) with ozone.scm.client.port."""
    if conf.get("ozone.scm.client.address") or conf.get("ozone.scm.names"):
        return scm_client_address(conf)
    return HostPort(scm_datanode_address(conf).host, conf.get("ozone.scm.client.port"))


def scm_lookup_nodes(conf: OzoneConfiguration) -> ScmNodes:
    """The SCMs of the datanode's SCM service at their client ports (failing over between them for at
    most LOOKUP_FAILOVER_S), else the lone SCM at `scm_lookup_address`: where ScmContainerLookup asks."""
    return ScmNodes.from_conf(conf, lambda n: n.client_address, scm_lookup_address).waiting_at_most(
        LOOKUP_FAILOVER_S
    )


def scm_hosts(conf: OzoneConfiguration) -> list[str]:
    """Every configured SCM host (a service's SCMs; else ozone.scm.datanode.address's and every one of
    ozone.scm.names), from which `addresses.bind_host` decides where the datanode listens."""
    service = scm_service_id(conf)
    if service is not None:
        return [node.host for node in scm_service_nodes(conf, service)]
    hosts = []
    if conf.get("ozone.scm.datanode.address"):
        hosts.append(scm_datanode_address(conf).host)
    for name in str(conf.get("ozone.scm.names") or "").split(","):
        if name.strip():
            hosts.append(parse_host_port(name, 0, "ozone.scm.names").host)
    return hosts
