"""A member's state machine data (Ratis's StateMachine.DataApi plumbing; docs/architecture.md "The Raft
shell"): the bytes `submit` was given until the entry's `Persist`, those a follower's append brought until
theirs, and the leader's `DataCache` of what its followers' appends carry, read back from the state machine
once evicted."""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Callable
from functools import partial

from pyozone.protocol.raft import EntryPieces, append_entry_pieces
from pyozone.ratis.messages import AppendEntriesRequest, ClientCall, LogEntry
from pyozone.ratis_server.member_api import DataStateMachine, DataWriteError

LEADER_PENDING_BYTES = 1 << 30
"""dfs.container.ratis.leader.pending.bytes.limit (1 GB)."""


class DataCache:
    """The leader's state machine data of recent entries, as its followers' appends carry it (the role of
    Ozone's ContainerStateMachine stateMachineDataCache): each entry's head and its data as `submit` was
    given it (`append_entry_pieces`: the data not copied), built once and sent to every follower. Bounded by
    `dfs.container.ratis.leader.pending.bytes.limit` with FIFO eviction, as Ozone's: past it the oldest go
    first (read back from the state machine for a slow follower); an entry goes once every follower holds
    it, or, in a group of one member, once it is applied (Ozone's removeStateMachineDataIfMajorityFollowSync
    drops it at apply)."""

    def __init__(self, limit_bytes: int = LEADER_PENDING_BYTES) -> None:
        if limit_bytes <= 0:
            raise ValueError(
                f"dfs.container.ratis.leader.pending.bytes.limit ({limit_bytes}) must be positive"
            )
        self._limit = limit_bytes
        self._wires: OrderedDict[int, tuple[int, EntryPieces, int]] = OrderedDict()
        """index -> (term, the entry's pieces, their bytes)"""
        self.bytes = 0
        self.evicted = 0
        """Entries dropped for the bound before every follower held them."""

    def __len__(self) -> int:
        return len(self._wires)

    def put(self, entry: LogEntry, wire: EntryPieces) -> None:
        """Files an entry's pieces (a rewritten index replaces the old), then keeps within the bound."""
        old = self._wires.pop(entry.index, None)
        if old is not None:
            self.bytes -= old[2]
        size = sum(map(len, wire))
        self._wires[entry.index] = (entry.term, wire, size)
        self.bytes += size
        while self.bytes > self._limit:
            _, (_, _, dropped) = self._wires.popitem(last=False)
            self.bytes -= dropped
            self.evicted += 1

    def get(self, entry: LogEntry) -> EntryPieces | None:
        held = self._wires.get(entry.index)
        return held[1] if held is not None and held[0] == entry.term else None

    def drop_through(self, index: int) -> None:
        """Every follower holds the entries up to `index`: their data is not sent again."""
        while self._wires:
            first = next(iter(self._wires))
            if first > index:
                break
            self.bytes -= self._wires.pop(first)[2]

    def clear(self) -> None:
        """The member stopped leading (Ozone's notifyNotLeader evicts the cache)."""
        self._wires.clear()
        self.bytes = 0


class StateMachineData:
    """The data of one member's entries on their way to `write_data` and to its followers."""

    def __init__(
        self,
        machine: DataStateMachine,
        pending_bytes: int = LEADER_PENDING_BYTES,
        on_unreadable: Callable[[str], None] | None = None,
    ) -> None:
        """`on_unreadable(why)`: the state machine could not read back an entry's data for a follower
        (called in the except block)."""
        self._machine = machine
        self._on_unreadable = on_unreadable
        self.cache = DataCache(pending_bytes)
        self.reads = 0
        """Entries whose data the leader read back from its state machine for a follower (not cached)."""
        self._submitted: dict[ClientCall, memoryview] = {}
        """The data of the call being submitted, until the core appends it (`Appended`)."""
        self._appended: dict[int, memoryview] = {}
        """The leader's data by index, from `Appended` to the entry's `Persist`."""
        self._arrived: dict[tuple[int, int], bytes | memoryview] = {}
        """A follower's data of the append being received, by (term, index), until its `Persist`."""
        self._writing: dict[int, asyncio.Task[None]] = {}
        """The `write_data` of each entry still writing, by index: a read back waits for it."""

    def submitting(self, call: ClientCall, data: memoryview | None) -> None:
        """`call` is being submitted with `data` (None: done, appended or not)."""
        if data is None:
            self._submitted.pop(call, None)
        else:
            self._submitted[call] = data

    def appended(self, call: ClientCall, index: int) -> None:
        """The core appended `call` at `index` (`Appended`): its data waits for the entry's `Persist`."""
        data = self._submitted.get(call)
        if data is not None:
            self._appended[index] = data

    def arrived(self, append: AppendEntriesRequest, data: dict[int, bytes | memoryview]) -> None:
        """A follower's append brought `data` (by index), for the `Persist` the core answers it with."""
        for index, carried in data.items():
            self._arrived[(append.entries[index - append.previous_index - 1].term, index)] = carried

    def received(self) -> None:
        """The appends were taken: the data of entries the core did not take (held already) is dropped."""
        self._arrived.clear()

    def to_write(self, entry: LogEntry) -> memoryview:
        """The data `write_data` writes for an entry being persisted: the leader's files the entry's pieces
        here, once, in the cache its followers' appends share (the data as `submit` was given it). A
        `DataWriteError` when the member was never given it."""
        submitted = self._appended.pop(entry.index, None)
        if submitted is not None:
            self.cache.put(entry, append_entry_pieces(entry, submitted))
            return submitted
        arrived = self._arrived.pop((entry.term, entry.index), None)
        if arrived is None:
            raise DataWriteError(f"entry {entry.index} has {entry.data_size} bytes of data never given")
        return memoryview(arrived)

    def writing(self, entry: LogEntry, task: asyncio.Task[None]) -> None:
        """`task` writes `entry`'s data: reading it back waits for it (a new leader may send an entry its own
        write has not finished)."""
        self._writing[entry.index] = task
        task.add_done_callback(partial(self._written, entry.index))

    def _written(self, index: int, task: asyncio.Task[None]) -> None:
        if self._writing.get(index) is task:
            del self._writing[index]

    async def entry_wire(self, entry: LogEntry) -> EntryPieces:
        """An entry as a follower's append carries it: with its data from the cache, else read back from
        the state machine (Ratis's StateMachine.DataApi.read; Ozone's ContainerStateMachine reads the
        chunk)."""
        if not entry.data_size:
            return append_entry_pieces(entry)
        wire = self.cache.get(entry)
        if wire is not None:
            return wire
        self.reads += 1
        writing = self._writing.get(entry.index)
        if writing is not None:
            await asyncio.wait([writing])
        try:
            data = await self._machine.read_data(entry)
        except Exception as error:  # for good: retrying would leave the follower behind forever
            if self._on_unreadable is not None:
                self._on_unreadable(
                    f"its state machine could not read back the data of entry {entry.index} for a follower "
                    f"({error!r})"
                )
            raise
        return append_entry_pieces(entry, data)

    def not_leading(self) -> None:
        """The member stopped leading (Ozone's notifyNotLeader evicts the cache) or stopped."""
        if self.cache or self._appended:
            self.cache.clear()
            self._appended.clear()
