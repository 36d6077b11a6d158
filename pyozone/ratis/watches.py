"""A leader's pending watches (Ratis's WatchRequests): kept by watched index, one heap per level, and by
deadline, so a commit advance touches only the watches it ends and a tick only those whose deadline passed,
however many wait. A watch that ends one way stays in its other heap until it reaches that heap's top (or a
compaction drops it): each heap holds at most about twice the live watches."""

from __future__ import annotations

import heapq
from dataclasses import dataclass

from pyozone.ratis.messages import ClientCall, WatchLevel

_COMPACT_SLACK = 64  # stale heap entries tolerated beyond the live watches before a rebuild


@dataclass(frozen=True)
class Watch:
    call: ClientCall
    index: int
    level: WatchLevel
    deadline_ms: int
    timeout_ms: int


class PendingWatches:
    """At most `element_limit` watches wait per level (Ratis's WatchRequests keeps one queue per replication
    level, each bounded by `raft.server.watch.element-limit`)."""

    def __init__(self, element_limit: int) -> None:
        self._limit = element_limit
        self._arrivals = 0
        self._live: dict[int, Watch] = {}  # by arrival number, in arrival order
        self._count = dict.fromkeys(WatchLevel, 0)
        self._by_index: dict[WatchLevel, list[tuple[int, int]]] = {level: [] for level in WatchLevel}
        self._by_deadline: list[tuple[int, int]] = []

    def __len__(self) -> int:
        return len(self._live)

    def full(self, level: WatchLevel) -> bool:
        return self._count[level] >= self._limit

    def add(self, watch: Watch) -> None:
        if self.full(watch.level):
            raise ValueError(f"{self._count[watch.level]} watches of {watch.level.value} already wait")
        self._arrivals += 1
        self._live[self._arrivals] = watch
        self._count[watch.level] += 1
        heapq.heappush(self._by_index[watch.level], (watch.index, self._arrivals))
        heapq.heappush(self._by_deadline, (watch.deadline_ms, self._arrivals))

    def reached(self, indexes: dict[WatchLevel, int]) -> list[Watch]:
        """The watches whose level reached their index (`indexes`: how far each level reaches), in arrival
        order, removed."""
        ended = []
        for level, reached in indexes.items():
            heap = self._by_index[level]
            while heap and heap[0][0] <= reached:
                arrival = heapq.heappop(heap)[1]
                if arrival in self._live:
                    ended.append(arrival)
        return self._remove(sorted(ended))

    def expired(self, now_ms: int) -> list[Watch]:
        """The watches whose deadline passed, in arrival order, removed."""
        ended = []
        while self._by_deadline and self._by_deadline[0][0] <= now_ms:
            arrival = heapq.heappop(self._by_deadline)[1]
            if arrival in self._live:
                ended.append(arrival)
        return self._remove(sorted(ended))

    def next_deadline_ms(self) -> int | None:
        heap = self._by_deadline
        while heap and heap[0][1] not in self._live:
            heapq.heappop(heap)
        return heap[0][0] if heap else None

    def drop(self) -> list[Watch]:
        """Every watch, in arrival order, removed (a leader stepping down answers them NotLeader)."""
        dropped = list(self._live.values())
        self._live.clear()
        self._count = dict.fromkeys(WatchLevel, 0)
        for heap in (*self._by_index.values(), self._by_deadline):
            heap.clear()
        return dropped

    def _remove(self, arrivals: list[int]) -> list[Watch]:
        ended = [self._live.pop(arrival) for arrival in arrivals]
        for watch in ended:
            self._count[watch.level] -= 1
        bound = 2 * len(self._live) + _COMPACT_SLACK
        for heap in (*self._by_index.values(), self._by_deadline):
            if len(heap) > bound:
                heap[:] = [item for item in heap if item[1] in self._live]
                heapq.heapify(heap)
        return ended
