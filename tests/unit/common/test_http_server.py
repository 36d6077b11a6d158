"""The HTTP server's guards against hostile or broken clients, each shown with the server still serving
others: oversized heads, a head dribbled byte by byte (slowloris), idle keep-alive connections, a client
that half-closes, and a bounded stop."""

from __future__ import annotations

import asyncio
import socket
import time

import pytest
from aiohttp import web

from pyozone.common.http_json import JsonResponse, json_endpoints
from pyozone.common.http_server import HttpLimits, HttpServer
from tests.unit.common.http_helpers import (
    async_test,
    closed_by_server,
    exchange,
    get,
    read_answer,
    serving,
)

SMALL = HttpLimits(max_line_size=200, max_field_size=100, max_headers=5)
SLOW_HEAD = HttpLimits(head_timeout_s=0.3, keepalive_timeout_s=30)  # each timeout alone decides its test
IDLE = HttpLimits(head_timeout_s=30, keepalive_timeout_s=0.3)


def _health() -> web.Application:
    """A fresh application per test: an aiohttp application belongs to the event loop that first ran it."""
    return json_endpoints({"/health": lambda: JsonResponse(200, {"healthy": True})})


def _request(*headers: bytes, target: bytes = b"/health") -> bytes:
    return b"GET " + target + b" HTTP/1.1\r\nHost: t\r\n" + b"".join(h + b"\r\n" for h in headers) + b"\r\n"


@async_test
async def test_the_port_is_bound_and_a_taken_one_is_an_os_error() -> None:
    async with serving(_health()) as port:
        assert (await get(port, "/health")).json() == {"healthy": True}
        with pytest.raises(OSError):
            await HttpServer(json_endpoints({})).start("127.0.0.1", port)


@pytest.mark.parametrize(
    "flood",
    [
        _request(b"X-Big: " + b"y" * 101),  # one field over max_field_size
        _request(*(b"X-%d: v" % i for i in range(6))),  # more than max_headers
        _request(target=b"/" + b"x" * 200),  # a request line over max_line_size
    ],
    ids=["field", "count", "line"],
)
@async_test
async def test_an_oversized_head_is_refused_with_431_and_the_server_goes_on(flood: bytes) -> None:
    async with serving(_health(), SMALL) as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(flood)  # no half-close: the server closes by itself
        refused = await read_answer(reader)
        assert refused is not None and refused.status == 431
        assert refused.json() == {"error": "request head too large"}
        assert await closed_by_server(reader)
        writer.close()
        assert (await get(port, "/health")).status == 200


@async_test
async def test_a_malformed_head_is_a_400_in_json() -> None:
    async with serving(_health()) as port:
        garbage = await exchange(port, b"garbage\r\n\r\n")
        assert garbage is not None and garbage.status == 400 and "error" in garbage.json()
        no_host = await exchange(port, b"GET /health HTTP/1.1\r\n\r\n")  # HTTP/1.1 requires Host
        assert no_host is not None and no_host.status == 400
        assert await exchange(port, b"GET /hea") is None  # half a head, then EOF: closed unanswered
        assert (await get(port, "/health")).status == 200


@async_test
async def test_a_head_dribbled_byte_by_byte_is_cut_off_at_the_head_deadline() -> None:
    async with serving(_health(), SLOW_HEAD) as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        head = _request(b"X-Pad: " + b"p" * 64)  # a complete head, were it sent in time
        start, sent = time.monotonic(), 0
        try:
            while sent < len(head) and not reader.at_eof():
                writer.write(head[sent : sent + 1])
                await writer.drain()
                sent += 1
                assert (await get(port, "/health")).status == 200  # others are served meanwhile
                await asyncio.sleep(0.02)  # the slowloris's pace: 50 bytes a second
        except ConnectionError:
            pass  # the server's close surfaced as a reset on a write
        assert sent < len(head) and 0.3 <= time.monotonic() - start < 2
        assert await closed_by_server(reader)
        writer.close()


@async_test
async def test_a_slow_head_within_the_deadline_is_served() -> None:
    async with serving(_health(), HttpLimits(head_timeout_s=2.0)) as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        for piece in (b"GET /health HT", b"TP/1.1\r\nHo", b"st: t\r\n", b"\r\n"):
            writer.write(piece)
            await asyncio.sleep(0.05)  # the head arrives in pieces, whole well within 2 s
        answer = await read_answer(reader)
        assert answer is not None and answer.status == 200
        writer.close()


@async_test
async def test_idle_connections_are_closed_after_the_keepalive_timeout() -> None:
    async with serving(_health(), IDLE) as port:
        silent_reader, silent = await asyncio.open_connection("127.0.0.1", port)  # never sends a byte
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(_request())
        first = await read_answer(reader)
        assert first is not None and first.status == 200
        writer.write(_request())  # keep-alive: the same connection serves a second request
        second = await read_answer(reader)
        assert second is not None and second.status == 200
        start = time.monotonic()
        assert await closed_by_server(reader) and await closed_by_server(silent_reader)
        assert time.monotonic() - start < 2
        writer.close()
        silent.close()


@async_test
async def test_a_client_that_half_closes_after_its_request_gets_its_answer() -> None:
    async with serving(_health()) as port:
        answer = await exchange(port, _request())
        assert answer is not None and answer.json() == {"healthy": True}


@async_test
async def test_stop_waits_for_an_in_flight_request_at_most_the_shutdown_timeout() -> None:
    entered = asyncio.Event()

    async def hang(_: web.Request) -> web.Response:
        entered.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    app = web.Application()
    app.router.add_get("/hang", hang)
    server = HttpServer(app, HttpLimits(shutdown_timeout_s=0.3))
    port = await server.start("127.0.0.1", 0)
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(_request(target=b"/hang"))
    await asyncio.wait_for(entered.wait(), 5)
    start = time.monotonic()
    await server.stop()
    assert time.monotonic() - start < 2
    assert await closed_by_server(reader)
    writer.close()
    with socket.socket() as probe:  # the port is free again (TIME_WAIT aside)
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        probe.bind(("127.0.0.1", port))
