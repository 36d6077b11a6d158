"""Whether a container has exactly its full set of healthy replicas.

Block deletion (spec 8.2) only sends a transaction for a container the Replication Manager finds
HEALTHY. Until the Replication Manager exists, this is the test: as many replicas as the replication
config needs (one per index for EC), each in the container's own state, on IN_SERVICE healthy nodes.
Anything under-, over- or unhealthily replicated waits.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from pyozone.hdds.ids import DatanodeID
from pyozone.hdds.states import ReplicationType
from pyozone.scm.container.info import ContainerInfo, ContainerReplica
from pyozone.scm.node.status import NodeStatus


def fully_replicated(
    container: ContainerInfo,
    replicas: Iterable[ContainerReplica],
    node_status: Callable[[DatanodeID], NodeStatus | None],
) -> bool:
    replicas = list(replicas)
    config = container.replication_config
    if len(replicas) != config.required_nodes:
        return False
    if config.type is ReplicationType.EC:
        expected = set(range(1, config.required_nodes + 1))
        if {r.replica_index for r in replicas} != expected:
            return False
    for replica in replicas:
        status = node_status(replica.datanode)
        if replica.state.name != container.state.name or status is None:
            return False
        if not (status.is_healthy() and status.is_in_service()):
            return False
    return True
