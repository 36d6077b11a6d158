"""RatisContainerReplicaCount: is a Ratis container under-, over- or sufficiently replicated?

Pending ops are weighed pessimistically: an ADD may fail, a DELETE will succeed, so the Replication
Manager never deletes on the strength of a copy that does not exist yet. Replicas on nodes leaving
service still exist but are on their way out: maintenance copies cover missing ones (they come back),
decommission copies do not, and neither ever makes a container over-replicated.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pyozone.hdds.container import ContainerInfo, ContainerReplica
from pyozone.hdds.ids import DatanodeID
from pyozone.hdds.states import LifeCycleState, NodeOperationalState, ReplicaState
from pyozone.scm.replication.pending_ops import PendingOp, PendingOpType
from pyozone.scm.replication.replica_match import (
    NodeStatusFn,
    compare_state,
    is_unhealthy,
    persisted_op_state,
)
from pyozone.scm.replication.results import OverReplicatedHealthResult, UnderReplicatedHealthResult


def replica_order(replica: ContainerReplica) -> tuple[int, DatanodeID]:
    """A deterministic replica order (Ozone sorts by ContainerReplica.hashCode, i.e. container and
    datanode), so two SCMs facing the same replicas pick the same ones to delete (HDDS-4589)."""
    return replica.container_id, replica.datanode


class RatisContainerReplicaCount:
    def __init__(
        self,
        container: ContainerInfo,
        replicas: Iterable[ContainerReplica],
        pending_ops: Iterable[PendingOp],
        min_healthy_for_maintenance: int,
        consider_unhealthy: bool,
        node_status: NodeStatusFn,
    ) -> None:
        self.container = container
        self.replicas: Sequence[ContainerReplica] = sorted(replicas, key=replica_order)
        self.replication_factor = container.replication_config.required_nodes
        self.min_healthy_for_maintenance = min(self.replication_factor, min_healthy_for_maintenance)
        self.consider_unhealthy = consider_unhealthy
        self._op_state = {r.datanode: persisted_op_state(node_status, r.datanode) for r in self.replicas}
        self._unhealthy = [is_unhealthy(container, r) for r in self.replicas]

        unhealthy_dns = {r.datanode for r in self.replicas if r.state is ReplicaState.UNHEALTHY}
        self.in_flight_add = 0
        self.in_flight_del = 0
        for op in pending_ops:
            if op.type is PendingOpType.ADD:
                self.in_flight_add += 1
            # Unhealthy copies are not counted, so their pending deletes must not be either, or the
            # container would look under-replicated (as Ozone's).
            elif consider_unhealthy or op.target_dn not in unhealthy_dns:
                self.in_flight_del += 1

        self._healthy = self._unhealthy_in_service = self.matching_count = self.mismatched_count = 0
        self._decommission = self._maintenance = self._unhealthy_decommission = (
            self._unhealthy_maintenance
        ) = 0
        for replica, unhealthy in zip(self.replicas, self._unhealthy, strict=True):
            op_state = self._op_state[replica.datanode]
            if op_state.is_decommission:
                self._decommission += not unhealthy
                self._unhealthy_decommission += unhealthy
            elif op_state.is_maintenance:
                self._maintenance += not unhealthy
                self._unhealthy_maintenance += unhealthy
            elif unhealthy:
                self._unhealthy_in_service += 1
            else:
                self._healthy += 1
                if compare_state(container.state, replica.state):
                    self.matching_count += 1
                else:
                    self.mismatched_count += 1

    @property
    def healthy_count(self) -> int:
        """Healthy replicas wherever they are (in service, decommissioning, in maintenance)."""
        return self._healthy + self._decommission + self._maintenance

    @property
    def unhealthy_count(self) -> int:
        """Unhealthy replicas wherever they are."""
        return self._unhealthy_in_service + self._unhealthy_decommission + self._unhealthy_maintenance

    @property
    def decommission_count(self) -> int:
        return self._decommission + (self._unhealthy_decommission if self.consider_unhealthy else 0)

    @property
    def maintenance_count(self) -> int:
        return self._maintenance + (self._unhealthy_maintenance if self.consider_unhealthy else 0)

    def healthy_replicas(self) -> list[ContainerReplica]:
        """Replicas that are not unhealthy, on any node, in deterministic order."""
        return [r for r, bad in zip(self.replicas, self._unhealthy, strict=True) if not bad]

    def op_state(self, replica: ContainerReplica) -> NodeOperationalState:
        return self._op_state[replica.datanode]

    def _available(self) -> int:
        return self._healthy + (self._unhealthy_in_service if self.consider_unhealthy else 0)

    def missing_replicas(self) -> int:
        """Replicas to add (> 0) or remove (< 0), ignoring pending ops: maintenance copies cover
        missing ones, but at least min_healthy_for_maintenance must stay in service."""
        available = self._available()
        delta = self.replication_factor - available
        if delta <= 0:
            return delta
        needed_healthy = max(0, self.min_healthy_for_maintenance - available)
        return max(needed_healthy, max(0, delta - self.maintenance_count))

    def _redundancy_delta(self, include_pending_delete: bool, include_pending_add: bool) -> int:
        delta = self.missing_replicas()
        if include_pending_delete:
            delta += self.in_flight_del
        if include_pending_add:
            delta -= self.in_flight_add
        return delta

    def is_sufficiently_replicated(self, include_pending_add: bool = False) -> bool:
        """Pending deletes always count (they will succeed); pending adds only when asked."""
        return self._redundancy_delta(True, include_pending_add) <= 0

    def is_under_replicated(self) -> bool:
        return not self.is_sufficiently_replicated(False)

    def excess_redundancy(self, include_pending_delete: bool) -> int:
        return max(0, -self._redundancy_delta(include_pending_delete, False))

    def is_over_replicated(self, include_pending_delete: bool = True) -> bool:
        return self.excess_redundancy(include_pending_delete) > 0

    def is_safely_over_replicated(self) -> bool:
        """Over-replicated and at least `factor` replicas match the container state, so deleting the
        excess cannot leave only mismatched copies."""
        return self.is_over_replicated(True) and self.matching_count >= self.replication_factor

    def insufficient_due_to_out_of_service(self) -> bool:
        """Under-replicated only by copies on decommissioning/maintenance nodes, which are still
        readable: such containers are repaired after genuinely degraded ones."""
        delta = self._redundancy_delta(True, False)
        return 0 < delta <= self.decommission_count + self.maintenance_count

    def remaining_redundancy(self) -> int:
        """Copies that can still be lost before the data is unreadable, pending deletes done."""
        available = self._available() + self.decommission_count + self.maintenance_count
        return max(0, available - self.in_flight_del - 1)

    def is_unrecoverable(self) -> bool:
        """Only when no replica exists at all: an unhealthy copy is still something to copy from."""
        return not self.replicas

    def additional_replica_needed(self) -> int:
        """Replicas to create (> 0) or delete (< 0) now, given pending ops: over-replication is reduced
        by pending deletes only; under-replication by pending adds too, never below zero."""
        delta = self.missing_replicas()
        if delta < 0:
            return delta + self.in_flight_del
        return max(0, delta - self.in_flight_add + self.in_flight_del)

    def is_healthy_enough_for_offline(self) -> bool:
        """For decommission/maintenance: the container is CLOSED or QUASI_CLOSED and every in-service,
        non-UNHEALTHY replica matches it (replica count is checked separately)."""
        in_service = [
            r for r in self.replicas if self._op_state[r.datanode] is NodeOperationalState.IN_SERVICE
        ]
        if not in_service or self.container.state not in (LifeCycleState.CLOSED, LifeCycleState.QUASI_CLOSED):
            return False
        return all(
            compare_state(self.container.state, r.state)
            for r in in_service
            if r.state is not ReplicaState.UNHEALTHY
        )

    def vulnerable_unhealthy_replicas(self, node_status: NodeStatusFn) -> list[ContainerReplica]:
        """UNHEALTHY copies of a QUASI_CLOSED container that may hold the only copy of their origin's
        data (VulnerableUnhealthyReplicasHandler): non-empty, at the container's BCSID, on a heartbeating
        node, and no replica of the same origin (itself included) at that BCSID on an in-service heartbeating
        node; in practice, the last copies of an origin on nodes leaving service."""
        container = self.container
        if container.state is not LifeCycleState.QUASI_CLOSED:
            return []
        if all(r.state is ReplicaState.UNHEALTHY for r in self.replicas):
            return []

        def on_healthy_node(r: ContainerReplica) -> bool:
            status = node_status(r.datanode)
            return status is not None and status.is_healthy()

        live = [r for r in self.replicas if on_healthy_node(r)]
        candidates = [
            r
            for r in live
            if r.state is ReplicaState.UNHEALTHY and not r.is_empty and r.sequence_id == container.sequence_id
        ]
        safe_origins = {
            r.origin_node_id
            for r in live
            if self._op_state[r.datanode] is NodeOperationalState.IN_SERVICE
            and r.sequence_id == container.sequence_id
        }
        return [r for r in candidates if r.origin_node_id not in safe_origins]

    def to_under_health_result(self) -> UnderReplicatedHealthResult:
        return UnderReplicatedHealthResult(
            self.container,
            self.remaining_redundancy(),
            self.insufficient_due_to_out_of_service(),
            self.is_sufficiently_replicated(True),
            self.is_unrecoverable(),
            has_healthy_replicas=self.healthy_count > 0,
        )

    def to_over_health_result(self) -> OverReplicatedHealthResult:
        return OverReplicatedHealthResult(
            self.container,
            self.excess_redundancy(False),
            not self.is_over_replicated(True),
            has_mismatched_replicas=self.mismatched_count > 0,
            is_safely_over_replicated=self.is_safely_over_replicated(),
        )
