"""(8) ECReplicationCheckHandler, as Ozone's: under- and over-replication of EC containers.

Report names are HEAD's single combination states (ContainerHealthState). An unrecoverable container (fewer
than `data` indexes with a good copy) cannot be reconstructed, so it is queued only to copy indexes whose
good copy sits on a node leaving service, as otherwise decommission would wait for ever and the copy
could be lost too.
"""

from __future__ import annotations

from pyozone.hdds.container_health import ContainerHealthState
from pyozone.hdds.states import ReplicationType
from pyozone.scm.replication.check.request import CheckServices, ContainerCheckRequest
from pyozone.scm.replication.ec_count import ECContainerReplicaCount
from pyozone.scm.replication.health_check import ec_check_health
from pyozone.scm.replication.results import OverReplicatedHealthResult, UnderReplicatedHealthResult

S = ContainerHealthState


def under_replicated_state(result: UnderReplicatedHealthResult) -> ContainerHealthState:
    """The report state of an EC under-replicated result."""
    if not result.unrecoverable:
        return S.UNDER_REPLICATED
    if result.has_unreplicated_offline_indexes:
        return S.MISSING_UNDER_REPLICATED if result.is_missing else S.UNHEALTHY_UNDER_REPLICATED
    return S.MISSING if result.is_missing else S.UNHEALTHY


class ECReplicationCheckHandler:
    def handle(self, request: ContainerCheckRequest, services: CheckServices) -> bool:
        container = request.container
        if container.replication_config.type is not ReplicationType.EC:
            return False
        count = ECContainerReplicaCount(
            container,
            request.replicas,
            request.pending_ops,
            request.maintenance_redundancy,
            services.node_status,
        )
        health = ec_check_health(count)
        if isinstance(health, UnderReplicatedHealthResult):
            request.record(under_replicated_state(health))
            offline_pending = (
                health.has_unreplicated_offline_indexes and not health.offline_indexes_ok_after_pending
            )
            if not health.replicated_ok_after_pending and (not health.unrecoverable or offline_pending):
                request.enqueue_under(health)
            return True
        if isinstance(health, OverReplicatedHealthResult):
            request.record(S.OVER_REPLICATED)
            if not health.replicated_ok_after_pending:
                request.enqueue_over(health)
            return True
        return False
