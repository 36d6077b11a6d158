"""(10) ClosedWithUnhealthyReplicasHandler, as Ozone's: delete UNHEALTHY extra copies of a CLOSED EC
container whose indexes all have a CLOSED copy too.

Reached only when the EC check found the container sufficiently replicated, so an UNHEALTHY copy beside
a CLOSED copy of its index is pure waste: it is force deleted at once (unthrottled) and the container is
not queued. If some UNHEALTHY copy's index has no CLOSED copy, nothing is deleted: that copy may still
be needed.
"""

from __future__ import annotations

from pyozone.hdds.container_health import ContainerHealthState
from pyozone.hdds.states import LifeCycleState, ReplicaState, ReplicationType
from pyozone.scm.replication.check.request import CheckServices, ContainerCheckRequest


class ClosedWithUnhealthyReplicasHandler:
    def handle(self, request: ContainerCheckRequest, services: CheckServices) -> bool:
        container = request.container
        if (
            container.replication_config.type is not ReplicationType.EC
            or container.state is not LifeCycleState.CLOSED
        ):
            return False
        closed_indexes = {r.replica_index for r in request.replicas if r.state is ReplicaState.CLOSED}
        unhealthy = [r for r in request.replicas if r.state is ReplicaState.UNHEALTHY]
        if not unhealthy or any(r.replica_index not in closed_indexes for r in unhealthy):
            return False
        request.record(ContainerHealthState.UNHEALTHY_OVER_REPLICATED)
        if not request.read_only:
            for replica in unhealthy:
                services.send_delete(container, replica, True)
        return True
