"""DatanodeUsage: a datanode's storage as its last node report gave it (Ozone's DatanodeUsageInfo).

Utilization is (capacity - remaining + extra) / capacity over the working data volumes, `extra` being
what the balancer has already scheduled to enter (positive) or leave (negative) the node; the cluster's
average is the same ratio over the sums (ContainerBalancerTask.calculateAvgUtilization).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from pyozone.hdds.datanode import DatanodeInfo
from pyozone.hdds.ids import DatanodeID


@dataclass(frozen=True, slots=True)
class DatanodeUsage:
    datanode: DatanodeID
    capacity: int
    remaining: int

    @classmethod
    def of(cls, info: DatanodeInfo) -> DatanodeUsage:
        return cls(info.uuid, info.capacity(), info.remaining())

    @property
    def used(self) -> int:
        return self.capacity - self.remaining

    def utilization(self, extra: int = 0) -> float:
        """Ozone's calculateUtilization(plusSize); 0 for a node reporting no capacity."""
        if self.capacity <= 0:
            return 0.0
        return (self.capacity - self.remaining + extra) / self.capacity


def average_utilization(usages: Iterable[DatanodeUsage]) -> float:
    capacity = remaining = 0
    for usage in usages:
        capacity += usage.capacity
        remaining += usage.remaining
    return (capacity - remaining) / capacity if capacity > 0 else 0.0
