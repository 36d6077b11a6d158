"""Containers SCM allocated on a datanode that no report shows yet (Ozone's PendingContainerTracker).

A node report says what a datanode's volumes can take, but SCM allocates containers between reports: without
this, every allocation until the next report saw the same free space and a datanode with room for one
container got several (PipelinePlacementPolicy, WritableRatisContainerProvider). Each allocation counts a full
container size against its members until the datanode reports the container (an ICR or a full report) or the
allocation ages out: a two-window tumbling bucket per datanode, rolled every ROLL_INTERVAL_MS, so an
allocation never reported (the container was never written) is forgotten after one to two intervals.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pyozone.hdds.clock import Clock
from pyozone.hdds.ids import ContainerID, DatanodeID

ROLL_INTERVAL_MS = 5 * 60 * 1000
"""Ozone's default roll interval (5 minutes)."""


@dataclass(slots=True)
class _Bucket:
    last_roll_ms: int
    current: set[ContainerID] = field(default_factory=set)
    previous: set[ContainerID] = field(default_factory=set)

    def roll(self, now_ms: int, interval_ms: int) -> None:
        elapsed = now_ms - self.last_roll_ms
        if elapsed >= 2 * interval_ms:
            self.current, self.previous = set(), set()
        elif elapsed >= interval_ms:
            self.current, self.previous = set(), self.current
        else:
            return
        self.last_roll_ms = now_ms


class PendingContainerTracker:
    def __init__(self, container_size: int, clock: Clock, roll_interval_ms: int = ROLL_INTERVAL_MS) -> None:
        self.container_size = container_size
        self.clock = clock
        self.roll_interval_ms = roll_interval_ms
        self._buckets: dict[DatanodeID, _Bucket] = {}

    def _bucket(self, dn: DatanodeID) -> _Bucket:
        now = self.clock.now_ms()
        bucket = self._buckets.get(dn)
        if bucket is None:
            bucket = self._buckets[dn] = _Bucket(now)
        bucket.roll(now, self.roll_interval_ms)
        return bucket

    def record(self, members: tuple[DatanodeID, ...], container_id: ContainerID) -> None:
        """A container just allocated on a pipeline of these members."""
        for dn in members:
            self._bucket(dn).current.add(container_id)

    def remove(self, dn: DatanodeID, container_id: ContainerID) -> None:
        """The datanode reported the container: its node reports now count the space."""
        bucket = self._bucket(dn)
        bucket.current.discard(container_id)
        bucket.previous.discard(container_id)

    def roll(self, dn: DatanodeID) -> None:
        """Ages the datanode's windows (on each node report) even when nothing is allocated there."""
        self._bucket(dn)

    def pending_count(self, dn: DatanodeID) -> int:
        bucket = self._bucket(dn)
        return len(bucket.current | bucket.previous)

    def pending_bytes(self, dn: DatanodeID) -> int:
        """A full container size per pending allocation (Ozone's getPendingAllocationSize)."""
        return self.pending_count(dn) * self.container_size
