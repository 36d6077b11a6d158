"""The wire format, free of I/O (as h11 is): a connection feeds bytes in and takes frames out.

A frame is a 12-byte header — the length of what follows it, the kind, flags, the length of the head
and the call id — then a head (an `RpcCallHead` or `RpcStatusHead` of proto/pyozone/Rpc.proto, or
nothing) and a body (one of the services' protobuf messages, already serialized). Every call is a
sequence of frames with its id, so many calls share one connection (Hadoop RPC's callId, dask's comm
does the same with its own framing).

The receiver decides whether it wants a body before a byte of it is buffered (`admit`): a body above a
method's limit is skipped as it arrives, so a 30 MB name costs the bytes on the socket and nothing else,
and the connection's other calls go on. A frame the receiver would have to buffer above its limit (one
without a message, or a message `admit` takes), a head above MAX_HEAD_BYTES or longer than its frame, and
a length of 2 GiB or more (gRPC's bound on a message, too) are a broken peer: `FrameError`, and the
connection is closed.
"""

from __future__ import annotations

import enum
import struct
from collections.abc import Callable
from dataclasses import dataclass

HEADER = struct.Struct("!IBBHI")
"""length of head + body, kind, flags, head length, call id."""

MAX_HEAD_BYTES = 0xFFFF
"""A head is a method name, a deadline, a few metadata entries or a status message (its length is 16 bits)."""

MAX_FRAME_BYTES = (1 << 31) - 1
"""No frame is longer, skipped or not: a longer length prefix is garbage, not a message."""

LARGE_BODY_BYTES = 64 * 1024
"""Above this a message is written to the socket as it is rather than gathered with other frames."""


class Kind(enum.IntEnum):
    CALL = 1
    """Client opens call `call_id`: head RpcCallHead; the first message in the body (flag MESSAGE)."""
    MESSAGE = 2
    """One message of a stream, either way."""
    HALF_CLOSE = 3
    """The client sends no more messages on the call."""
    END = 4
    """Server ends the call: head RpcStatusHead (empty for OK); a unary answer in the body."""
    CANCEL = 5
    """The client gave up on the call (cancelled, or its deadline passed)."""
    PING = 6
    PONG = 7
    GOAWAY = 8
    """The server takes no new calls on this connection (it is idle, or stopping)."""
    WINDOW = 9
    """The receiver of a call's stream takes `amount` more messages of it (body: WINDOW_AMOUNT). A stream
    is flow-controlled by itself, as an HTTP/2 stream is: a reader that falls behind holds up its own
    stream's sender, never the connection's other calls."""


MESSAGE_KINDS = frozenset((1, 2, 4))
"""Kinds whose body is a message (CALL, MESSAGE, END): the ones `admit` is asked about and may skip."""


class Flag(enum.IntFlag):
    NONE = 0
    END_STREAM = 1
    """The client's last message (CALL or MESSAGE): no HALF_CLOSE follows."""
    MESSAGE = 2
    """The frame's body is a message (an empty message has an empty body, so length alone cannot say)."""


# The kinds and flags as plain ints, for the per-frame paths: on Python 3.11 an enum member's lookup costs
# about 80 ns and an IntFlag's `&` about 700 ns, a good part of a call's budget.
K_CALL, K_MESSAGE, K_HALF_CLOSE, K_END, K_CANCEL, K_PING, K_PONG, K_GOAWAY, K_WINDOW = (int(k) for k in Kind)
F_END_STREAM, F_MESSAGE = int(Flag.END_STREAM), int(Flag.MESSAGE)


class FrameError(Exception):
    """The peer broke the framing: the connection cannot be read further."""


@dataclass(slots=True)
class Frame:
    kind: int
    flags: int
    call_id: int
    head: bytes
    body: bytes | None
    """None when `admit` refused it (it was skipped); `body_size` says how long it was."""
    body_size: int


Admit = Callable[[int, int, bytes, int], bool]
"""(kind, call_id, head, body size) -> whether to keep the body."""


WINDOW_AMOUNT = struct.Struct("!I")


def window(call_id: int, amount: int) -> bytes:
    """A WINDOW frame granting `amount` more messages of call `call_id`."""
    return encode(Kind.WINDOW, 0, call_id, b"", WINDOW_AMOUNT.pack(amount))


def encode(kind: int, flags: int, call_id: int, head: bytes = b"", body: bytes = b"") -> bytes:
    return HEADER.pack(len(head) + len(body), kind, flags, len(head), call_id) + head + body


class FrameDecoder:
    """Frames out of a byte stream. `max_frame`: the largest head + body buffered at all; `admit` is asked
    about a message body above `free_body` bytes (smaller ones are taken without asking)."""

    __slots__ = (
        "_admit", "_body", "_buf", "_frame", "_have", "_need", "_skip", "free_body", "max_frame",
    )  # fmt: skip

    def __init__(self, max_frame: int, admit: Admit | None = None, free_body: int = 0) -> None:
        self.max_frame = max_frame
        self._admit = admit
        self.free_body = free_body
        self._buf = bytearray()
        """The start of a frame whose header or head has not all arrived."""
        self._need = 0
        """The bytes `_buf` must hold before decoding can go on (a header or a head): arriving in many reads,
        it is appended to, not copied at each (which is quadratic)."""
        self._skip = 0
        self._frame: Frame | None = None
        """A frame whose body is being skipped (`_skip`) or gathered (`_body`), reported when it ends."""
        self._body: list[bytes | memoryview] = []
        """The pieces of `_frame`'s body that arrived, as they arrived: joined once it is whole, so a large
        body costs one copy (appending to a buffer, copying that to `bytes` and slicing the body out of
        it were three)."""
        self._have = 0
        """The bytes in `_body`."""

    @property
    def pending(self) -> bool:
        """Part of a frame has arrived and the rest has not (a stalled peer is seen by this)."""
        return bool(self._buf) or self._frame is not None

    def feed(self, data: bytes) -> list[Frame]:
        """The frames `data` completes. Heads and bodies are sliced from one `bytes` (one copy each); a body
        whose frame is not whole when its head is is gathered in pieces (`_body`)."""
        frames: list[Frame] = []
        if type(data) is not bytes:
            data = bytes(data)  # kept in `_body`: the caller may reuse its buffer
        if self._frame is not None and not self._skip:
            n = self._frame.body_size - self._have
            if len(data) < n:
                self._body.append(data)
                self._have += len(data)
                return frames
            self._body.append(memoryview(data)[:n] if len(data) > n else data)
            self._frame.body = b"".join(self._body)
            frames.append(self._frame)
            self._frame, self._body, self._have = None, [], 0
            data = data[n:]
        if self._skip:
            n = min(self._skip, len(data))
            self._skip -= n
            if self._skip:
                return frames
            assert self._frame is not None
            frames.append(self._frame)
            self._frame = None
            data = data[n:]
        if self._buf:
            self._buf += data
            if len(self._buf) < self._need:
                return frames
            src = bytes(self._buf)
        else:
            src = data
        pos, end = 0, len(src)
        header_size = HEADER.size
        unpack = HEADER.unpack_from
        admit, free_body, max_frame = self._admit, self.free_body, self.max_frame
        need = header_size
        while end - pos >= header_size:
            length, kind, flags, head_len, call_id = unpack(src, pos)
            start = pos + header_size
            body_size = length - head_len
            if head_len > length or length > max_frame:
                skippable = admit is not None and kind in MESSAGE_KINDS
                if head_len > length or length > MAX_FRAME_BYTES or not skippable:
                    raise FrameError(
                        f"frame of {length} bytes (head {head_len}) above the limit of {max_frame}"
                    )
            if admit is not None and body_size > free_body and kind in MESSAGE_KINDS:
                if end - start < head_len:
                    need = header_size + head_len
                    break
                head = src[start : start + head_len]
                if not admit(kind, call_id, head, body_size):
                    skipped = Frame(kind, flags, call_id, head, None, body_size)
                    have = min(end - start - head_len, body_size)
                    pos = start + head_len + have
                    if have < body_size:
                        self._skip = body_size - have
                        self._frame = skipped
                        break
                    frames.append(skipped)
                    continue
                if length > max_frame:
                    raise FrameError(f"a message of {body_size} bytes taken above the limit of {max_frame}")
            if end - start < length:
                if end - start >= head_len:  # the head is here: the body is gathered as it comes
                    split = start + head_len
                    self._frame = Frame(kind, flags, call_id, src[start:split], None, body_size)
                    self._body = [memoryview(src)[split:]] if end > split else []
                    self._have = end - split
                    self._buf = bytearray()
                    return frames
                need = header_size + head_len
                break
            split = start + head_len
            pos = start + length
            frames.append(Frame(kind, flags, call_id, src[start:split], src[split:pos], body_size))
        if pos < end:
            self._buf = bytearray(src[pos:])
            self._need = need
        else:
            self._buf = bytearray()
        return frames
