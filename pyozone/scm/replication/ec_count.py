"""ECContainerReplicaCount: replica indexes of an EC container, online, offline and unhealthy.

Every index 1..data+parity needs one good copy. UNHEALTHY copies never count as good, whatever node
they are on. Decommissioning copies are on their way out; maintenance copies come back, so up to
parity - remaining_maintenance_redundancy indexes may live on maintenance nodes only. Pending deletes
are assumed to succeed and pending adds to fail, unless a caller asks to count them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from pyozone.hdds.container import ContainerInfo, ContainerReplica
from pyozone.hdds.states import ReplicaState
from pyozone.scm.replication.pending_ops import PendingOp, PendingOpType
from pyozone.scm.replication.replica_match import NodeStatusFn, persisted_op_state


class ECContainerReplicaCount:
    def __init__(
        self,
        container: ContainerInfo,
        replicas: Iterable[ContainerReplica],
        pending_ops: Iterable[PendingOp],
        remaining_maintenance_redundancy: int,
        node_status: NodeStatusFn,
    ) -> None:
        config = container.replication_config
        self.container = container
        self.replicas = list(replicas)
        self.data = config.ec_data
        self.parity = config.ec_parity
        self.required = config.required_nodes
        self.remaining_maintenance_redundancy = min(self.parity, remaining_maintenance_redundancy)

        self._healthy: Counter[int] = Counter()
        self._decommission: Counter[int] = Counter()
        self._maintenance: Counter[int] = Counter()
        self._unhealthy: Counter[int] = Counter()
        for replica in self.replicas:
            index = self._check_index(replica.replica_index, "replicas")
            op_state = persisted_op_state(node_status, replica.datanode)
            if replica.state is ReplicaState.UNHEALTHY:
                self._unhealthy[index] += 1
            elif op_state.is_decommission:
                self._decommission[index] += 1
            elif op_state.is_maintenance:
                self._maintenance[index] += 1
            else:
                self._healthy[index] += 1

        unhealthy_dns = {r.datanode for r in self.replicas if r.state is ReplicaState.UNHEALTHY}
        self.pending_add: list[int] = []
        self.pending_delete: list[int] = []
        for op in pending_ops:
            index = self._check_index(op.replica_index, "pending ops")
            if op.type is PendingOpType.ADD:
                self.pending_add.append(index)
            elif op.target_dn not in unhealthy_dns:
                self.pending_delete.append(index)
        # A pending delete will succeed: take it off the healthy count now.
        for index in self.pending_delete:
            if self._healthy[index] > 0:
                self._healthy[index] -= 1
        self._healthy = +self._healthy  # drop indexes that reached zero

    def _check_index(self, index: int, where: str) -> int:
        if not 1 <= index <= self.required:
            raise ValueError(
                f"replica index in {where} for container {self.container.container_id} must be between 1 "
                f"and {self.required}, but is {index}"
            )
        return index

    @property
    def healthy_indexes(self) -> dict[int, int]:
        """Index -> good in-service copies, pending deletes already taken off."""
        return dict(self._healthy)

    @property
    def decommission_indexes(self) -> set[int]:
        return set(self._decommission)

    @property
    def maintenance_indexes(self) -> set[int]:
        return set(self._maintenance)

    @property
    def unhealthy_indexes(self) -> set[int]:
        return set(self._unhealthy)

    @property
    def decommission_count(self) -> int:
        return len(self._decommission)

    @property
    def maintenance_count(self) -> int:
        return len(self._maintenance)

    def _online(self, include_pending_add: bool) -> set[int]:
        online = set(self._healthy)
        if include_pending_add:
            online.update(self.pending_add)
        return online

    def is_sufficiently_replicated(self, include_pending_add: bool = False) -> bool:
        """Every index online; or every index online or in maintenance with at least
        data + remaining_maintenance_redundancy indexes online."""
        online = self._online(include_pending_add)
        if len(online) == self.required:
            return True
        with_maintenance = online | set(self._maintenance)
        return (
            len(with_maintenance) == self.required
            and len(online) >= self.data + self.remaining_maintenance_redundancy
        )

    def unavailable_indexes(self, include_pending_add: bool = False) -> list[int]:
        """Indexes with no copy anywhere usable (not online, not offline): these need reconstruction.
        Empty when the container is sufficiently replicated."""
        if self.is_sufficiently_replicated(False):
            return []
        missing = set(range(1, self.required + 1)) - set(self._healthy)
        if include_pending_add:
            missing -= set(self.pending_add)
        return sorted(missing - set(self._maintenance) - set(self._decommission))

    def _offline_only(self, offline: Counter[int], include_pending_add: bool) -> set[int]:
        only = set(offline) - set(self._healthy)
        if include_pending_add:
            only -= set(self.pending_add)
        return only

    def decommissioning_only_indexes(self, include_pending_add: bool = False) -> set[int]:
        """Indexes whose only good copies are on decommissioning nodes: copy them off."""
        return self._offline_only(self._decommission, include_pending_add)

    def maintenance_only_indexes(self, include_pending_add: bool = False) -> set[int]:
        return self._offline_only(self._maintenance, include_pending_add)

    def additional_maintenance_copies_needed(self, include_pending_add: bool = False) -> int:
        """Maintenance-only indexes beyond the parity - remaining_maintenance_redundancy allowed."""
        allowed = max(0, self.parity - self.remaining_maintenance_redundancy)
        return max(0, len(self.maintenance_only_indexes(include_pending_add)) - allowed)

    def is_unrecoverable(self) -> bool:
        """Fewer than `data` indexes have a good copy anywhere: the data cannot be reconstructed."""
        return len(set(self._healthy) | set(self._decommission) | set(self._maintenance)) < self.data

    def is_missing(self) -> bool:
        """Fewer than `data` indexes have any copy, even an UNHEALTHY one (unlike unrecoverable,
        as ECContainerReplicaCount.isMissing)."""
        indexes = set(self._healthy) | set(self._decommission) | set(self._maintenance) | set(self._unhealthy)
        return len(indexes) < self.data

    def _healthy_with_delete(self, include_pending_delete: bool) -> Counter[int]:
        if include_pending_delete:
            return self._healthy
        # Ozone adds every recorded pending delete back, whether or not it had been taken off.
        return self._healthy + Counter(self.pending_delete)

    def over_replicated_indexes(self, include_pending_delete: bool = False) -> list[int]:
        """Indexes with more than one good in-service copy; offline copies never count."""
        return sorted(i for i, n in self._healthy_with_delete(include_pending_delete).items() if n > 1)

    def is_over_replicated(self, include_pending_delete: bool = False) -> bool:
        return bool(self.over_replicated_indexes(include_pending_delete))
