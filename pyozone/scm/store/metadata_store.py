"""SCMMetadataStore: the SCM's tables, with atomic batches across them."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from pyozone.hdds.store.codec import Codec, IntKeyCodec, JsonCodec, StrKeyCodec
from pyozone.hdds.store.table import KVBackend, MemoryBackend, Op, Table

TABLE_NAMES: tuple[str, ...] = (
    "pipelines",
    "containers",
    "deletedBlocks",
    "validCerts",
    "revokedCerts",
    "joinTokens",
    "sequenceId",
    "meta",
)


class SCMMetadataStore:
    """Column families named as in Ozone's scm.db. Writes outside `batch()` are applied at once."""

    def __init__(self, backend: KVBackend) -> None:
        self.backend = backend
        self._batch: list[Op] | None = None
        json_codec = JsonCodec()
        self.sequence_id: Table[str, Any] = Table(self, "sequenceId", StrKeyCodec(), json_codec)
        self.meta: Table[str, Any] = Table(self, "meta", StrKeyCodec(), json_codec)
        # Ozone's validCerts: serial -> {"pem", "role", "expiry" (ms since the epoch)} of every certificate
        # SCM's CA issued that has not expired (pyozone/scm/security/certificates.py).
        self.valid_certs: Table[int, Any] = Table(self, "validCerts", IntKeyCodec(), json_codec)
        # Ozone's revokedCerts: serial -> the certificate record plus {"reason", "revoked" (ms)} of every
        # revoked certificate, kept past its expiry so its identity is never issued again.
        self.revoked_certs: Table[int, Any] = Table(self, "revokedCerts", IntKeyCodec(), json_codec)
        # pyozone: serial of a JOIN credential -> what it may obtain and what it obtained
        # (pyozone/scm/security/join_tokens.py).
        self.join_tokens: Table[int, Any] = Table(self, "joinTokens", IntKeyCodec(), json_codec)

    @classmethod
    def in_memory(cls) -> SCMMetadataStore:
        return cls(MemoryBackend(TABLE_NAMES))

    def table(self, name: str, key_codec: Codec[Any], value_codec: Codec[Any]) -> Table[Any, Any]:
        """A typed view of one column family; managers declare the codecs of the records they own."""
        if name not in TABLE_NAMES:
            raise KeyError(f"no column family {name!r} in scm.db")
        return Table(self, name, key_codec, value_codec)

    def int_table(self, name: str, value_codec: Codec[Any]) -> Table[int, Any]:
        return self.table(name, IntKeyCodec(), value_codec)

    def apply(self, op: Op) -> None:
        if self._batch is not None:
            self._batch.append(op)
        else:
            self.backend.write([op])

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Groups writes into one atomic RocksDB write batch; nested batches join the outer one."""
        if self._batch is not None:
            yield
            return
        self._batch = []
        try:
            yield
            ops, self._batch = self._batch, None
            if ops:
                self.backend.write(ops)
        finally:
            self._batch = None

    def close(self) -> None:
        self.backend.close()
