"""(6) DeletingContainerHandler, as Ozone's: finish deleting DELETING containers; DELETED ones need
nothing. Both end the chain: a container on its way out is never repaired.

With no replica left the container becomes DELETED (CLEANUP). Otherwise the delete is resent to each
empty replica without a pending DELETE (a datanode may have lost the command). A non-empty replica of a
DELETING container is not deleted: it may hold data SCM does not know about.
"""

from __future__ import annotations

from pyozone.hdds.states import LifeCycleEvent, LifeCycleState
from pyozone.scm.replication.check.request import CheckServices, ContainerCheckRequest
from pyozone.scm.replication.pending_ops import PendingOpType


class DeletingContainerHandler:
    def handle(self, request: ContainerCheckRequest, services: CheckServices) -> bool:
        container = request.container
        if container.state is LifeCycleState.DELETED:
            return True
        if container.state is not LifeCycleState.DELETING:
            return False
        if request.read_only:
            return True
        if not request.replicas:
            services.update_container_state(container.container_id, LifeCycleEvent.CLEANUP)
            return True
        pending_delete = {op.target_dn for op in request.pending_ops if op.type is PendingOpType.DELETE}
        for replica in request.replicas:
            if replica.is_empty and replica.datanode not in pending_delete:
                services.send_delete(container, replica, False)
        return True
