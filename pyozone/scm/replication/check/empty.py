"""(5) EmptyContainerHandler, as Ozone's: delete containers whose blocks have all been deleted.

A: CLOSED, every replica CLOSED and empty -> move the container to DELETING, then delete the replicas.
   For Ratis the container stays CLOSED unless some replica has the container's BCSID: replicas that
   are all behind it may be stale copies, and the container is not given up on their word alone.
B: QUASI_CLOSED, every replica empty (any state) -> raise the container BCSID to the highest replica's
   (so a resurrected replica is recognised as old), move to DELETING, delete the replicas that can be
   deleted now (QUASI_CLOSED/CLOSED); the DELETING handler retries the others on later passes.
C: CLOSED with no keys and no replicas (allocated, never written) -> only reported EMPTY, so it is not
   reported MISSING further down the chain; there is nothing to delete.
The usual delete limit does not apply: empty replicas cost the datanode next to nothing.
The state change is staged before the DeleteContainer commands are queued, so that in an HA service the
command barrier (scm/node/commands.py) holds them until the DELETING record commits (review R17 D2).
"""

from __future__ import annotations

from pyozone.hdds.container_health import ContainerHealthState
from pyozone.hdds.states import LifeCycleEvent, LifeCycleState, ReplicaState, ReplicationType
from pyozone.scm.replication.check.request import CheckServices, ContainerCheckRequest

_DELETABLE = (ReplicaState.CLOSED, ReplicaState.QUASI_CLOSED)


class EmptyContainerHandler:
    def handle(self, request: ContainerCheckRequest, services: CheckServices) -> bool:
        container = request.container
        replicas = request.replicas
        if container.state is LifeCycleState.CLOSED:
            if not replicas:
                if container.number_of_keys != 0:
                    return False
                request.record(ContainerHealthState.EMPTY)  # branch C
                return True
            if not all(r.state is ReplicaState.CLOSED and r.is_empty for r in replicas):
                return False
            request.record(ContainerHealthState.EMPTY)  # branch A
            if request.read_only:
                return True
            if container.replication_config.type is not ReplicationType.RATIS or any(
                r.sequence_id == container.sequence_id for r in replicas
            ):
                services.update_container_state(container.container_id, LifeCycleEvent.DELETE)
            self._delete_replicas(request, services)
            return True

        if container.state is LifeCycleState.QUASI_CLOSED and replicas and all(r.is_empty for r in replicas):
            request.record(ContainerHealthState.EMPTY)  # branch B
            if request.read_only:
                return True
            highest = max(r.sequence_id for r in replicas)
            if highest > container.sequence_id:
                services.update_sequence_id(container.container_id, highest)
            services.update_container_state(container.container_id, LifeCycleEvent.DELETE)
            self._delete_replicas(request, services)
            return True
        return False

    @staticmethod
    def _delete_replicas(request: ContainerCheckRequest, services: CheckServices) -> None:
        for replica in request.replicas:
            if replica.state in _DELETABLE:
                services.send_delete(request.container, replica, False)
