"""SCM's web APIs in-process: a simulated cluster (the real core on virtual time) and its API handlers
called through aiohttp's router, so paths, query parsing and error answers are the daemon's."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from pyozone.common.web.api import ApiHandler, api_routes
from pyozone.config import OzoneConfiguration
from pyozone.sim.cluster import SimCluster

SECOND = 1_000
MINUTE = 60 * SECOND


def settled_cluster(
    datanodes: int = 6, racks: int = 2, overrides: Mapping[str, str] | None = None, metadata_disks: int = 1
) -> SimCluster:
    """Out of safe mode with its pipelines open (Ozone's default intervals, on virtual time)."""
    c = SimCluster(
        datanodes, racks=racks, metadata_disks=metadata_disks, conf=OzoneConfiguration(dict(overrides or {}))
    )
    assert c.run_until(lambda: not c.scm.safe_mode.in_safe_mode(), 10 * MINUTE)
    c.advance(3 * MINUTE)
    return c


def get(api: Mapping[str, ApiHandler], path: str) -> tuple[int, Any]:
    """(status, JSON body) of GET `path` on the handlers."""

    async def run() -> tuple[int, Any]:
        app = web.Application()
        app.add_routes(api_routes(api))
        async with TestClient(TestServer(app, host="127.0.0.1")) as client:
            response = await client.get(path)
            return response.status, await response.json()

    return asyncio.run(run())


def ok(api: Mapping[str, ApiHandler], path: str) -> Any:
    status, body = get(api, path)
    assert status == 200, (path, status, body)
    return body


def bad(api: Mapping[str, ApiHandler], path: str, status: int = 400) -> str:
    """The error message of a refused request."""
    answer, body = get(api, path)
    assert answer == status, (path, answer, body)
    return body["error"]
