"""The daemons' JSON endpoints (/ready, /health, /traffic): fixed GET/HEAD paths answered from the
daemon's state, as an aiohttp application for http_server.HttpServer."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from aiohttp import web


@dataclass(frozen=True, slots=True)
class JsonResponse:
    status: int
    body: Any  # JSON-serialisable


Route = Callable[[], JsonResponse]
"""Builds the answer for one path; runs on the event loop, so it may read the daemon's state directly."""


def json_endpoints(routes: Mapping[str, Route]) -> web.Application:
    """GET and HEAD on each path (the query is ignored); any other path or method is answered in JSON too,
    so a poller parses every answer the same way. A route that raises gets the server's 500 refusal."""
    app = web.Application(middlewares=[json_http_errors])
    for path, route in routes.items():
        app.router.add_get(path, _handler(route))  # HEAD too: aiohttp sends the head without the body
    return app


def _handler(route: Route) -> Callable[[web.Request], Awaitable[web.Response]]:
    async def handle(_: web.Request) -> web.Response:
        answer = route()
        return web.json_response(answer.body, status=answer.status)

    return handle


@web.middleware
async def json_http_errors(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    try:
        return await handler(request)
    except web.HTTPException as e:  # the router's 404 (unknown path) and 405 (say, a POST)
        allow = {"Allow": e.headers["Allow"]} if "Allow" in e.headers else None
        body = {"error": f"{e.reason}: {request.method} {request.path}"}
        return web.json_response(body, status=e.status, headers=allow)
