"""The leader's state machine data of recent entries, as its followers' appends carry it (the role of Ozone's
ContainerStateMachine stateMachineDataCache): each entry's wire bytes with its data (`append_entry_bytes`),
built once and sent to every follower. Bounded by `dfs.container.ratis.leader.pending.bytes.limit`: past
it the oldest go first; an entry once every follower holds it. A follower that needs an entry no longer
cached gets its data read back from the state machine (`DataStateMachine.read_data`, Ratis's read)."""

from __future__ import annotations

from collections import OrderedDict

from pyozone.ratis.messages import LogEntry

LEADER_PENDING_BYTES = 1 << 30
"""dfs.container.ratis.leader.pending.bytes.limit (1 GB)."""


class DataCache:
    def __init__(self, limit_bytes: int = LEADER_PENDING_BYTES) -> None:
        if limit_bytes <= 0:
            raise ValueError(
                f"dfs.container.ratis.leader.pending.bytes.limit ({limit_bytes}) must be positive"
            )
        self._limit = limit_bytes
        self._wires: OrderedDict[int, tuple[int, bytes]] = OrderedDict()  # index -> (term, wire bytes)
        self.bytes = 0
        self.evicted = 0
        """Entries dropped for the bound before every follower held them."""

    def __len__(self) -> int:
        return len(self._wires)

    def put(self, entry: LogEntry, wire: bytes) -> None:
        """Files an entry's wire bytes (a rewritten index replaces the old), then keeps within the bound."""
        old = self._wires.pop(entry.index, None)
        if old is not None:
            self.bytes -= len(old[1])
        self._wires[entry.index] = (entry.term, wire)
        self.bytes += len(wire)
        while self.bytes > self._limit:
            _, (_, dropped) = self._wires.popitem(last=False)
            self.bytes -= len(dropped)
            self.evicted += 1

    def get(self, entry: LogEntry) -> bytes | None:
        held = self._wires.get(entry.index)
        return held[1] if held is not None and held[0] == entry.term else None

    def drop_through(self, index: int) -> None:
        """Every follower holds the entries up to `index`: their data is not sent again."""
        while self._wires:
            first = next(iter(self._wires))
            if first > index:
                break
            self.bytes -= len(self._wires.pop(first)[1])

    def clear(self) -> None:
        """The member stopped leading (Ozone's notifyNotLeader evicts the cache)."""
        self._wires.clear()
        self.bytes = 0
