"""The deadlines of one connection's calls, served by one timer.

A timer per call is a good part of a small call's cost on uvloop (each is a libuv handle, opened and
closed), so a connection keeps its calls' deadlines in a heap and one timer set for the earliest. A call
that ends forgets nothing: its entry is dropped when its time comes (the call is gone) or when the heap
holds many more entries than the connection runs calls (it is rebuilt from the live ones, so each entry
is looked at a bounded number of times). An entry names its call by id and a number the call keeps
(`deadline_seq`), never the call itself: holding ended calls (their tasks, futures and messages) until
their deadline kept them from the young generation's collections and cost more than the timers did.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import math
from collections.abc import Callable, Mapping
from typing import Any

COMPACT_SLACK = 1024
"""Entries of ended calls kept before the heap is rebuilt (beyond twice the live calls)."""


class Deadlines:
    """`expire(call_id, call)` runs when a call's deadline passes, if `calls` (the connection's running
    calls by id) still holds it. A call has a `deadline_seq` attribute (-1 when it has no deadline)."""

    __slots__ = ("_at", "_calls", "_expire", "_heap", "_loop", "_seq", "_timer")

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        calls: Mapping[int, Any],
        expire: Callable[[int, Any], None],
    ) -> None:
        self._loop = loop
        self._calls = calls
        self._expire = expire
        self._heap: list[tuple[float, int, int]] = []
        self._seq = itertools.count()
        self._timer: asyncio.TimerHandle | None = None
        self._at = math.inf

    def add(self, timeout: float, call_id: int, call: Any) -> None:
        """`call` expires `timeout` seconds from now."""
        when = self._loop.time() + timeout
        heap, calls = self._heap, self._calls
        if len(heap) > 2 * len(calls) + COMPACT_SLACK:
            heap[:] = [e for e in heap if _holds(calls, e)]
            heapq.heapify(heap)
        call.deadline_seq = seq = next(self._seq)
        heapq.heappush(heap, (when, seq, call_id))
        if when < self._at:
            if self._timer is not None:
                self._timer.cancel()
            self._at = when
            self._timer = self._loop.call_at(when, self._fire)

    def _fire(self) -> None:
        self._timer, self._at = None, math.inf
        heap, calls, now = self._heap, self._calls, self._loop.time()
        while heap and heap[0][0] <= now:
            entry = heapq.heappop(heap)
            if _holds(calls, entry):
                self._expire(entry[2], calls[entry[2]])
        if heap and self._timer is None:
            self._at = heap[0][0]
            self._timer = self._loop.call_at(self._at, self._fire)

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._heap.clear()


def _holds(calls: Mapping[int, Any], entry: tuple[float, int, int]) -> bool:
    """Whether the call an entry was made for still runs (not an ended one, nor a later call with its id)."""
    call = calls.get(entry[2])
    return call is not None and call.deadline_seq == entry[1]
