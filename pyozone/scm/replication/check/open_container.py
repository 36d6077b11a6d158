"""(1) OpenContainerHandler, as Ozone's: OPEN containers end the chain here, healthy or not.

An open container is still being written, so replication decisions would be premature; the only repair
is to close it when its pipeline is gone or a replica has left the OPEN state (a write failed there).
"""

from __future__ import annotations

from pyozone.hdds.container_health import ContainerHealthState
from pyozone.hdds.states import LifeCycleState, ReplicaState
from pyozone.scm.replication.check.request import CheckServices, ContainerCheckRequest


class OpenContainerHandler:
    def handle(self, request: ContainerCheckRequest, services: CheckServices) -> bool:
        container = request.container
        if container.state is not LifeCycleState.OPEN:
            return False
        if not services.pipeline_exists(container.pipeline_id):
            # Without a pipeline nothing can be written anyway; this is the more specific finding.
            request.record(ContainerHealthState.OPEN_WITHOUT_PIPELINE)
        elif any(r.state is not ReplicaState.OPEN for r in request.replicas):
            request.record(ContainerHealthState.OPEN_UNHEALTHY)
        else:
            return True
        if not request.read_only:
            services.fire_close_container(container.container_id)
        return True
