"""How one replica compares with its container: the single definition the counters and handlers share."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from pyozone.hdds.container import ContainerInfo, ContainerReplica
from pyozone.hdds.ids import DatanodeID
from pyozone.hdds.node_status import NodeStatus
from pyozone.hdds.states import LifeCycleState, NodeOperationalState, ReplicaState, ReplicationType

NodeStatusFn = Callable[[DatanodeID], NodeStatus | None]
"""SCM's view of a datanode; None when SCM does not know it."""

_MATCHING = {
    LifeCycleState.OPEN: ReplicaState.OPEN,
    LifeCycleState.CLOSING: ReplicaState.CLOSING,
    LifeCycleState.QUASI_CLOSED: ReplicaState.QUASI_CLOSED,
    LifeCycleState.CLOSED: ReplicaState.CLOSED,
}


def compare_state(container_state: LifeCycleState, replica_state: ReplicaState) -> bool:
    """Ozone's ReplicationManager.compareState: a replica matches a container in the same state;
    nothing matches a DELETING, DELETED or RECOVERING container."""
    return _MATCHING.get(container_state) is replica_state


def is_unhealthy(container: ContainerInfo, replica: ContainerReplica) -> bool:
    """UNHEALTHY, or QUASI_CLOSED with a BCSID other than a CLOSED container's: such a replica lacks
    (or has different) committed data, so it never counts toward sufficient replication
    (RatisContainerReplicaCount)."""
    return replica.state is ReplicaState.UNHEALTHY or (
        replica.state is ReplicaState.QUASI_CLOSED
        and container.state is LifeCycleState.CLOSED
        and replica.sequence_id != container.sequence_id
    )


def persisted_op_state(node_status: NodeStatusFn, dn: DatanodeID) -> NodeOperationalState:
    """The operational state counting uses (Ozone: DatanodeDetails.getPersistedOpState).

    A datanode SCM does not know counts as IN_SERVICE: Ozone reads the op state stored on the replica's
    DatanodeDetails, whose default is IN_SERVICE, and never fails the count for a lookup miss.
    """
    status = node_status(dn)
    return NodeOperationalState.IN_SERVICE if status is None else status.operational_state


def is_in_service_healthy(node_status: NodeStatusFn, dn: DatanodeID) -> bool:
    """IN_SERVICE and heartbeating (HEALTHY or HEALTHY_READONLY); unknown nodes are not."""
    status = node_status(dn)
    return status is not None and status.is_healthy() and status.is_in_service()


def copies_a_delete_may_rely_on(
    container: ContainerInfo, replicas: Iterable[ContainerReplica], node_status: NodeStatusFn
) -> list[ContainerReplica]:
    """The copies that count when a good copy is to be deleted as a spare (the over-replication handlers,
    and the balancer's source delete): Ratis, those on heartbeating nodes; EC, those on IN_SERVICE
    heartbeating nodes. A copy on a STALE node does not count: deleting a good copy because a STALE one
    looks like a spare could lose both when the stale node dies."""
    if container.replication_config.type is ReplicationType.EC:
        return [r for r in replicas if is_in_service_healthy(node_status, r.datanode)]
    live = []
    for replica in replicas:
        status = node_status(replica.datanode)
        if status is not None and status.is_healthy():
            live.append(replica)
    return live
