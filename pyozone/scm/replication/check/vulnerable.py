"""(13) VulnerableUnhealthyReplicasHandler, as Ozone's: UNHEALTHY replicas of a QUASI_CLOSED Ratis
container that may hold the only copy of their origin's latest data (the container's BCSID), typically
on a node leaving service. Such a copy must be replicated before the node goes, so the container is
reported UNHEALTHY_UNDER_REPLICATED and queued with the "vulnerable" flag, which tells the
under-replication handler to copy exactly those replicas.
"""

from __future__ import annotations

from dataclasses import replace

from pyozone.hdds.container_health import ContainerHealthState
from pyozone.hdds.states import LifeCycleState, ReplicationType
from pyozone.scm.replication.check.request import CheckServices, ContainerCheckRequest
from pyozone.scm.replication.ratis_count import RatisContainerReplicaCount


class VulnerableUnhealthyReplicasHandler:
    def handle(self, request: ContainerCheckRequest, services: CheckServices) -> bool:
        container = request.container
        if (
            container.replication_config.type is not ReplicationType.RATIS
            or container.state is not LifeCycleState.QUASI_CLOSED
        ):
            return False
        count = RatisContainerReplicaCount(
            container,
            request.replicas,
            request.pending_ops,
            request.maintenance_redundancy,
            True,
            services.node_status,
        )
        if not count.vulnerable_unhealthy_replicas(services.node_status):
            return False
        request.record(ContainerHealthState.UNHEALTHY_UNDER_REPLICATED)
        request.enqueue_under(replace(count.to_under_health_result(), has_vulnerable_unhealthy=True))
        return True
