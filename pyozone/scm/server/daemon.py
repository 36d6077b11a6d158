"""The SCM daemon: the sans-IO core behind its RPC servers, a tick loop and a readiness endpoint.

Everything runs on one asyncio event loop (uvloop): pyozone.rpc runs the service coroutines there and the
tick loop is a task on it, so the core (which is not thread-safe) only ever runs on the loop's thread.

With ozone.security.enabled SCM is also the certificate authority: the security protocol listens on its
own port (always mutual TLS), and the CA's periodic work (secret key rotation, expired certificates, SCM's
own renewal) joins the core's schedule. With hdds.grpc.tls.enabled every other port is mutual TLS too.

With `ozone.scm.service.ids` SCM is one member of its service's Raft group (scm/server/ha.py): it serves on
its node's addresses (common/scm_ha.py), keeps its Raft log under `ozone.scm.ha.ratis.storage.dir`, and only
the ready leader answers the admin and block protocols. A secure SCM of a service signs with its own sub-CA
(the primordial SCM's root signed it at `scm --bootstrap`); the CA's records (certificates issued and
revoked, JOIN credentials, serials, the secret keys) are the leader's and the log's, so the security
protocol is the ready leader's too but for the CA certificate, the CRL and getSCMCertificate; each SCM
fetches the others' CRLs (`_fetch_peer_crls`), as it signs only its own sub-CA's.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import signal
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from aiohttp import web

from pyozone import rpc
from pyozone.common.http_server import HttpServer, json_refusal
from pyozone.common.net import HostPort, address, bind_address
from pyozone.common.scm_ha import ScmNodeDetails, local_scm_node, scm_raft_group_id, scm_service_nodes
from pyozone.common.tls import CRL_FILE, TlsStore, ssl_peer_identity
from pyozone.common.web.app import daemon_app
from pyozone.common.web.metrics import MetricsSystem
from pyozone.common.web.ops import administrators_only, readers_only, tls_peer_check
from pyozone.config import OzoneConfiguration
from pyozone.config.dirs import METADATA_PERMISSIONS_KEY, dir_permissions, private_dir
from pyozone.framework.scm_security import SCMSecurityClient
from pyozone.hdds.clock import Clock, SystemClock
from pyozone.hdds.commands import seed_command_ids
from pyozone.hdds.security.errors import SecurityError
from pyozone.hdds.security.x509 import CertRole
from pyozone.hdds.topology import NetworkTopology, load_rack_mapping
from pyozone.protocol import MAX_ADMIN_MESSAGE_BYTES, MAX_HEARTBEAT_MESSAGE_BYTES
from pyozone.protocol.admin import ADMIN_SERVICE
from pyozone.protocol.block import BLOCK_SERVICE, MAX_BLOCK_MESSAGE_BYTES
from pyozone.protocol.heartbeat import DATANODE_SERVICE
from pyozone.protocol.security import MAX_SECURITY_MESSAGE_BYTES, SECURITY_SERVICE
from pyozone.ratis.messages import RaftPeerId
from pyozone.ratis_server.checkpoint_sender import CheckpointSender
from pyozone.ratis_server.db_checkpoint import CHECKPOINT_PATH, PackedCheckpoint
from pyozone.ratis_server.member_api import StateMachineBehindLogError
from pyozone.ratis_server.server import RaftMember
from pyozone.ratis_server.transport import RaftGroup, RaftPeer
from pyozone.rpc import loop as rpc_loop
from pyozone.scm.ha.context import ScmContext
from pyozone.scm.periodic import PeriodicTask
from pyozone.scm.scm import StorageContainerManager
from pyozone.scm.security.manager import ScmSecurity
from pyozone.scm.server.admin_access import AdminAccess
from pyozone.scm.server.admin_service import AdminService
from pyozone.scm.server.block_service import BlockService
from pyozone.scm.server.ca_files import (
    ScmSecurityFiles,
    SecuritySetupError,
    build_security,
    renew_scm_certificate,
    scm_hosts,
)
from pyozone.scm.server.datanode_service import DatanodeProtocolService
from pyozone.scm.server.ha import (
    ADMIN_ANY_SCM,
    ADMIN_LEADER_CHECKED,
    BLOCK_ANY_SCM,
    RaftLogMismatchError,
    ScmRaft,
    ScmRaftLog,
    caught_up_only,
    leader_only,
    scm_raft_settings,
    scm_ratis_dir,
)
from pyozone.scm.server.metrics import register_scm_ha_metrics, register_scm_metrics
from pyozone.scm.server.readiness import readiness_routes
from pyozone.scm.server.security_service import SecurityService
from pyozone.scm.server.snapshot_source import SnapshotSource
from pyozone.scm.server.ticker import run_ticks, tick_interval_ms
from pyozone.scm.server.web import UI, scm_api
from pyozone.scm.settings import ScmSettings
from pyozone.scm.store import SCMMetadataStore, scm_db
from pyozone.scm.store.layout import scm_db_dir
from pyozone.scm.store.metadata_store import TRANSACTION_INFO_KEY
from pyozone.scm.store.version import SCMStorageConfig
from pyozone.security.config import SecurityConfig

if TYPE_CHECKING:
    from google.protobuf.descriptor import ServiceDescriptor

log = logging.getLogger(__name__)

PIPELINES_PER_TICK = 32

REPLICATED_RECORDS = ("containers", "pipelines", "deletedBlocks", "validCerts")
"""Column families whose records a lone SCM's scm.db would hold and no Raft log carries."""

SECURITY_ANY_SCM = frozenset({"getCACertificate", "getSCMCertificate", "getCrl"})
"""Security calls any SCM of a service answers: the root CA's certificate, its CRL bundle (the other SCMs
fetch it: `_fetch_peer_crls`), and getSCMCertificate (the SCM holding the root's key signs at another's
`scm --bootstrap`, before any quorum)."""
PEER_CRL_TIMEOUT_S = 5.0

SHUTDOWN_GRACE_S = 5.0
"""How long in-flight RPCs may finish after SIGTERM before they are cancelled."""


def checkpoint_fetchers(conf: OzoneConfiguration) -> Callable[[web.Request], bool]:
    """Who may GET /dbCheckpoint: over mutual TLS an SCM's certificate or an administrator, as
    SCMDBCheckpointServlet allows SCM's principals and ozone.administrators (scm.db holds the CA's
    certificates and every block's deletion record); anyone over plaintext (no security), as every page."""
    administrators = administrators_only(conf)

    def accepts(request: web.Request, ssl_object: ssl.SSLObject) -> bool:
        return ssl_peer_identity(ssl_object).role is CertRole.SCM or administrators(request)

    return tls_peer_check(accepts)


class ServerStartError(Exception):
    """A server could not bind its address, or its security files are missing; the message names the
    address and its configuration key, or the file."""


@dataclass(frozen=True, slots=True)
class SecureScm:
    """What a secure SCM adds: its CA and secret keys, its own TLS material, the security port's address."""

    security: ScmSecurity
    tls: TlsStore
    address: HostPort


def build_core(
    conf: OzoneConfiguration,
    storage: SCMStorageConfig,
    store: SCMMetadataStore,
    clock: Clock,
    context: ScmContext | None = None,
    settings: ScmSettings | None = None,
) -> StorageContainerManager:
    """`settings`: built by the caller that checked them before anything started (`pyozone scm`), else
    here."""
    mapping_file = conf.get("net.topology.node.switch.mapping.file")
    topology = NetworkTopology(load_rack_mapping(Path(mapping_file)) if mapping_file else None)
    # At most this many pipelines per tick, so a large cluster's first fill does not stall heartbeats.
    return StorageContainerManager(
        settings or ScmSettings.from_conf(conf),
        clock,
        store,
        cluster_id=storage.cluster_id,
        topology=topology,
        creator_budget=PIPELINES_PER_TICK,
        context=context,
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
        settings: ScmSettings | None = None,
    ) -> None:
        seed_command_ids(time.time_ns() // 1_000_000)  # ids no other SCM of the service handed out
        self.storage = storage
        self.snapshot_source = snapshot_source
        self.store = store
        self.conf = conf
        try:
            self.node: ScmNodeDetails | None = local_scm_node(conf)
            """This SCM's node of its HA service (ozone.scm.service.ids), None when it runs alone."""
            node = self.node
            self.datanode_address = bind_address(
                conf,
                node.datanode_address
                if node
                else address(conf, "ozone.scm.datanode.address", "ozone.scm.datanode.port"),
                "ozone.scm.datanode.bind.host",
            )
            self.client_address = bind_address(
                conf,
                node.client_address
                if node
                else address(conf, "ozone.scm.client.address", "ozone.scm.client.port"),
                "ozone.scm.client.bind.host",
            )
            self.block_address = bind_address(
                conf,
                node.block_client_address
                if node
                else address(conf, "ozone.scm.block.client.address", "ozone.scm.block.client.port"),
                "ozone.scm.block.client.bind.host",
            )
            self.http_address = bind_address(
                conf,
                node.http_address if node else address(conf, "ozone.scm.http-address"),
                "ozone.scm.http-bind-host",
            )
            clock = clock or SystemClock()
            self.core = build_core(
                conf, storage, store, clock, ScmContext.ha_follower() if node is not None else None, settings
            )
            # The records just loaded (millions of containers and replicas) live as long as SCM: out of
            # the cyclic collector's sight, a full collection no longer walks them and stalls the event
            # loop (6 s at 1M containers, measured on the simulator).
            gc.freeze()
            settings = SecurityConfig.from_conf(conf)
            self.secure = self._secure(conf, settings, store, clock) if settings.enabled else None
            # hdds.grpc.tls.enabled: every other port presents SCM's certificate and requires the peer's.
            self.tls = self.secure.tls if self.secure and settings.mtls else None
        except BaseException:
            store.close()
            raise
        self.datanode_port = 0
        self.client_port = 0
        self.block_port = 0
        self.http_port = 0
        self.security_port = 0
        self.serving = False
        self._servers: list[rpc.Server] = []
        self.metrics = MetricsSystem("StorageContainerManager")
        self.scm_metrics = register_scm_metrics(self.metrics, self.core)
        app = daemon_app(
            self.metrics,
            conf,
            readiness_routes(self.core, lambda: self.serving),
            {
                **scm_api(self.core, self.storage.scm_uuid, readers_only(conf)),
                "/api/v1/ratis": self._ratis,
            },
            UI,
            administrators_only(conf),
        )
        app.router.add_get(CHECKPOINT_PATH, self._db_checkpoint)
        self._may_fetch_checkpoint = checkpoint_fetchers(conf)
        self.checkpoints = CheckpointSender(self._pack_checkpoint)
        self._http = HttpServer(app)
        self._ticker: asyncio.Task[None] | None = None
        self._crl_fetcher: asyncio.Task[None] | None = None
        self._stopped = False
        self.ha: ScmRaft | None = None
        """The glue of this SCM's Raft member (HA only, made at start on the serving loop)."""
        self.raft: RaftMember | None = None
        self.failed = asyncio.Event()
        """Set when this SCM's Raft member failed (an entry it could not apply): `serve` exits then."""

    def _ratis(self, _: object) -> dict[str, object]:
        """/api/v1/ratis: this SCM in its HA service's Raft group (as OM's); {"ha": false} for a lone SCM."""
        if self.ha is None:
            return {"ha": False}
        return {"ha": True, **self.ha.report()}

    def _secure(
        self, conf: OzoneConfiguration, settings: SecurityConfig, store: SCMMetadataStore, clock: Clock
    ) -> SecureScm:
        files = ScmSecurityFiles.from_conf(conf, settings)
        service = self.node is not None
        leads = self.core.context.is_leader_ready if service else None
        try:
            security = build_security(
                conf, settings, files, self.storage, store, clock, self._known_datanode, leads
            )
        except SecuritySetupError as e:
            raise ServerStartError(str(e)) from None
        ca, hosts = security.ca, scm_hosts(conf)

        def renew() -> None:
            cert = renew_scm_certificate(
                ca, files.scm, hosts, settings.renew_grace_ms, settings.max_duration_ms, service
            )
            if cert is not None:
                log.info("Renewed SCM's certificate: serial %d", cert.serial_number)
                security.publish_crl()

        renew()  # a certificate inside its grace period (or expired while SCM was down) before serving
        # The CA's periodic work runs on the core's tick loop, so it never races a request.
        self.core.tasks.extend(
            [*security.tasks, PeriodicTask("ScmCertificateRenewal", settings.rotation_check_ms, renew)]
        )
        where = bind_address(
            conf,
            self.node.security_address
            if self.node
            else address(conf, "ozone.scm.security.service.address", "ozone.scm.security.service.port"),
            "ozone.scm.security.service.bind.host",
        )
        tls = TlsStore(files.scm)
        kept = files.scm.ca.with_name(CRL_FILE)
        if service and kept.exists():  # the other SCMs' lists it held before (or got at --bootstrap)
            try:
                security.take_peer_crls(kept.read_bytes())
            except ValueError as e:
                raise ServerStartError(f"{kept}: {e}") from None
        # SCM's ports refuse what its own CA revoked as soon as it is revoked.
        tls.update_crl(*security.crl())
        security.on_crl = tls.update_crl
        return SecureScm(security, tls, where)

    async def _fetch_peer_crls(self, secure: SecureScm, me: ScmNodeDetails) -> None:
        """An SCM of a secure service signs its own sub-CA's CRL only (and the root's, on the primordial):
        every `hdds.x509.crl.refresh.interval`, from the start, it fetches the other SCMs' getCrl answers
        and keeps their lists (ScmSecurity.take_peer_crls), so its own ports and every party fetching its
        bundle hold a CRL for every SCM's sub-CA (OpenSSL's check fails a peer whose issuer has none). An
        SCM not reached is asked again at the next round; its last list is kept."""
        settings = SecurityConfig.from_conf(self.conf)
        peers = [n for n in scm_service_nodes(self.conf, me.service_id) if n.node_id != me.node_id]

        def fetch(peer: ScmNodeDetails) -> bytes:
            with SCMSecurityClient(peer.security_address, secure.tls, timeout_s=PEER_CRL_TIMEOUT_S) as client:
                return client.get_crl()[1]

        while True:
            for peer in peers:
                try:
                    bundle = await asyncio.to_thread(fetch, peer)
                    if secure.security.take_peer_crls(bundle):
                        secure.security.publish_crl()
                except (SecurityError, ValueError) as e:
                    log.debug("No CRL from SCM %s at %s: %s", peer.node_id, peer.security_address, e)
            secure.security.publish_crl()  # its own list of what another leader revoked, once applied
            await asyncio.sleep(max(settings.crl_refresh_ms, 1000) / 1000)

    def _known_datanode(self, datanode: str) -> bool:
        """SCM saw the datanode: it registered, or a pipeline names it (pipelines survive a restart)."""
        if self.core.nodes.get(datanode) is not None:
            return True
        return any(datanode in p.nodes for p in self.core.pipelines.pipelines())

    async def start(self) -> None:
        if self.node is None:
            self._refuse_a_service_db()
        await self.start_http()
        if self.node is not None:
            await self._start_raft(self.node)
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
        if self.secure is not None:
            log.info(
                "SCM security protocol (certificate authority) listening on %s:%d (mutual TLS); "
                "other ports %s",
                self.secure.address.host,
                self.security_port,
                "mutual TLS (hdds.grpc.tls.enabled)" if self.tls else "plaintext",
            )
        health = self.core.nodes.intervals
        log.info(
            "Node health in force: checked every %d ms, STALE after %d ms and DEAD after %d ms without a "
            "heartbeat (ozone.scm.stale.node.interval and ozone.scm.dead.node.interval after sanitisation)",
            health.check_interval_ms,
            health.stale_ms,
            health.dead_ms,
        )

    def _refuse_a_service_db(self) -> None:
        """A lone SCM on the scm.db of an HA service's SCM (it holds #TRANSACTIONINFO, the last log entry
        applied) is refused (R19 D5): its writes would be in no Raft log, so its scm.db would differ from
        the other SCMs' at the same applied index when it rejoins (and a sequence id it reserved alone
        could be handed out again). The opposite case is `_start_raft`'s; Ozone's SCM likewise refuses to
        start with HA off once its storage was initialised for SCM HA."""
        applied = self.store.transaction_infos.get(TRANSACTION_INFO_KEY)
        if applied is None:
            return
        raise ServerStartError(
            f"{scm_db_dir(self.conf)} belongs to an SCM of an HA service (its {TRANSACTION_INFO_KEY} is "
            f"{applied}): it cannot start alone (no ozone.scm.service.ids), as what it wrote would be in no "
            "Raft log and its scm.db would differ from the other SCMs'; start it with its service's "
            "ozone.scm.service.ids, ozone.scm.nodes.SERVICE and ozone.scm.node.id"
        )

    async def _start_raft(self, node: ScmNodeDetails) -> None:
        """This SCM's member of its service's Raft group: every SCM of `ozone.scm.nodes.SERVICE` is a first
        member (no addScm yet), the group is the cluster id's (Ozone's SCMRatisServerImpl)."""
        conf = self.conf
        try:
            settings = scm_raft_settings(conf)
        except ValueError as e:
            raise ServerStartError(str(e)) from None
        nodes = scm_service_nodes(conf, node.service_id)
        peers = tuple(RaftPeer(RaftPeerId(n.node_id), n.ratis_address) for n in nodes)
        group = RaftGroup(scm_raft_group_id(self.storage.cluster_id), peers)
        if self.store.transaction_infos.get(TRANSACTION_INFO_KEY) is None and any(
            next(self.store.items(cf), None) is not None for cf in REPLICATED_RECORDS
        ):
            raise ServerStartError(
                f"{scm_db_dir(conf)} holds records a lone SCM wrote (no {TRANSACTION_INFO_KEY}): SCM "
                f"{node.node_id} of service {node.service_id} cannot start from it, as the other SCMs do not "
                "have them and they are in no Raft log; start the service's SCMs on empty scm.db directories "
                "(scm --init on the primordial, scm --bootstrap on the others), or run this one without "
                "ozone.scm.service.ids"
            )
        ratis_dir = scm_ratis_dir(conf)
        try:
            private_dir(ratis_dir, dir_permissions(conf, METADATA_PERMISSIONS_KEY))
        except OSError as e:
            raise ServerStartError(
                f"cannot make SCM's Raft log directory {ratis_dir}: {e.strerror or e}"
            ) from None
        group_dir = ratis_dir / group.group_id
        self.ha = ScmRaft(
            self.core,
            node,
            nodes,
            int(conf.get("ozone.scm.ha.ratis.request.timeout")),
            settings.append_byte_limit,
            self._raft_failed,
            int(conf.get("ozone.scm.ha.ratis.snapshot.threshold")),
            self.tls,
        )
        self.raft = RaftMember(
            RaftPeerId(node.node_id),
            group,
            ScmRaftLog(
                group_dir,
                int(conf.get("ozone.scm.ha.ratis.segment.size")),
                self.ha.db_applied,
                scm_db_dir(conf),
            ),
            self.ha,
            settings,
            self.tls,  # hdds.grpc.tls.enabled: SCM's Raft port takes SCM certificates only (inbound.py)
            CertRole.SCM,
            bind_host=bind_address(conf, node.ratis_address, None).host,
        )
        if self.secure is not None:
            self.ha.replication.step_up_hooks.append(self.secure.security.step_up)
        self.ha.attach(self.raft)
        register_scm_ha_metrics(self.metrics, self.ha.report)
        try:
            await self.raft.start()
        except OSError as e:
            where = f"{node.ratis_address} (ozone.scm.ratis.port of {node.service_id}.{node.node_id})"
            raise ServerStartError(f"cannot bind SCM's Raft server to {where}: {e.strerror or e}") from None
        except RaftLogMismatchError as e:
            raise ServerStartError(f"SCM {node.node_id} of service {node.service_id}: {e}") from None
        except StateMachineBehindLogError as e:
            # Not "delete the Raft log": the leader counts the entries this SCM acknowledged as stored here
            # and would never send them again.
            raise ServerStartError(
                f"{scm_db_dir(conf)} holds SCM's state up to Raft index "
                f"{e.state_machine_at.index if e.state_machine_at else 0}, but SCM {node.node_id}'s Raft log "
                f"({group_dir}) starts after index {e.log_starts_after.index}: the entries between were "
                "purged after a snapshot scm.db no longer holds (scm.db lost writes, or is an older copy), "
                "and applying the log after them would skip them. Restore the scm.db that went with this "
                "log, or put a checkpoint of another SCM's scm.db in its place: GET "
                f"{CHECKPOINT_PATH} on the leader's web server (ozone.scm.http-address of its node) answers "
                "a tar of its scm.db"
            ) from None
        self.ha.start()
        log.info(
            "SCM %s of service %s: Raft group %s on %s, its log in %s",
            node.node_id, node.service_id, group.group_id, node.ratis_address, group_dir,
        )  # fmt: skip

    def _raft_failed(self, reason: str) -> None:
        """The Raft member failed: not ready (pollers see 503), and `serve` stops the daemon."""
        self.serving = False
        self.failed.set()

    async def _db_checkpoint(self, request: web.Request) -> web.StreamResponse:
        """`/dbCheckpoint` (Ozone's SCMDBCheckpointServlet): a tar of a consistent scm.db checkpoint with its
        SHA-256 and #TRANSACTIONINFO in headers (ratis_server/db_checkpoint.py), for a follower behind the
        leader's purged Raft log (or an operator's backup); one checkpoint at a time, shared, bounded
        (checkpoint_sender.py). Over mutual TLS only SCMs and administrators (`checkpoint_fetchers`)."""
        if not self._may_fetch_checkpoint(request):
            return json_refusal(403, "only SCMs and administrators may fetch scm.db's checkpoint")
        return await self.checkpoints.send(request)

    async def _pack_checkpoint(self) -> PackedCheckpoint:
        return await asyncio.to_thread(scm_db.pack_checkpoint, self.store)

    async def start_http(self) -> None:
        """The readiness endpoint comes first, so pollers see 503 rather than a refused connection."""
        host, port = self.http_address.host, self.http_address.port
        context = self.tls.server_context() if self.tls else None
        try:
            self.http_port = await self._http.start(host, port, ssl_context=context)
        except OSError as e:
            where = f"{self.http_address} (ozone.scm.http-address, ozone.scm.http-bind-host)"
            raise ServerStartError(f"cannot bind the SCM http server to {where}: {e.strerror}") from None

    async def start_rpc(self) -> None:
        scm_uuid = self.storage.scm_uuid
        datanode = DatanodeProtocolService(
            self.core,
            scm_uuid,
            tls=self.tls is not None,
            heartbeat_seconds=self.scm_metrics.heartbeat_seconds,
        )
        admin: object = AdminService(
            self.core, AdminAccess.from_conf(self.conf), scm_uuid, self.snapshot_source, self.ha
        )
        block: object = BlockService(self.core, scm_uuid, tls=self.tls is not None)
        datanode_servicer: object = datanode
        if self.ha is not None:
            admin = leader_only(
                admin, self.ha, lambda n: n.client_address, ADMIN_ANY_SCM | ADMIN_LEADER_CHECKED
            )
            block = leader_only(block, self.ha, lambda n: n.block_client_address, BLOCK_ANY_SCM)
            datanode_servicer = caught_up_only(datanode, self.ha)
        self.datanode_port = await self._serve(
            DATANODE_SERVICE, datanode_servicer, MAX_HEARTBEAT_MESSAGE_BYTES,
            self.datanode_address, "ozone.scm.datanode", self.tls,
        )  # fmt: skip
        self.client_port = await self._serve(
            ADMIN_SERVICE, admin, MAX_ADMIN_MESSAGE_BYTES,
            self.client_address, "ozone.scm.client", self.tls,
        )  # fmt: skip
        self.block_port = await self._serve(
            BLOCK_SERVICE, block, MAX_BLOCK_MESSAGE_BYTES,
            self.block_address, "ozone.scm.block.client", self.tls,
        )  # fmt: skip
        if self.secure is not None:
            security: object = SecurityService(self.secure.security)
            if self.ha is not None:
                security = leader_only(security, self.ha, lambda n: n.security_address, SECURITY_ANY_SCM)
                self._crl_fetcher = asyncio.create_task(
                    self._fetch_peer_crls(self.secure, self.ha.node), name="scm-peer-crls"
                )
            self.security_port = await self._serve(
                SECURITY_SERVICE, security, MAX_SECURITY_MESSAGE_BYTES,
                self.secure.address, "ozone.scm.security.service", self.secure.tls,
            )  # fmt: skip
        self.serving = True

    async def _serve(
        self,
        service: ServiceDescriptor,
        servicer: object,
        max_message_bytes: int,
        where: HostPort,
        keys: str,
        tls: TlsStore | None,
    ) -> int:
        """One service on its own port. `keys` is the prefix of the address and bind-host keys that gave
        `where`, for the error."""
        server = rpc.Server(rpc.ServerSettings(max_message_bytes=max_message_bytes))
        server.add_service(rpc.ServiceSpec.of(service), servicer)
        try:
            port = await server.start(where.host, where.port, tls)
        except OSError as e:
            raise ServerStartError(
                f"cannot bind the SCM to {where} ({keys}.address, {keys}.bind.host): {e.strerror or e}"
            ) from None
        self._servers.append(server)
        return port

    async def stop(self, grace_s: float = SHUTDOWN_GRACE_S) -> None:
        """Not ready first (pollers see 503), then no new RPCs, in-flight ones get `grace_s`; then the tick
        loop stops and the store is closed. Safe to call twice or after a failed start."""
        if self._stopped:
            return
        self._stopped = True
        self.serving = False
        await asyncio.gather(*(server.stop(grace_s) for server in self._servers))
        for task in (self._ticker, self._crl_fetcher):
            if task is not None:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        if self.ha is not None:
            await self.ha.auto_snapshot.at_stop()
            await self.ha.stop()
        if self.raft is not None:
            await self.raft.stop()
        await self._http.stop()
        self.store.close()
        log.info("SCM stopped")


async def serve(
    conf: OzoneConfiguration,
    storage: SCMStorageConfig,
    store: SCMMetadataStore,
    snapshot_source: SnapshotSource | None = None,
    settings: ScmSettings | None = None,
) -> int:
    """Runs the daemon until SIGTERM or SIGINT, then shuts it down gracefully: 0. Its Raft member failing
    (an entry it could not apply) stops it too: 1 (Ozone's SCM terminates with status 1)."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    daemon = ScmDaemon(conf, storage, store, snapshot_source=snapshot_source, settings=settings)
    try:
        await daemon.start()
        waits = [asyncio.create_task(stop.wait()), asyncio.create_task(daemon.failed.wait())]
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        for wait in waits:
            wait.cancel()
        log.info("SCM shutting down%s", " (its Raft member failed)" if daemon.failed.is_set() else "")
    finally:
        await daemon.stop()
    return 1 if daemon.failed.is_set() else 0


def start_scm(
    conf: OzoneConfiguration,
    storage: SCMStorageConfig,
    store: SCMMetadataStore,
    snapshot_source: SnapshotSource | None = None,
    settings: ScmSettings | None = None,
) -> int:
    """`pyozone scm`: the daemon's entry point; takes ownership of the opened store."""
    return rpc_loop.run(serve(conf, storage, store, snapshot_source, settings))
