"""(7) QuasiClosedStuckReplicationCheck, as Ozone's: replication of QUASI_CLOSED containers that
cannot be force closed.

Such a container's origins may each hold data no other origin has, so counting replicas is wrong: keep
enough copies of every origin instead (QuasiClosedStuckReplicaCount). This check owns the container's
under/over-replication (the Ratis check (9) steps aside, and the processing stage routes the queued
result to the stuck handlers) unless a single origin holds everything (ordinary Ratis counting works)
or enough origins are still QUASI_CLOSED/OPEN that the container should close soon.
"""

from __future__ import annotations

from collections.abc import Collection

from pyozone.hdds.container import ContainerInfo, ContainerReplica
from pyozone.hdds.container_health import ContainerHealthState
from pyozone.hdds.states import LifeCycleState, ReplicaState, ReplicationType
from pyozone.scm.replication.check.quasi_closed import is_quasi_closed_stuck
from pyozone.scm.replication.check.request import CheckServices, ContainerCheckRequest
from pyozone.scm.replication.pending_ops import PendingOpType
from pyozone.scm.replication.qc_stuck_count import QuasiClosedStuckReplicaCount
from pyozone.scm.replication.results import OverReplicatedHealthResult, UnderReplicatedHealthResult

_CLOSABLE = (ReplicaState.QUASI_CLOSED, ReplicaState.OPEN)


def should_handle_as_quasi_closed_stuck(
    container: ContainerInfo, replicas: Collection[ContainerReplica]
) -> bool:
    """Ozone's shouldHandleAsQuasiClosedStuck; no replicas at all counts (0 origins)."""
    if container.state is not LifeCycleState.QUASI_CLOSED or not is_quasi_closed_stuck(container, replicas):
        return False
    if len({r.origin_node_id for r in replicas}) == 1:
        return False
    closable_origins = {r.origin_node_id for r in replicas if r.state in _CLOSABLE}
    return len(closable_origins) < container.replication_config.required_nodes


class QuasiClosedStuckReplicationCheck:
    def handle(self, request: ContainerCheckRequest, services: CheckServices) -> bool:
        container = request.container
        if container.replication_config.type is not ReplicationType.RATIS or not (
            should_handle_as_quasi_closed_stuck(container, request.replicas)
        ):
            return False
        if not request.replicas:
            request.record(ContainerHealthState.QUASI_CLOSED_STUCK_MISSING)
            return True

        config = services.config
        count = QuasiClosedStuckReplicaCount(
            request.replicas,
            request.maintenance_redundancy,
            config.quasi_closed_stuck_best_origin_copies,
            config.quasi_closed_stuck_other_origin_copies,
            services.node_status,
        )
        if not count.has_healthy_replicas:
            return False  # only UNHEALTHY copies: RatisUnhealthyReplicationCheckHandler's case
        ops = request.pending_ops
        if count.is_under_replicated():
            request.record(ContainerHealthState.QUASI_CLOSED_STUCK_UNDER_REPLICATED)
            # A pending ADD may be the fix; queue again only once it has completed or expired.
            if not any(op.type is PendingOpType.ADD for op in ops):
                request.enqueue_under(
                    UnderReplicatedHealthResult(container, 1, count.has_out_of_service_replicas, False, False)
                )
            return True
        if count.is_over_replicated():
            request.record(ContainerHealthState.QUASI_CLOSED_STUCK_OVER_REPLICATED)
            if not any(op.type is PendingOpType.DELETE for op in ops):
                request.enqueue_over(OverReplicatedHealthResult(container, 1, False))
            return True
        return False
