"""(4) MismatchedReplicasHandler, as Ozone's: close replicas left behind by a CLOSED or QUASI_CLOSED
container. Only sends commands, so it is skipped in read-only mode, and never stops the chain.

OPEN or CLOSING replicas get a close: Ratis ones without force (the datanode then quasi-closes them if
the Ratis group cannot close them), EC ones with force. A QUASI_CLOSED replica of a CLOSED container
that has the container's BCSID holds exactly the closed data, so it is force closed; one with another
BCSID is stale (it counts as unhealthy) and is left for over-replication handling. UNHEALTHY replicas
cannot be closed.
"""

from __future__ import annotations

from pyozone.hdds.states import LifeCycleState, ReplicaState, ReplicationType
from pyozone.scm.replication.check.request import CheckServices, ContainerCheckRequest

_OPENISH = (ReplicaState.OPEN, ReplicaState.CLOSING)


class MismatchedReplicasHandler:
    def handle(self, request: ContainerCheckRequest, services: CheckServices) -> bool:
        container = request.container
        state = container.state
        if request.read_only or (
            state is not LifeCycleState.CLOSED and state is not LifeCycleState.QUASI_CLOSED
        ):
            return False
        force_open = container.replication_config.type is ReplicationType.EC
        for replica in request.replicas:
            if replica.state in _OPENISH:
                services.send_close(container, replica, force_open)
            elif (
                state is LifeCycleState.CLOSED
                and replica.state is ReplicaState.QUASI_CLOSED
                and replica.sequence_id == container.sequence_id
            ):
                services.send_close(container, replica, True)
        return False
