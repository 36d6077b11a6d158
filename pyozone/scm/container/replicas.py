"""The replica map: container id -> datanode -> ContainerReplica, with listeners for replica changes.

Listeners let the Replication Manager's pending-op tracker learn that an ADD or DELETE completed
(AbstractContainerReportHandler: storing a replica completes a pending ADD, removing one a pending DELETE).
"""

from __future__ import annotations

from typing import Protocol

from pyozone.hdds.container import ContainerReplica
from pyozone.hdds.ids import ContainerID, DatanodeID


class ReplicaListener(Protocol):
    def replica_updated(self, replica: ContainerReplica) -> None: ...

    def replica_removed(self, replica: ContainerReplica) -> None: ...


class ContainerReplicaMap:
    def __init__(self) -> None:
        self._replicas: dict[ContainerID, dict[DatanodeID, ContainerReplica]] = {}
        self._by_datanode: dict[DatanodeID, set[ContainerID]] = {}
        self._listeners: list[ReplicaListener] = []

    def add_listener(self, listener: ReplicaListener) -> None:
        self._listeners.append(listener)

    def replicas(self, container_id: ContainerID) -> tuple[ContainerReplica, ...]:
        return tuple(self._replicas.get(container_id, {}).values())

    def replica(self, container_id: ContainerID, dn: DatanodeID) -> ContainerReplica | None:
        return self._replicas.get(container_id, {}).get(dn)

    def containers_on(self, dn: DatanodeID) -> frozenset[ContainerID]:
        """The containers with a replica on `dn`, as this map has them (a full report reconciles them)."""
        return frozenset(self._by_datanode.get(dn, ()))

    def update(self, replica: ContainerReplica) -> None:
        self._replicas.setdefault(replica.container_id, {})[replica.datanode] = replica
        self._by_datanode.setdefault(replica.datanode, set()).add(replica.container_id)
        for listener in self._listeners:
            listener.replica_updated(replica)

    def remove(self, container_id: ContainerID, dn: DatanodeID) -> ContainerReplica | None:
        by_dn = self._replicas.get(container_id)
        replica = by_dn.pop(dn, None) if by_dn else None
        if replica is None:
            return None
        if not by_dn:
            del self._replicas[container_id]
        on_dn = self._by_datanode[dn]
        on_dn.discard(container_id)
        if not on_dn:
            del self._by_datanode[dn]
        for listener in self._listeners:
            listener.replica_removed(replica)
        return replica
