"""Container rules: enough closed containers must have reported replicas before clients may read."""

from __future__ import annotations

import logging
import math
from abc import abstractmethod
from typing import ClassVar, Protocol

from pyozone.hdds.ids import ContainerID, DatanodeID, ReplicationConfig
from pyozone.hdds.states import LifeCycleState, ReplicationType
from pyozone.scm.events import SCMEvent
from pyozone.scm.safemode.rule import SafeModeExitRule

log = logging.getLogger(__name__)

SAMPLE_CONTAINER_DISPLAY_LIMIT = 5
_CLOSED = (LifeCycleState.QUASI_CLOSED, LifeCycleState.CLOSED)


class ContainerRecord(Protocol):
    @property
    def container_id(self) -> ContainerID: ...
    @property
    def state(self) -> LifeCycleState: ...
    @property
    def replication_config(self) -> ReplicationConfig: ...
    @property
    def number_of_keys(self) -> int: ...


class ReplicaRecord(Protocol):
    @property
    def datanode(self) -> DatanodeID: ...


class ContainerSource(Protocol):
    """What the container rules read of the ContainerManager."""

    def containers(self, state: LifeCycleState | None = None) -> list[ContainerRecord]: ...
    def replicas(self, container_id: ContainerID) -> tuple[ReplicaRecord, ...]: ...


class AbstractContainerSafeModeRule(SafeModeExitRule):
    """Counts eligible containers once `min_replicas` distinct datanodes reported each of them.

    Eligible: of the rule's type, CLOSED or QUASI_CLOSED and holding keys. OPEN/CLOSING containers
    may legitimately have no replica yet and empty ones hold nothing to read, so they would only
    keep SCM in safe mode for no reason.
    """

    event = SCMEvent.CONTAINER_REGISTRATION_REPORT
    container_type: ClassVar[ReplicationType]

    def __init__(self, container_manager: ContainerSource, cutoff: float) -> None:
        self.container_manager = container_manager
        self.cutoff = cutoff
        self._min_replicas: dict[ContainerID, int] = {}
        self._reporters: dict[ContainerID, set[DatanodeID]] = {}
        self._counted: set[ContainerID] = set()
        self.refresh()

    @staticmethod
    @abstractmethod
    def min_replicas(config: ReplicationConfig) -> int:
        """Ozone's ReplicationConfig.getMinimumNodes(): how many replicas make the data readable."""

    @property
    def total(self) -> int:
        return len(self._min_replicas)

    @property
    def eligible(self) -> frozenset[ContainerID]:
        """The containers the rule waits for (its totals)."""
        return frozenset(self._min_replicas)

    @property
    def with_min_replicas(self) -> int:
        return len(self._counted)

    @property
    def cutoff_count(self) -> int:
        """Ozone's threshold metric: eligible containers that must be reported to pass."""
        return math.ceil(self.total * self.cutoff)

    def current_threshold(self) -> float:
        return 1.0 if self.total == 0 else self.with_min_replicas / self.total

    def validate(self) -> bool:
        return self.current_threshold() >= self.cutoff

    def process(self, payload: tuple[DatanodeID, list[ContainerID]]) -> None:
        dn, container_ids = payload
        for cid in container_ids:
            needed = self._min_replicas.get(cid)
            if needed is None or cid in self._counted:
                continue
            reporters = self._reporters.setdefault(cid, set())
            reporters.add(dn)
            if len(reporters) >= needed:
                self._counted.add(cid)
                del self._reporters[cid]
        log.debug(
            "SCM in safe mode. %.2f %% %s containers have enough reported replicas",
            self.current_threshold() * 100,
            self.container_type.name,
        )

    def refresh(self) -> None:
        """Re-reads the eligible set: containers deleted since leave the totals, containers closed since
        join them; what was already counted for a still-eligible container is kept."""
        self._min_replicas = {
            c.container_id: self.min_replicas(c.replication_config)
            for state in _CLOSED
            for c in self.container_manager.containers(state)
            if c.replication_config.type is self.container_type and c.number_of_keys > 0
        }
        self._counted.intersection_update(self._min_replicas)
        self._reporters = {cid: dns for cid, dns in self._reporters.items() if cid in self._min_replicas}
        log.info(
            "%s containers threshold count is %d of %d",
            self.container_type.name,
            self.cutoff_count,
            self.total,
        )

    def reinitialize(self) -> None:
        """The eligible set re-read; a container that joined it counts the replicas this SCM recorded."""
        self.refresh()
        for cid, needed in self._min_replicas.items():
            if cid in self._counted:
                continue
            reporters = self._reporters.setdefault(cid, set())
            reporters.update(r.datanode for r in self.container_manager.replicas(cid))
            if len(reporters) >= needed:
                self._counted.add(cid)
                del self._reporters[cid]

    def status_text(self) -> str:
        ratio = self.current_threshold()
        text = (
            f"{ratio * 100:.2f}% of [{self.container_type.name}] Containers"
            f"({self.with_min_replicas} / {self.total}) with at least N reported replica (={ratio:.2f})"
            f" >= safeModeCutoff (={self.cutoff:.2f});"
        )
        missing = sorted(self._min_replicas.keys() - self._counted)[:SAMPLE_CONTAINER_DISPLAY_LIMIT]
        if missing:
            text += f"\nSample {self.container_type.name} Containers not satisfying the criteria : {missing};"
        return text


class RatisContainerSafeModeRule(AbstractContainerSafeModeRule):
    """A Ratis container is readable once any one datanode reports a replica."""

    container_type = ReplicationType.RATIS

    @staticmethod
    def min_replicas(config: ReplicationConfig) -> int:
        return 1


class ECContainerSafeModeRule(AbstractContainerSafeModeRule):
    """An EC container is readable once `data` distinct datanodes report a replica (any indexes)."""

    container_type = ReplicationType.EC

    @staticmethod
    def min_replicas(config: ReplicationConfig) -> int:
        return config.ec_data
