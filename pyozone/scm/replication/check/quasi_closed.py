"""(3) QuasiClosedContainerHandler, as Ozone's: force close a QUASI_CLOSED Ratis container once that
cannot lose data, else report it QUASI_CLOSED_STUCK. Never stops the chain, so under- and
over-replication are still checked.

Force closing keeps the replicas with the highest BCSID and makes the rest stale. That is only safe when
every origin's replica has been seen (a write committed on a lost leader may exist nowhere else) and no
UNHEALTHY replica is ahead of the best QUASI_CLOSED one.
"""

from __future__ import annotations

from collections.abc import Collection

from pyozone.hdds.container import ContainerInfo, ContainerReplica
from pyozone.hdds.container_health import ContainerHealthState
from pyozone.hdds.states import LifeCycleState, ReplicaState, ReplicationType
from pyozone.scm.replication.check.request import CheckServices, ContainerCheckRequest

_QC, _UNHEALTHY = ReplicaState.QUASI_CLOSED, ReplicaState.UNHEALTHY


def max_quasi_closed_bcsid(replicas: Collection[ContainerReplica]) -> int:
    """The highest BCSID among QUASI_CLOSED replicas, -1 if there are none."""
    return max((r.sequence_id for r in replicas if r.state is _QC), default=-1)


def can_force_close(container: ContainerInfo, replicas: Collection[ContainerReplica]) -> bool:
    """Some QUASI_CLOSED replica, none UNHEALTHY ahead of it, and replicas of at least `factor`
    distinct origins among the QUASI_CLOSED and UNHEALTHY ones."""
    max_qc = max_quasi_closed_bcsid(replicas)
    if max_qc < 0:
        return False
    max_unhealthy = max((r.sequence_id for r in replicas if r.state is _UNHEALTHY), default=-1)
    origins = {r.origin_node_id for r in replicas if r.state is _QC or r.state is _UNHEALTHY}
    return max_qc >= max_unhealthy and len(origins) >= container.replication_config.required_nodes


def is_quasi_closed_stuck(container: ContainerInfo, replicas: Collection[ContainerReplica]) -> bool:
    return not can_force_close(container, replicas)


class QuasiClosedContainerHandler:
    def handle(self, request: ContainerCheckRequest, services: CheckServices) -> bool:
        container = request.container
        if (
            container.state is not LifeCycleState.QUASI_CLOSED
            or container.replication_config.type is not ReplicationType.RATIS
        ):
            return False
        replicas = request.replicas
        if not can_force_close(container, replicas):
            request.record(ContainerHealthState.QUASI_CLOSED_STUCK)
        elif not request.read_only:
            best = max_quasi_closed_bcsid(replicas)
            for replica in replicas:
                if replica.state is _QC and replica.sequence_id == best:
                    services.send_close(container, replica, True)
        return False
