"""SCM's Raft entries (proto/pyozone/ScmRatis.proto): the scm.db records of the transactions an SCM leader
sealed, with the last epoch they carry (SCM HA; Ozone's SCMRatisRequest carries StateManager calls
instead). The ops keep their order: consecutive ops of one column family share a DBTableUpdate, a change of
column family starts the next. `ScmEntryCodec` is what the sans-IO driver (scm/ha/driver.py) is given by its
glue, the daemon's or the simulator's, with the column families an entry may write (scm.db's replicated
tables). Damaged bytes, and an op of any other column family (scmTransactionInfos, which each SCM writes
itself as it applies, or a name scm.db does not have), are refused with ProtocolError before anything of the
entry is applied; unknown fields are skipped, as protobuf does."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from google.protobuf.message import DecodeError

from pyozone.hdds.errors import ProtocolError
from pyozone.hdds.store.table import Op
from pyozone.proto import ScmRatis_pb2 as pb

_LENGTH_FIELD = 1 + 5
"""A length-delimited field's tag and length varint at most (lengths below 2^35 bytes)."""

HEAD_BYTES = 1 + 10
"""The entry's own bytes besides its ops at most: the epoch field (tag, varint of 10 bytes at most)."""

VALUE_CHARS = 60
"""How much of a value `describe` shows."""


@dataclass(frozen=True, slots=True)
class ScmEntry:
    """A decoded SCM log entry: the last epoch of the leader's transactions it carries, and their ops."""

    epoch: int
    ops: tuple[Op, ...]


def op_bytes(op: Op) -> int:
    """An op's bytes in an entry at most (its own DBTableUpdate, the worst case): what the driver counts to
    keep an entry within the append limit."""
    table, key, value = op
    # DBTableUpdate: tableName, then one DBTableRecord: key, then value (or deleted: 2 bytes).
    record = _LENGTH_FIELD + len(key) + (2 if value is None else _LENGTH_FIELD + len(value))
    return _LENGTH_FIELD + (_LENGTH_FIELD + len(table.encode())) + (_LENGTH_FIELD + record)


def entry_to_bytes(epoch: int, ops: Sequence[Op]) -> bytes:
    if epoch < 1:
        raise ProtocolError("ScmRatisEntry.epoch", f"epochs count from 1, not {epoch}")
    message = pb.ScmRatisEntry(epoch=epoch)
    update: pb.DBTableUpdate | None = None
    for table, key, value in ops:
        if not table:
            raise ProtocolError("ScmRatisEntry.ops.tableName", f"an op names no column family (key {key!r})")
        if update is None or update.tableName != table:
            update = message.ops.add(tableName=table)
        if value is None:
            update.records.add(key=key, deleted=True)
        else:
            update.records.add(key=key, value=value)
    return message.SerializeToString()


def entry_from_bytes(data: bytes, tables: Collection[str] | None = None) -> ScmEntry:
    """The entry `data` carries; ProtocolError for bytes that are not one (truncated or corrupt, another
    message, an op without a column family, a deleted record that carries a value), or with `tables` an
    op of a column family not among them (None: any, for a reader that only shows entries)."""
    try:
        message = pb.ScmRatisEntry.FromString(data)
    except DecodeError as error:
        raise ProtocolError("ScmRatisEntry", f"not an SCM Raft entry ({len(data)} bytes): {error}") from None
    if message.epoch < 1:
        raise ProtocolError(
            "ScmRatisEntry.epoch", f"not an SCM Raft entry ({len(data)} bytes): it carries no epoch"
        )
    ops: list[Op] = []
    for u, update in enumerate(message.ops):
        if not update.tableName:
            raise ProtocolError(f"ScmRatisEntry.ops[{u}].tableName", "a DBTableUpdate names no column family")
        if tables is not None and update.tableName not in tables:
            named = ", ".join(sorted(tables))
            raise ProtocolError(
                f"ScmRatisEntry.ops[{u}].tableName",
                f"{update.tableName!r} is not one of scm.db's replicated tables ({named})",
            )
        for r, record in enumerate(update.records):
            if record.deleted and record.value:
                raise ProtocolError(
                    f"ScmRatisEntry.ops[{u}].records[{r}]", "a deleted record carries a value"
                )
            ops.append((update.tableName, record.key, None if record.deleted else record.value))
    return ScmEntry(message.epoch, tuple(ops))


@dataclass(frozen=True)
class ScmEntryCodec:
    """SCM's entry codec as the driver takes it (scm/ha/driver.py `EntryCodec`): `tables`, the column
    families an entry may write (scm/store/metadata_store.py `REPLICATED_TABLES`)."""

    tables: frozenset[str]
    head_bytes = HEAD_BYTES
    encode = staticmethod(entry_to_bytes)
    op_bytes = staticmethod(op_bytes)

    def decode(self, payload: bytes) -> ScmEntry:
        return entry_from_bytes(payload, self.tables)


def describe(data: bytes, key_text: Callable[[str, bytes], object]) -> str:
    """An SCM entry in a line, for `pyozone debug ratislogparser scm` (Ratis's `State Machine:` line), named
    as Ozone's SCMRatisRequest: its epoch and each op, `put TABLE KEY VALUE` (the value's first VALUE_CHARS
    characters and its size) or `delete TABLE KEY`; `key_text` reads a key of a column family."""
    try:
        entry = entry_from_bytes(data)
    except ProtocolError as error:
        return f"not an SCM entry: {error}"
    ops = ", ".join(
        f"delete {table} {key_text(table, key)}"
        if value is None
        else f"put {table} {key_text(table, key)} {_value_summary(value)}"
        for table, key, value in entry.ops
    )
    return f"SCMRatisRequest epoch: {entry.epoch} [{ops}]"


def _value_summary(value: bytes) -> str:
    text = value.decode("utf-8", errors="replace")
    shown = text if len(text) <= VALUE_CHARS else text[:VALUE_CHARS] + "..."
    return f"{shown} ({len(value)} bytes)"
