"""SCMMetadataStore: the SCM's tables, with atomic batches across them.

A lone SCM writes each batch to the backend at once (`StoreMode.DIRECT`). An SCM of an HA service
(`ozone.scm.service.ids`) is either the leader, whose writes are *staged* (`STAGING`): each outermost batch,
or bare write, closes one `Transaction` with the next epoch, held in an overlay that every read sees, until
the Raft glue says its entry applied (`own_applied`) and it goes to the backend; or a follower (`FOLLOWER`),
whose store refuses the core's writes (SCM_NOT_LEADER) and takes the leader's records from the log
(`apply_committed`).
"""

from __future__ import annotations

import bisect
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from enum import Enum
from typing import Any

from pyozone.hdds.exceptions import ResultCode, SCMException
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
    "scmTransactionInfos",
    "datanodeOpStates",
    "statefulServiceConfig",
)

INT_KEY_TABLES = frozenset({"containers", "deletedBlocks", "validCerts", "revokedCerts", "joinTokens"})
"""The column families keyed by 8-byte big-endian ids (IntKeyCodec: container ids, deleted-block transaction
ids, certificate serials); the others by UTF-8 text. How `pyozone debug` tools read a key."""

REPLICATED_TABLES = frozenset(TABLE_NAMES) - {"scmTransactionInfos"}
"""The column families an SCM HA leader's log entries may write: every table but scmTransactionInfos, which
each SCM writes itself as it applies an entry (protocol/scm_ratis.py refuses any other)."""

TRANSACTION_INFO_KEY = "#TRANSACTIONINFO"
"""Ozone's key in scmTransactionInfos: the term#index of the last log entry applied to this scm.db."""

Key = tuple[str, bytes]


class StoreMode(Enum):
    """How the core's writes land: at once (a lone SCM), staged (an HA leader), refused (an HA follower)."""

    DIRECT = "direct"
    STAGING = "staging"
    FOLLOWER = "follower"


@dataclass(frozen=True, slots=True)
class Transaction:
    """The ops of one outermost batch (or one bare write) of the leader's core, in write order; `epoch`
    numbers the transactions of this store from 1, in the order they closed."""

    epoch: int
    ops: tuple[Op, ...]


class SCMMetadataStore:
    """Column families named as in Ozone's scm.db. Writes outside `batch()` are applied at once."""

    def __init__(self, backend: KVBackend) -> None:
        self.backend = backend
        self.mode = StoreMode.DIRECT
        self._batch: list[Op] | None = None
        # STAGING: transactions closed and not yet applied (`_handed` of them returned by `seal`), the
        # value each key they wrote will have once they apply, and the last epoch writing each key
        self._pending: list[Transaction] = []
        self._handed = 0
        self._overlay: dict[str, dict[bytes, bytes | None]] = {}
        self._writer: dict[Key, int] = {}
        self._closed = 0
        # every epoch up to here applied or was dropped: what the command barrier waits for
        self.applied_epoch = 0
        # (first, last) epochs of each staged tail a step-down dropped, ascending: they never committed here
        self._dropped: list[tuple[int, int]] = []
        self.admit: Callable[[list[Op]], None] | None = None
        """STAGING: the HA glue's check of a transaction before it is staged (one log entry must carry
        it); what it raises goes to the writer, nothing of the transaction staged."""
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
        # Ozone's scmTransactionInfos: "term#index" of the last log entry applied (HA only)
        self.transaction_infos: Table[str, Any] = Table(
            self, "scmTransactionInfos", StrKeyCodec(), json_codec
        )

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

    @property
    def epoch(self) -> int:
        """The epoch of the last write so far: the last closed transaction's, or the one an open batch
        holding writes will close as. What a command queued now waits for (the command barrier)."""
        return self._closed + (1 if self._batch and self.mode is StoreMode.STAGING else 0)

    # ------------------------------------------------------------------ reads (through the overlay)
    def get(self, cf: str, key: bytes) -> bytes | None:
        staged = self._overlay.get(cf)
        if staged is not None and key in staged:
            return staged[key]
        return self.backend.get(cf, key)

    def items(self, cf: str) -> Iterator[tuple[bytes, bytes]]:
        """Key order is bytewise ascending, staged values over committed ones."""
        staged = self._overlay.get(cf)
        if not staged:
            yield from self.backend.items(cf)
            return
        merged = dict(self.backend.items(cf))
        merged.update(staged)
        for key in sorted(merged):
            value = merged[key]
            if value is not None:
                yield key, value

    # ------------------------------------------------------------------ the core's writes
    def apply(self, op: Op) -> None:
        self._check_writable()
        if self._batch is not None:
            self._batch.append(op)
        else:
            self._write([op])

    def write_now(self, op: Op) -> None:
        """A write that lands (DIRECT) or closes its own transaction (STAGING) at once, even inside a
        caller's batch: a sequence id batch is reserved before any id of it is handed out
        (SequenceIdGenerator)."""
        self._check_writable()
        self._write([op])

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Groups writes into one atomic RocksDB write batch (one transaction when staging); nested
        batches join the outer one."""
        if self._batch is not None:
            yield
            return
        self._batch = []
        try:
            yield
            ops, self._batch = self._batch, None
            if ops:
                self._write(ops)
        finally:
            self._batch = None

    def _check_writable(self) -> None:
        if self.mode is StoreMode.FOLLOWER:
            raise SCMException(
                "this SCM is not the leader: its scm.db takes records from the leader's log only",
                ResultCode.SCM_NOT_LEADER,
            )

    def _write(self, ops: list[Op]) -> None:
        if self.mode is StoreMode.DIRECT:
            self.backend.write(ops)
            return
        if self.admit is not None:
            self.admit(ops)
        self._closed += 1
        self._pending.append(Transaction(self._closed, tuple(ops)))
        for cf, key, value in ops:
            self._overlay.setdefault(cf, {})[key] = value
            self._writer[(cf, key)] = self._closed

    # ------------------------------------------------------------------ what the HA glue drives
    def stage(self) -> None:
        """The leader's mode: writes are staged until their transaction applies."""
        self.mode = StoreMode.STAGING

    def follow(self) -> list[Key]:
        """The follower's mode. Staged transactions are dropped (their entries never commit under this
        leader); returns the keys they touched, per table in the order first touched, for the undo."""
        touched = [(cf, key) for cf, staged in self._overlay.items() for key in staged]
        if self._pending:
            self._dropped.append((self._pending[0].epoch, self._closed))
        self._pending, self._handed = [], 0
        self._overlay.clear()
        self._writer.clear()
        self.applied_epoch = self._closed
        self.mode = StoreMode.FOLLOWER
        return touched

    def committed(self, epoch: int) -> bool:
        """Whether the transactions up to `epoch` went to this scm.db as the leader's own (`own_applied`).
        False for an epoch a step-down dropped, for good: `applied_epoch` passes it (nothing of the old
        term waits any more) and the next term's epochs apply past it, but its writes never committed
        here (the next leader may still commit the entry: its caller was refused and retries)."""
        if epoch > self.applied_epoch:
            return False
        at = bisect.bisect_right(self._dropped, (epoch, sys.maxsize)) - 1
        return at < 0 or self._dropped[at][1] < epoch

    def seal(self) -> tuple[Transaction, ...]:
        """The transactions closed since the last seal, in epoch order, for the glue to submit."""
        sealed = tuple(self._pending[self._handed :])
        self._handed = len(self._pending)
        return sealed

    def own_applied(self, epoch: int, extra: tuple[Op, ...] = ()) -> None:
        """The leader's entries up to `epoch` applied: their ops (and `extra`, the transaction info) go
        to the backend in one write; a key leaves the overlay unless a later transaction rewrote it."""
        done = [t for t in self._pending if t.epoch <= epoch]
        if not done and not extra:
            return
        if len(done) > self._handed:
            raise ValueError(f"epoch {epoch} applied before it was sealed (sealed up to {self._handed})")
        self.backend.write([op for t in done for op in t.ops] + list(extra))
        for transaction in done:
            for cf, key, _ in transaction.ops:
                if self._writer.get((cf, key), 0) <= epoch:
                    self._writer.pop((cf, key), None)
                    staged = self._overlay.get(cf)
                    if staged is not None:
                        staged.pop(key, None)
        self._pending = self._pending[len(done) :]
        self._handed -= len(done)
        self.applied_epoch = max(self.applied_epoch, epoch)

    def apply_committed(self, ops: list[Op]) -> None:
        """A follower applies the leader's records from one log entry, in one write."""
        if self.mode is not StoreMode.FOLLOWER:
            raise SCMException(
                f"only a follower applies the leader's records (this store is {self.mode.value})",
                ResultCode.INTERNAL_ERROR,
            )
        self.backend.write(ops)

    def staged_keys(self) -> int:
        return sum(len(staged) for staged in self._overlay.values())

    def close(self) -> None:
        self.backend.close()
