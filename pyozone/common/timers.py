"""Actions due at a future time on an injected clock; the owner runs what is due on each tick."""

from __future__ import annotations

import heapq
from collections.abc import Callable
from itertools import count


class Timers:
    def __init__(self) -> None:
        self._heap: list[tuple[int, int, Callable[[], None]]] = []
        self._seq = count()

    def call_at(self, due_ms: int, action: Callable[[], None]) -> None:
        heapq.heappush(self._heap, (due_ms, next(self._seq), action))

    def run_due(self, now_ms: int) -> int:
        """Runs every action due at or before now, in due order; returns how many ran."""
        ran = 0
        while self._heap and self._heap[0][0] <= now_ms:
            _, _, action = heapq.heappop(self._heap)
            action()
            ran += 1
        return ran

    def next_due(self) -> int | None:
        return self._heap[0][0] if self._heap else None

    def __len__(self) -> int:
        return len(self._heap)
