"""ScmRaftDriver: the decisions SCM HA's Raft glue makes, sans-IO (Ozone's SCMStateMachine).

Shared by the daemon's glue and the simulator's, so the simulator tests the daemon's decisions: the
transactions the leader's core sealed after an input are packed, in epoch order, into log entries
(`pack`, each at most `entry_byte_limit` bytes unless one transaction alone is larger; the wire is the
glue's `EntryCodec`, ScmRatis.proto in both); each committed entry is applied (`apply`: the leader's own
records go from its overlay to its scm.db, another leader's records through the record listeners); the
leader steps up once the first entry of its term (the new leader's NOOP) is applied (Ozone's
notifyLeaderReady) and steps down as soon as the Raft server no longer leads that term (`observe`). The
I/O (the Raft server, its disk, the network) stays in the glue.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from pyozone.hdds.store.table import Op
from pyozone.ratis.messages import EntryKind, LogEntry
from pyozone.scm.ha.replication import ScmReplication
from pyozone.scm.store.metadata_store import Transaction

ENTRY_BYTE_LIMIT = 32 * 1024 * 1024
"""An entry's bytes at most (the shell's append limit, `ozone.scm.ha.ratis.log.appender.queue.byte-limit`)."""


class EntryRecords(Protocol):
    """A decoded SCM log entry: the last epoch of the leader's transactions it carries, and their ops."""

    @property
    def epoch(self) -> int: ...

    @property
    def ops(self) -> tuple[Op, ...]: ...


class EntryCodec(Protocol):
    """The wire of an entry, given by the glue (protocol/scm_ratis.py's `ScmEntryCodec`, ScmRatis.proto):
    the driver stays off the protocol layer. `op_bytes` and `head_bytes` bound an op's and an entry's own
    bytes, so packed entries keep within the limit."""

    head_bytes: int

    def encode(self, epoch: int, ops: Sequence[Op]) -> bytes: ...

    def decode(self, payload: bytes) -> EntryRecords: ...

    def op_bytes(self, op: Op) -> int: ...


def pack(
    transactions: Iterable[Transaction], codec: EntryCodec, entry_byte_limit: int = ENTRY_BYTE_LIMIT
) -> list[bytes]:
    """The payloads of the log entries carrying `transactions`, in epoch order: whole transactions per
    entry (a transaction is atomic: one RocksDB batch on every SCM), as many as fit the limit."""
    payloads: list[bytes] = []
    ops: list[Op] = []
    size, epoch = codec.head_bytes, 0
    for transaction in transactions:
        cost = sum(codec.op_bytes(op) for op in transaction.ops)
        if ops and size + cost > entry_byte_limit:
            payloads.append(codec.encode(epoch, ops))
            ops, size = [], codec.head_bytes
        ops += transaction.ops
        size += cost
        epoch = transaction.epoch
    if epoch:
        payloads.append(codec.encode(epoch, ops))
    return payloads


class ScmRaftDriver:
    """One SCM's glue decisions over its `ScmReplication` (the Raft server and its I/O are the caller's)."""

    def __init__(
        self, replication: ScmReplication, codec: EntryCodec, entry_byte_limit: int = ENTRY_BYTE_LIMIT
    ) -> None:
        self.replication = replication
        self.codec = codec
        self.context = replication.context
        self.entry_byte_limit = entry_byte_limit
        self.step_ups = 0
        self.step_downs = 0

    def pack_sealed(self) -> list[bytes]:
        """After each core input (an RPC's core call, a heartbeat, a tick): what the leader's core wrote,
        as entry payloads to submit (nothing on a follower)."""
        return pack(self.replication.seal(), self.codec, self.entry_byte_limit)

    def apply(self, entry: LogEntry, leading_term: int | None) -> None:
        """A committed entry, in log order. `leading_term`: the term this SCM's Raft server leads now
        (None: it does not lead). The entries of this SCM's ready term are its own: their records leave the
        overlay for scm.db; any other leader's are applied as a follower. The NOOP that opens the term this
        SCM leads makes it the ready leader (Ozone's notifyLeaderReady)."""
        context = self.context
        if entry.kind is EntryKind.STATE_MACHINE:
            records = self.codec.decode(entry.payload)
            if context.is_leader() and entry.term == context.known_term:
                self.replication.own_applied(records.epoch, entry.term, entry.index)
            else:
                self.replication.apply(records.ops, entry.term, entry.index)
            return
        context.applied(entry.index)
        if entry.kind is EntryKind.NOOP and leading_term == entry.term and not context.is_leader():
            self.replication.step_up(entry.term)
            self.step_ups += 1

    def shell_applied(self, leading_term: int | None, applied_index: int, last_index: int) -> bool:
        """For a shell that applies its no-op and configuration entries itself (ratis_server's RaftMember
        hands its state machine the STATE_MACHINE entries only): its applied index counts for the
        catch-up (StateMachineReadyRule), and the leader of `leading_term` that applied its log up to its last
        entry has applied its term's first one, so it steps up as `apply` does at that NOOP. True when it
        stepped up."""
        context = self.context
        context.applied(applied_index)
        if leading_term is None or context.is_leader() or applied_index < last_index:
            return False
        self.replication.step_up(leading_term)
        self.step_ups += 1
        return True

    def observe(self, leading_term: int | None, term: int, leader_id: str | None, leader_commit: int) -> bool:
        """After every Raft input: a leader whose server no longer leads its term steps down (its
        uncommitted tail undone, its callers refused); a follower learns the leader it follows, whose term
        its heartbeat answers carry (the datanode's StateContext drops older terms). True when this SCM
        stepped down."""
        context = self.context
        if context.is_leader():
            if leading_term == context.known_term:
                return False
            self.replication.step_down(
                term, leader_id, leader_commit, why=f"no longer leads term {context.known_term}"
            )
            self.step_downs += 1
            return True
        learned = term > context.known_term or (term == context.known_term and leader_id != context.leader_id)
        if leader_id is not None and learned:
            context.follow(term, leader_id, leader_commit)
        return False
