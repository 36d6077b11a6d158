"""The client side: a `Channel` to one server, its calls multiplexed on one connection shared by every
channel of the process to the same server with the same credentials.

A channel connects when its first call needs it and again after the connection is lost, waiting out a
backoff after a failed attempt (50 ms doubling to 1 s) within the call's deadline (a `fail_fast` channel's
call fails at once instead). A call's deadline
travels to the server (which stops the handler) and is kept here too: when it passes the call fails
DEADLINE_EXCEEDED and the server is told to cancel. A cancelled caller cancels its call on the server.
Each stream is flow-controlled by itself (frames.Kind.WINDOW): a caller slow to read one holds up that
stream's sender only, never the connection's other calls (which other channels of the process share).
A connection that has heard nothing for `keepalive_s` is pinged and closed if the ping is not answered;
no PING is answered while the server does not read what is written. A GOAWAY names the last call the server
took: the calls above it fail UNAVAILABLE, and a unary one is sent once more on a new connection.
Over TLS the connection presents the party's certificate and checks the server's against the CA and,
when the channel names the server's role, its role-qualified name (hdds.security.x509.role_host_name);
a renewed certificate is used by a new connection, the old one serving the calls already on it.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import time
import weakref
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable
from typing import Any

from google.protobuf.message import DecodeError

from pyozone.common.net import HostPort, parse_host_port
from pyozone.common.tls import TlsStore
from pyozone.hdds.security import x509 as X
from pyozone.hdds.security.x509 import CertRole
from pyozone.proto.Rpc_pb2 import RpcCallHead, RpcMetadataEntry
from pyozone.rpc.client_connection import NOT_TAKEN, ChannelSettings, ClientConnection, _Call
from pyozone.rpc.frames import (
    F_END_STREAM,
    F_MESSAGE,
    K_CALL,
    K_HALF_CLOSE,
    K_MESSAGE,
    encode,
    window,
)
from pyozone.rpc.service import MethodSpec
from pyozone.rpc.status import RpcError, StatusCode

Metadata = Iterable[tuple[str, str]] | None
_OK = StatusCode.OK
HEAD_CACHE_ENTRIES = 256
"""Call heads a channel keeps serialized (a caller's distinct method, timeout and metadata triples)."""
EOF = object()
"""What `StreamCall.read` returns after the last answer (grpc.aio.EOF)."""
RETIRE_GRACE_S = 600.0
"""How long a connection a certificate renewal replaced keeps serving the calls already on it (it closes as
soon as they end)."""
_RETIRING: set[asyncio.Task[None]] = set()


class _Pool:
    """The connections of one event loop, by (target, credentials, role the server must have)."""

    def __init__(self) -> None:
        self.connections: dict[tuple[Any, ...], ClientConnection] = {}
        self.connecting: dict[tuple[Any, ...], asyncio.Task[ClientConnection]] = {}
        """The dial under way to a key, a task of its own: the callers waiting on it come and go (each is
        cancelled, or gives up at its own deadline) without failing the others."""
        self.backoff: dict[tuple[Any, ...], tuple[float, float]] = {}
        """key -> (when the next attempt may start, the delay after it fails)."""


_POOLS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Pool] = weakref.WeakKeyDictionary()
_CLIENT_CONTEXTS: weakref.WeakKeyDictionary[TlsStore, ssl.SSLContext] = weakref.WeakKeyDictionary()


def _client_context(tls: TlsStore) -> ssl.SSLContext:
    context = _CLIENT_CONTEXTS.get(tls)
    if context is None:
        context = _CLIENT_CONTEXTS[tls] = tls.client_context()
    return context


async def _idle(conn: ClientConnection, grace: float) -> None:
    """Returns once no call is on `conn`, or after `grace` seconds."""
    end = time.monotonic() + grace
    while conn.calls and time.monotonic() < end:
        await asyncio.sleep(0.02)


async def _close_when_idle(conn: ClientConnection, grace: float) -> None:
    await _idle(conn, grace)
    conn.close()


class Channel:
    """Calls to one server (asyncio). `peer`: the role the server's certificate must have over TLS."""

    def __init__(
        self,
        target: HostPort | str,
        settings: ChannelSettings,
        tls: TlsStore | None = None,
        peer: CertRole | None = None,
        metadata: Metadata = None,
    ) -> None:
        address = target if isinstance(target, HostPort) else parse_host_port(str(target), None, "target")
        self.address = address
        self.target = str(address)
        self.settings = settings
        self.tls = tls
        self.peer = peer
        self.metadata = tuple(metadata or ())
        """Sent with every call of this channel (e.g. who a plaintext caller is)."""
        self._conn: ClientConnection | None = None
        self._key_base = (address.host, address.port, id(tls) if tls is not None else None, peer)
        self._closed = False
        self._head_cache: dict[tuple[str, tuple[tuple[str, str], ...]], bytes] = {}

    # ------------------------------------------------------------------ connections
    async def connection(self, deadline: float | None = None) -> ClientConnection:
        conn = self._conn
        tls = self.tls
        if (
            conn is not None
            and conn.usable
            and (tls is None or conn.generation == tls.generation)
            and conn.loop is asyncio.get_running_loop()  # not another loop's (one that ran before a fork)
        ):
            return conn
        if self._closed:
            raise RpcError(StatusCode.CANCELLED, "the channel is closed")
        return await self._connect(deadline)

    async def _connect(self, deadline: float | None) -> ClientConnection:
        loop = asyncio.get_running_loop()
        pool = _POOLS.get(loop)
        if pool is None:
            pool = _POOLS[loop] = _Pool()
        generation = 0
        if self.tls is not None:
            self.tls.material()  # re-reads renewed files: the generation of what a new connection presents
            generation = self.tls.generation
        key = (*self._key_base, generation)
        conn = pool.connections.get(key)
        if conn is None or not conn.usable:
            conn = await self._shared_dial(pool, key, generation, deadline)
        if self._conn is not conn:
            if self._conn is not None and self._conn.loop is loop:
                self._release(self._conn, retire=True)
            conn.users += 1
            self._conn = conn
        return conn

    async def _shared_dial(
        self, pool: _Pool, key: tuple[Any, ...], generation: int, deadline: float | None
    ) -> ClientConnection:
        """Joins the dial under way to `key` (or starts one) for as long as this caller's deadline allows:
        a waiter cancelled or out of time leaves the dial to the others."""
        dial = pool.connecting.get(key)
        if dial is None:
            not_before, _ = pool.backoff.get(key, (0.0, 0.0))
            wait = not_before - time.monotonic()
            if wait > 0 and (
                self.settings.fail_fast or (deadline is not None and time.monotonic() + wait >= deadline)
            ):
                why = f"failed to connect to {self.target} (retrying in {wait:.2f}s)"
                raise RpcError(StatusCode.UNAVAILABLE, why)
            dial = pool.connecting[key] = asyncio.get_running_loop().create_task(
                self._dial(pool, key, generation)
            )
            dial.add_done_callback(lambda t: t.cancelled() or t.exception())
        remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
        # asyncio.timeout, not wait_for: Python 3.11's wait_for returns (or raises) the dial's outcome when
        # this caller's cancellation arrives as the dial ends, and so loses the cancel.
        try:
            async with asyncio.timeout(remaining):
                return await asyncio.shield(dial)
        except TimeoutError:
            raise RpcError(StatusCode.UNAVAILABLE, f"failed to connect to {self.target}: timed out") from None

    async def _dial(self, pool: _Pool, key: tuple[Any, ...], generation: int) -> ClientConnection:
        """Waits out the backoff and connects within connect_timeout_s, whoever still waits for it; the
        connection goes to the pool."""
        try:
            conn = await self._connect_once(pool, key, generation)
        finally:
            pool.connecting.pop(key, None)
        pool.connections[key] = conn
        return conn

    async def _connect_once(self, pool: _Pool, key: tuple[Any, ...], generation: int) -> ClientConnection:
        loop = asyncio.get_running_loop()
        s = self.settings
        not_before, delay = pool.backoff.get(key, (0.0, s.backoff_initial_s))
        wait = not_before - time.monotonic()
        if wait > 0:
            await asyncio.sleep(wait)
        limit = s.connect_timeout_s
        ssl_context = _client_context(self.tls) if self.tls is not None else None
        host = self.address.host
        server_hostname = None
        if ssl_context is not None:
            server_hostname = X.role_host_name(self.peer, host) if self.peer is not None else host
        try:
            async with asyncio.timeout(limit):
                _, conn = await loop.create_connection(
                    lambda: ClientConnection(self.target, s, generation),
                    host,
                    self.address.port,
                    ssl=ssl_context,
                    server_hostname=server_hostname,
                )
        except (OSError, TimeoutError, ssl.SSLError) as e:
            pool.backoff[key] = (time.monotonic() + delay, min(delay * 2, s.backoff_max_s))
            reason = "timed out" if isinstance(e, TimeoutError) else (str(e) or type(e).__name__)
            raise RpcError(StatusCode.UNAVAILABLE, f"failed to connect to {self.target}: {reason}") from None
        pool.backoff.pop(key, None)
        return conn

    def _release(self, conn: ClientConnection, retire: bool = False) -> None:
        """`retire`: a new connection replaced it (a renewed certificate); the calls on it finish first."""
        conn.users -= 1
        if conn.users <= 0:
            if retire and conn.calls:
                task = asyncio.get_running_loop().create_task(_close_when_idle(conn, RETIRE_GRACE_S))
                _RETIRING.add(task)
                task.add_done_callback(_RETIRING.discard)
            else:
                conn.close()

    async def close(self, grace: float | None = None) -> None:
        """Releases the connection (closed when no other channel of the process uses it)."""
        self._closed = True
        conn, self._conn = self._conn, None
        if conn is not None:
            if grace:
                await _idle(conn, grace)
            self._release(conn)

    async def __aenter__(self) -> Channel:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # ------------------------------------------------------------------ calls
    def _head(self, path: str, timeout: float | None, metadata: Metadata) -> bytes:
        """The call head, cached by what makes it: most calls repeat a method, a timeout and a caller."""
        extra = tuple(metadata) if metadata else ()
        key = (path, timeout, extra)
        head = self._head_cache.get(key)
        if head is None:
            head = RpcCallHead(
                method=path,
                timeoutMillis=0 if timeout is None else max(1, int(timeout * 1000)),
                metadata=[RpcMetadataEntry(key=k, value=v) for k, v in self.metadata + extra],
            ).SerializeToString()
            if len(self._head_cache) >= HEAD_CACHE_ENTRIES:
                self._head_cache.clear()
            self._head_cache[key] = head
        return head

    async def unary(
        self,
        path: str,
        request: Any,
        decode: Callable[[bytes], Any] | None,
        timeout: float | None = None,
        metadata: Metadata = None,
    ) -> Any:
        """One call. When the server's GOAWAY says it never took the call (an idle close racing it), it is
        sent once more on a new connection: the server ran nothing of it."""
        deadline = None if timeout is None else time.monotonic() + timeout
        conn = self._conn
        tls = self.tls
        if (  # connection()'s check, inline: this is every call's path
            conn is None
            or not conn.usable
            or (tls is not None and conn.generation != tls.generation)
            or conn.loop is not asyncio.get_running_loop()
        ):
            conn = await self.connection(deadline)
        if type(request) is bytes or type(request) is list:  # a list: the body's pieces, never joined
            body = request
        elif isinstance(request, (bytearray, memoryview)):
            body = bytes(request)
        else:
            body = request.SerializeToString()
        head = self._head(path, timeout, metadata)
        retried = False
        while True:
            call_id, call = conn.new_call(False)
            if deadline is not None:
                conn.deadlines.add(max(0.0, deadline - time.monotonic()), call_id, call)
            conn.send_unary(call_id, head, body)
            try:
                code, details, answer = await call.future
            except asyncio.CancelledError:
                conn.cancel(call_id)
                raise
            if answer is not NOT_TAKEN or retried:
                break
            retried = True
            conn = await self.connection(deadline)
        if code is not _OK:
            raise RpcError(code, details)
        if answer is None:
            raise RpcError(StatusCode.INTERNAL, f"{path}: the server ended the call without an answer")
        if decode is None:
            return answer
        try:
            return decode(answer)
        except DecodeError as e:
            raise RpcError(StatusCode.INTERNAL, f"{path}: an unreadable answer: {e}") from None

    def stream(
        self,
        path: str,
        decode: Callable[[bytes], Any] | None,
        client_streaming: bool,
        server_streaming: bool,
        request: Any = None,
        timeout: float | None = None,
        metadata: Metadata = None,
    ) -> StreamCall:
        return StreamCall(self, path, decode, client_streaming, server_streaming, request, timeout, metadata)

    # ------------------------------------------------------------------ callables (grpc.aio's shapes)
    def method(self, spec: MethodSpec) -> Callable[..., Any]:
        decode = spec.response.FromString
        path = spec.path
        card = spec.cardinality
        if not card.client_streaming and not card.server_streaming:

            def unary(request: Any, timeout: float | None = None, metadata: Metadata = None) -> Any:
                return self.unary(path, request, decode, timeout, metadata)

            return unary

        def streaming(
            request: Any = None, timeout: float | None = None, metadata: Metadata = None
        ) -> StreamCall:
            return self.stream(
                path, decode, card.client_streaming, card.server_streaming, request, timeout, metadata
            )

        return streaming

    def unary_unary(
        self, path: str, response_deserializer: Callable[[bytes], Any] | None = None
    ) -> Callable[..., Any]:
        def unary(request: Any, timeout: float | None = None, metadata: Metadata = None) -> Any:
            return self.unary(path, request, response_deserializer, timeout, metadata)

        return unary

    def stream_stream(
        self, path: str, response_deserializer: Callable[[bytes], Any] | None = None
    ) -> Callable[..., StreamCall]:
        def streaming(
            request: Any = None, timeout: float | None = None, metadata: Metadata = None
        ) -> StreamCall:
            return self.stream(path, response_deserializer, True, True, request, timeout, metadata)

        return streaming


class StreamCall:
    """A call with a stream on either side, as grpc.aio's call objects: iterate it (or `read()`) for the
    answers; `write()` and `done_writing()` for requests, or pass an iterator of them; `await call` for a
    client stream's one answer; `cancel()`."""

    def __init__(
        self,
        channel: Channel,
        path: str,
        decode: Callable[[bytes], Any] | None,
        client_streaming: bool,
        server_streaming: bool,
        request: Any,
        timeout: float | None,
        metadata: Metadata,
    ) -> None:
        self._channel = channel
        self._path = path
        self._decode = decode
        self._client_streaming = client_streaming
        self._server_streaming = server_streaming
        self._deadline = None if timeout is None else time.monotonic() + timeout
        self._timeout = timeout
        self._metadata = metadata
        self._conn: ClientConnection | None = None
        self._call: _Call | None = None
        self._call_id = 0
        self._code: StatusCode | None = None
        self._details = ""
        self._final: bytes | None = None
        self._pump: asyncio.Task[None] | None = None
        loop = asyncio.get_running_loop()
        self._started = loop.create_task(self._start(request))
        self._started.add_done_callback(lambda t: t.cancelled() or t.exception())

    async def _start(self, request: Any) -> None:
        conn = await self._channel.connection(self._deadline)
        self._conn = conn
        self._call_id, self._call = conn.new_call(True)
        if self._deadline is not None:
            timeout = max(0.0, self._deadline - time.monotonic())
            conn.deadlines.add(timeout, self._call_id, self._call)
        head = self._channel._head(self._path, self._timeout, self._metadata)
        if self._client_streaming:
            conn.send_frame(K_CALL, 0, self._call_id, head, b"")
        else:
            body = request if isinstance(request, bytes) else request.SerializeToString()
            conn.send_frame(K_CALL, F_MESSAGE | F_END_STREAM, self._call_id, head, body)
        if self._server_streaming:  # the answers the server may send before this side reads any
            conn.send(window(self._call_id, self._channel.settings.stream_queue))
        if self._client_streaming and request is not None:
            self._pump = conn.loop.create_task(self._send_all(request))

    async def _send_all(self, requests: AsyncIterable[Any] | Iterable[Any]) -> None:
        with contextlib.suppress(RpcError):
            if hasattr(requests, "__aiter__"):
                async for request in requests:  # type: ignore[union-attr]
                    await self.write(request)
            else:
                for request in requests:  # type: ignore[union-attr]
                    await self.write(request)
            await self.done_writing()

    async def _ready(self) -> tuple[ClientConnection, _Call]:
        try:
            await self._started
        except RpcError as e:
            self._code, self._details = e.code(), e.details()
            raise
        assert self._conn is not None and self._call is not None
        return self._conn, self._call

    async def write(self, request: Any) -> None:
        """Waits while the server has no room for the request (its window, then the socket's)."""
        conn, call = await self._ready()
        while True:
            if call.future.done():
                code, details, _ = call.future.result()
                raise RpcError(
                    code if code is not StatusCode.OK else StatusCode.CANCELLED, details or "the call ended"
                )
            if call.credit > 0:
                break
            call.credit_waiter = conn.loop.create_future()
            await call.credit_waiter
        call.credit -= 1
        await conn.drain()
        body = request if isinstance(request, (bytes, bytearray)) else request.SerializeToString()
        conn.send_frame(K_MESSAGE, F_MESSAGE, self._call_id, b"", bytes(body))

    async def done_writing(self) -> None:
        conn, call = await self._ready()
        if not call.future.done():
            conn.send(encode(K_HALF_CLOSE, 0, self._call_id))

    async def read(self) -> Any:
        conn, call = await self._ready()
        queue = call.queue
        assert queue is not None
        while not queue:
            if call.future.done():
                self._take_end(call)
                return EOF
            call.waiter = conn.loop.create_future()
            try:
                await call.waiter
            except asyncio.CancelledError:
                self.cancel()
                raise
            call.waiter = None
        body = queue.popleft()
        call.taken += 1
        if call.taken >= max(1, self._channel.settings.stream_queue // 2) and not call.future.done():
            conn.send(window(self._call_id, call.taken))  # room for as many more
            call.taken = 0
        if self._decode is None:
            return body
        try:
            return self._decode(body)
        except DecodeError as e:
            self.cancel()
            raise RpcError(StatusCode.INTERNAL, f"{self._path}: an unreadable answer: {e}") from None

    def _take_end(self, call: _Call) -> None:
        code, details, body = call.future.result()
        self._code, self._details, self._final = code, details, body
        if code is not StatusCode.OK:
            raise RpcError(code, details)

    def __aiter__(self) -> AsyncIterator[Any]:
        return self._answers()

    async def _answers(self) -> AsyncIterator[Any]:
        while (answer := await self.read()) is not EOF:
            yield answer

    def __await__(self) -> Any:
        return self._result().__await__()

    async def _result(self) -> Any:
        _conn, call = await self._ready()
        try:
            await asyncio.shield(call.future)
        except asyncio.CancelledError:
            self.cancel()
            raise
        self._take_end(call)
        if self._final is None:
            raise RpcError(StatusCode.INTERNAL, f"{self._path}: the server ended the call without an answer")
        return self._final if self._decode is None else self._decode(self._final)

    def cancel(self) -> bool:
        if self._pump is not None:
            self._pump.cancel()
        if not self._started.done():
            self._started.cancel()
            self._code = StatusCode.CANCELLED
            return True
        call = self._call
        if call is None or call.future.done():
            return False
        assert self._conn is not None
        self._conn.cancel(self._call_id)
        self._conn._end(call, StatusCode.CANCELLED, "Locally cancelled", None)
        return True

    def done(self) -> bool:
        return self._call is not None and self._call.future.done()

    def code(self) -> StatusCode | None:
        return self._code

    def details(self) -> str:
        return self._details
