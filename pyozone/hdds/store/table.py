"""A typed table over one column family of a key/value backend."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Generic, Protocol, TypeVar

from pyozone.hdds.store.codec import Codec

K = TypeVar("K")
V = TypeVar("V")


class StoreError(Exception):
    """A metadata store cannot be opened or used; the message names the path."""


Op = tuple[str, bytes, bytes | None]
"""(column family, key, value); a value of None deletes the key."""


class KVBackend(Protocol):
    """Raw bytes storage with column families and atomic multi-family batches."""

    def get(self, cf: str, key: bytes) -> bytes | None: ...

    def write(self, ops: list[Op]) -> None:
        """Applies every op atomically and durably against process death (WAL)."""
        ...

    def items(self, cf: str) -> Iterator[tuple[bytes, bytes]]:
        """Key order is bytewise ascending, as RocksDB iterates."""
        ...

    def close(self) -> None: ...


class MemoryBackend:
    """A dict per column family; for unit tests and the simulator, never for a daemon."""

    def __init__(self, column_families: tuple[str, ...]) -> None:
        self._data: dict[str, dict[bytes, bytes]] = {cf: {} for cf in column_families}

    def get(self, cf: str, key: bytes) -> bytes | None:
        return self._data[cf].get(key)

    def write(self, ops: list[Op]) -> None:
        for cf, key, value in ops:
            if value is None:
                self._data[cf].pop(key, None)
            else:
                self._data[cf][key] = value

    def items(self, cf: str) -> Iterator[tuple[bytes, bytes]]:
        data = self._data[cf]
        for key in sorted(data):
            yield key, data[key]

    def close(self) -> None:
        pass


class Table(Generic[K, V]):
    def __init__(self, store: _BatchOwner, name: str, key_codec: Codec[K], value_codec: Codec[V]) -> None:
        self._store = store
        self.name = name
        self.key_codec = key_codec
        self.value_codec = value_codec

    def put(self, key: K, value: V) -> None:
        self._store.apply((self.name, self.key_codec.encode(key), self.value_codec.encode(value)))

    def delete(self, key: K) -> None:
        self._store.apply((self.name, self.key_codec.encode(key), None))

    def get(self, key: K) -> V | None:
        data = self._store.get(self.name, self.key_codec.encode(key))
        return None if data is None else self.value_codec.decode(data)

    def items(self) -> Iterator[tuple[K, V]]:
        for k, v in self._store.items(self.name):
            yield self.key_codec.decode(k), self.value_codec.decode(v)

    def values(self) -> Iterator[V]:
        for _, v in self._store.items(self.name):
            yield self.value_codec.decode(v)


class _BatchOwner(Protocol):
    """The store a table writes through and reads through (its staged writes included)."""

    def apply(self, op: Op) -> None: ...

    def get(self, cf: str, key: bytes) -> bytes | None: ...

    def items(self, cf: str) -> Iterator[tuple[bytes, bytes]]: ...
