"""Whether a container can spare a copy on a datanode leaving service, as the admin monitor asks."""

from __future__ import annotations

from pyozone.hdds.container import ContainerInfo, ContainerReplica
from pyozone.hdds.states import LifeCycleState, ReplicationType
from pyozone.hdds.states import NodeOperationalState as Op
from pyozone.scm.replication.ratis_count import RatisContainerReplicaCount
from pyozone.scm.replication.replica_match import NodeStatusFn, compare_state, persisted_op_state


def healthy_enough_for_offline(
    container: ContainerInfo, replicas: tuple[ContainerReplica, ...], node_status: NodeStatusFn
) -> bool:
    """DatanodeAdminMonitorImpl.isHealthyEnoughForOffline: a container may lose this node's copy only once it
    is CLOSED or QUASI_CLOSED and its in-service copies agree with it. Ratis ignores UNHEALTHY copies here
    (replication repairs them); for EC every in-service copy must match, UNHEALTHY ones included, as Ozone's
    EC count demands."""
    if container.replication_config.type is not ReplicationType.EC:
        count = RatisContainerReplicaCount(container, replicas, (), 0, False, node_status)
        return count.is_healthy_enough_for_offline()
    in_service = [r for r in replicas if persisted_op_state(node_status, r.datanode) is Op.IN_SERVICE]
    if not in_service or container.state not in (LifeCycleState.CLOSED, LifeCycleState.QUASI_CLOSED):
        return False
    return all(compare_state(container.state, r.state) for r in in_service)
