"""om.db's write path, as Ozone's OM: a table cache and a double buffer (OzoneManagerDoubleBuffer).

A transaction's changes enter the table cache at once, so the next request sees them, and join the
current buffer under the next epoch (a transaction's number). A flusher thread swaps the buffers and
writes everything the full one holds as one RocksDB WriteBatch with one WAL sync: many transactions
share each sync. A transaction is durable once its batch is written; its cache entries then leave the
cache (RocksDB has them), unless a later transaction changed the same key since. Callers answer their
client only after `durable(epoch)`.

Epochs are given out in the order transactions enter the cache, and batches are written in epoch order,
so RocksDB always holds a prefix of what the cache showed: a crash loses only transactions nobody was
answered for.

With OM HA (om/server/ha.py) the buffer is split at the Raft log (`replicate`): on the leader `add` only
stages a transaction (cache and epoch, handed to the replicator in epoch order), which `enqueue` queues for
the flusher once its Raft entry is applied; a follower's `apply` does both at once. So om.db only ever
receives committed transactions. On step-down the staged transactions that were never applied are dropped
from the cache (`drop_after_flush`) once everything applied is in RocksDB.

A failed flush is fatal: the cache holds changes RocksDB does not, and no later transaction may build on
them. The buffer refuses every later write, fails every waiter and calls `on_failure` (OM exits, as
Ozone's OM terminates); on restart om.db holds every transaction a client was answered for.
"""

from __future__ import annotations

import heapq
import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, replace
from typing import TypeVar

from pyozone.hdds.store.table import Op as ByteOp

log = logging.getLogger(__name__)

T = TypeVar("T")
Op = tuple[str, str, bytes | None]
"""(table, key, value); None deletes."""

MISSING = object()
"""What the cache answers for a key it holds nothing about (None is a deletion RocksDB has not seen yet)."""


IDLE_CHECK_S = 5.0
"""How often an idle flusher checks whether its owner still exists."""


class OwnerDropped(Exception):
    """Raised by `write_batch` when the buffer's owner is gone (dropped without close()): nobody can wait
    for the batch, so the flusher ends quietly instead of failing."""


class BufferFailedError(Exception):
    """A flush failed: om.db no longer holds what the cache shows, so nothing more is written."""


@dataclass(frozen=True, slots=True)
class FlushStats:
    """Ozone's OzoneManagerDoubleBufferMetrics, as totals since start."""

    flushes: int
    transactions: int
    max_transactions_in_one_flush: int
    flush_seconds: float
    unflushed: int


class TableCache:
    """Per table, the value each key has in a transaction not yet flushed, with that epoch; and for the
    `full` tables (Ozone's FULL_CACHE: volumeTable and bucketTable), every key's value, loaded at start
    (`load`) and kept after its flush, so reading one never reaches RocksDB (OM reads the bucket and
    volume of every key request).

    Mutated only under the buffer's lock. A point read takes no lock (a dict lookup is atomic); a scan
    copies its range under the lock (`DoubleBuffer.snapshot`), as iterating a dict others change fails."""

    def __init__(self, tables: Sequence[str], full: Sequence[str] = ()) -> None:
        self._tables: dict[str, dict[str, tuple[int, bytes | None]]] = {t: {} for t in tables}
        self._full = frozenset(full)

    def load(self, table: str, entries: Iterable[tuple[str, bytes]]) -> None:
        """A full table's stored entries (at start, before any transaction)."""
        self._tables[table].update((key, (0, value)) for key, value in entries)

    def get(self, table: str, key: str) -> object:
        """The pending value (None: deleted), or MISSING; a full table's value, or None."""
        entry = self._tables[table].get(key)
        if entry is None:
            return None if table in self._full else MISSING
        return entry[1]

    def put(self, epoch: int, ops: Sequence[Op]) -> None:
        for table, key, value in ops:
            self._tables[table][key] = (epoch, value)

    def evict(self, upto: int, ops: Sequence[Op]) -> None:
        """Drops what `ops` wrote, now in RocksDB, unless a transaction after `upto` rewrote it; a full
        table keeps its values and drops only its deletions, and only a deletion its key still holds: a
        batch that deletes a key and then sets it again (deleteBucket, createBucket of the same name) leaves
        the set in the cache, which a full table's reads never look past."""
        full = self._full
        for table, key, value in ops:
            if value is not None and table in full:
                continue
            entries = self._tables[table]
            entry = entries.get(key)
            if entry is not None and entry[0] <= upto and (entry[1] is None or table not in full):
                del entries[key]

    def drop(self, epochs: set[int], stored: Callable[[str, str], bytes | None]) -> None:
        """Forgets the values `epochs` wrote (uncommitted: a deposed leader's), unless a later transaction
        rewrote them; a full table reads its key back from RocksDB (`stored`)."""
        for table, entries in self._tables.items():
            for key in [k for k, (epoch, _) in entries.items() if epoch in epochs]:
                value = stored(table, key) if table in self._full else None
                if value is None:
                    del entries[key]
                else:
                    entries[key] = (0, value)

    def clear(self) -> None:
        """Forgets everything (om.db was replaced by a checkpoint; reload the full tables)."""
        for entries in self._tables.values():
            entries.clear()

    def pending(self, table: str, prefix: str, low: str) -> list[tuple[str, bytes | None]]:
        """The table's pending entries with `prefix`, from `low` on (inclusive), in key order."""
        return sorted((k, e[1]) for k, e in self._tables[table].items() if k >= low and k.startswith(prefix))

    def __len__(self) -> int:
        return sum(len(t) for t in self._tables.values())


def merged(
    pending: list[tuple[str, bytes | None]], stored: Iterator[tuple[str, bytes]]
) -> Iterator[tuple[str, bytes]]:
    """RocksDB's entries with the cache's over them, in key order; pending deletions hide entries."""
    i = 0
    for key, value in stored:
        while i < len(pending) and pending[i][0] < key:
            if pending[i][1] is not None:
                yield pending[i]  # type: ignore[misc]
            i += 1
        if i < len(pending) and pending[i][0] == key:
            if pending[i][1] is not None:
                yield pending[i]  # type: ignore[misc]
            i += 1
            continue
        yield key, value
    for key, value in pending[i:]:
        if value is not None:
            yield key, value


class DoubleBuffer:
    """`write_batch(ops)` writes ops as one synced WriteBatch (the flusher calls it, one call at a time).
    `max_unflushed` (ozone.om.unflushed.transaction.max.count): a writer waits while that many
    transactions are not flushed, so a slow disk slows requests down instead of filling memory."""

    def __init__(
        self,
        tables: Sequence[str],
        write_batch: Callable[[list[Op]], None],
        max_unflushed: int = 10_000,
        on_failure: Callable[[BaseException], None] | None = None,
        alive: Callable[[], bool] = lambda: True,
        full: Sequence[str] = (),
    ) -> None:
        """`full`: the tables the cache holds whole (TableCache); load them before the first `add`."""
        if max_unflushed < 1:
            raise ValueError(f"the unflushed transaction limit must be positive, got {max_unflushed}")
        self.cache = TableCache(tables, full)
        self._write_batch = write_batch
        self._alive = alive
        self._max_unflushed = max_unflushed
        self._on_failure = on_failure
        self._cond = threading.Condition()
        self._current: list[tuple[int, Sequence[Op]]] = []
        self._epoch = 0
        self._enqueued = 0
        """The last epoch handed to the flusher."""
        self._staged: Callable[[int, Sequence[Op]], None] | None = None
        self._refusal: Callable[[], Exception] | None = None
        self._admit: Callable[[Sequence[Op]], None] | None = None
        self._drops: list[tuple[int, set[int], Callable[[str, str], bytes | None]]] = []
        self._flushed = 0
        self._waiters: list[tuple[int, int, Future[None]]] = []
        self._failed: BaseException | None = None
        self._closing = False
        self._listeners: list[Callable[[int], None]] = []
        self._stats = FlushStats(0, 0, 0, 0.0, 0)
        self._flusher = threading.Thread(target=self._run, name="om-double-buffer", daemon=True)
        self._flusher.start()

    # ------------------------------------------------------------------ writers
    def add(self, ops: Sequence[Op]) -> int:
        """Makes `ops` visible through the cache and queues them; their epoch."""
        if self._admit is not None:
            self._admit(ops)
        with self._cond:
            while self._epoch - self._flushed >= self._max_unflushed and self._failed is None:
                self._cond.wait()
            if self._failed is not None:
                raise BufferFailedError(f"om.db write failed earlier: {self._failed}")
            if self._closing:
                raise BufferFailedError("om.db is closing")
            if self._refusal is not None:
                raise self._refusal()
            self._epoch += 1
            epoch = self._epoch
            self.cache.put(epoch, ops)
            if self._staged is not None:
                self._staged(epoch, ops)
            else:
                self._current.append((epoch, ops))
                self._enqueued = epoch
                self._cond.notify_all()
        return epoch

    # ------------------------------------------------------------------ replicated (OM HA)
    def replicate(
        self, staged: Callable[[int, Sequence[Op]], None], admit: Callable[[Sequence[Op]], None] | None = None
    ) -> None:
        """From now on `add` only stages: `staged(epoch, ops)` is called under the buffer's lock, so in
        epoch order; the replicator `enqueue`s each once its Raft entry is applied. `admit(ops)` runs first
        and may refuse a transaction (raise) before anything sees it."""
        self._staged = staged
        self._admit = admit

    def enqueue(self, epoch: int, ops: Sequence[Op]) -> None:
        """A staged transaction's entry was applied: the flusher writes `ops` (which may carry more than
        the cache got: the Raft index). Call in epoch order."""
        with self._cond:
            self._current.append((epoch, ops))
            self._enqueued = epoch
            self._cond.notify_all()

    def apply(self, ops: Sequence[Op], extra: Sequence[Op] = ()) -> int:
        """A follower applies a committed transaction: cache and flusher at once (`extra` to om.db only)."""
        with self._cond:
            if self._failed is not None:
                raise BufferFailedError(f"om.db write failed earlier: {self._failed}")
            self._epoch += 1
            epoch = self._epoch
            self.cache.put(epoch, ops)
            self._current.append((epoch, [*ops, *extra]))
            self._enqueued = epoch
            self._cond.notify_all()
        return epoch

    def refuse(self, refusal: Callable[[], Exception] | None) -> None:
        """While set, `add` raises `refusal()` (a follower, or a leader that is not ready, executes
        nothing)."""
        with self._cond:
            self._refusal = refusal

    def drop_after_flush(
        self, epochs: set[int], stored: Callable[[str, str], bytes | None], refusal: Callable[[], Exception]
    ) -> None:
        """Once every transaction handed to the flusher so far is in RocksDB, drops what `epochs` (staged,
        never applied) left in the cache: a key then reads the committed value again. Their `durable`
        waiters get `refusal()`."""
        failed: list[Future[None]] = []
        with self._cond:
            kept = [w for w in self._waiters if w[0] not in epochs]
            failed = [w[2] for w in self._waiters if w[0] in epochs]
            heapq.heapify(kept)
            self._waiters = kept
            self._drops.append((self._enqueued, epochs, stored))
            self._do_drops()
        for future in failed:
            future.set_exception(refusal())

    def locked(self, call: Callable[[], T]) -> T:
        """`call()` under the buffer's lock (the stage hook runs under it too)."""
        with self._cond:
            return call()

    @property
    def busy(self) -> bool:
        """Transactions are queued for the flusher (read under the lock)."""
        return bool(self._current)

    @property
    def dropping(self) -> bool:
        return bool(self._drops)

    def _do_drops(self) -> None:
        while self._drops and self._drops[0][0] <= self._flushed:
            _, epochs, stored = self._drops.pop(0)
            self.cache.drop(epochs, stored)

    # ------------------------------------------------------------------ waiting
    def durable(self, epoch: int) -> Future[None]:
        """Done when `epoch` is in RocksDB; failed (BufferFailedError) if its flush failed."""
        future: Future[None] = Future()
        with self._cond:
            if self._flushed >= epoch:
                future.set_result(None)
            elif self._failed is not None:
                future.set_exception(BufferFailedError(f"om.db write failed: {self._failed}"))
            else:
                heapq.heappush(self._waiters, (epoch, id(future), future))
        return future

    @property
    def flushed(self) -> int:
        """The last durable epoch."""
        return self._flushed

    @property
    def failure(self) -> BaseException | None:
        return self._failed

    def listen(self, listener: Callable[[int], None]) -> None:
        """`listener(upto)` is called from the flusher after each flush, and with -1 if a flush failed:
        one call per batch, however many transactions it held."""
        self._listeners.append(listener)

    def wait(self, epoch: int | None = None) -> None:
        """Blocks until `epoch` (default: everything added so far) is durable."""
        self.durable(self._epoch if epoch is None else epoch).result()

    def wait_enqueued(self) -> None:
        """Blocks until every transaction handed to the flusher so far is durable: all of them on a lone
        OM; on an HA leader, those whose entry was applied (committed), not those only staged."""
        with self._cond:
            epoch = self._enqueued
        self.wait(epoch)

    @property
    def epoch(self) -> int:
        """The last epoch added: what any read so far may have seen in the cache."""
        return self._epoch

    def snapshot(self, read: Callable[[], T]) -> T:
        """`read()` under the buffer's lock: no transaction enters and no flush leaves the cache during
        it, so what it copies from the cache and RocksDB is one point in time."""
        with self._cond:
            return read()

    def stats(self) -> FlushStats:
        with self._cond:
            return replace(self._stats, unflushed=self._epoch - self._flushed)

    # ------------------------------------------------------------------ the flusher
    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._current and not self._closing:
                    if not self._cond.wait(IDLE_CHECK_S) and not self._alive():
                        return  # its owner was dropped unclosed (tests): nothing more can come
                if not self._current:
                    return
                batch, self._current = self._current, []
                upto = batch[-1][0]
            ops = [op for _, transaction in batch for op in transaction]
            started = time.perf_counter()
            try:
                self._write_batch(ops)
            except OwnerDropped:
                log.warning("om.db dropped without close(): %d transaction(s) not flushed", len(batch))
                return
            except BaseException as e:
                self._fail(e)
                return
            self._flushed_upto(upto, ops, len(batch), time.perf_counter() - started)

    def _flushed_upto(self, upto: int, ops: list[Op], transactions: int, seconds: float) -> None:
        done: list[Future[None]] = []
        with self._cond:
            self._flushed = upto
            self.cache.evict(upto, ops)
            self._do_drops()
            while self._waiters and self._waiters[0][0] <= upto:
                done.append(heapq.heappop(self._waiters)[2])
            s = self._stats
            self._stats = FlushStats(
                s.flushes + 1,
                s.transactions + transactions,
                max(s.max_transactions_in_one_flush, transactions),
                s.flush_seconds + seconds,
                0,
            )
            self._cond.notify_all()
        for future in done:
            future.set_result(None)
        self._tell(upto)

    def _tell(self, upto: int) -> None:
        """A listener's failure is logged: the flusher must outlive it."""
        for listener in self._listeners:
            try:
                listener(upto)
            except Exception as e:
                log.warning("om.db flush listener %r failed: %s", listener, e)

    def _fail(self, error: BaseException) -> None:
        log.critical("om.db flush failed; no further writes are accepted: %s", error, exc_info=error)
        with self._cond:
            self._failed = error
            waiters, self._waiters = self._waiters, []
            self._cond.notify_all()
        for _, _, future in waiters:
            future.set_exception(BufferFailedError(f"om.db write failed: {error}"))
        self._tell(-1)
        if self._on_failure is not None:
            self._on_failure(error)

    def close(self) -> None:
        """Flushes what is queued, then stops the flusher."""
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        self._flusher.join()


def encoded(ops: Sequence[Op]) -> list[ByteOp]:
    return [(table, key.encode(), value) for table, key, value in ops]
