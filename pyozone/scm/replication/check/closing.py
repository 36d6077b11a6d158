"""(2) ClosingContainerHandler, as Ozone's: drive CLOSING containers to a closed state.

Close commands are resent on every pass because a datanode may have missed one. Ratis replicas are
closed through Ratis (force=false) so all members agree on the last committed write; EC replicas have no
Ratis group and are force closed. A container whose replicas are all UNHEALTHY can never close normally,
so SCM moves it on itself (QUASI_CLOSE for Ratis, so the unhealthy copies can still be replicated; CLOSE
for EC). A container allocated but never created on any datanode has no replicas to close: after
5 x thread.interval (time for late reports) it is closed if it holds no keys.

Without replicas Ozone reports MISSING, but one never created on a datanode (no replica ever reported, no
keys, sequence id 0) held no data to lose: pyozone reports it EMPTY, as Ozone does once it is closed
(EmptyContainerHandler branch C), so a burst of failed allocations is not a false alarm (docs/differences.md).
Keys and sequence id alone cannot tell: SCM learns them from full reports (hdds.container.report.interval,
60 minutes), so a container whose every replica was lost before one is still MISSING.
"""

from __future__ import annotations

from pyozone.hdds.container import ContainerInfo
from pyozone.hdds.container_health import ContainerHealthState
from pyozone.hdds.states import LifeCycleEvent, LifeCycleState, ReplicaState, ReplicationType
from pyozone.scm.replication.check.request import CheckServices, ContainerCheckRequest

EMPTY_CLOSE_WAIT_INTERVALS = 5


class ClosingContainerHandler:
    def handle(self, request: ContainerCheckRequest, services: CheckServices) -> bool:
        container = request.container
        if container.state is not LifeCycleState.CLOSING:
            return False
        replicas = request.replicas
        if not replicas:
            empty = never_written(container)
            request.record(ContainerHealthState.EMPTY if empty else ContainerHealthState.MISSING)
        if request.read_only:
            return True

        is_ratis = container.replication_config.type is ReplicationType.RATIS
        all_unhealthy = True
        for replica in replicas:
            if replica.state is not ReplicaState.UNHEALTHY:
                all_unhealthy = False
                services.send_close(container, replica, not is_ratis)
        if replicas and all_unhealthy:
            event = LifeCycleEvent.QUASI_CLOSE if is_ratis else LifeCycleEvent.CLOSE
            services.update_container_state(container.container_id, event)

        if not replicas and container.number_of_keys == 0:
            wait_ms = EMPTY_CLOSE_WAIT_INTERVALS * services.config.thread_interval_ms
            if services.clock.wall_ms() > container.state_entered_ms + wait_ms:
                services.update_container_state(container.container_id, LifeCycleEvent.CLOSE)
        return True


def never_written(container: ContainerInfo) -> bool:
    """No datanode ever reported a replica, a key or a committed block (sequence id) of this container."""
    return not container.replicas_reported and container.number_of_keys == 0 and container.sequence_id == 0
