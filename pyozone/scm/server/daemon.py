"""The SCM daemon: the sans-IO core behind two gRPC servers, a tick loop and a readiness endpoint.

Everything runs on one asyncio event loop: grpc.aio runs the service coroutines there and the tick loop
is a task on it, so the core (which is not thread-safe) only ever runs on the loop's thread.
"""

from __future__ import annotations

import asyncio
import logging
import signal
from pathlib import Path

import grpc

from pyozone.common.grpc_server import interceptors as server_interceptors
from pyozone.common.http_json import json_endpoints
from pyozone.common.http_server import HttpServer
from pyozone.common.net import HostPort, address, bind_address
from pyozone.config import OzoneConfiguration
from pyozone.hdds.clock import Clock, SystemClock
from pyozone.hdds.topology import NetworkTopology, load_rack_mapping
from pyozone.proto import ScmAdminProtocol_pb2_grpc as admin_grpc
from pyozone.proto import ScmServerDatanodeHeartbeatProtocol_pb2_grpc as datanode_grpc
from pyozone.protocol import MAX_ADMIN_MESSAGE_BYTES, MAX_HEARTBEAT_MESSAGE_BYTES, grpc_options
from pyozone.protocol.block import MAX_BLOCK_MESSAGE_BYTES
from pyozone.scm.scm import StorageContainerManager
from pyozone.scm.server.admin_service import AdminService
from pyozone.scm.server.block_service import BlockService, add_block_service
from pyozone.scm.server.datanode_service import DatanodeProtocolService
from pyozone.scm.server.readiness import readiness_routes
from pyozone.scm.server.snapshot_source import SnapshotSource
from pyozone.scm.server.ticker import run_ticks, tick_interval_ms
from pyozone.scm.store import SCMMetadataStore
from pyozone.scm.store.version import SCMStorageConfig

log = logging.getLogger(__name__)

PIPELINES_PER_TICK = 32

SHUTDOWN_GRACE_S = 5.0
"""How long in-flight RPCs may finish after SIGTERM before they are cancelled."""


class ServerStartError(Exception):
    """A server could not bind its address; the message names the address and its configuration key."""


def build_core(
    conf: OzoneConfiguration, storage: SCMStorageConfig, store: SCMMetadataStore, clock: Clock
) -> StorageContainerManager:
    mapping_file = conf.get("net.topology.node.switch.mapping.file")
    topology = NetworkTopology(load_rack_mapping(Path(mapping_file)) if mapping_file else None)
    # At most this many pipelines per tick, so a large cluster's first fill does not stall heartbeats.
    return StorageContainerManager(
        conf,
        clock,
        store,
        cluster_id=storage.cluster_id,
        topology=topology,
        creator_budget=PIPELINES_PER_TICK,
    )


class ScmDaemon:
    """Owns the store from construction on: `stop()` closes it. Ports are known after `start()` (the
    actual ones when the configuration asks for port 0)."""

    def __init__(
        self,
        conf: OzoneConfiguration,
        storage: SCMStorageConfig,
        store: SCMMetadataStore,
        clock: Clock | None = None,
        snapshot_source: SnapshotSource | None = None,
    ) -> None:
        self.storage = storage
        self.snapshot_source = snapshot_source
        self.store = store
        try:
            self.datanode_address = bind_address(
                conf,
                address(conf, "ozone.scm.datanode.address", "ozone.scm.datanode.port"),
                "ozone.scm.datanode.bind.host",
            )
            self.client_address = bind_address(
                conf,
                address(conf, "ozone.scm.client.address", "ozone.scm.client.port"),
                "ozone.scm.client.bind.host",
            )
            self.block_address = bind_address(
                conf,
                address(conf, "ozone.scm.block.client.address", "ozone.scm.block.client.port"),
                "ozone.scm.block.client.bind.host",
            )
            self.http_address = bind_address(
                conf, address(conf, "ozone.scm.http-address"), "ozone.scm.http-bind-host"
            )
            self.core = build_core(conf, storage, store, clock or SystemClock())
        except BaseException:
            store.close()
            raise
        self.datanode_port = 0
        self.client_port = 0
        self.block_port = 0
        self.http_port = 0
        self.serving = False
        self._servers: list[grpc.aio.Server] = []
        self._http = HttpServer(json_endpoints(readiness_routes(self.core, lambda: self.serving)))
        self._ticker: asyncio.Task[None] | None = None
        self._stopped = False

    async def start(self) -> None:
        await self.start_http()
        await self.start_rpc()
        interval = tick_interval_ms(self.core)
        self._ticker = asyncio.create_task(run_ticks(self.core, interval), name="scm-tick")
        log.info(
            "SCM %s of cluster %s listening: datanode protocol on %s:%d, admin on %s:%d, http on %s:%d, "
            "block protocol on %s:%d (tick every %d ms)",
            self.storage.scm_uuid,
            self.core.cluster_id,
            self.datanode_address.host,
            self.datanode_port,
            self.client_address.host,
            self.client_port,
            self.http_address.host,
            self.http_port,
            self.block_address.host,
            self.block_port,
            interval,
        )
        health = self.core.nodes.intervals
        log.info(
            "Node health in force: checked every %d ms, STALE after %d ms and DEAD after %d ms without a "
            "heartbeat (ozone.scm.stale.node.interval and ozone.scm.dead.node.interval after sanitisation)",
            health.check_interval_ms,
            health.stale_ms,
            health.dead_ms,
        )

    async def start_http(self) -> None:
        """The readiness endpoint comes first, so pollers see 503 rather than a refused connection."""
        host, port = self.http_address.host, self.http_address.port
        try:
            self.http_port = await self._http.start(host, port)
        except OSError as e:
            where = f"{self.http_address} (ozone.scm.http-address, ozone.scm.http-bind-host)"
            raise ServerStartError(f"cannot bind the SCM http server to {where}: {e.strerror}") from None

    async def start_rpc(self) -> None:
        scm_uuid = self.storage.scm_uuid
        datanode = grpc.aio.server(
            options=grpc_options(MAX_HEARTBEAT_MESSAGE_BYTES), interceptors=server_interceptors()
        )
        datanode_grpc.add_StorageContainerDatanodeProtocolServiceServicer_to_server(
            DatanodeProtocolService(self.core, scm_uuid), datanode
        )
        self.datanode_port = _bind(datanode, self.datanode_address, "ozone.scm.datanode")
        admin = grpc.aio.server(
            options=grpc_options(MAX_ADMIN_MESSAGE_BYTES), interceptors=server_interceptors()
        )
        admin_grpc.add_ScmAdminProtocolServiceServicer_to_server(
            AdminService(self.core, scm_uuid, self.snapshot_source), admin
        )
        self.client_port = _bind(admin, self.client_address, "ozone.scm.client")
        block = grpc.aio.server(
            options=grpc_options(MAX_BLOCK_MESSAGE_BYTES), interceptors=server_interceptors()
        )
        add_block_service(block, BlockService(self.core, scm_uuid))
        self.block_port = _bind(block, self.block_address, "ozone.scm.block.client")
        self._servers = [datanode, admin, block]
        for server in self._servers:
            await server.start()
        self.serving = True

    async def stop(self, grace_s: float = SHUTDOWN_GRACE_S) -> None:
        """Not ready first (pollers see 503), then no new RPCs, in-flight ones get `grace_s`; then the tick
        loop stops and the store is closed. Safe to call twice or after a failed start."""
        if self._stopped:
            return
        self._stopped = True
        self.serving = False
        await asyncio.gather(*(server.stop(grace_s) for server in self._servers))
        if self._ticker is not None:
            self._ticker.cancel()
            await asyncio.gather(self._ticker, return_exceptions=True)
        await self._http.stop()
        self.store.close()
        log.info("SCM stopped")


def _bind(server: grpc.aio.Server, where: HostPort, keys: str) -> int:
    """`keys` is the prefix of the address and bind-host keys that gave `where`, for the error."""
    try:
        return server.add_insecure_port(str(where))
    except RuntimeError as e:
        raise ServerStartError(
            f"cannot bind the SCM to {where} ({keys}.address, {keys}.bind.host): {e}"
        ) from None


async def serve(
    conf: OzoneConfiguration,
    storage: SCMStorageConfig,
    store: SCMMetadataStore,
    snapshot_source: SnapshotSource | None = None,
) -> int:
    """Runs the daemon until SIGTERM or SIGINT, then shuts it down gracefully."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    daemon = ScmDaemon(conf, storage, store, snapshot_source=snapshot_source)
    try:
        await daemon.start()
        await stop.wait()
        log.info("SCM shutting down")
    finally:
        await daemon.stop()
    return 0


def start_scm(
    conf: OzoneConfiguration,
    storage: SCMStorageConfig,
    store: SCMMetadataStore,
    snapshot_source: SnapshotSource | None = None,
) -> int:
    """`pyozone scm`: the daemon's entry point; takes ownership of the opened store."""
    return asyncio.run(serve(conf, storage, store, snapshot_source))
