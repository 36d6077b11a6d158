"""The HTTP server under every pyozone web endpoint: the daemons' JSON endpoints and the S3 gateway.

aiohttp parses and answers; this module adds the guards a server facing untrusted clients needs and
aiohttp lacks or leaves loose by default. A request head must arrive whole within `head_timeout_s` of its
first byte (slowloris: aiohttp itself waits forever for a head sent one byte a second), a connection idle
between requests is closed after `keepalive_timeout_s`, a head with too long a line, too big a header or
too many headers is refused with 431 and its connection closed, and a refused request's unread body is
drained for at most `linger_s`. A body read that stalls is the handler's business: see http_body.

With an `ssl_context` (hdds.grpc.tls.enabled: the party's TlsStore.server_context(), client certificates
required) the server speaks https: a peer without a certificate of the cluster's CA fails the handshake,
the handshake must end within `head_timeout_s`, and the guards above then apply to the decrypted bytes.
Each request is checked against the party's current CRL too (OpenSSL checks it at the handshake only): a
keep-alive connection whose peer was revoked since gets 403 and is closed.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from http import HTTPStatus

from aiohttp import StreamReader, web
from aiohttp.http_exceptions import BadHttpMessage, LineTooLong

from pyozone.common.http_body import BodyIncomplete
from pyozone.common.tls import revoked_ssl_peer

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class HttpLimits:
    max_line_size: int = 8190
    """Request line (method, target, version), in bytes."""
    max_field_size: int = 8190
    """One header field, name and value, in bytes."""
    max_headers: int = 128
    head_timeout_s: float = 10.0
    """From the first byte of a request head to its end."""
    keepalive_timeout_s: float = 60.0
    """Idle time before a connection with no request is closed (Hadoop's hadoop.http.idle_timeout.ms)."""
    body_idle_timeout_s: float = 20.0
    """A request body read that sees no byte for this long fails (S3's RequestTimeout); see http_body."""
    linger_s: float = 2.0
    """How long the unread body of an answered request is drained before its connection is closed."""
    shutdown_timeout_s: float = 5.0
    """How long in-flight requests get to finish when the server stops."""
    read_bufsize: int = 1 << 16
    """How much of a request body aiohttp buffers before it stops reading the socket; a server that
    streams large bodies raises it (fewer, larger reads per MB)."""


SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
"""Methods that change no state: a request of one is not cancelled when its client leaves."""

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
Refusal = Callable[[int, str], web.Response]
"""Builds the answer to a request refused before or outside its handler: a bad or oversized head (400,
431) or a handler that raised (500). The S3 gateway answers in S3's XML; the daemons in JSON."""


def json_refusal(status: int, message: str) -> web.Response:
    return web.json_response({"error": message}, status=status)


class HttpServer:
    """Serves one aiohttp application on one address, with the guards of `limits`."""

    def __init__(
        self, app: web.Application, limits: HttpLimits = HttpLimits(), refusal: Refusal = json_refusal,
        cancel_on_disconnect: bool = False,
    ) -> None:  # fmt: skip
        """`cancel_on_disconnect`: a request that may change state (not GET, HEAD or OPTIONS) whose client
        closes or drops the connection before its answer is cancelled, as aiohttp's handler_cancellation
        would, and a close is taken as the client's departure rather than a half-close awaiting the answer
        (as nginx takes it: 499): a request must not go on to change state after its client gave up and
        moved on (the S3 gateway's writes). A read goes on until its next write fails, and says so."""
        self.limits = limits
        self._app = app
        self._refusal = refusal
        self._cancel_on_disconnect = cancel_on_disconnect
        self._runner: web.AppRunner | None = None
        app.middlewares.insert(0, self._refuse_revoked)

    @web.middleware
    async def _refuse_revoked(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        ssl_object = request.transport.get_extra_info("ssl_object") if request.transport else None
        serial = None if ssl_object is None else revoked_ssl_peer(ssl_object)
        if serial is None:
            return await handler(request)
        log.warning("Refused a request from %s: certificate %d is revoked", request.remote, serial)
        response = self._refusal(HTTPStatus.FORBIDDEN, f"certificate {serial} was revoked")
        response.force_close()
        return response

    async def start(self, host: str, port: int, ssl_context: ssl.SSLContext | None = None) -> int:
        """Binds host:port (0: any free port) and returns the port it listens on; https with
        `ssl_context`."""
        runner = web.AppRunner(self._app, shutdown_timeout=self.limits.shutdown_timeout_s)
        await runner.setup()
        server, loop = runner.server, asyncio.get_running_loop()
        assert server is not None  # set by setup()
        site = _GuardedSite(
            runner,
            host,
            port,
            lambda: _GuardedHandler(server, loop, self.limits, self._refusal, self._cancel_on_disconnect),
            ssl_context,
            self.limits.head_timeout_s,
        )
        try:
            await site.start()
        except BaseException:
            await runner.cleanup()
            raise
        self._runner = runner
        return site.port

    async def stop(self) -> None:
        """Stops listening, closes idle connections and gives in-flight requests `shutdown_timeout_s`."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None


class _GuardedSite(web.BaseSite):
    """A TCP site whose connections are served by `_GuardedHandler` instead of aiohttp's own."""

    def __init__(
        self,
        runner: web.AppRunner,
        host: str,
        port: int,
        protocol: Callable[[], web.RequestHandler],
        ssl_context: ssl.SSLContext | None,
        handshake_timeout_s: float,
    ) -> None:
        super().__init__(runner, ssl_context=ssl_context)
        self._host, self._port, self._protocol = host, port, protocol
        self._handshake_timeout_s = handshake_timeout_s

    @property
    def name(self) -> str:
        scheme = "https" if self._ssl_context is not None else "http"
        return f"{scheme}://{self._host}:{self._port}"

    @property
    def port(self) -> int:
        assert self._server is not None
        return int(self._server.sockets[0].getsockname()[1])  # type: ignore[attr-defined]

    async def start(self) -> None:
        await super().start()
        loop = asyncio.get_running_loop()
        if self._ssl_context is None:
            self._server = await loop.create_server(self._protocol, self._host, self._port)
        else:
            self._server = await loop.create_server(
                self._protocol,
                self._host,
                self._port,
                ssl=self._ssl_context,
                ssl_handshake_timeout=self._handshake_timeout_s,  # a silent peer holds nothing longer
            )


class _GuardedHandler(web.RequestHandler):
    """aiohttp's connection protocol with a deadline on the request head, an answer for a client that
    half-closes after its request, and refusals built by the server's `Refusal`.

    A request is "pending" from its parsed head to its answer (`_request_count` counts parsed heads,
    `_answered` the answers). Bytes that arrive while none is pending begin a head: they arm the head
    deadline, which a parsed head disarms. aiohttp has no hook for this, so it rests on RequestHandler's
    `data_received`, `finish_response`, `_request_count` and `force_close` (pinned by the unit tests), and,
    to cancel a departed client's request (`cancel_on_disconnect`), on `_task_handler`.
    """

    def __init__(
        self, server: web.Server, loop: asyncio.AbstractEventLoop, limits: HttpLimits, refusal: Refusal,
        cancel_on_disconnect: bool = False,
    ) -> None:  # fmt: skip
        super().__init__(
            server,
            loop=loop,
            keepalive_timeout=limits.keepalive_timeout_s,
            access_log=None,
            max_line_size=limits.max_line_size,
            max_field_size=limits.max_field_size,
            max_headers=limits.max_headers,
            lingering_time=limits.linger_s,
            read_bufsize=limits.read_bufsize,
        )
        self._head_timeout_s = limits.head_timeout_s
        self._refusal = refusal
        self._cancel_on_disconnect = cancel_on_disconnect
        self._answered = 0
        self._head_deadline: asyncio.TimerHandle | None = None
        self._last_payload: StreamReader | None = None
        """The body of the request parsed last: between aiohttp's queue and its handler task starting, it
        is reachable nowhere else."""

    def _pending(self) -> bool:
        return self._request_count > self._answered

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self._messages:
            self._last_payload = self._messages[-1][1]
        if self._pending():
            self._disarm_head_deadline()
        elif data and self._head_deadline is None:
            self._head_deadline = self._loop.call_later(self._head_timeout_s, self._head_overdue)

    def _head_overdue(self) -> None:
        self._head_deadline = None
        if not self._pending():
            log.debug("closing a connection whose request head took over %.1f s", self._head_timeout_s)
            self.force_close()

    def _disarm_head_deadline(self) -> None:
        if self._head_deadline is not None:
            self._head_deadline.cancel()
            self._head_deadline = None

    def connection_lost(self, exc: BaseException | None) -> None:
        self._disarm_head_deadline()
        task, request = self._task_handler, self._current_request  # aiohttp clears both
        super().connection_lost(exc)
        changing = request is not None and request.method not in SAFE_METHODS
        if self._cancel_on_disconnect and changing and task is not None and not task.done():
            task.cancel()

    def eof_received(self) -> bool:
        """A client may half-close once its request is sent: answer it, then close; with
        `cancel_on_disconnect` its close is taken as its departure instead (TCP cannot tell the two
        apart): the transport closes, which cancels a request that may change state. With nothing pending
        (idle, or half a head) the transport closes at once. Relies on `_current_request` and `_messages`
        too."""
        if not self._pending():
            return False
        # A body not yet whole can never be finished: its reader learns so now, not at the idle timeout.
        payloads = [payload for _, payload in self._messages]
        if self._last_payload is not None:
            payloads.append(self._last_payload)
        if self._current_request is not None:
            payloads.append(self._current_request.content)
        for payload in payloads:
            if not payload.is_eof():
                payload.set_exception(BodyIncomplete("the client closed its side before the body's end"))
        if self._cancel_on_disconnect:
            return False
        self.close()
        return True

    async def finish_response(
        self, request: web.BaseRequest, resp: web.StreamResponse, start_time: float | None
    ) -> tuple[web.StreamResponse, bool]:
        try:
            return await super().finish_response(request, resp, start_time)
        finally:
            self._answered += 1

    def handle_error(
        self,
        request: web.BaseRequest,
        status: int = 500,
        exc: BaseException | None = None,
        message: str | None = None,
    ) -> web.StreamResponse:
        if status == HTTPStatus.INTERNAL_SERVER_ERROR:
            log.error("HTTP handler for %s %s failed", request.method, request.path, exc_info=exc)
            message = "internal error"
        else:  # a client's fault: worth no traceback at error level
            log.debug("refused a request from %s: %s", request.remote, message)
        if request.writer.output_size > 0:  # as aiohttp: the answer has begun, only a reset remains
            raise ConnectionError("cannot send a refusal after the response began")
        if _head_too_large(exc):
            status, message = HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, "request head too large"
        response = self._refusal(status, (message or HTTPStatus(status).phrase)[:200])
        response.force_close()
        return response


def _head_too_large(exc: BaseException | None) -> bool:
    """aiohttp reports every oversized head as a 400; RFC 6585 has 431 for it."""
    return isinstance(exc, LineTooLong) or (
        isinstance(exc, BadHttpMessage) and exc.message == "Too many headers received"
    )
