"""How an iteration picks sources and targets: Ozone's FindSourceGreedy and FindTargetGreedyByUsageInfo.

Sources are taken most utilized first, counting what already leaves them this iteration; a source
gives up a container only while it stays at or above the lower limit and within
size.leaving.source.max. Targets are tried least utilized first, counting what already enters them; a
target takes a container only if it holds no replica of it, the placement policy still holds with the
replica moved (racks; EC indexes spread), it stays at or below the upper limit and within
size.entering.target.max.
"""

from __future__ import annotations

import bisect
import heapq
from collections.abc import Callable, Collection, Iterable

from pyozone.hdds.ids import ContainerID, DatanodeID
from pyozone.scm.balancer.usage import DatanodeUsage

PlacementOk = Callable[[ContainerID, DatanodeID, DatanodeID], bool]
"""(container, source, target): the placement policy holds with the source's replica on the target."""
Holds = Callable[[ContainerID, DatanodeID], bool]
"""(container, datanode): the datanode holds a replica of the container."""


class FindSourceGreedy:
    def __init__(
        self, usages: dict[DatanodeID, DatanodeUsage], max_size_leaving: int, lower_limit: float
    ) -> None:
        self._usages = usages
        self._max_leaving = max_size_leaving
        self._lower = lower_limit
        self.size_leaving: dict[DatanodeID, int] = {}
        # a heap with lazy deletion: an entry counts while it is its node's queued key
        self._heap: list[tuple[float, DatanodeID]] = []
        self._queued: dict[DatanodeID, float] = {}

    def reset(self, sources: Iterable[DatanodeID]) -> None:
        """Only these may be sources now (what already left each is kept)."""
        self._heap, self._queued = [], {}
        for dn in sources:
            self.size_leaving.setdefault(dn, 0)
            self.add_back(dn)

    def add_back(self, dn: DatanodeID) -> None:
        if dn in self.size_leaving:
            key = -self._usages[dn].utilization(-self.size_leaving[dn])
            self._queued[dn] = key
            heapq.heappush(self._heap, (key, dn))

    def next_candidate(self) -> DatanodeID | None:
        """The most utilized source left, taken out (add it back to consider it again)."""
        while self._heap:
            key, dn = heapq.heappop(self._heap)
            if self._queued.get(dn) == key:
                del self._queued[dn]
                return dn
        return None

    def can_size_leave(self, dn: DatanodeID, size: int) -> bool:
        if dn not in self.size_leaving or size <= 0:
            return False
        after = self.size_leaving[dn] + size
        return after <= self._max_leaving and self._usages[dn].utilization(-after) >= self._lower

    def increase_size_leaving(self, dn: DatanodeID, size: int) -> None:
        if dn in self.size_leaving:
            self.size_leaving[dn] += size
            self.add_back(dn)


class FindTargetGreedyByUsageInfo:
    def __init__(
        self,
        usages: dict[DatanodeID, DatanodeUsage],
        max_size_entering: int,
        upper_limit: float,
        holds: Holds,
        placement_ok: PlacementOk,
    ) -> None:
        self._usages = usages
        self._max_entering = max_size_entering
        self._upper = upper_limit
        self._holds = holds
        self._placement_ok = placement_ok
        self.size_entering: dict[DatanodeID, int] = {}
        self._sorted: list[tuple[float, DatanodeID]] = []
        self.checked = 0
        """Targets `find_target` has looked at so far: the selection's work, bounded per tick."""

    def reset(self, targets: Iterable[DatanodeID]) -> None:
        self._sorted = []
        for dn in targets:
            self.size_entering.setdefault(dn, 0)
            bisect.insort(self._sorted, self._key(dn))

    def _key(self, dn: DatanodeID) -> tuple[float, DatanodeID]:
        return (self._usages[dn].utilization(self.size_entering[dn]), dn)

    def find_target(self, container: ContainerID, size: int, source: DatanodeID) -> DatanodeID | None:
        """The least utilized target that can take the container from `source`."""
        for _, dn in self._sorted:
            self.checked += 1
            if self._holds(container, dn) or not self._can_size_enter(dn, size):
                continue
            if self._placement_ok(container, source, dn):
                return dn
        return None

    def _can_size_enter(self, dn: DatanodeID, size: int) -> bool:
        after = self.size_entering[dn] + size
        return after <= self._max_entering and self._usages[dn].utilization(after) <= self._upper

    def increase_size_entering(self, dn: DatanodeID, size: int) -> None:
        """Re-sorts the target; it leaves the candidates once size.entering.target.max is reached."""
        if dn not in self.size_entering:
            return
        key = self._key(dn)
        at = bisect.bisect_left(self._sorted, key)
        if at < len(self._sorted) and self._sorted[at] == key:
            del self._sorted[at]
        self.size_entering[dn] += size
        if self.size_entering[dn] < self._max_entering:
            bisect.insort(self._sorted, self._key(dn))

    def restrict(self, targets: Collection[DatanodeID]) -> None:
        """Only these remain candidates (the datanodes-involved limit is near)."""
        self._sorted = [entry for entry in self._sorted if entry[1] in targets]
