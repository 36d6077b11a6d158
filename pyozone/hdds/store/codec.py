"""Byte codecs for table keys and values.

Integer keys are 8-byte big-endian so RocksDB's bytewise order is numeric order; records are compact
JSON so `pyozone debug ldb` can show them without a schema registry.
"""

from __future__ import annotations

import json
from typing import Any, Generic, Protocol, TypeVar

T = TypeVar("T")


class Codec(Protocol[T]):
    def encode(self, value: T) -> bytes: ...

    def decode(self, data: bytes) -> T: ...


class IntKeyCodec:
    def encode(self, value: int) -> bytes:
        return value.to_bytes(8, "big", signed=False)

    def decode(self, data: bytes) -> int:
        if len(data) != 8:
            raise ValueError(f"an integer key is 8 bytes, got {len(data)}")
        return int.from_bytes(data, "big", signed=False)


class StrKeyCodec:
    def encode(self, value: str) -> bytes:
        return value.encode()

    def decode(self, data: bytes) -> str:
        return data.decode()


class JsonCodec:
    """Plain JSON values (dicts, numbers, strings)."""

    def encode(self, value: Any) -> bytes:
        return json.dumps(value, separators=(",", ":"), sort_keys=True).encode()

    def decode(self, data: bytes) -> Any:
        return json.loads(data)


class Record(Protocol):
    def to_dict(self) -> dict[str, Any]: ...

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Any: ...


R = TypeVar("R", bound=Record)


class RecordCodec(Generic[R]):
    """A record class with to_dict/from_dict, stored as JSON."""

    def __init__(self, cls: type[R]) -> None:
        self.cls = cls

    def encode(self, value: R) -> bytes:
        return json.dumps(value.to_dict(), separators=(",", ":")).encode()

    def decode(self, data: bytes) -> R:
        return self.cls.from_dict(json.loads(data))
