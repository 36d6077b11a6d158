"""The S3 gateway daemon: an Ozone client behind an aiohttp server, plus a readiness endpoint on the web
admin port (S3 owns every path of its own port: `/ready` there would be a bucket).

Start-up: the admin endpoint first (pollers see 503, not a refused connection), then the S3 volume (made
if missing, retried while OM starts), then the S3 port.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from pyozone.client.client import AsyncOzoneClient
from pyozone.client.errors import OMException, OMUnavailableError
from pyozone.common.daemon_run import run_until_signalled
from pyozone.common.http_json import JsonResponse, json_endpoints
from pyozone.common.http_server import HttpServer
from pyozone.common.net import address
from pyozone.config import OzoneConfiguration
from pyozone.s3g.app import make_app, refusal
from pyozone.s3g.authenticate import SigningKeys
from pyozone.s3g.request import Gateway
from pyozone.s3g.settings import S3GatewaySettings

log = logging.getLogger(__name__)

OM_RETRY_S = 1.0
ADMIN_PORT_DEFAULT = 19878


class S3GatewayDaemon:
    def __init__(self, conf: OzoneConfiguration) -> None:
        self.settings = S3GatewaySettings.from_conf(conf)
        self.admin_address = address(conf, "ozone.s3g.webadmin.http-address", default_port=ADMIN_PORT_DEFAULT)
        self.client = AsyncOzoneClient(conf)
        limits = self.settings.http_limits()
        keys = SigningKeys(self.settings.signing_key_ttl_s)
        self.gateway = Gateway(self.client, self.settings, keys, limits.body_idle_timeout_s)
        self.server = HttpServer(make_app(self.gateway), limits, refusal)
        self.admin = HttpServer(json_endpoints({"/ready": self._ready}))
        self.port = 0
        self.admin_port = 0
        self.serving = False

    def _ready(self) -> JsonResponse:
        if self.serving:
            return JsonResponse(200, {"ready": True, "s3": f"{self.settings.address.host}:{self.port}"})
        return JsonResponse(503, {"ready": False})

    async def start(self) -> None:
        self.admin_port = await self.admin.start(self.settings.bind_host, self.admin_address.port)
        await self._ensure_volume()
        self.port = await self.server.start(self.settings.bind_host, self.settings.address.port)
        self.serving = True
        log.info(
            "S3 gateway serving on %s:%d (volume %s)",
            self.settings.bind_host,
            self.port,
            self.settings.volume,
        )

    async def _ensure_volume(self) -> None:
        """Ozone's OM creates the s3v volume at start; here the gateway does, on its first start."""
        while True:
            try:
                await self.client.volume_info(self.settings.volume)
                return
            except OMException as e:
                if e.result != "VOLUME_NOT_FOUND":
                    raise
                with contextlib.suppress(OMException):  # another gateway may create it first
                    await self.client.create_volume(self.settings.volume)
                return
            except OMUnavailableError:
                log.info("waiting for OM to create or find volume %s", self.settings.volume)
                await asyncio.sleep(OM_RETRY_S)

    async def stop(self) -> None:
        self.serving = False
        await self.server.stop()
        await self.admin.stop()
        await self.client.close()


async def serve(conf: OzoneConfiguration) -> int:
    """Runs the gateway until SIGTERM or SIGINT (also while it still waits for OM), then stops it."""
    return await run_until_signalled(S3GatewayDaemon(conf), "S3 gateway")


def start_s3g(conf: OzoneConfiguration) -> int:
    """`pyozone s3g`: the daemon's entry point."""
    return asyncio.run(serve(conf))
