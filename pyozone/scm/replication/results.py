"""Health results: what a check found, and what the under/over-replication queues carry (Ozone's
ContainerHealthResult).

Results are frozen; a requeue makes a copy with `dataclasses.replace(result, requeue_count=...)`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from pyozone.hdds.container import ContainerInfo

OUT_OF_SERVICE_REDUNDANCY = 5
"""Weighted redundancy of a container under-replicated only because replicas are on nodes leaving
service: still fully readable, so it queues behind genuinely degraded containers."""

MIS_REPLICATED_REDUNDANCY = 6
"""Remaining redundancy of a mis-replicated result: all replicas exist, only their racks are wrong,
so it is the least urgent under-replicated work."""


class HealthType(Enum):
    HEALTHY = "HEALTHY"
    UNHEALTHY = "UNHEALTHY"
    UNDER_REPLICATED = "UNDER_REPLICATED"
    OVER_REPLICATED = "OVER_REPLICATED"
    MIS_REPLICATED = "MIS_REPLICATED"


@dataclass(frozen=True, slots=True)
class HealthResult:
    """A HEALTHY or UNHEALTHY result (nothing to queue); the base of the queued results."""

    container: ContainerInfo
    health_type: HealthType = HealthType.HEALTHY


@dataclass(frozen=True, slots=True)
class UnderReplicatedHealthResult(HealthResult):
    """Under-replicated (or, with is_mis_replicated, mis-replicated): goes to the priority queue."""

    health_type: HealthType = field(init=False, default=HealthType.UNDER_REPLICATED)
    remaining_redundancy: int
    due_to_out_of_service: bool
    replicated_ok_after_pending: bool
    unrecoverable: bool
    has_healthy_replicas: bool = True
    is_missing: bool = False
    has_unreplicated_offline_indexes: bool = False
    offline_indexes_ok_after_pending: bool = True
    has_vulnerable_unhealthy: bool = False
    is_mis_replicated: bool = False
    requeue_count: int = 0

    def __post_init__(self) -> None:
        kind = HealthType.MIS_REPLICATED if self.is_mis_replicated else HealthType.UNDER_REPLICATED
        object.__setattr__(self, "health_type", kind)

    @property
    def weighted_redundancy(self) -> int:
        """The queue priority (lower first): requeues push an item back so one failing container
        cannot hog the head of the queue."""
        redundancy = OUT_OF_SERVICE_REDUNDANCY if self.due_to_out_of_service else self.remaining_redundancy
        return self.requeue_count + redundancy


@dataclass(frozen=True, slots=True)
class MisReplicatedHealthResult(UnderReplicatedHealthResult):
    """An under-replicated result flagged mis-replicated; build it with `of`."""

    @classmethod
    def of(cls, container: ContainerInfo, replicated_ok_after_pending: bool) -> MisReplicatedHealthResult:
        return cls(
            container,
            MIS_REPLICATED_REDUNDANCY,
            False,
            replicated_ok_after_pending,
            False,
            is_mis_replicated=True,
        )


@dataclass(frozen=True, slots=True)
class OverReplicatedHealthResult(HealthResult):
    health_type: HealthType = field(init=False, default=HealthType.OVER_REPLICATED)
    excess_redundancy: int
    replicated_ok_after_pending: bool
    has_mismatched_replicas: bool = False
    is_safely_over_replicated: bool = True
