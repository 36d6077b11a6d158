"""The S3 gateway daemon: an Ozone client behind an aiohttp server, plus a readiness endpoint on the web
admin port (S3 owns every path of its own port: `/ready` there would be a bucket).

Start-up: with ozone.security.enabled, the gateway's certificate first (from SCM's CA on the first start,
renewed in the background); then the admin endpoint (pollers see 503, not a refused connection), then the
S3 volume (made if missing, retried while OM starts; a refusal fails the start), then the S3 port. With
hdds.grpc.tls.enabled both ports are https with client certificates required, and the gateway reaches OM
and the datanodes with its own (S3G) certificate, which lets OM take the user a request acts for from it.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace

from pyozone.client.client import AsyncOzoneClient
from pyozone.client.config import ClientConfig, checksum_type
from pyozone.client.errors import OMException, OMUnavailableError
from pyozone.common.daemon_run import run_until_signalled
from pyozone.common.http_json import JsonResponse
from pyozone.common.http_server import HttpServer
from pyozone.common.net import address
from pyozone.common.tls import TlsStore
from pyozone.common.tls_mode import mtls_enabled, security_enabled, service_hosts
from pyozone.common.web.app import daemon_app
from pyozone.common.web.metrics import MetricsSystem
from pyozone.common.web.ops import administrators_only
from pyozone.config import OzoneConfiguration
from pyozone.config.dirs import metadata_dir
from pyozone.hdds.security.x509 import CertRole
from pyozone.rpc.loop import run as run_on_rpc_loop
from pyozone.s3g.app import make_app, refusal
from pyozone.s3g.authenticate import SigningKeys
from pyozone.s3g.metrics import S3GatewayMetrics
from pyozone.s3g.request import Gateway
from pyozone.s3g.settings import S3GatewaySettings
from pyozone.security.cert_client import CertRenewer, daemon_tls

log = logging.getLogger(__name__)

OM_RETRY_S = 1.0
ADMIN_PORT_DEFAULT = 19878


class S3GatewayDaemon:
    def __init__(self, conf: OzoneConfiguration) -> None:
        self.conf = conf
        self.secure = security_enabled(conf)
        self.mtls = mtls_enabled(conf)  # refused here when it comes without security
        self.settings = S3GatewaySettings.from_conf(conf)
        checksum_type(conf)  # the gateway's client is built after its certificate: a bad value fails first
        self.admin_address = address(conf, "ozone.s3g.webadmin.http-address", default_port=ADMIN_PORT_DEFAULT)
        self.certificate: TlsStore | None = None
        """The gateway's certificate (ozone.security.enabled); `tls` is it when hdds.grpc.tls.enabled."""
        self.tls: TlsStore | None = None
        self.client: AsyncOzoneClient | None = None  # made once the certificate is known
        self.server: HttpServer | None = None
        self.metrics = MetricsSystem("S3Gateway")
        self.s3_metrics = S3GatewayMetrics(self.metrics)
        self.admin = HttpServer(
            daemon_app(self.metrics, conf, {"/ready": self._ready}, may_change=administrators_only(conf))
        )
        self.port = 0
        self.admin_port = 0
        self.serving = False
        self._stopping = asyncio.Event()
        self._renewing: asyncio.Task[None] | None = None

    def _ready(self) -> JsonResponse:
        if self.serving:
            return JsonResponse(200, {"ready": True, "s3": f"{self.settings.address.host}:{self.port}"})
        return JsonResponse(503, {"ready": False})

    async def start(self) -> None:
        if self.secure:
            await self._obtain_certificate()
        # A service's own certificate outranks the user's client keys a shared ozone-site.xml may hold.
        config = ClientConfig.from_conf(self.conf, tls=self.tls)
        config = replace(config, om_deadline_s=self.settings.commit_deadline_s)  # S3 clients time out sooner
        self.client = AsyncOzoneClient(config=config)
        limits = self.settings.http_limits()
        keys = SigningKeys(self.settings.signing_key_ttl_s)
        gateway = Gateway(self.client, self.settings, keys, limits.body_idle_timeout_s)
        # A request whose client went away is cancelled: it must not commit after the client moved on.
        app = make_app(gateway, self.s3_metrics)
        self.server = HttpServer(app, limits, refusal, cancel_on_disconnect=True)
        context = self.tls.server_context() if self.tls is not None else None
        self.admin_port = await self.admin.start(
            self.settings.bind_host, self.admin_address.port, ssl_context=context
        )
        await self._ensure_volume(self.client)
        self.port = await self.server.start(
            self.settings.bind_host, self.settings.address.port, ssl_context=context
        )
        self.serving = True
        log.info(
            "S3 gateway serving on %s:%d (volume %s)",
            self.settings.bind_host,
            self.port,
            self.settings.volume,
        )

    async def _obtain_certificate(self) -> None:
        """The gateway's certificate from SCM's CA (waiting for SCM), renewed until the gateway stops."""
        hosts = service_hosts(self.settings.address.host)
        directory = metadata_dir(self.conf, "S3 gateway", "its key pair and certificate")
        self.certificate = await asyncio.to_thread(daemon_tls, self.conf, CertRole.S3G, directory, hosts)
        if self.mtls:
            self.tls = self.certificate
        renewer = CertRenewer(self.conf, self.certificate, CertRole.S3G, hosts)
        self._renewing = asyncio.create_task(renewer.run(self._stopping), name="s3g-cert-renewer")

    async def _ensure_volume(self, client: AsyncOzoneClient) -> None:
        """Ozone's OM creates the s3v volume at start; here the gateway does, on its first start, as itself
        (with ozone.acl.enabled: its certificate over TLS, else its login user, must be an administrator).

        A refusal fails the start with OM's reason rather than serving: without its volume every request
        would fail, and only an administrator can fix that (make the volume, or run the gateway as one),
        so an operator is better told at once than by a gateway that looks up but answers nothing."""
        volume = self.settings.volume
        while True:
            try:
                await client.volume_info(volume)
                return
            except OMException as e:
                if e.result != "VOLUME_NOT_FOUND":
                    raise _volume_refused(volume, "find", e) from None
                try:
                    await client.create_volume(volume)
                except OMException as e:
                    if e.result != "VOLUME_ALREADY_EXISTS":  # else another gateway made it first
                        raise _volume_refused(volume, "create", e) from None
                return
            except OMUnavailableError:
                log.info("waiting for OM to create or find volume %s", volume)
                await asyncio.sleep(OM_RETRY_S)

    async def stop(self) -> None:
        self.serving = False
        self._stopping.set()
        if self._renewing is not None:
            await self._renewing
        if self.server is not None:
            await self.server.stop()
        await self.admin.stop()
        if self.client is not None:
            await self.client.close()


def _volume_refused(volume: str, action: str, e: OMException) -> OMException:
    return OMException(
        e.result,
        f"the S3 gateway cannot {action} its volume {volume}: {e.message} (an administrator may create it: "
        f"pyozone sh volume create /{volume}; or run the gateway as an administrator)",
    )


async def serve(conf: OzoneConfiguration) -> int:
    """Runs the gateway until SIGTERM or SIGINT (also while it still waits for OM), then stops it."""
    return await run_until_signalled(S3GatewayDaemon(conf), "S3 gateway")


def start_s3g(conf: OzoneConfiguration) -> int:
    """`pyozone s3g`: the daemon's entry point."""
    return run_on_rpc_loop(serve(conf))
