"""One peer's connection to a server: its frames read and answered, its calls (each a `CallContext` its
handler sees) run as tasks and bounded (in flight, held, windows, stalls, keepalive, idle), what a
misbehaving peer may cost (rpc.server's module docstring lists the bounds; `Server` listens and owns the
services)."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import ssl
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from types import CoroutineType
from typing import TYPE_CHECKING, Any, NoReturn

from google.protobuf.message import DecodeError

from pyozone.common.tls import revoked_ssl_peer
from pyozone.hdds.security import x509 as X
from pyozone.proto.Rpc_pb2 import RpcStatusHead
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
    Frame,
    FrameDecoder,
    FrameError,
    encode,
    window,
)
from pyozone.rpc.limits import Oversized, RequestBounds
from pyozone.rpc.service import MethodSpec
from pyozone.rpc.status import AbortError, StatusCode

if TYPE_CHECKING:
    from pyozone.rpc.server import Server

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class _Bound:
    """A registered method, with what each of its calls needs at hand."""

    spec: MethodSpec
    handler: Any
    bounds: RequestBounds | None
    """Its RequestLimits bounds (None: only the server's message size)."""
    limit: int
    """The largest request body read at all."""
    client_streaming: bool
    server_streaming: bool
    parse: Callable[[bytes], Any]


@dataclass(frozen=True, slots=True)
class _CallHead:
    """A parsed RpcCallHead, cached by its bytes: a client sends the same few heads again and again (a
    method, its deadline and its caller), so most calls parse none."""

    method: str
    timeout_s: float
    metadata: tuple[tuple[str, str], ...]
    trace_id: str
    bound: _Bound | None
    limit: int
    """The largest request body read for the method."""


HEAD_CACHE_ENTRIES = 1024
HEAD_CACHE_MAX_BYTES = 2048
"""Heads longer than this (tokens in their metadata) are parsed each time: the cache holds at most
HEAD_CACHE_ENTRIES * HEAD_CACHE_MAX_BYTES."""


class CallContext:
    """What a handler knows of its call, shaped as grpc.aio's ServicerContext so handlers read the same."""

    __slots__ = ("_conn", "_metadata", "call_id", "deadline", "method", "trace_id")

    def __init__(
        self,
        conn: ServerConnection,
        call_id: int,
        method: str,
        metadata: tuple[tuple[str, str], ...],
        deadline: float | None,
        trace_id: str,
    ) -> None:
        self._conn = conn
        self.call_id = call_id
        self.method = method
        self._metadata = metadata
        self.deadline = deadline
        self.trace_id = trace_id

    def peer(self) -> str:
        return self._conn.peer_name

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return self._metadata

    def auth_context(self) -> dict[str, list[bytes]]:
        """The caller's verified certificate as gRPC names its properties (x509_pem_cert,
        x509_common_name); empty on a plaintext port."""
        return self._conn.auth_context()

    def time_remaining(self) -> float | None:
        return None if self.deadline is None else max(0.0, self.deadline - time.monotonic())

    async def abort(self, code: StatusCode, details: str = "") -> NoReturn:
        raise AbortError(StatusCode(code), details)


class _Inbound:
    """The requests of a client-streaming call, as an async iterator for its handler."""

    __slots__ = ("_conn", "_ended", "_queue", "_waiter", "call_id", "taken")

    def __init__(self, conn: ServerConnection, call_id: int) -> None:
        self._conn = conn
        self.call_id = call_id
        self._queue: deque[Any] = deque()
        self._ended = False
        self._waiter: asyncio.Future[None] | None = None
        self.taken = 0
        """Requests the handler took since the client was last granted more (Kind.WINDOW)."""

    def put(self, item: Any) -> None:
        self._queue.append(item)
        self._wake()

    def end(self) -> None:
        self._ended = True
        self._wake()

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    def __len__(self) -> int:
        return len(self._queue)

    def __aiter__(self) -> _Inbound:
        return self

    async def __anext__(self) -> Any:
        while not self._queue:
            if self._ended:
                raise StopAsyncIteration
            self._waiter = asyncio.get_running_loop().create_future()
            await self._waiter
            self._waiter = None
        item = self._queue.popleft()
        self._conn.inbound_taken(self)
        if isinstance(item, Exception):
            raise item
        if (serial := self._conn.revoked_caller()) is not None:  # queued before the revocation
            raise AbortError(StatusCode.PERMISSION_DENIED, f"certificate {serial} was revoked")
        return item


class _Call(CallContext):
    """A call as its connection runs it; its handler's context is the call itself (one object a call)."""

    __slots__ = ("credit", "credit_waiter", "deadline_seq", "expired", "inbound", "task")

    def __init__(
        self,
        conn: ServerConnection,
        call_id: int,
        method: str,
        metadata: tuple[tuple[str, str], ...],
        deadline: float | None,
        trace_id: str,
    ) -> None:
        super().__init__(conn, call_id, method, metadata, deadline, trace_id)
        self.task: asyncio.Task[None] | None = None
        self.inbound: _Inbound | None = None
        self.expired = False
        self.deadline_seq = -1
        """Its entry in the connection's Deadlines."""
        self.credit = 0
        """Answers of a server stream the client has room for (its Kind.WINDOW grants)."""
        self.credit_waiter: asyncio.Future[None] | None = None

    def grant(self, amount: int) -> None:
        self.credit += amount
        if self.credit_waiter is not None and not self.credit_waiter.done():
            self.credit_waiter.set_result(None)


class ServerConnection(asyncio.Protocol):
    def __init__(self, server: Server) -> None:
        self.server = server
        self.settings = server.settings
        self.loop = asyncio.get_running_loop()
        self.transport: asyncio.Transport | None = None
        self.peer_name = "unknown"
        self._decoder = FrameDecoder(
            self.settings.max_message_bytes + MAX_HEAD_BYTES, self._admit, server.free_body
        )
        self._calls: dict[int, _Call] = {}
        self._out = bytearray()
        self._flush_scheduled = False
        self._paused: set[object] = set()
        self._writable: asyncio.Future[None] | None = None
        self._last_read = time.monotonic()
        self._frame_began = self._last_read
        """When the frame the decoder holds part of began (or reading was last resumed)."""
        self._idle_since = self._last_read
        """When the connection last had no call running (keepalive pings do not make it busy)."""
        self._write_blocked_since: float | None = None
        self._auth: dict[str, list[bytes]] | None = None
        self._ssl: ssl.SSLObject | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._pinged_at: float | None = None
        """When a keepalive PING went out that nothing was heard after."""
        self._deadlines = Deadlines(self.loop, self._calls, self._expire)
        self._goaway = False
        self._last_call_id = 0
        """The call id of the last CALL frame acted on (run or refused), sent in GOAWAY: the client knows
        the calls above it were never taken (as HTTP/2's GOAWAY last-stream-id)."""
        self._held: deque[Frame] = deque()
        """CALL frames max_in_flight had no room for, started in order as calls end."""
        self._held_frames: dict[int, list[Frame]] = {}
        """The later frames of each held call, handled in order once it starts."""
        self._held_bytes = 0

    # ------------------------------------------------------------------ connection
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        peer = transport.get_extra_info("peername")
        if peer:
            self.peer_name = f"ipv4:{peer[0]}:{peer[1]}"
        self._ssl = transport.get_extra_info("ssl_object")
        self.server.connections.add(self)
        self._arm_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self.server.connections.discard(self)
        if self._timer is not None:
            self._timer.cancel()
        self._deadlines.close()
        for call in list(self._calls.values()):
            if call.task is not None:
                call.task.cancel()
        self._calls.clear()
        self._held.clear()
        self._held_frames.clear()
        if self._writable is not None and not self._writable.done():
            self._writable.set_exception(ConnectionResetError("connection lost"))
            self._writable.exception()
        self.transport = None

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()

    def go_away(self) -> None:
        """Takes no new call: GOAWAY names the last call taken, and the client retries those above it."""
        self._goaway = True
        self._send(encode(K_GOAWAY, 0, self._last_call_id))

    def abort(self, why: str) -> None:
        log.warning("RPC connection from %s closed: %s", self.peer_name, why)
        if self.transport is not None:
            self.transport.abort()

    def revoked_caller(self) -> int | None:
        """The serial of the caller's certificate when the server's current CRL lists it (OpenSSL checked
        the CRL at the handshake only), else None."""
        return None if self._ssl is None else revoked_ssl_peer(self._ssl)

    def auth_context(self) -> dict[str, list[bytes]]:
        if self._auth is None:
            auth: dict[str, list[bytes]] = {}
            der = self._ssl.getpeercert(binary_form=True) if self._ssl is not None else None
            if der:
                cert = X.cert_from_der(der)
                auth["x509_pem_cert"] = [X.cert_to_pem(cert)]
                with contextlib.suppress(ValueError):
                    auth["x509_common_name"] = [X.common_name(cert).encode()]
            self._auth = auth
        return self._auth

    # ------------------------------------------------------------------ timers
    def _arm_timer(self) -> None:
        s = self.settings
        period = min(s.stall_timeout_s, s.idle_timeout_s, s.keepalive_s, s.keepalive_timeout_s) / 2
        self._timer = self.loop.call_later(period, self._check)

    def _check(self) -> None:
        now = time.monotonic()
        s = self.settings
        if self._decoder.pending and not self._paused and now - self._frame_began > s.stall_timeout_s:
            self.abort(f"a frame begun {now - self._frame_began:.0f}s ago was not finished")
            return
        if self._write_blocked_since is not None and now - self._write_blocked_since > s.stall_timeout_s:
            self.abort("the peer did not read its answers")
            return
        if self._paused:  # this side does not read: the peer's answer could not be heard
            self._pinged_at = None
        elif self._pinged_at is not None:
            if now - self._pinged_at > s.keepalive_timeout_s:
                self.abort(f"no answer to a keepalive ping in {s.keepalive_timeout_s:g}s")
                return
        elif now - self._last_read >= s.keepalive_s:
            self._pinged_at = now
            self._send(encode(K_PING, 0, 0))
        if self._goaway and not self._calls:
            self.close()  # a timer turn after the GOAWAY: the client read it before the socket closed
            return
        if not self._calls and now - self._idle_since > s.idle_timeout_s:
            self.go_away()
            self._flush()
        self._arm_timer()

    # ------------------------------------------------------------------ flow control
    def _pause(self, reason: object) -> None:
        if not self._paused and self.transport is not None:
            self.transport.pause_reading()
        self._paused.add(reason)

    def _resume(self, reason: object) -> None:
        if reason in self._paused:
            self._paused.discard(reason)
            if not self._paused and self.transport is not None:
                self._frame_began = time.monotonic()  # a frame's stall counts from here: this side paused it
                self.transport.resume_reading()

    def pause_writing(self) -> None:
        self._write_blocked_since = time.monotonic()
        self._pause("writing")

    def resume_writing(self) -> None:
        self._write_blocked_since = None
        self._resume("writing")
        if self._writable is not None and not self._writable.done():
            self._writable.set_result(None)
        self._writable = None

    async def drain(self) -> None:
        """Waits while the peer does not read what was written (a stream's next answer waits here)."""
        if self._write_blocked_since is None:
            return
        if self._writable is None:
            self._writable = self.loop.create_future()
        await self._writable

    def inbound_taken(self, inbound: _Inbound) -> None:
        """The handler took a request of its stream: the client may send more once half the window is
        taken (one WINDOW frame per half window, not one per message)."""
        inbound.taken += 1
        if inbound.taken >= max(1, self.settings.stream_queue // 2) and inbound.call_id in self._calls:
            self._send(window(inbound.call_id, inbound.taken))
            inbound.taken = 0

    # ------------------------------------------------------------------ output
    def _send(self, data: bytes) -> None:
        self._out += data
        if not self._flush_scheduled:
            self._flush_scheduled = True
            self.loop.call_soon(self._flush)

    def _flush(self) -> None:
        self._flush_scheduled = False
        if self._out and self.transport is not None:
            self.transport.write(self._out)
            self._out = bytearray()

    def _write_frame(self, kind: int, flags: int, call_id: int, head: bytes, body: bytes) -> None:
        """Small frames gather in the output buffer (one write per loop turn); a large message is
        written as it is, after what is buffered, not copied into the buffer."""
        if len(body) <= LARGE_BODY_BYTES:
            self._send(encode(kind, flags, call_id, head, body))
            return
        self._flush()
        if self.transport is not None:
            self.transport.write(HEADER.pack(len(head) + len(body), kind, flags, len(head), call_id) + head)
            self.transport.write(body)

    def _send_end(self, call_id: int, code: StatusCode, details: str, body: bytes | None = None) -> None:
        head = b"" if code == 0 else RpcStatusHead(code=code, details=details).SerializeToString()
        if body is None:
            self._send(encode(K_END, 0, call_id, head))
        else:
            self._write_frame(K_END, F_MESSAGE, call_id, head, body)

    def _answer(self, call_id: int, body: bytes) -> None:
        """Ends a call OK with its answer (the path every unary call takes)."""
        if len(body) > LARGE_BODY_BYTES:
            self._write_frame(K_END, F_MESSAGE, call_id, b"", body)
            return
        self._out += HEADER.pack(len(body), K_END, F_MESSAGE, 0, call_id)
        self._out += body
        if not self._flush_scheduled:
            self._flush_scheduled = True
            self.loop.call_soon(self._flush)

    def send_message(self, call_id: int, body: bytes) -> None:
        self._write_frame(K_MESSAGE, F_MESSAGE, call_id, b"", body)

    # ------------------------------------------------------------------ input
    def _admit(self, kind: int, call_id: int, head: bytes, size: int) -> bool:
        """Whether a body is read at all: above its method's bound it is skipped unread."""
        if kind == K_CALL:
            parsed = self.server.call_head(head)
            return parsed is None or size <= parsed.limit  # an unreadable head is refused when handled
        if kind == K_MESSAGE:
            call = self._calls.get(call_id)  # none: the call ended, its late messages are dropped unread
            return call is not None and size <= self.server.message_limit(call.method)
        return False  # a client sends no END

    def data_received(self, data: bytes) -> None:
        decoder = self._decoder
        was_pending = decoder.pending
        self._last_read = now = time.monotonic()
        self._pinged_at = None
        try:
            frames = decoder.feed(data)
        except FrameError as e:
            self.abort(str(e))
            return
        if decoder.pending and (frames or not was_pending):
            self._frame_began = now  # a new frame began in this read: its stall counts from its first byte
        limit = self.settings.max_in_flight
        for frame in frames:
            if frame.kind == K_CALL:
                if self._held or len(self._calls) >= limit:
                    if frame.call_id in self._held_frames:
                        self.abort(f"call id {frame.call_id} opened twice")
                        return
                    self._hold(frame)
                    self._held.append(frame)
                    self._held_frames[frame.call_id] = []
                else:
                    self._on_call(frame)
            elif frame.call_id in self._held_frames and frame.kind not in (K_PING, K_PONG):
                self._hold(frame)
                self._held_frames[frame.call_id].append(frame)
            elif not self._handle(frame):
                return

    def _hold(self, frame: Frame) -> None:
        """Counts a frame that waits for max_in_flight room; past max_held_bytes the socket is paused (the
        frames of running calls were read before it, so none of them waits on what is held)."""
        self._held_bytes += _held_cost(frame)
        if self._held_bytes > self.settings.max_held_bytes:
            self._pause("held")

    def _take_held(self) -> None:
        """Starts the held calls in order while there is room for them, each with its later frames."""
        held, limit = self._held, self.settings.max_in_flight
        while held and len(self._calls) < limit:
            frame = held.popleft()
            later = self._held_frames.pop(frame.call_id, [])
            self._held_bytes -= sum(_held_cost(f) for f in (frame, *later))
            self._on_call(frame)
            for f in later:
                if not self._handle(f):
                    return
        if self._held_bytes <= self.settings.max_held_bytes:
            self._resume("held")

    def _handle(self, frame: Frame) -> bool:
        """Acts on one frame; False when it broke the protocol (the connection is closed)."""
        kind = frame.kind
        if kind == K_CALL:
            self._on_call(frame)
        elif kind == K_MESSAGE:
            self._on_message(frame)
        elif kind == K_HALF_CLOSE:
            call = self._calls.get(frame.call_id)
            if call is not None and call.inbound is not None:
                call.inbound.end()
        elif kind == K_CANCEL:
            call = self._calls.get(frame.call_id)
            if call is not None and call.task is not None:
                call.task.cancel()
        elif kind == K_WINDOW:
            if frame.body is None or len(frame.body) != WINDOW_AMOUNT.size:
                self.abort("a WINDOW frame without its amount")
                return False
            call = self._calls.get(frame.call_id)
            if call is not None:
                call.grant(WINDOW_AMOUNT.unpack(frame.body)[0])
        elif kind == K_PING:
            self._send(encode(K_PONG, 0, frame.call_id))
        elif kind != K_PONG:
            self.abort(f"a frame of kind {kind} a client does not send")
            return False
        return True

    def _on_call(self, frame: Frame) -> None:
        call_id = frame.call_id
        if call_id in self._calls:
            self.abort(f"call id {call_id} opened twice")
            return
        if self._goaway:  # the client fails it as not taken (its id is above the GOAWAY's) and retries
            self._send_end(call_id, StatusCode.UNAVAILABLE, "the server is closing this connection")
            return
        self._last_call_id = call_id
        head = self.server.call_head(frame.head)
        if head is None:
            self._send_end(call_id, StatusCode.INVALID_ARGUMENT, "INVALID_REQUEST: an unreadable call head")
            return
        method = head.method
        if self._ssl is not None:
            serial = self.revoked_caller()
            if serial is not None:
                log.warning("Refused a call from %s: certificate %d is revoked", self.peer_name, serial)
                self._send_end(call_id, StatusCode.PERMISSION_DENIED, f"certificate {serial} was revoked")
                return
        bound = head.bound
        if bound is None:
            self._send_end(call_id, StatusCode.UNIMPLEMENTED, f"Method not found: {method}")
            return
        timeout = head.timeout_s
        deadline = time.monotonic() + timeout if timeout else None
        call = _Call(self, call_id, method, head.metadata, deadline, head.trace_id)
        if bound.client_streaming:
            call.inbound = _Inbound(self, call_id)
            if frame.flags & F_MESSAGE:
                self._enqueue(call, frame)
            if frame.flags & F_END_STREAM:
                call.inbound.end()
            argument: Any = call.inbound
        else:
            if not (frame.flags & F_MESSAGE):
                self._send_end(
                    call_id, StatusCode.INVALID_ARGUMENT, "INVALID_REQUEST: a call without its request"
                )
                return
            argument = self._decode(bound, method, frame)
            if isinstance(argument, tuple):
                self._send_end(call_id, *argument)
                return
        self._calls[call_id] = call
        if call.inbound is not None:
            self._send(window(call_id, self.settings.stream_queue))
        if timeout:
            self._deadlines.add(timeout, call_id, call)
        runner = self._run_stream if bound.server_streaming else self._run_unary
        call.task = self.loop.create_task(runner(call, bound, argument))

    def _decode(self, bound: _Bound, method: str, frame: Frame) -> Any:
        """The request, or (status, details) refusing it."""
        if frame.body is not None and bound.bounds is None:
            try:
                return bound.parse(frame.body)
            except (DecodeError, ValueError, TypeError):
                pass  # refused below, with the reason
        limits = self.server.limits
        if frame.body is None:
            oversized = Oversized(None, frame.body_size, self.server.message_limit(method))
            log.warning(
                "%s from %s: request of %d bytes, above %d",
                method,
                self.peer_name,
                oversized.size,
                oversized.limit,
            )
            if limits is not None:
                return limits.refusal(method, oversized)
            return (
                StatusCode.RESOURCE_EXHAUSTED,
                f"request of {oversized.size} bytes, above {oversized.limit}",
            )
        if limits is not None:
            bounds = bound.bounds
            if bounds is not None:
                oversized = bounds.oversized(frame.body)
                if oversized is not None:
                    what = "request" if oversized.field is None else oversized.field
                    log.warning(
                        "%s from %s: %s of %d bytes, above %d",
                        method,
                        self.peer_name,
                        what,
                        oversized.size,
                        oversized.limit,
                    )
                    return limits.refusal(method, oversized)
        try:
            return bound.parse(frame.body)
        except (DecodeError, ValueError, TypeError) as e:  # ValueError: e.g. bad UTF-8 in a string field
            reason = str(e) or type(e).__name__
            log.warning("%s from %s: undecodable request: %s", method, self.peer_name, reason)
            return (StatusCode.INVALID_ARGUMENT, f"INVALID_REQUEST: not a valid request message: {reason}")

    def _enqueue(self, call: _Call, frame: Frame) -> None:
        assert call.inbound is not None
        if self._ssl is not None:
            serial = self.revoked_caller()
            if serial is not None:  # a stream opened before its caller's certificate was revoked
                call.inbound.put(
                    AbortError(StatusCode.PERMISSION_DENIED, f"certificate {serial} was revoked")
                )
                call.inbound.end()
                return
        bound = self.server.methods[call.method]
        request = self._decode(bound, call.method, frame)
        if isinstance(request, tuple):
            call.inbound.put(AbortError(*request))
            call.inbound.end()
            return
        call.inbound.put(request)
        if len(call.inbound) > self.settings.stream_queue + 1:  # its window, and the CALL's own message
            self.abort(f"call {call.call_id} sent past its window of {self.settings.stream_queue}")

    def _on_message(self, frame: Frame) -> None:
        call = self._calls.get(frame.call_id)
        if call is None or call.inbound is None:
            return  # a call that ended (or was refused) while its client still streamed
        self._enqueue(call, frame)
        if frame.flags & F_END_STREAM:
            call.inbound.end()

    def _expire(self, call_id: int, call: _Call) -> None:
        call.expired = True
        if call.task is not None:
            call.task.cancel()

    def _finish(self, call: _Call) -> None:
        calls = self._calls
        calls.pop(call.call_id, None)
        if not calls:
            self._idle_since = time.monotonic()
        if self._held:
            self._take_held()

    # ------------------------------------------------------------------ running handlers
    async def _run_unary(self, call: _Call, bound: _Bound, argument: Any) -> None:
        context = call
        try:
            result = bound.handler(argument, context)
            if type(result) is CoroutineType or inspect.isawaitable(result):
                result = await result
            body = result if type(result) is bytes else result.SerializeToString()
        except BaseException as e:
            self._failed(call, e)
            return
        finally:
            self._finish(call)
        self._answer(context.call_id, body)

    async def _run_stream(self, call: _Call, bound: _Bound, argument: Any) -> None:
        context = call
        call_id = context.call_id
        try:
            result = bound.handler(argument, context)
            if inspect.isawaitable(result):
                await result
            else:
                async for response in _responses(result):
                    while call.credit <= 0:  # the client has no room for it yet
                        call.credit_waiter = self.loop.create_future()
                        await call.credit_waiter
                    call.credit -= 1
                    if self._write_blocked_since is not None:
                        await self.drain()
                    if self._ssl is not None and self.revoked_caller() is not None:
                        raise AbortError(StatusCode.PERMISSION_DENIED, "the caller's certificate was revoked")
                    self.send_message(
                        call_id, response if isinstance(response, bytes) else response.SerializeToString()
                    )
        except BaseException as e:
            self._finish(call)
            self._failed(call, e)
            return
        self._finish(call)
        self._send_end(call_id, StatusCode.OK, "")

    def _failed(self, call: _Call, e: BaseException) -> None:
        context = call
        if isinstance(e, AbortError):
            self._send_end(context.call_id, e.code, e.details)
        elif isinstance(e, asyncio.CancelledError) and call.task is not None and call.task.cancelling():
            if call.expired:
                self._send_end(context.call_id, StatusCode.DEADLINE_EXCEEDED, "Deadline Exceeded")
            elif self.transport is not None:
                self._send_end(context.call_id, StatusCode.CANCELLED, "Cancelled")
        elif isinstance(e, ConnectionResetError) and self.transport is None:
            pass
        elif isinstance(e, (Exception, asyncio.CancelledError)):
            # A CancelledError nobody asked for (no CANCEL, deadline or lost connection cancelled the task)
            # is a future the handler awaited cancelled under it: the handler's failure, not the caller's
            # cancellation (grpc.aio left such a call hanging until its deadline).
            log.error("%s from %s failed", context.method, self.peer_name, exc_info=e)
            self._send_end(
                context.call_id,
                StatusCode.INTERNAL,
                f"{context.method}: internal error (see the server's log)",
            )
        else:
            raise e


HELD_FRAME_OVERHEAD = 128
"""What a held frame costs beyond its bytes (its Frame object), so that tiny frames are bounded too."""


def _held_cost(frame: Frame) -> int:
    return HELD_FRAME_OVERHEAD + len(frame.head) + (len(frame.body) if frame.body is not None else 0)


async def _responses(result: Any) -> AsyncIterator[Any]:
    if hasattr(result, "__aiter__"):
        async for response in result:
            yield response
    else:
        for response in result:
            yield response
