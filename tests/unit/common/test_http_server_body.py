"""TimedBody: a body read fails after the idle timeout without a byte, never while bytes keep coming;
and a request with no Content-Length has an empty body rather than one read until the client closes."""

from __future__ import annotations

import asyncio

from aiohttp import web

from pyozone.common.http_body import BodyTimeout, TimedBody
from pyozone.common.http_server import HttpLimits
from tests.unit.common.http_helpers import async_test, exchange, read_answer, serving

IDLE_S = 0.3
QUICK_LINGER = HttpLimits(linger_s=0.1)  # a stalled body is drained (in vain) this long after the answer


def _app() -> web.Application:
    async def put(request: web.Request) -> web.Response:
        body = TimedBody(request.content, IDLE_S)
        try:
            if request.query.get("framing") == "chunked":  # aws-chunked's shape: a size line, then data
                size = int((await body.readline()).strip(), 16)
                data = await body.readexactly(size)
            else:
                data = b"".join([chunk async for chunk in body])
        except BodyTimeout as e:
            return web.json_response({"error": "RequestTimeout", "message": str(e)}, status=400)
        return web.json_response({"length": request.content_length, "read": data.decode()})

    app = web.Application()
    app.router.add_put("/object", put)
    return app


def _put(body_length: int | None, target: str = "/object") -> bytes:
    length = b"" if body_length is None else b"Content-Length: %d\r\n" % body_length
    return b"PUT " + target.encode() + b" HTTP/1.1\r\nHost: t\r\n" + length + b"\r\n"


async def _send_slowly(port: int, head: bytes, pieces: list[bytes], pause_s: float) -> dict[str, str]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(head)
    for piece in pieces:
        await asyncio.sleep(pause_s)  # the client's pace
        writer.write(piece)
    answer = await read_answer(reader)
    writer.close()
    assert answer is not None
    return answer.json()


@async_test
async def test_a_body_that_stops_coming_fails_the_read_after_the_idle_timeout() -> None:
    async with serving(_app(), QUICK_LINGER) as port:
        stalled = await _send_slowly(port, _put(10) + b"abc", [], 0)  # 7 bytes never come
        assert stalled["error"] == "RequestTimeout" and "0.3 s" in stalled["message"]


@async_test
async def test_a_slow_body_that_keeps_coming_is_read_whole() -> None:
    async with serving(_app(), QUICK_LINGER) as port:
        pieces = [b"ab", b"cd", b"ef"]  # 3 pauses of 0.2 s: 0.6 s in all, > IDLE_S, never idle
        answer = await _send_slowly(port, _put(6), pieces, 0.2)
        assert answer == {"length": 6, "read": "abcdef"}


@async_test
async def test_framed_reads_wait_across_pieces() -> None:
    async with serving(_app(), QUICK_LINGER) as port:
        frame = [b"5\r", b"\nhel", b"lo"]
        answer = await _send_slowly(port, _put(9, "/object?framing=chunked"), frame, 0.2)
        assert answer == {"length": 9, "read": "hello"}
        stalled = await _send_slowly(port, _put(9, "/object?framing=chunked") + b"5\r\nhe", [], 0)
        assert stalled["error"] == "RequestTimeout"


@async_test
async def test_a_missing_content_length_is_an_empty_body() -> None:
    async with serving(_app(), QUICK_LINGER) as port:
        answer = await exchange(port, _put(None))  # anything after the head would be the next request
        assert answer is not None and answer.json() == {"length": None, "read": ""}
