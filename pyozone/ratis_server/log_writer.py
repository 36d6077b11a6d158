"""How a Raft member's `Persist`s and `PurgeLog`s reach the disk (Ratis's SegmentedRaftLogWorker): each
entry's state machine data first (`write_data`), then the record, then a group commit. Apart from the
member (server.py) because its one rule, that nothing is acknowledged before it is durable, data before
record, holds whatever else the member does.

- `Persist`: written to `RaftStorage` on the loop, made durable by a group commit: one `flush` at a time on
  a worker thread; when it returns, the member hears `persisted(the last seq written before it began)`,
  and what was written meanwhile goes in the next flush. So a burst of writes costs one fsync, and the
  loop never waits for the disk. With a `DataStateMachine`, each entry's data is written first: its record
  (and every later one) waits in order until that write finished, so neither the log nor an
  acknowledgement ever holds an entry whose data is not written.
- `PurgeLog`: `RaftStorage.purge` on the same worker thread, after the flushes before it.

A failed data write, storage write or flush fails the member (`fail`): nothing after it is written or
reported persisted.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from pyozone.ratis.messages import RaftPeerId
from pyozone.ratis.outputs import Persist, PurgeLog
from pyozone.ratis_server.member_api import DataStateMachine, DataWriteError
from pyozone.ratis_server.state_machine_data import StateMachineData
from pyozone.ratis_server.storage import RaftStorage


class LogWriter:
    """The log writes of one member over `storage`. `data_machine` and `data`: the member's
    `DataStateMachine` and its data (both None without one). `running()`: whether the member still runs
    (a write after it stopped or failed is not carried out); `persisted(seq)`: every Persist up to `seq` is
    durable; `fail(why)`: the member fails (called from an except block)."""

    def __init__(
        self,
        storage: RaftStorage,
        data_machine: DataStateMachine | None,
        data: StateMachineData | None,
        running: Callable[[], bool],
        persisted: Callable[[int], None],
        fail: Callable[[str], None],
    ) -> None:
        self._storage = storage
        self._data_machine = data_machine
        self._data = data
        self._running = running
        self._persisted = persisted
        self._fail = fail
        self._executor: ThreadPoolExecutor | None = None
        self._written_seq = 0
        self._flushed_seq = 0
        self._flush_task: asyncio.Task[None] | None = None
        self._purge: tuple[int, tuple[RaftPeerId, ...], int] | None = None
        """The highest `PurgeLog` not yet carried out, and the last write before it: the flush task runs
        it once that write is flushed."""
        self._queued: deque[tuple[Persist, list[asyncio.Task[None]]]] = deque()
        """Persists whose records wait, in order, for the `write_data` of their entries (and of those before
        them): a record reaches the storage only once its data is written (`_write_queued`)."""
        self._awaited: asyncio.Task[None] | None = None
        """The data write `_write_queued` waits for."""
        self._issued_seq = 0
        """The last Persist the core issued (written or queued)."""

    def open(self, name: str) -> None:
        """Starts the worker thread the flushes and purges run on."""
        self._executor = ThreadPoolExecutor(1, thread_name_prefix=f"raft-flush-{name}")

    def persist(self, output: Persist) -> None:
        self._issued_seq = output.seq
        writes = self._write_data(output)
        if writes or self._queued:
            self._queued.append((output, writes))
            self._write_queued()
        else:
            self._storage.write(output)
            self._written_seq = output.seq
            self._start_flush()

    def purge(self, output: PurgeLog) -> None:
        self._purge = (output.up_to_index, output.configuration, self._issued_seq)
        self._start_flush()

    async def abandon_writes(self) -> None:
        """The member stops: the data writes under way are cancelled, and their records never written (so
        never acknowledged)."""
        writes = [t for _, tasks in self._queued for t in tasks]
        self._queued.clear()
        for task in writes:
            task.cancel()
        for task in writes:
            with contextlib.suppress(BaseException):
                await task

    async def close(self) -> None:
        """Lets a flush under way finish, then stops the worker thread."""
        if self._flush_task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(self._flush_task)
        if self._executor is not None:
            self._executor.shutdown(wait=True)
            self._executor = None

    def _write_data(self, persist: Persist) -> list[asyncio.Task[None]]:
        """Starts `write_data` of each entry with data in `persist` (Ratis's writeStateMachineData at
        append)."""
        entries = [e for e in persist.entries if e.data_size]
        if not entries:
            return []
        if self._data is None or self._data_machine is None:
            raise DataWriteError(f"entry {entries[0].index} carries data its state machine does not take")
        loop = asyncio.get_running_loop()
        tasks = [loop.create_task(self._data_machine.write_data(e, self._data.to_write(e))) for e in entries]
        for entry, task in zip(entries, tasks, strict=True):
            self._data.writing(entry, task)
        return tasks

    def _write_queued(self) -> None:
        """Writes the queued Persists, in order, whose entries' data is written, and flushes them; waits for
        the first data write still running. So a record reaches the log (even its page cache: a kill -9
        keeps it) only after its data, and `persisted` (the acknowledgement, the commit) follows both, as
        Ratis's log flush waits for StateMachine.flush. A failed data write fails the member for this
        group: neither its record nor any after it is written."""
        try:
            while self._queued and self._running():
                persist, writes = self._queued[0]
                running = next((t for t in writes if not t.done()), None)
                if running is not None:
                    if self._awaited is not running:
                        self._awaited = running
                        running.add_done_callback(self._data_done)
                    return
                for task in writes:
                    failed = task.exception() if not task.cancelled() else asyncio.CancelledError()
                    if failed is not None:
                        raise _DataNotWritten(f"its state machine failed to write an entry's data: {failed}")
                self._queued.popleft()
                self._storage.write(persist)
                self._written_seq = persist.seq
        except _DataNotWritten as failed:
            self._fail(str(failed))
            return
        except Exception:
            self._fail("its storage failed")
            return
        self._start_flush()

    def _data_done(self, task: asyncio.Task[None]) -> None:
        if self._awaited is task:
            self._awaited = None
        if self._running():
            self._write_queued()

    def _start_flush(self) -> None:
        if self._flush_task is None:
            self._flush_task = asyncio.get_running_loop().create_task(self._flush())

    async def _flush(self) -> None:
        """The group commit: one flush at a time; what was written during one goes in the next. A purge
        waits for the flushes before it (it drops entries the flushes made durable first), on the same
        worker thread, off the loop."""
        loop = asyncio.get_running_loop()
        try:
            while self._executor is not None:
                purge = self._purge
                if purge is not None and purge[2] <= self._flushed_seq:
                    self._purge = None
                    await loop.run_in_executor(self._executor, self._storage.purge, purge[0], purge[1])
                elif self._written_seq > self._flushed_seq:
                    target = self._written_seq
                    await loop.run_in_executor(self._executor, self._storage.flush)
                    self._flushed_seq = target
                    if self._running():
                        self._persisted(target)
                else:
                    break
        except Exception:
            self._flush_task = None
            self._fail("its storage failed")
            return
        self._flush_task = None


class _DataNotWritten(Exception):
    """A `write_data` failed: the member fails for this group (no ack, no apply after it)."""
