"""ReplicationQueue: the work the check stage hands the processing stage (Ozone's ReplicationQueue).

Under-replicated (and mis-replicated) containers wait in a priority queue, least redundancy first;
over-replicated ones in FIFO order, as deleting is never urgent. Every enqueue bumps requeue_count
first, so the first enqueue gives 1 and each retry sinks the container a little (as Ozone's).
"""

from __future__ import annotations

import heapq
import itertools
from collections import deque
from dataclasses import replace

from pyozone.scm.replication.results import OverReplicatedHealthResult, UnderReplicatedHealthResult


class ReplicationQueue:
    def __init__(self) -> None:
        self._under: list[tuple[int, int, int, UnderReplicatedHealthResult]] = []
        self._over: deque[OverReplicatedHealthResult] = deque()
        self._seq = itertools.count()  # FIFO among equal priorities

    def enqueue_under(self, result: UnderReplicatedHealthResult) -> UnderReplicatedHealthResult:
        """Queues a copy with requeue_count + 1 and returns it."""
        queued = replace(result, requeue_count=result.requeue_count + 1)
        heapq.heappush(
            self._under, (queued.weighted_redundancy, queued.requeue_count, next(self._seq), queued)
        )
        return queued

    def enqueue_over(self, result: OverReplicatedHealthResult) -> None:
        self._over.append(result)

    def dequeue_under(self) -> UnderReplicatedHealthResult | None:
        return heapq.heappop(self._under)[-1] if self._under else None

    def dequeue_over(self) -> OverReplicatedHealthResult | None:
        return self._over.popleft() if self._over else None

    def under_size(self) -> int:
        return len(self._under)

    def over_size(self) -> int:
        return len(self._over)

    def is_empty(self) -> bool:
        return not self._under and not self._over


class NullQueue(ReplicationQueue):
    """The sink of a read-only check (ReplicationManager.checkContainerStatus): accepts everything, keeps
    nothing."""

    def enqueue_under(self, result: UnderReplicatedHealthResult) -> UnderReplicatedHealthResult:
        return replace(result, requeue_count=result.requeue_count + 1)

    def enqueue_over(self, result: OverReplicatedHealthResult) -> None:
        return None
