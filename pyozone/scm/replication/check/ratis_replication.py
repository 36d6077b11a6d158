"""(9) RatisReplicationCheckHandler, as Ozone's: under-, over- and mis-replication of Ratis
containers, from ratis_check_health.

Steps aside (returns false) for quasi-closed stuck containers (check (7) owns them), for healthy or
merely UNHEALTHY results, and for recoverable containers with no healthy replica (check (12) reports
those). Zero replicas is MISSING: nothing to copy from, so nothing is queued. An over-replicated
container is queued only when deleting cannot hit the wrong copies: no replica still to be closed
(mismatched) and at least `factor` replicas matching the container.
"""

from __future__ import annotations

from collections.abc import Sequence

from pyozone.hdds.container_health import ContainerHealthState
from pyozone.hdds.ids import DatanodeID
from pyozone.hdds.states import ReplicationType
from pyozone.scm.replication.check.quasi_closed_stuck import should_handle_as_quasi_closed_stuck
from pyozone.scm.replication.check.request import CheckServices, ContainerCheckRequest
from pyozone.scm.replication.health_check import ratis_check_health
from pyozone.scm.replication.placement import ContainerPlacementStatus
from pyozone.scm.replication.results import OverReplicatedHealthResult, UnderReplicatedHealthResult

S = ContainerHealthState


class RatisReplicationCheckHandler:
    def handle(self, request: ContainerCheckRequest, services: CheckServices) -> bool:
        container = request.container
        if container.replication_config.type is not ReplicationType.RATIS:
            return False
        if should_handle_as_quasi_closed_stuck(container, request.replicas):
            return False

        def placement(dns: Sequence[DatanodeID], _expected: int) -> ContainerPlacementStatus:
            return services.placement_status(container, dns)

        health = ratis_check_health(
            container,
            request.replicas,
            request.pending_ops,
            request.maintenance_redundancy,
            services.node_status,
            placement,
        )
        if isinstance(health, UnderReplicatedHealthResult):
            if health.is_mis_replicated:
                request.record(S.MIS_REPLICATED)
            elif health.unrecoverable:
                request.record(S.MISSING)
                return True
            elif not health.has_healthy_replicas:
                return False
            else:
                request.record(S.UNDER_REPLICATED)
            # Mis-replication is repaired by copying too, so it shares the under-replicated queue.
            if not health.replicated_ok_after_pending:
                request.enqueue_under(health)
            return True
        if isinstance(health, OverReplicatedHealthResult):
            request.record(S.OVER_REPLICATED)
            if (
                not health.replicated_ok_after_pending
                and not health.has_mismatched_replicas
                and health.is_safely_over_replicated
            ):
                request.enqueue_over(health)
            return True
        return False  # HEALTHY, or UNHEALTHY (left to checks (12) and (13))
