"""Bounds on what a caller may send a method, checked on the raw bytes before anything is parsed.

A server may bound its methods' requests (`RequestLimits`): the message's size is checked from the frame
header before its body is read (frames.FrameDecoder's admit), and top-level length-delimited fields
(names, bytes) on the raw body before it is parsed, so a 30 MB name is never turned into a message, a str
or an error message. The request becomes an `Oversized` that the service's own refusal answers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from pyozone.common.varint import read_varint
from pyozone.rpc.status import StatusCode


@dataclass(frozen=True, slots=True)
class Oversized:
    """A request above its method's bounds. `field` is the top-level field that is too long, or None when
    the whole message is."""

    field: str | None
    size: int
    limit: int


@dataclass(frozen=True)
class RequestBounds:
    """One method's request limits: the whole message, and top-level length-delimited fields (strings,
    bytes, sub-messages) by field number as (name, limit)."""

    message_bytes: int
    fields: Mapping[int, tuple[str, int]]
    read_bytes: int | None = None
    """Above this a body is skipped unread, its size known from the frame header (default
    `message_bytes`). A service whose refusal names the long field sets it higher, so that a body between
    the two is read and its fields walked (OM: a 3 MiB name is INVALID_VOLUME_NAME, 30 MB are skipped)."""

    @property
    def skip_above(self) -> int:
        return self.message_bytes if self.read_bytes is None else self.read_bytes

    def oversized(self, raw: bytes) -> Oversized | None:
        """Walks the top-level fields of the wire format without copying any; a malformed message is left
        to the parser. The first field above its bound wins over the whole message's size."""
        end = len(raw)
        if self.fields and end > min(limit for _, limit in self.fields.values()):
            field = _long_field(raw, self.fields)
            if field is not None:
                return field
        if end > self.message_bytes:
            return Oversized(None, end, self.message_bytes)
        return None


def _long_field(raw: bytes, fields: Mapping[int, tuple[str, int]]) -> Oversized | None:
    pos, end = 0, len(raw)
    try:
        while pos < end:
            tag, pos = read_varint(raw, pos)
            wire_type = tag & 7
            if wire_type == 0:
                _, pos = read_varint(raw, pos)
            elif wire_type == 1:
                pos += 8
            elif wire_type == 5:
                pos += 4
            elif wire_type == 2:
                size, pos = read_varint(raw, pos)
                bound = fields.get(tag >> 3)
                if bound is not None and size > bound[1] and pos + size <= end:
                    return Oversized(bound[0], size, bound[1])
                pos += size
            else:  # groups (long deprecated): the parser decides
                return None
    except (IndexError, ValueError):  # truncated or malformed: the parser says so
        return None
    return None


class RequestLimits(Protocol):
    """A service's request bounds by full method name ("/package.Service/method"), and how it words a
    refusal (the status and its details; never the oversized content)."""

    def bounds(self, method: str) -> RequestBounds | None: ...

    def refusal(self, method: str, oversized: Oversized) -> tuple[StatusCode, str]: ...
