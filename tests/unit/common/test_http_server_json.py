"""The daemons' JSON endpoints: answers, HEAD, unknown paths and methods, a failing route."""

from __future__ import annotations

import pytest

from pyozone.common.http_json import JsonResponse, json_endpoints
from tests.unit.common.http_helpers import async_test, exchange, get, serving


def _boom() -> JsonResponse:
    raise RuntimeError("boom")


ROUTES = {
    "/ready": lambda: JsonResponse(503, {"ready": False}),
    "/health": lambda: JsonResponse(200, {"healthy": True}),
    "/boom": _boom,
}


@async_test
async def test_routes_answer_json_with_their_status() -> None:
    async with serving(json_endpoints(ROUTES)) as port:
        ready = await get(port, "/ready?verbose=1")  # the query does not change the route
        assert (ready.status, ready.json()) == (503, {"ready": False})
        assert ready.headers["content-type"].startswith("application/json")
        assert (await get(port, "/health")).json() == {"healthy": True}


@async_test
async def test_head_sends_the_head_only() -> None:
    async with serving(json_endpoints(ROUTES)) as port:
        head = await get(port, "/health", "HEAD")
        assert head.status == 200 and head.body == b""
        assert int(head.headers["content-length"]) > 0  # the length GET's body would have


@async_test
async def test_unknown_paths_and_other_methods_are_answered_in_json() -> None:
    async with serving(json_endpoints(ROUTES)) as port:
        missing = await get(port, "/nope")
        assert missing.status == 404 and "/nope" in missing.json()["error"]
        post = await exchange(port, b"POST /ready HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\n\r\n{}")
        assert post is not None and post.status == 405 and "POST" in post.json()["error"]
        assert "GET" in post.headers["allow"]


@async_test
async def test_a_failing_route_is_a_500_and_the_server_goes_on(caplog: pytest.LogCaptureFixture) -> None:
    async with serving(json_endpoints(ROUTES)) as port:
        failed = await get(port, "/boom")
        assert (failed.status, failed.json()) == (500, {"error": "internal error"})
        assert "boom" in caplog.text  # the traceback is logged, not sent
        assert (await get(port, "/health")).status == 200
