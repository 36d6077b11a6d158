"""The server side: a listening socket, a `ServerConnection` per peer, a task per call.

A service is a plain object whose async methods are named as the rpcs of its descriptor
(`Server.add_service`); each is called as `handler(request, context)` — a request iterator for a client
stream — and returns the answer, or is an async generator of answers for a server stream. It ends a call
with a status by `await context.abort(code, details)`; any other exception is a bug: logged, answered
INTERNAL.

What a misbehaving peer can cost is bounded per connection: a frame above the server's limit closes the
connection; a request above its method's limit is skipped unread and refused; at most `max_in_flight`
calls run (CALL frames read past them wait, in order, with the later frames of their calls; the frames
of running calls and the connection's own are still read, and the socket is paused only when what waits
passes `max_held_bytes`: TCP holds the peer back), and none are read while the peer does not read its
answers; a stream holds at most its window of requests (Kind.WINDOW: a handler slow to take them holds
up its own client, not the connection); a frame not finished within `stall_timeout_s` of its first byte
closes the connection; a connection with no calls is closed after `idle_timeout_s`, and one not heard
from in `keepalive_s` is pinged and closed, its calls cancelled, if the answer does not come. A call's
deadline cancels its handler and answers DEADLINE_EXCEEDED; a CANCEL from the client cancels its handler.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass

from google.protobuf.message import DecodeError

from pyozone.common.tls import TlsStore
from pyozone.proto.Rpc_pb2 import RpcCallHead
from pyozone.rpc.limits import RequestLimits
from pyozone.rpc.server_connection import (
    HEAD_CACHE_ENTRIES,
    HEAD_CACHE_MAX_BYTES,
    ServerConnection,
    _Bound,
    _CallHead,
)
from pyozone.rpc.service import ServiceSpec

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ServerSettings:
    max_message_bytes: int
    """The largest request message any method takes."""
    max_in_flight: int = 256
    """Calls one connection may have running; the CALL frames past them wait for room."""
    max_held_bytes: int = 1 << 20
    """Bytes of frames waiting for max_in_flight room (CALLs and their later frames) before the socket
    is no longer read."""
    stream_queue: int = 32
    """Requests of one client stream buffered (its window: the client sends no more until the handler
    takes them)."""
    stall_timeout_s: float = 30.0
    """How long a begun frame, or answers the peer does not read, may wait."""
    idle_timeout_s: float = 600.0
    """How long a connection without calls stays open."""
    keepalive_s: float = 60.0
    """A connection not heard from this long is pinged (gRPC's server keepalive time, 2 h by default
    there): a frozen or vanished client's calls end when it does not answer."""
    keepalive_timeout_s: float = 20.0
    """How long the answer to that ping may take before the connection is closed and its calls cancelled."""


class Server:
    """One listening port and the services on it."""

    def __init__(self, settings: ServerSettings, limits: RequestLimits | None = None) -> None:
        self.settings = settings
        self.limits = limits
        self.methods: dict[str, _Bound] = {}
        self._heads: dict[bytes, _CallHead] = {}
        self.free_body = 0
        """A request body up to this size is within every method's limit: read without asking which."""
        self.connections: set[ServerConnection] = set()
        self._server: asyncio.AbstractServer | None = None
        self.port: int | None = None

    def add_service(self, spec: ServiceSpec, servicer: object) -> None:
        """Registers every rpc of `spec` the servicer has a method for; the others answer UNIMPLEMENTED."""
        for method in spec.methods.values():
            handler = getattr(servicer, method.name, None)
            if handler is not None:
                bounds = self.limits.bounds(method.path) if self.limits is not None else None
                card = method.cardinality
                self.methods[method.path] = _Bound(
                    method,
                    handler,
                    bounds,
                    self.message_limit(method.path),
                    card.client_streaming,
                    card.server_streaming,
                    method.request.FromString,
                )
        self._heads.clear()
        self.free_body = min(b.limit for b in self.methods.values())

    def call_head(self, raw: bytes) -> _CallHead | None:
        """The call head `raw` parsed (from the cache when it was seen before); None when unreadable."""
        head = self._heads.get(raw)
        if head is not None:
            return head
        try:
            parsed = RpcCallHead.FromString(raw)
        except DecodeError:
            return None
        method = parsed.method
        bound = self.methods.get(method)
        head = _CallHead(
            method,
            parsed.timeoutMillis / 1000,
            tuple((e.key, e.value) for e in parsed.metadata),
            parsed.traceID,
            bound,
            bound.limit if bound is not None else self.settings.max_message_bytes,
        )
        if len(raw) <= HEAD_CACHE_MAX_BYTES:
            if len(self._heads) >= HEAD_CACHE_ENTRIES:
                self._heads.clear()
            self._heads[raw] = head
        return head

    def message_limit(self, method: str) -> int:
        if self.limits is not None:
            bounds = self.limits.bounds(method)
            if bounds is not None:
                return min(bounds.skip_above, self.settings.max_message_bytes)
        return self.settings.max_message_bytes

    async def start(self, host: str, port: int, tls: TlsStore | None = None) -> int:
        """Listens on (host, port), mutual TLS when `tls`; returns the port (port 0: the one the OS chose).
        OSError when it cannot bind."""
        loop = asyncio.get_running_loop()
        context = tls.server_context() if tls is not None else None
        self._server = await loop.create_server(
            lambda: ServerConnection(self), host, port, ssl=context, reuse_address=True, backlog=1024
        )
        self.port = self._server.sockets[0].getsockname()[1]
        return self.port

    async def stop(self, grace_s: float | None = None) -> None:
        """Stops listening, tells every peer to go away, and cancels what still runs after `grace_s`."""
        if self._server is not None:
            self._server.close()
        for conn in list(self.connections):
            conn.go_away()
        if grace_s:
            deadline = time.monotonic() + grace_s
            while any(c._calls for c in self.connections) and time.monotonic() < deadline:
                await asyncio.sleep(0.02)
        for conn in list(self.connections):
            conn._flush()
            conn.close()
        if self._server is not None:
            await self._server.wait_closed()
            self._server = None
