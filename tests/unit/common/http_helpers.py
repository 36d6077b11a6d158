"""Raw-socket clients for the HTTP server's tests: they send exactly the bytes a misbehaving client would."""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from pyozone.common.http_server import HttpLimits, HttpServer

BOUND_S = 5.0  # no answer a test waits for takes this long unless the server is broken
DEFAULTS = HttpLimits()


def async_test(fn: Callable[..., Coroutine[Any, Any, None]]) -> Callable[..., None]:
    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> None:
        asyncio.run(asyncio.wait_for(fn(*args, **kwargs), 20))

    return run


@asynccontextmanager
async def serving(app: web.Application, limits: HttpLimits = DEFAULTS) -> AsyncIterator[int]:
    server = HttpServer(app, limits)
    port = await server.start("127.0.0.1", 0)
    try:
        yield port
    finally:
        await server.stop()


@dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


async def read_answer(reader: asyncio.StreamReader, head_only: bool = False) -> Answer | None:
    """One response off a connection; None if the server closed it without answering."""
    try:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), BOUND_S)
    except asyncio.IncompleteReadError:
        return None
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)}
    length = 0 if head_only else int(headers.get("content-length", "0"))
    body = await asyncio.wait_for(reader.readexactly(length), BOUND_S)
    return Answer(int(lines[0].split()[1]), headers, body)


async def exchange(port: int, raw: bytes, head_only: bool = False) -> Answer | None:
    """Sends `raw`, half-closes, and reads the one answer."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(raw)
        writer.write_eof()
        return await read_answer(reader, head_only)
    finally:
        writer.close()


async def get(port: int, path: str, method: str = "GET") -> Answer:
    answer = await exchange(port, f"{method} {path} HTTP/1.1\r\nHost: t\r\n\r\n".encode(), method == "HEAD")
    assert answer is not None, f"{method} {path}: closed unanswered"
    return answer


async def closed_by_server(reader: asyncio.StreamReader) -> bool:
    """True once the server closes the connection (EOF or reset); anything it sends first is skipped."""
    try:
        while await asyncio.wait_for(reader.read(65536), BOUND_S):
            pass
    except ConnectionResetError:
        pass
    return True
