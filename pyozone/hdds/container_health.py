"""ContainerHealthState: Ozone's health states with their numbers and metric names.

Numbers are what ContainerInfo persists and what the protobuf carries; metric names are the gauges
Ozone exports; the camelCase names are the keys of scenario expectations (TestReplicationManagerScenarios),
derived from the enum name so the three can never disagree.
"""

from __future__ import annotations

from enum import IntEnum


class ContainerHealthState(IntEnum):
    HEALTHY = 0
    UNDER_REPLICATED = 1
    MIS_REPLICATED = 2
    OVER_REPLICATED = 3
    MISSING = 4
    UNHEALTHY = 5
    EMPTY = 6
    OPEN_UNHEALTHY = 7
    QUASI_CLOSED_STUCK = 8
    OPEN_WITHOUT_PIPELINE = 9
    # Combination states: one report bucket per situation (HEAD / 2.2+).
    UNHEALTHY_UNDER_REPLICATED = 100
    UNHEALTHY_OVER_REPLICATED = 101
    MISSING_UNDER_REPLICATED = 102
    QUASI_CLOSED_STUCK_UNDER_REPLICATED = 103
    QUASI_CLOSED_STUCK_OVER_REPLICATED = 104
    QUASI_CLOSED_STUCK_MISSING = 105

    @property
    def metric_name(self) -> str:
        return _META[self][1]

    @property
    def description(self) -> str:
        return _META[self][0]

    @property
    def camel_name(self) -> str:
        """UNDER_REPLICATED -> underReplicated: the key used in scenario JSON expectations."""
        head, *rest = self.name.lower().split("_")
        return head + "".join(word.capitalize() for word in rest)

    @property
    def is_combination(self) -> bool:
        return self >= 100

    @property
    def components(self) -> frozenset[ContainerHealthState]:
        """The individual states a combination stands for, so views such as "all under-replicated
        containers" can take the union of buckets; an individual state is its own component."""
        return _COMPONENTS.get(self, frozenset((self,)))

    @classmethod
    def from_value(cls, value: int) -> ContainerHealthState:
        """Unknown numbers map to HEALTHY, as Ozone's fromValue does (a newer SCM may add states)."""
        try:
            return cls(value)
        except ValueError:
            return cls.HEALTHY

    @classmethod
    def from_camel_name(cls, name: str) -> ContainerHealthState:
        try:
            return _BY_CAMEL[name]
        except KeyError:
            raise ValueError(f"unknown container health state {name!r}") from None


S = ContainerHealthState
_META: dict[ContainerHealthState, tuple[str, str]] = {
    S.HEALTHY: ("Container is healthy", "HealthyContainers"),
    S.UNDER_REPLICATED: ("Containers with insufficient replicas", "UnderReplicatedContainers"),
    S.MIS_REPLICATED: ("Containers with insufficient racks", "MisReplicatedContainers"),
    S.OVER_REPLICATED: ("Containers with more replicas than required", "OverReplicatedContainers"),
    S.MISSING: ("Containers with no online replicas", "MissingContainers"),
    S.UNHEALTHY: (
        "Containers Closed or Quasi_Closed having some replicas in a different state",
        "UnhealthyContainers",
    ),
    S.EMPTY: ("Containers having no blocks", "EmptyContainers"),
    S.OPEN_UNHEALTHY: (
        "Containers open and having replicas with different states",
        "OpenUnhealthyContainers",
    ),
    S.QUASI_CLOSED_STUCK: (
        "Containers QuasiClosed with insufficient datanode origins",
        "StuckQuasiClosedContainers",
    ),
    S.OPEN_WITHOUT_PIPELINE: (
        "Containers in OPEN state without any healthy Pipeline",
        "OpenContainersWithoutPipeline",
    ),
    S.UNHEALTHY_UNDER_REPLICATED: (
        "Inconsistent states with insufficient replicas",
        "UnhealthyUnderReplicatedContainers",
    ),
    S.UNHEALTHY_OVER_REPLICATED: (
        "Inconsistent states with excess replicas",
        "UnhealthyOverReplicatedContainers",
    ),
    S.MISSING_UNDER_REPLICATED: (
        "No online replicas with offline indexes needing replication",
        "MissingUnderReplicatedContainers",
    ),
    S.QUASI_CLOSED_STUCK_UNDER_REPLICATED: (
        "Stuck in quasi-closed state with insufficient replicas",
        "QuasiClosedStuckUnderReplicatedContainers",
    ),
    S.QUASI_CLOSED_STUCK_OVER_REPLICATED: (
        "Stuck in quasi-closed state with excess replicas",
        "QuasiClosedStuckOverReplicatedContainers",
    ),
    S.QUASI_CLOSED_STUCK_MISSING: (
        "Stuck in quasi-closed state with no replicas",
        "QuasiClosedStuckMissingContainers",
    ),
}
_COMPONENTS: dict[ContainerHealthState, frozenset[ContainerHealthState]] = {
    S.UNHEALTHY_UNDER_REPLICATED: frozenset((S.UNHEALTHY, S.UNDER_REPLICATED)),
    S.UNHEALTHY_OVER_REPLICATED: frozenset((S.UNHEALTHY, S.OVER_REPLICATED)),
    S.MISSING_UNDER_REPLICATED: frozenset((S.MISSING, S.UNDER_REPLICATED)),
    S.QUASI_CLOSED_STUCK_UNDER_REPLICATED: frozenset((S.QUASI_CLOSED_STUCK, S.UNDER_REPLICATED)),
    S.QUASI_CLOSED_STUCK_OVER_REPLICATED: frozenset((S.QUASI_CLOSED_STUCK, S.OVER_REPLICATED)),
    S.QUASI_CLOSED_STUCK_MISSING: frozenset((S.QUASI_CLOSED_STUCK, S.MISSING)),
}
_BY_CAMEL = {state.camel_name: state for state in ContainerHealthState}
del S
