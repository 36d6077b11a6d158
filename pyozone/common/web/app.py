"""A daemon's whole web server as one aiohttp application: readiness, operator endpoints, JSON APIs and UI.

    /                 the daemon's UI (its index.html; pages are hash routes such as /#!/pipelines)
    /ui/...           the daemon's own scripts and pages
    /static/...       what every UI shares: ozone.js (fetch, tables, pagers, charts), ozone.css
    /api/v1/...       the JSON APIs the pages read (docs/web.md lists them)
    /prom /jmx /conf /stacks /logLevel    the operator endpoints (ops.py)
    /ready /health    readiness, as before

No build step: the pages are static HTML and JavaScript over the JSON APIs.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from aiohttp import web

from pyozone.common.http_json import Route, json_endpoints
from pyozone.common.web.api import ApiHandler, api_routes
from pyozone.common.web.metrics import MetricsSystem
from pyozone.common.web.ops import ChangeCheck, ops_routes
from pyozone.config import OzoneConfiguration

STATIC = Path(__file__).parent / "static"


def daemon_app(
    metrics: MetricsSystem,
    conf: OzoneConfiguration,
    readiness: Mapping[str, Route],
    api: Mapping[str, ApiHandler] | None = None,
    ui: Path | None = None,
    may_change: ChangeCheck | None = None,
) -> web.Application:
    """`ui`: the directory with the daemon's index.html and scripts (None: no pages, as the S3 gateway)."""
    app = json_endpoints(readiness)
    app.add_routes(ops_routes(metrics, conf, may_change))
    app.add_routes(api_routes(api or {}))
    app.router.add_static("/static/", STATIC)
    app.router.add_get("/favicon.ico", _no_icon)
    if ui is not None:
        index = ui / "index.html"

        async def page(_: web.Request) -> web.FileResponse:
            return web.FileResponse(index)

        app.router.add_get("/", page)
        app.router.add_get("/index.html", page)
        app.router.add_static("/ui/", ui)
    return app


async def _no_icon(_: web.Request) -> web.Response:
    return web.Response(status=204)
