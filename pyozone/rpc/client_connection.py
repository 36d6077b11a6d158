"""One client connection to a server, free of how it was dialled: the calls on it by id, their frames in
and out, each stream's window, keepalive pings, the server's GOAWAY, and what ends every call when the
connection is lost (rpc.client's Channel dials, pools and hands out these connections)."""

from __future__ import annotations

import asyncio
import ssl
import time
from collections import deque
from dataclasses import dataclass
from typing import Any

from google.protobuf.message import DecodeError

from pyozone.common.tls import revoked_ssl_peer
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
)
from pyozone.rpc.status import RpcError, StatusCode

_OK = StatusCode.OK
_UNARY = F_MESSAGE | F_END_STREAM
"""The flags of a unary call's frame: its one message, and the last."""
NOT_TAKEN: Any = object()
"""A call's body when the server's GOAWAY said it never took the call: safe to send again."""


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
    fail_fast: bool = False
    """A call finding its server's backoff running (a dial failed a moment ago) fails UNAVAILABLE at once
    instead of waiting it out (gRPC's wait_for_ready false): for a caller with other servers to try, as an OM
    client of an HA service, whose failover waits between rounds itself."""


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
        self._ssl: ssl.SSLObject | None = None

    # ------------------------------------------------------------------ connection
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        self._ssl = transport.get_extra_info("ssl_object")
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
        done) takes no call: UNAVAILABLE, as if the loss came after it. Nor does a connection to a
        server whose certificate this side's current CRL lists (OpenSSL checked it at the handshake only):
        it is closed, and a new dial is refused in its handshake."""
        if self.transport is None:
            raise RpcError(StatusCode.UNAVAILABLE, f"connection to {self.target} lost")
        if self._ssl is not None and (serial := revoked_ssl_peer(self._ssl)) is not None:
            self.usable = False
            self.transport.abort()
            why = f"{self.target}: the server's certificate {serial} was revoked"
            raise RpcError(StatusCode.UNAVAILABLE, why)
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

    def send_unary(self, call_id: int, head: bytes, body: bytes | list[bytes | memoryview]) -> None:
        """A unary call's one frame (send_frame, inline: every unary call takes this path). `body` may be a
        list of pieces (a Raft append around its entries' data): written one by one, never joined."""
        if type(body) is list:
            size = sum(map(len, body))
            frame_head = HEADER.pack(len(head) + size, K_CALL, _UNARY, len(head), call_id) + head
            if size > LARGE_BODY_BYTES:
                self._flush()
                if self.transport is not None:
                    self.transport.write(frame_head)
                    for piece in body:
                        self.transport.write(piece)
                return
            self._out += frame_head
            for piece in body:
                self._out += piece
        elif len(body) > LARGE_BODY_BYTES:
            self.send_frame(K_CALL, _UNARY, call_id, head, body)
            return
        else:
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
