"""A tiny asyncio HTTP/1.1 server for readiness and health endpoints, shared by the SCM and datanode daemons.

Deliberately minimal (no new dependency): GET/HEAD on fixed paths, one request per connection, JSON
bodies. Requests are bounded in size and time, and a bad request closes its connection without touching
the daemon: orchestrators and scripts poll these endpoints while the daemon does its real work.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

log = logging.getLogger(__name__)

MAX_REQUEST_HEAD_BYTES = 8 * 1024
REQUEST_TIMEOUT_S = 5.0


@dataclass(frozen=True, slots=True)
class Response:
    status: int
    body: Any  # JSON-serialisable

    def encode(self, head_only: bool = False) -> bytes:
        payload = json.dumps(self.body).encode() + b"\n"
        reason = HTTPStatus(self.status).phrase
        head = (
            f"HTTP/1.1 {self.status} {reason}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(payload)}\r\nConnection: close\r\n\r\n"
        ).encode()
        return head if head_only else head + payload


Route = Callable[[], Response]
"""Builds the answer for one path; runs on the event loop, so it may read the daemon's state directly."""


class TinyHttpServer:
    def __init__(
        self,
        routes: Mapping[str, Route],
        max_request_bytes: int = MAX_REQUEST_HEAD_BYTES,
        timeout_s: float = REQUEST_TIMEOUT_S,
    ) -> None:
        self._routes = dict(routes)
        self._max = max_request_bytes
        self._timeout = timeout_s
        self._server: asyncio.Server | None = None

    async def start(self, host: str, port: int) -> int:
        """Binds host:port (0: any free port) and returns the port it listens on."""
        self._server = await asyncio.start_server(self._serve, host, port, limit=self._max)
        return self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            response, head_only = await asyncio.wait_for(self._answer(reader), self._timeout)
            writer.write(response.encode(head_only))
            await asyncio.wait_for(writer.drain(), self._timeout)
        except (TimeoutError, ConnectionError):
            pass  # a slow or vanished client: drop the connection
        finally:
            writer.close()

    async def _answer(self, reader: asyncio.StreamReader) -> tuple[Response, bool]:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.LimitOverrunError:
            return Response(431, {"error": f"request head above {self._max} bytes"}), False
        except asyncio.IncompleteReadError:
            raise ConnectionError("client closed the connection mid-request") from None
        parts = head.split(b"\r\n", 1)[0].decode("latin-1").split()
        if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
            return Response(400, {"error": "bad request line"}), False
        method, target, _ = parts
        if method not in ("GET", "HEAD"):
            return Response(405, {"error": f"{method} is not supported"}), False
        route = self._routes.get(target.split("?", 1)[0])
        if route is None:
            return Response(404, {"error": f"no such path {target}"}), method == "HEAD"
        try:
            return route(), method == "HEAD"
        except Exception:
            log.exception("HTTP handler for %s failed", target)
            return Response(500, {"error": "internal error"}), False
