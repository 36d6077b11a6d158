"""The client side: a `Channel` to one server, its calls multiplexed on one connection shared by every
channel of the process to the same server with the same credentials.

A channel connects when its first call needs it and again after the connection is lost, waiting out a
backoff after a failed attempt (50 ms doubling to 1 s) within the call's deadline. A call's deadline
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
from collections import deque
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable
from dataclasses import dataclass
from typing import Any

from google.protobuf.message import DecodeError

from pyozone.common.net import HostPort, parse_host_port
from pyozone.common.tls import TlsStore
from pyozone.hdds.security import x509 as X
from pyozone.hdds.security.x509 import CertRole
from pyozone.proto.Rpc_pb2 import RpcCallHead, RpcMetadataEntry, RpcStatusHead
from pyozone.rpc.deadlines import Deadlines
from pyozone.rpc.frames import (
    F_END_STREAM,
    F_MESSAGE,
    HEADER,
    K_CALL,
    K_CANCEL,
    K_END,
    K_GOAWAY,
    K_HALF_CLOSE,
    K_MESSAGE,
    K_PING,
    K_PONG,
    K_WINDOW,
    LARGE_BODY_BYTES,
    MAX_HEAD_BYTES,
    WINDOW_AMOUNT,
    FrameDecoder,
    FrameError,
    encode,
    window,
)
from pyozone.rpc.service import MethodSpec
from pyozone.rpc.status import RpcError, StatusCode

Metadata = Iterable[tuple[str, str]] | None
_OK = StatusCode.OK
_UNARY = F_MESSAGE | F_END_STREAM
"""The flags of a unary call's frame: its one message, and the last."""
HEAD_CACHE_ENTRIES = 256
"""Call heads a channel keeps serialized (a caller's distinct method, timeout and metadata triples)."""
NOT_TAKEN: Any = object()
"""A call's body when the server's GOAWAY said it never took the call: safe to send again."""
EOF = object()
"""What `StreamCall.read` returns after the last answer (grpc.aio.EOF)."""
RETIRE_GRACE_S = 600.0
"""How long a connection a certificate renewal replaced keeps serving the calls already on it (it closes as
soon as they end)."""
_RETIRING: set[asyncio.Task[None]] = set()


@dataclass(frozen=True)
class ChannelSettings:
    max_message_bytes: int
    """The largest answer taken."""
    connect_timeout_s: float = 10.0
    keepalive_s: float = 30.0
    keepalive_timeout_s: float = 20.0
    stream_queue: int = 32
    """Answers of one stream buffered (its window: the server sends no more until they are read)."""
    backoff_initial_s: float = 0.05
    backoff_max_s: float = 1.0


class _Call:
    """One call's state on the client: a future for a unary answer, a queue for a stream's."""

    __slots__ = ("credit", "credit_waiter", "deadline_seq", "future", "queue", "taken", "waiter")

    def __init__(self, conn: ClientConnection, streaming: bool) -> None:
        self.future: asyncio.Future[Any] = conn.loop.create_future()
        """Resolves with (status, details, body) when the call ends."""
        self.queue: deque[bytes] | None = deque() if streaming else None
        self.waiter: asyncio.Future[None] | None = None
        self.deadline_seq = -1
        """Its entry in the connection's Deadlines."""
        self.credit = 0
        """Requests of a client stream the server has room for (its Kind.WINDOW grants)."""
        self.credit_waiter: asyncio.Future[None] | None = None
        self.taken = 0
        """Answers read since the server was last granted more."""

    def wake(self) -> None:
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(None)
        if self.credit_waiter is not None and not self.credit_waiter.done():
            self.credit_waiter.set_result(None)


class ClientConnection(asyncio.Protocol):
    def __init__(self, target: str, settings: ChannelSettings, generation: int) -> None:
        self.target = target
        self.settings = settings
        self.generation = generation
        self.loop = asyncio.get_running_loop()
        self.transport: asyncio.Transport | None = None
        self.calls: dict[int, _Call] = {}
        self._next_id = 1
        self._decoder = FrameDecoder(
            settings.max_message_bytes + MAX_HEAD_BYTES, self._admit, settings.max_message_bytes
        )
        self._out = bytearray()
        self._flush_scheduled = False
        self._writable: asyncio.Future[None] | None = None
        self._write_blocked = False
        self.usable = False
        self._last_read = time.monotonic()
        self._pinged = False
        self._timer: asyncio.TimerHandle | None = None
        self.deadlines = Deadlines(self.loop, self.calls, self._expire)
        self.users = 0

    # ------------------------------------------------------------------ connection
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        self.usable = True
        self._timer = self.loop.call_later(self.settings.keepalive_s, self._keepalive)

    def connection_lost(self, exc: Exception | None) -> None:
        self.usable = False
        self.transport = None
        if self._timer is not None:
            self._timer.cancel()
        self.deadlines.close()
        why = f"connection to {self.target} lost" + (f": {exc}" if exc else "")
        self._fail_all(StatusCode.UNAVAILABLE, why)
        if self._writable is not None and not self._writable.done():
            self._writable.set_result(None)

    def _fail_all(self, code: StatusCode, why: str) -> None:
        calls = list(self.calls.values())
        self.calls.clear()  # the same dict: the connection's Deadlines reads it
        for call in calls:
            self._end(call, code, why, None)

    def close(self) -> None:
        self.usable = False
        if self.transport is not None:
            self.transport.close()

    def _keepalive(self) -> None:
        idle = time.monotonic() - self._last_read
        if self._pinged and idle > self.settings.keepalive_s + self.settings.keepalive_timeout_s:
            self.usable = False
            if self.transport is not None:
                self.transport.abort()
            return
        if idle >= self.settings.keepalive_s and not self._pinged:
            self._pinged = True
            self.send(encode(K_PING, 0, 0))
        self._timer = self.loop.call_later(
            min(self.settings.keepalive_s, self.settings.keepalive_timeout_s) / 2, self._keepalive
        )

    # ------------------------------------------------------------------ output
    def new_call(self, streaming: bool) -> tuple[int, _Call]:
        """A call with the next id; after 2^32 - 1 ids they wrap to 1, skipping those still in use (a
        long-lived stream keeps its id). A connection lost since it was handed out (the server may close
        one right after its handshake: TLS 1.3 refuses a client's certificate after the client's side is
        done) takes no call: UNAVAILABLE, as if the loss came after it."""
        if self.transport is None:
            raise RpcError(StatusCode.UNAVAILABLE, f"connection to {self.target} lost")
        calls = self.calls
        call_id = self._next_id
        while call_id in calls:
            call_id = call_id + 1 if call_id < 0xFFFFFFFF else 1
        self._next_id = call_id + 1 if call_id < 0xFFFFFFFF else 1
        call = _Call(self, streaming)
        calls[call_id] = call
        return call_id, call

    def send(self, data: bytes) -> None:
        self._out += data
        if not self._flush_scheduled:
            self._flush_scheduled = True
            self.loop.call_soon(self._flush)

    def send_unary(self, call_id: int, head: bytes, body: bytes) -> None:
        """A unary call's one frame (send_frame, inline: every unary call takes this path)."""
        if len(body) > LARGE_BODY_BYTES:
            self.send_frame(K_CALL, _UNARY, call_id, head, body)
            return
        out = self._out
        out += HEADER.pack(len(head) + len(body), K_CALL, _UNARY, len(head), call_id)
        out += head
        out += body
        if not self._flush_scheduled:
            self._flush_scheduled = True
            self.loop.call_soon(self._flush)

    def _flush(self) -> None:
        self._flush_scheduled = False
        if self._out and self.transport is not None:
            self.transport.write(self._out)
            self._out = bytearray()

    def send_frame(self, kind: int, flags: int, call_id: int, head: bytes, body: bytes) -> None:
        if len(body) <= LARGE_BODY_BYTES:
            self.send(encode(kind, flags, call_id, head, body))
            return
        self._flush()
        if self.transport is not None:
            self.transport.write(HEADER.pack(len(head) + len(body), kind, flags, len(head), call_id) + head)
            self.transport.write(body)

    def pause_writing(self) -> None:
        """The server does not read what is written: no PING is answered until it does (so a server that
        sends and never reads cannot grow this side's buffer), and writers wait in `drain`. Reading goes
        on: a connection the server closes (a refused TLS handshake ends in a close after TLS 1.3's
        client side finished) must still be seen."""
        self._write_blocked = True

    def resume_writing(self) -> None:
        self._write_blocked = False
        if self._writable is not None and not self._writable.done():
            self._writable.set_result(None)
        self._writable = None

    async def drain(self) -> None:
        if not self._write_blocked:
            return
        if self._writable is None:
            self._writable = self.loop.create_future()
        await self._writable

    def cancel(self, call_id: int) -> None:
        if self.calls.pop(call_id, None) is not None and self.transport is not None:
            self.send(encode(K_CANCEL, 0, call_id))

    # ------------------------------------------------------------------ input
    def _admit(self, kind: int, call_id: int, head: bytes, size: int) -> bool:
        return size <= self.settings.max_message_bytes

    def data_received(self, data: bytes) -> None:
        self._last_read = time.monotonic()
        self._pinged = False
        try:
            frames = self._decoder.feed(data)
        except FrameError as e:
            self._broken(f"{self.target} broke the framing: {e}")
            return
        calls = self.calls
        for frame in frames:
            kind = frame.kind
            if kind == K_END:
                call = calls.pop(frame.call_id, None)
                if call is None:
                    continue
                if frame.head:
                    try:
                        status = RpcStatusHead.FromString(frame.head)
                        code, details = StatusCode.of(status.code), status.details
                    except DecodeError:
                        code, details = StatusCode.INTERNAL, "an unreadable status from the server"
                else:
                    code, details = _OK, ""
                if frame.body is None and frame.flags & F_MESSAGE:
                    code = StatusCode.RESOURCE_EXHAUSTED
                    details = f"an answer of {frame.body_size} bytes, above {self.settings.max_message_bytes}"
                self._end(call, code, details, frame.body)
            elif kind == K_MESSAGE:
                call = calls.get(frame.call_id)
                if call is None or call.queue is None:
                    continue
                if frame.body is None:
                    calls.pop(frame.call_id, None)
                    self.send(encode(K_CANCEL, 0, frame.call_id))
                    details = f"an answer of {frame.body_size} bytes, above {self.settings.max_message_bytes}"
                    self._end(call, StatusCode.RESOURCE_EXHAUSTED, details, None)
                    continue
                call.queue.append(frame.body)
                if len(call.queue) > self.settings.stream_queue:
                    self._broken(f"{self.target} sent call {frame.call_id} past its window")
                    return
                call.wake()
            elif kind == K_WINDOW:
                call = calls.get(frame.call_id)
                if call is not None and frame.body is not None and len(frame.body) == WINDOW_AMOUNT.size:
                    call.credit += WINDOW_AMOUNT.unpack(frame.body)[0]
                    call.wake()
            elif kind == K_PING:
                if not self._write_blocked:
                    self.send(encode(K_PONG, 0, frame.call_id))
            elif kind == K_GOAWAY:
                self._gone_away(frame.call_id)
            # PONG: its arrival already counted as hearing from the server

    def _gone_away(self, last_call_id: int) -> None:
        """The server takes no new call here: those above the last it took fail UNAVAILABLE, marked
        NOT_TAKEN (a unary call is sent again on a new connection); the others run to their end."""
        self.usable = False
        calls = self.calls
        for call_id in [i for i in calls if i > last_call_id]:
            details = f"{self.target} closed the connection before taking the call (safe to retry)"
            self._end(calls.pop(call_id), StatusCode.UNAVAILABLE, details, NOT_TAKEN)
        if not calls:
            self.close()

    def _expire(self, call_id: int, call: _Call) -> None:
        """The call's deadline passed: it fails here and the server is told to stop it."""
        self.cancel(call_id)
        self._end(call, StatusCode.DEADLINE_EXCEEDED, "Deadline Exceeded", None)

    def _broken(self, why: str) -> None:
        self.usable = False
        self._fail_all(StatusCode.INTERNAL, why)
        if self.transport is not None:
            self.transport.abort()

    def _end(self, call: _Call, code: StatusCode, details: str, body: bytes | None) -> None:
        if not call.future.done():
            call.future.set_result((code, details, body))
        call.wake()


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
            if wait > 0 and deadline is not None and time.monotonic() + wait >= deadline:
                why = f"failed to connect to {self.target} (retrying in {wait:.2f}s)"
                raise RpcError(StatusCode.UNAVAILABLE, why)
            dial = pool.connecting[key] = asyncio.get_running_loop().create_task(
                self._dial(pool, key, generation)
            )
            dial.add_done_callback(lambda t: t.cancelled() or t.exception())
        remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
        try:
            return await asyncio.wait_for(asyncio.shield(dial), remaining)
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
        if type(request) is bytes:
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
