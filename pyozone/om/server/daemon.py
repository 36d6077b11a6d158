"""The OM daemon: the namespace core behind an RPC server (pyozone.rpc), two background services on
timers and a readiness endpoint.

Start-up: with ozone.security.enabled, OM's certificate first (requested from SCM's CA on the first
start; renewed in the background); then the HTTP endpoint (pollers see 503, not a refused connection), then
SCM's cluster id (retried until SCM answers: `cluster up` starts OM right after SCM), then om.db and the
RPC server. With hdds.grpc.tls.enabled every port and every channel to SCM is mutual TLS with that
certificate. The core is synchronous and may wait for SCM, so core calls run in a thread pool (commitKey,
which never waits, on the loop); its locks (om/locks.py) keep mutations apart, and om.db's double buffer
makes them durable before a client is answered.

With `ozone.om.service.ids` OM is one member of its service's Raft group (om/server/ha.py, docs/om.md "High
availability"): it finds its node (`local_om_node`), serves on that node's addresses, keeps its Raft log
under `ozone.om.ratis.storage.dir` (default `ozone.metadata.dirs`/ratis) and runs a RaftMember on its Ratis
port (mutual TLS with OM's certificate when hdds.grpc.tls.enabled: each OM holds its own, naming its node,
and a peer speaks for the node its certificate names: raft_member.py); only the leader executes calls and runs
the background services. A lone OM keeps the direct double-buffer path. The group's members and who may
join (`--bootstrap`) or stay: om/server/membership.py, before and right after the member starts.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import ssl
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

from aiohttp import web

from pyozone.common.daemon_run import run_until_signalled
from pyozone.common.http_json import JsonResponse, Route
from pyozone.common.http_server import HttpServer, json_refusal
from pyozone.common.net import address, bind_address
from pyozone.common.om_ha import OmAddresses, OmNodeDetails, local_om_node, om_raft_group_id
from pyozone.common.scm_ha import ScmAddresses
from pyozone.common.tls import TlsStore, ssl_peer_identity
from pyozone.common.tls_mode import mtls_enabled, security_enabled, service_hosts
from pyozone.common.web.app import daemon_app
from pyozone.common.web.metrics import MetricsSystem
from pyozone.common.web.ops import administrators_only, tls_peer_check
from pyozone.config import OzoneConfiguration
from pyozone.config.dirs import METADATA_PERMISSIONS_KEY, dir_permissions, private_dir
from pyozone.config.keys import suffixed
from pyozone.framework.scm_errors import ScmClientError
from pyozone.framework.scm_failover import ScmFailoverPolicy
from pyozone.hdds.clock import Clock, SystemClock
from pyozone.hdds.security import x509 as X
from pyozone.hdds.security.x509 import CertRole
from pyozone.om.block_tokens import BlockTokenIssuer
from pyozone.om.core import OzoneManager
from pyozone.om.db_checkpoint import CHECKPOINT_PATH, PackedCheckpoint
from pyozone.om.lifecycle import S3LifecycleService
from pyozone.om.master_keys import (
    KEYSTORE_ID,
    KEYSTORE_KEY,
    MasterKeyError,
    MasterKeyStore,
    open_keystore,
)
from pyozone.om.metadata import META_TABLE, VOLUME_TABLE, OMMetadataStore
from pyozone.om.scm import GrpcScm, ScmGateway
from pyozone.om.server.admin_service import OzoneManagerAdminService, add_om_admin_service
from pyozone.om.server.counts import NamespaceCounter
from pyozone.om.server.ha import ROLE_CHECK_INTERVAL_S, TRANSACTION_INFO, OmReplication
from pyozone.om.server.limits import OMRequestLimits, server_settings
from pyozone.om.server.membership import (
    MEMBERS_FILE,
    MembershipRefused,
    OmMembership,
    first_members,
    join_service,
    leader_members,
    members_confirmed,
)
from pyozone.om.server.metrics import OMMetrics
from pyozone.om.server.raft_member import OmRaftMember
from pyozone.om.server.service import OzoneManagerService, add_om_service
from pyozone.om.server.web import UI, om_api
from pyozone.om.services import KeyDeletingService, OpenKeyCleanupService
from pyozone.om.settings import OMSettings, keystore_path, om_db_path, om_metadata_dir
from pyozone.om.storage import OMStorage, bind_to_cluster, read_om_storage
from pyozone.om.stored_lengths import StoredLengths
from pyozone.ratis.messages import RaftPeerId
from pyozone.ratis.settings import RaftSettings
from pyozone.ratis_server.checkpoint_sender import CheckpointSender
from pyozone.ratis_server.member_api import StateMachineBehindLogError
from pyozone.ratis_server.segmented_log import SegmentedRaftLog
from pyozone.ratis_server.server import RaftMember
from pyozone.ratis_server.transport import RaftGroup, RaftPeer
from pyozone.rpc import Server
from pyozone.rpc.loop import run as run_on_rpc_loop
from pyozone.security.cert_client import CertRenewer, daemon_tls
from pyozone.security.secret_keys import SecretKeyCache

log = logging.getLogger(__name__)
T = TypeVar("T")

SHUTDOWN_GRACE_S = 5.0
SCM_RETRY_S = 1.0
EXECUTOR_THREADS = 16
GC_THRESHOLDS = (20_000, 10, 10)
"""The cyclic collector's thresholds in OM's process (Python's default: 700, 10, 10). Each request leaves
hundreds of short-lived objects (messages, records, futures), so the default ran a young collection every
few keys and a full one over the whole heap every few thousand: 7 % of OM's GIL time under omkg (issue 29,
py-spy --native). A cycle now waits longer to be freed, which costs memory only."""


def _terminate(error: BaseException) -> None:
    """A failed om.db flush (or an install after which no om.db opens): the table cache holds what om.db
    does not, so OM must not answer another request. It exits at once, as Ozone's OM terminates; a restart
    serves what om.db holds, which is every transaction a client was answered for."""
    log.critical("exiting: om.db can no longer be used (%s)", error)
    logging.shutdown()
    os._exit(1)


def _raft_failed(reason: str) -> None:
    """OM's Raft member failed for its group (an entry it could not apply, its log not written): om.db
    lacks an entry the member counted, so OM must not answer another request. It exits at once, as
    Ozone's OzoneManagerStateMachine terminates; a restart applies the entry again from the log."""
    log.critical("exiting: OM's Raft member failed (%s)", reason)
    logging.shutdown()
    os._exit(1)


def checkpoint_fetchers(
    conf: OzoneConfiguration, service_nodes: frozenset[str] = frozenset()
) -> Callable[[web.Request], bool]:
    """Who may GET /dbCheckpoint: over mutual TLS an administrator, or an OM of this service: a
    certificate naming one of `service_nodes` ("SERVICE/NODE", X.om_node; the nodes ozone.om.nodes.SERVICE
    configures), as OMDBCheckpointServlet allows OM's principals and ozone.administrators. om.db holds every
    key's record and the S3 secrets, so an OM certificate of another service, or a lone OM's (no node), is
    refused here as on the Raft port (OmRaftMember). Without `service_nodes` (a lone OM, which serves no
    checkpoint) the certificate's OM role is enough. Anyone over plaintext (no security), as every page."""
    administrators = administrators_only(conf)

    def accepts(request: web.Request, ssl_object: ssl.SSLObject) -> bool:
        if ssl_peer_identity(ssl_object).role is CertRole.OM and (
            not service_nodes or X.om_node(X.cert_from_der(ssl_object.getpeercert(True))) in service_nodes
        ):
            return True
        return administrators(request)

    return tls_peer_check(accepts)


ELECTION_TIMEOUT_SPREAD_MS = 200
"""How far above `ozone.om.ratis.minimum.timeout` an OM's election timer may be drawn: Ozone's
OzoneManagerRatisServer sets Ratis's raft.server.rpc.timeout.max to the minimum + 200 ms, so a leader's
death is noticed within the minimum + 200 ms rather than up to twice it (benchmarks/om_ha.py --failover)."""


class ServerStartError(Exception):
    """A server could not bind its address; the message names the address and its configuration key."""


POSITIVE_HA_KEYS = ("ozone.om.ratis.log.purge.gap", "ozone.om.ratis.snapshot.auto.trigger.threshold")
"""OM HA keys refused at 0 or below, as the daemon is made."""


def om_raft_settings(conf: OzoneConfiguration) -> RaftSettings:
    """OM's Raft settings from its ozone.om.ratis.* keys as Ozone derives Ratis's, checked before anything
    opens: a key that must be positive is refused by OM's name for it (RaftSettings would name Ratis's, after
    om.db opened)."""
    for key in POSITIVE_HA_KEYS:
        value = int(conf.get(key))
        if value <= 0:
            raise ServerStartError(f"{key} must be positive, got {value}")
    timeout_ms = int(conf.get("ozone.om.ratis.minimum.timeout"))
    return RaftSettings(
        rpc_timeout_min_ms=timeout_ms,
        rpc_timeout_max_ms=timeout_ms + ELECTION_TIMEOUT_SPREAD_MS,
        pre_vote=bool(conf.get("ozone.om.ratis.server.leaderelection.pre-vote")),
        purge_gap=int(conf.get("ozone.om.ratis.log.purge.gap")),
        no_leader_timeout_ms=0,  # OzoneManagerStateMachine keeps Ratis's no-op notifyExtendedNoLeader
        rpc_slowness_timeout_ms=0,  # and notifyFollowerSlowness
    )


class OmDaemon:
    """Ports are known after `start()` (the actual ones when the configuration asks for port 0).
    `scm` may be given (tests); by default the daemon talks RPC to the SCM the configuration names, once
    it has its certificate."""

    def __init__(
        self,
        conf: OzoneConfiguration,
        scm: ScmGateway | None = None,
        clock: Clock | None = None,
        bootstrap: bool = False,
        force: bool = False,
    ) -> None:
        """`bootstrap`: `pyozone om --bootstrap` (`force`: --force), an HA OM asking the leader to add it."""
        self.conf = conf
        self.bootstrap = bootstrap
        self.force_bootstrap = force
        self.secure = security_enabled(conf)
        self.mtls = mtls_enabled(conf)  # refused here when it comes without security
        self.oms = OmAddresses.from_conf(conf)
        """The OMs of this OM's service, or this lone OM's address (ozone.om.address)."""
        self.node: OmNodeDetails | None = local_om_node(conf)
        """This OM's node of its HA service (ozone.om.service.ids), None when it runs alone."""
        self._raft_settings = om_raft_settings(conf) if self.node is not None else None
        # OM has no RPC bind-host key; a non-loopback ozone.om.address binds 0.0.0.0 (docs/differences.md).
        rpc_where = self.oms.lone_address() if self.node is None else self.node.rpc_address
        http_where = address(conf, "ozone.om.http-address") if self.node is None else self.node.http_address
        self.rpc_address = bind_address(conf, rpc_where, None)
        self.http_address = bind_address(conf, http_where, "ozone.om.http-bind-host")
        self.replication: OmReplication | None = None
        self.raft: RaftMember | None = None
        self.membership: OmMembership | None = None
        self.settings = OMSettings.from_conf(conf)
        self.metadata_dir = om_metadata_dir(conf)
        self.keystore_path = keystore_path(conf, self.metadata_dir)
        self.db_path = om_db_path(conf)
        self.clock = clock or SystemClock()
        self.scm: ScmGateway | None = scm
        self.certificate: TlsStore | None = None
        """OM's certificate (ozone.security.enabled); `tls` is it when hdds.grpc.tls.enabled."""
        self.tls: TlsStore | None = None
        self._tokens: BlockTokenIssuer | None = None
        self._stored: StoredLengths | None = None
        self.storage: OMStorage | None = None
        self.store: OMMetadataStore | None = None
        self.core: OzoneManager | None = None
        self.rpc_port = 0
        self.http_port = 0
        self.serving = False
        self._executor = ThreadPoolExecutor(EXECUTOR_THREADS, thread_name_prefix="om")
        self._server: Server | None = None
        self.metrics = MetricsSystem("OzoneManager")
        self.om_metrics = OMMetrics(self.metrics)
        self.counter: NamespaceCounter | None = None
        """Counts of the namespace for the metrics and the UI (once OM has bound to its cluster)."""
        self.key_deleting: KeyDeletingService | None = None
        self.open_key_cleanup: OpenKeyCleanupService | None = None
        self.s3_lifecycle: S3LifecycleService | None = None
        app = daemon_app(self.metrics, conf, self._routes(), om_api(self), UI, administrators_only(conf))
        app.router.add_get(CHECKPOINT_PATH, self._db_checkpoint)
        self._may_fetch_checkpoint = checkpoint_fetchers(
            conf,
            frozenset()
            if self.node is None
            else frozenset(X.om_node_name(n.service_id, n.node_id) for n in self.oms.nodes),
        )
        self.checkpoints = CheckpointSender(self._pack_checkpoint)
        self._http = HttpServer(app)
        self._tasks: list[asyncio.Task[None]] = []
        self._stopping = asyncio.Event()
        self._stopped = False

    # ------------------------------------------------------------------ start
    async def start(self) -> None:
        mode = dir_permissions(self.conf, METADATA_PERMISSIONS_KEY)
        for directory in {self.metadata_dir, self.db_path.parent}:  # before om.db or a key lands there
            private_dir(directory, mode)
        if self.secure:
            await self._obtain_certificate()
        if self.scm is None:
            self.scm = GrpcScm(
                ScmAddresses.from_conf(self.conf), ScmFailoverPolicy.from_conf(self.conf), tls=self.tls
            )
        await self._start_http()
        self.storage = await self._bind_cluster()
        self.store = OMMetadataStore(
            self.db_path, self.settings.max_unflushed_transactions, on_failure=_terminate,
            sync=self.node is None,
        )  # fmt: skip
        core = OzoneManager(self.store, self.scm, self.settings, self.clock)
        lone = self.node is None
        core.master_keys = self._master_keys(self.store, create=lone, record=lone)
        if self.node is not None:
            await self._start_raft(self.node, core)
        self.key_deleting = KeyDeletingService(core)
        self.open_key_cleanup = OpenKeyCleanupService(core)
        deleting, cleanup = self.key_deleting, self.open_key_cleanup
        self.counter = NamespaceCounter(
            self.store,
            self._executor,
            lambda: (self.om_metrics.changes, deleting.progress.runs, cleanup.progress.runs),
        )
        self.counter.refresh(0)  # the first count, so the first scrape has one
        self.om_metrics.watch(self.counter, self.key_deleting, self.open_key_cleanup)
        self.s3_lifecycle = S3LifecycleService(core)
        self.om_metrics.watch_lifecycle(self.s3_lifecycle)
        self.om_metrics.watch_writes(self.store, core.blocks)
        self.core = core  # the web APIs answer from here on
        # What OM loaded to start lives as long as OM: out of the cyclic collector's sight (as SCM's), a
        # full collection walks only what requests made since.
        gc.freeze()
        await self._start_rpc()
        if self.replication is not None:
            self._tasks.append(asyncio.create_task(self._follow_role(self.replication), name="om-role"))
        self._tasks += [
            self._every("key-deleting", self.settings.key_deleting_interval_ms, self.key_deleting.run_once),
            self._every(
                "open-key-cleanup",
                self.settings.open_key_cleanup_interval_ms,
                self.open_key_cleanup.run_once,
            ),
            self._every("s3-lifecycle", self.settings.s3_lifecycle_interval_ms, self.s3_lifecycle.run_once),
        ]
        log.info(
            "OM %s of cluster %s listening: client protocol on %s:%d, http on %s:%d; om.db in %s",
            self.storage.om_uuid,
            self.storage.cluster_id,
            self.rpc_address.host,
            self.rpc_port,
            self.http_address.host,
            self.http_port,
            self.db_path,
        )

    async def initialize(self) -> tuple[OMStorage, bool]:
        """`pyozone om --init` (Ozone's OzoneManager.omInit): SCM's cluster id into VERSION and an empty
        om.db, then `stop()`; True when this initialized the OM, False when it already was."""
        mode = dir_permissions(self.conf, METADATA_PERMISSIONS_KEY)
        for directory in {self.metadata_dir, self.db_path.parent}:
            private_dir(directory, mode)
        existed = read_om_storage(self.metadata_dir) is not None
        if self.secure:
            await self._obtain_certificate()
        if self.scm is None:
            self.scm = GrpcScm(
                ScmAddresses.from_conf(self.conf), ScmFailoverPolicy.from_conf(self.conf), tls=self.tls
            )
        storage = await self._bind_cluster()
        store = OMMetadataStore(self.db_path, self.settings.max_unflushed_transactions, on_failure=_terminate)
        try:
            self._master_keys(store, create=self._makes_keystore(), record=True)
        finally:
            store.close()
        return storage, not existed

    def _makes_keystore(self) -> bool:
        """`om --init` makes the keystore of a lone OM, or of the first OM `ozone.om.nodes.SERVICE` names:
        the OMs of an HA service share that one; `om --init` of another refuses until it is copied there
        (R36 F4: three OMs with three keys under one version number fail at the first failover)."""
        if self.node is None:
            return True
        first = self.oms.nodes[0].node_id
        path = self.keystore_path
        if first != self.node.node_id and not path.exists():
            raise ServerStartError(
                f"{KEYSTORE_KEY}: {path} is missing: the OMs of service {self.node.service_id} share one SSE "
                f"master keystore, which `om --init` makes on {first}: copy {first}'s file here (0600), "
                "then run `om --init` again"
            )
        return first == self.node.node_id

    def _master_keys(self, store: OMMetadataStore, create: bool, record: bool) -> MasterKeyStore | None:
        """SSE-S3's master keystore (om/master_keys.py), bound to om.db: created by `om --init` and a lone
        OM's start of an om.db that names none, which records its id (KEYSTORE_ID); a start with another
        keystore, or none where om.db names one, is refused. `record`: om.db naming none records this one's
        id (`om --init`, a lone OM's start; an HA member's start compares only: its om.db is the Raft
        group's, the id comes with its `om --init` or the leader's checkpoint)."""
        path = self.keystore_path
        raw = store.get(META_TABLE, KEYSTORE_ID)
        recorded = raw.decode() if raw is not None else None
        try:
            keys = open_keystore(path, create, recorded)
        except (MasterKeyError, OSError) as e:
            raise ServerStartError(f"{KEYSTORE_KEY}: {e}") from None
        if keys is None:
            log.warning("no SSE master keystore at %s (%s): SSE-S3 writes are refused", path, KEYSTORE_KEY)
        elif recorded is None and record:
            store.write([(META_TABLE, KEYSTORE_ID, keys.keystore_id.encode())])
            store.sync()
        return keys

    async def _start_raft(self, node: OmNodeDetails, core: OzoneManager) -> None:
        """This OM's member of its service's Raft group, applying into om.db (om/server/ha.py)."""
        assert self.store is not None
        conf = self.conf
        written = next(self.store.scan(VOLUME_TABLE), None) is not None
        if written and self.store.get(META_TABLE, TRANSACTION_INFO) is None:
            raise ServerStartError(
                f"{self.db_path} holds a namespace a lone OM wrote (no {TRANSACTION_INFO}): OM "
                f"{node.node_id} of service {node.service_id} cannot start from it, as the other OMs do "
                "not have it and it is no Raft snapshot they could install; start the service's OMs on "
                "empty om.db directories, or run this one without ozone.om.service.ids"
            )
        if node.node_id in self.oms.decommissioned:
            raise ServerStartError(
                f"OM {node.node_id} is decommissioned "
                f"({suffixed('ozone.om.decommissioned.nodes', node.service_id)}): it is no member of "
                f"{node.service_id} any more"
            )
        nodes = self.oms.nodes
        active = self.oms.active
        ratis_dir = Path(str(conf.get("ozone.om.ratis.storage.dir") or self.metadata_dir / "ratis"))
        private_dir(ratis_dir, dir_permissions(conf, METADATA_PERMISSIONS_KEY))
        group_id = om_raft_group_id(node.service_id)
        counted = (ratis_dir / group_id / MEMBERS_FILE).exists()  # confirmed members, before this start
        try:
            first = await first_members(
                node, ratis_dir / group_id, {n.node_id: n for n in nodes}, {n.node_id: n for n in active},
                self.tls, self.bootstrap,
            )  # fmt: skip
        except MembershipRefused as e:
            raise ServerStartError(str(e)) from None
        group = RaftGroup(group_id, tuple(RaftPeer(RaftPeerId(n.node_id), n.ratis_address) for n in first))
        settings = self._raft_settings
        assert settings is not None
        self.replication = OmReplication(
            self.store, core, node.node_id, {n.node_id: str(n.rpc_address) for n in nodes},
            int(conf.get("ozone.om.ratis.server.retry.cache.timeout")),
            int(conf.get("ozone.om.ratis.server.request.timeout")), settings.append_byte_limit,
            int(conf.get("ozone.om.ratis.snapshot.auto.trigger.threshold")),
            {n.node_id: str(n.http_address) for n in nodes}, self.tls, node.service_id,
        )  # fmt: skip
        group_dir = ratis_dir / group.group_id
        storage = SegmentedRaftLog(group_dir, int(conf.get("ozone.om.ratis.segment.size")))
        self.raft = OmRaftMember(
            RaftPeerId(node.node_id), group, storage, self.replication, settings, self.tls, CertRole.OM,
            bind_host=bind_address(conf, node.ratis_address, None).host,
            known_peers=tuple(RaftPeer(RaftPeerId(n.node_id), n.ratis_address) for n in nodes),
            service_id=node.service_id,
        )  # fmt: skip
        self.replication.attach(self.raft)
        self.replication.members_at_install = leader_members({n.node_id: n for n in nodes}, self.tls)
        self.replication.on_failed = _raft_failed
        self.om_metrics.watch_raft(self.replication)
        try:
            await self.raft.start()
        except OSError as e:
            where = f"{node.ratis_address} (ozone.om.ratis.port of {node.service_id}.{node.node_id})"
            raise ServerStartError(f"cannot bind OM's Raft server to {where}: {e.strerror or e}") from None
        except StateMachineBehindLogError as e:
            # Not "delete the Raft log": the leader counts the entries this OM acknowledged as stored here
            # and would never send them again.
            raise ServerStartError(
                f"{self.db_path} holds the namespace up to Raft index "
                f"{e.state_machine_at.index if e.state_machine_at else 0}, but OM {node.node_id}'s Raft log "
                f"({group_dir}) starts after index {e.log_starts_after.index}: the entries between were "
                "purged after a snapshot om.db no longer holds (om.db lost writes, or is an older copy), and "
                "applying the log after them would skip them. Restore the om.db that went with this log, or "
                f"put a checkpoint of another OM's om.db in its place: GET {CHECKPOINT_PATH} on the leader's "
                "web server (ozone.om.http-address of its node) answers a tar of its om.db; unpack it as "
                f"{self.db_path} and start again"
            ) from None
        log.info("OM %s of service %s: Raft group %s on %s, its log in %s", node.node_id, node.service_id,
                 group.group_id, node.ratis_address, ratis_dir)  # fmt: skip
        self.membership = OmMembership(conf, node, self.replication, self.raft)
        try:
            others = {n.node_id: n for n in active}
            await join_service(
                node, others, self.raft, self.tls, self.bootstrap, self.force_bootstrap, counted
            )
        except MembershipRefused as e:
            raise ServerStartError(str(e)) from None
        members_confirmed(group_dir)

    async def _obtain_certificate(self) -> None:
        """OM's certificate from SCM's CA (waiting for SCM), and its renewal until OM stops. An HA OM's
        names its node's host and its "SERVICE/NODE" (X.om_node): its Raft port's peers check both
        (raft_member.py), and each OM of the service holds its own."""
        where = self.oms.lone_address() if self.node is None else self.node.rpc_address
        hosts = service_hosts(where.host)
        om_node = None if self.node is None else X.om_node_name(self.node.service_id, self.node.node_id)
        self.certificate = await asyncio.to_thread(
            daemon_tls, self.conf, CertRole.OM, self.metadata_dir, hosts, om_node=om_node
        )
        if self.mtls:
            self.tls = self.certificate
        renewer = CertRenewer(self.conf, self.certificate, CertRole.OM, hosts, om_node=om_node)
        self._tasks.append(asyncio.create_task(renewer.run(self._stopping), name="om-cert-renewer"))

    async def _start_http(self) -> None:
        context = self.tls.server_context() if self.tls is not None else None
        try:
            self.http_port = await self._http.start(
                self.http_address.host, self.http_address.port, ssl_context=context
            )
        except OSError as e:
            where = f"{self.http_address} (ozone.om.http-address, ozone.om.http-bind-host)"
            raise ServerStartError(f"cannot bind the OM http server to {where}: {e.strerror}") from None

    async def _bind_cluster(self) -> OMStorage:
        """SCM's cluster id, asked until SCM answers; VERSION is written or checked against it."""
        loop = asyncio.get_running_loop()
        assert self.scm is not None
        scm = self.scm
        attempts = 0
        while True:
            try:
                info = await loop.run_in_executor(self._executor, scm.scm_info)
                break
            except ScmClientError as e:
                if not e.retryable:
                    raise ServerStartError(f"SCM refused getScmInfo: {e}") from None
                if attempts % 10 == 0:
                    log.info("waiting for SCM: %s", e)
                attempts += 1
                await asyncio.sleep(SCM_RETRY_S)
        storage, created = bind_to_cluster(self.metadata_dir, info.cluster_id)
        if created:
            log.info("OM initialized for cluster %s: omUuid %s", storage.cluster_id, storage.om_uuid)
        return storage

    async def _start_rpc(self) -> None:
        assert self.core is not None and self.storage is not None
        server = Server(server_settings(), limits=OMRequestLimits())
        self._tokens = BlockTokenIssuer.of(
            self.settings.block_tokens, self.certificate, lambda cert: SecretKeyCache.connect(self.conf, cert)
        )
        self._stored = StoredLengths(
            self.core, self.tls, self._tokens, self.core.settings.length_check_timeout_ms / 1000
        )
        service = OzoneManagerService(
            self.core,
            self._executor,
            self.storage.om_uuid,
            self.storage.cluster_id,
            self._tokens,
            observe=self.om_metrics.observe,
            stored=self._stored,
            lifecycle=self.s3_lifecycle,
        )
        service.ha = self.replication
        add_om_service(server, service)
        add_om_admin_service(
            server, OzoneManagerAdminService(service.access, self.replication, self.membership)
        )
        try:
            self.rpc_port = await server.start(self.rpc_address.host, self.rpc_address.port, self.tls)
        except OSError as e:
            raise ServerStartError(
                f"cannot bind the OM to {self.rpc_address} (ozone.om.address): {e.strerror or e}"
            ) from None
        self._server = server
        self.serving = True

    @staticmethod
    async def _follow_role(replication: OmReplication) -> None:
        """An elected OM steps up, a deposed one down, without waiting for a client's call; a look that
        fails is logged and the next one comes (a client's call would step it up meanwhile)."""
        while True:
            await asyncio.sleep(ROLE_CHECK_INTERVAL_S)
            try:
                replication.follow_role()
            except Exception:
                log.exception("OM's look at its Raft role failed")

    def _every(self, name: str, interval_ms: int, step: Callable[[], object]) -> asyncio.Task[None]:
        async def loop() -> None:
            running = asyncio.get_running_loop()
            while True:
                await asyncio.sleep(interval_ms / 1000)
                if self.replication is not None and not self.replication.leading():
                    continue  # OM HA: the leader's services only (a follower executes nothing)
                try:
                    await running.run_in_executor(self._executor, step)
                except Exception:
                    log.exception("%s service run failed", name)

        return asyncio.create_task(loop(), name=f"om-{name}")

    def off_loop(self, call: Callable[..., T], *args: object) -> asyncio.Future[T]:
        """`call(*args)` on OM's executor, as every core call: the web APIs' reads of om.db."""
        return asyncio.get_running_loop().run_in_executor(self._executor, call, *args)

    async def _db_checkpoint(self, request: web.Request) -> web.StreamResponse:
        """`/dbCheckpoint` (Ozone's OMDBCheckpointServlet): a tar of an om.db checkpoint with every applied
        entry in it, its SHA-256 and #TRANSACTIONINFO in headers (om/db_checkpoint.py), for a follower
        behind the purged Raft log; one checkpoint at a time, shared, bounded (checkpoint_sender.py). Over
        mutual TLS only OMs and administrators may fetch it, as Ozone allows OM's principals and
        ozone.administrators."""
        store = self.store
        if store is None or self.replication is None:
            return json_refusal(503, "om.db checkpoints are served by an OM of an HA service once it started")
        if not self._may_fetch_checkpoint(request):
            return json_refusal(403, "only OMs and administrators may fetch om.db's checkpoint")
        return await self.checkpoints.send(request)

    async def _pack_checkpoint(self) -> PackedCheckpoint:
        assert self.store is not None
        return await self.off_loop(self.store.pack_checkpoint)

    def _routes(self) -> dict[str, Route]:
        def ready() -> JsonResponse:
            up = self.serving
            storage = self.storage
            return JsonResponse(
                200 if up else 503,
                {
                    "ready": up,
                    "clusterId": storage.cluster_id if storage else None,
                    "omId": storage.om_uuid if storage else None,
                },
            )

        return {"/ready": ready, "/health": lambda: JsonResponse(200, {"healthy": True})}

    # ------------------------------------------------------------------ stop
    async def stop(self, grace_s: float = SHUTDOWN_GRACE_S) -> None:
        """Not ready first, then no new RPCs (in-flight ones get `grace_s`), then the services stop and
        om.db is closed. Safe to call twice or after a failed start."""
        if self._stopped:
            return
        self._stopped = True
        self._stopping.set()
        self.serving = False
        if self._server is not None:
            await self._server.stop(grace_s)
        if self.replication is not None and self.raft is not None and self.raft.running:
            await self.replication.auto_snapshot.at_stop()
        if self.raft is not None:
            await self.raft.stop()
        if self.replication is not None:
            await self.replication.auto_snapshot.ended()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._http.stop()
        # Running service steps finish before om.db closes under them.
        await asyncio.get_running_loop().run_in_executor(None, self._executor.shutdown, True)
        if self.store is not None:
            self.store.close()
        if self._stored is not None:
            await self._stored.close()
        if self._tokens is not None:
            self._tokens.close()
        close = getattr(self.scm, "close", None)
        if close is not None:
            close()
        log.info("OM stopped")


async def serve(conf: OzoneConfiguration, bootstrap: bool = False, force: bool = False) -> int:
    """Runs the daemon until SIGTERM or SIGINT (also while it still waits for SCM), then stops it."""
    return await run_until_signalled(OmDaemon(conf, bootstrap=bootstrap, force=force), "OM")


def start_om(conf: OzoneConfiguration, bootstrap: bool = False, force: bool = False) -> int:
    """`pyozone om [--bootstrap [--force]]`: the daemon's entry point."""
    gc.set_threshold(*GC_THRESHOLDS)
    return run_on_rpc_loop(serve(conf, bootstrap, force))


async def _initialize(conf: OzoneConfiguration) -> tuple[OMStorage, bool, Path]:
    daemon = OmDaemon(conf)
    try:
        storage, created = await daemon.initialize()
    finally:
        await daemon.stop(0)
    return storage, created, daemon.metadata_dir


def init_om(conf: OzoneConfiguration) -> tuple[OMStorage, bool, Path]:
    """`pyozone om --init`: the OM's identity (created or found) and where its storage directory is."""
    return run_on_rpc_loop(_initialize(conf))
