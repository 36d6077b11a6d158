"""QuasiClosedStuckReplicaCount: replica targets per origin of a quasi-closed stuck container.

A stuck container cannot be force-closed, so each origin's copy may hold data no other origin has.
Instead of counting replicas, keep enough copies of every origin: more of the best origins (highest
BCSID), fewer of the others. Decommissioning copies count for nothing; maintenance copies only excuse
a missing in-service copy.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from pyozone.hdds.container import ContainerReplica
from pyozone.hdds.ids import DatanodeID
from pyozone.hdds.states import NodeOperationalState, ReplicaState
from pyozone.scm.replication.replica_match import NodeStatusFn, persisted_op_state

SINGLE_ORIGIN_COPIES = 3
"""One origin holds all the data: keep a full Ratis set of it (Ozone hard-codes 3)."""


@dataclass(frozen=True, slots=True)
class MisReplicatedOrigin:
    """`sources` are the origin's replicas to copy from (under) or choose deletions from (over)."""

    origin: DatanodeID
    sources: tuple[ContainerReplica, ...]
    replica_delta: int


class QuasiClosedStuckReplicaCount:
    def __init__(
        self,
        replicas: Iterable[ContainerReplica],
        min_healthy_for_maintenance: int,
        best_origin_copies: int,
        other_origin_copies: int,
        node_status: NodeStatusFn,
    ) -> None:
        self.min_healthy_for_maintenance = min_healthy_for_maintenance
        self.best_origin_copies = best_origin_copies
        self.other_origin_copies = other_origin_copies
        self._by_origin: dict[DatanodeID, list[ContainerReplica]] = {}
        self._in_service: dict[DatanodeID, list[ContainerReplica]] = {}
        self._maintenance: dict[DatanodeID, int] = {}
        self.has_healthy_replicas = False
        self.has_out_of_service_replicas = False
        for replica in sorted(replicas, key=lambda r: r.datanode):
            origin = replica.origin_node_id
            self._by_origin.setdefault(origin, []).append(replica)
            self.has_healthy_replicas |= replica.state is not ReplicaState.UNHEALTHY
            op_state = persisted_op_state(node_status, replica.datanode)
            if op_state is NodeOperationalState.IN_SERVICE:
                self._in_service.setdefault(origin, []).append(replica)
            else:
                self.has_out_of_service_replicas = True
                if op_state.is_maintenance:
                    self._maintenance[origin] = self._maintenance.get(origin, 0) + 1
        good = [r for rs in self._by_origin.values() for r in rs if r.state is not ReplicaState.UNHEALTHY]
        top = max((r.sequence_id for r in good), default=None)
        self.best_origins = frozenset(r.origin_node_id for r in good if r.sequence_id == top)

    @property
    def available_origins(self) -> int:
        return len(self._by_origin)

    def _target(self, origin: DatanodeID) -> int:
        if len(self._by_origin) == 1:
            return SINGLE_ORIGIN_COPIES
        return self.best_origin_copies if origin in self.best_origins else self.other_origin_copies

    def under_replicated_origins(self) -> list[MisReplicatedOrigin]:
        result = []
        single = len(self._by_origin) == 1
        for origin, replicas in self._by_origin.items():
            in_service = len(self._in_service.get(origin, ()))
            target = self._target(origin)
            if self._maintenance.get(origin, 0):
                if single:
                    needed = max(0, self.min_healthy_for_maintenance - in_service)
                else:  # one online copy is enough while the others are in maintenance
                    needed = 1 if in_service == 0 else 0
            else:
                needed = max(0, target - in_service)
            if needed:
                result.append(MisReplicatedOrigin(origin, tuple(replicas), needed))
        return result

    def over_replicated_origins(self) -> list[MisReplicatedOrigin]:
        """Only in-service copies count; a copy coming back from maintenance may over-replicate later."""
        result = []
        for origin in self._by_origin:
            in_service = self._in_service.get(origin, [])
            excess = len(in_service) - self._target(origin)
            if excess > 0:
                result.append(MisReplicatedOrigin(origin, tuple(in_service), excess))
        return result

    def is_under_replicated(self) -> bool:
        return bool(self.under_replicated_origins())

    def is_over_replicated(self) -> bool:
        return bool(self.over_replicated_origins())
