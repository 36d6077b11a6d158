"""ContainerBalancerSelectionCriteria: which containers on a source an iteration may move.

A candidate is CLOSED with its replica on the source CLOSED (RATIS and EC alike), HEALTHY at the
Replication Manager's last check (not under-, over- or mis-replicated, not unhealthy), with no pending
replica op (the RM is not repairing it) and no move under way, not in exclude.containers nor failed
earlier this iteration, and small enough for what may still leave the source and for
size.moved.max.per.iteration. The largest are tried first.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from pyozone.hdds.container_health import ContainerHealthState
from pyozone.hdds.ids import ContainerID, DatanodeID
from pyozone.hdds.states import LifeCycleState, ReplicaState

if TYPE_CHECKING:
    from pyozone.scm.container.manager import ContainerManager
    from pyozone.scm.node.node_manager import NodeManager
    from pyozone.scm.replication.manager import ReplicationManager

HEALTHY = ContainerHealthState.HEALTHY


class ContainerBalancerSelectionCriteria:
    def __init__(
        self,
        nodes: NodeManager,
        containers: ContainerManager,
        replication: ReplicationManager,
        is_moving: Callable[[ContainerID], bool],
        can_size_leave: Callable[[DatanodeID, int], bool],
        exclude_containers: frozenset[ContainerID],
        max_size_to_move: int,
    ) -> None:
        self._nodes = nodes
        self._containers = containers
        self._rm = replication
        self._is_moving = is_moving
        self._can_size_leave = can_size_leave
        self._max_size_to_move = max_size_to_move
        self.excluded: set[ContainerID] = set(exclude_containers)
        """exclude.containers, the containers selected this iteration, and those whose move failed."""
        self._candidates: dict[DatanodeID, list[ContainerID]] = {}

    def listed(self, source: DatanodeID) -> bool:
        """The source's candidates were listed already this iteration (`candidates` costs no more)."""
        return source in self._candidates

    def candidates(self, source: DatanodeID) -> list[ContainerID]:
        """The source's containers, largest first, listed once per iteration; the caller checks each
        with `should_be_excluded` as it goes and prunes those that are."""
        cached = self._candidates.get(source)
        if cached is None:
            find = self._containers.find
            sized = []
            for cid in self._nodes.containers(source):
                info = find(cid)
                if info is not None:
                    sized.append((info.used_bytes, cid))
            sized.sort(reverse=True)
            cached = self._candidates[source] = [cid for _, cid in sized]
        return cached

    def prune(self, source: DatanodeID, scanned: int, excluded: set[ContainerID]) -> None:
        """Drops the `excluded` among the first `scanned` candidates of the source, in place (the rest
        is not looked at: a visit costs what it scanned, not the source's whole list)."""
        if excluded:
            cached = self._candidates.get(source, [])
            cached[:scanned] = [c for c in cached[:scanned] if c not in excluded]

    def should_be_excluded(self, container_id: ContainerID, source: DatanodeID, size_scheduled: int) -> bool:
        if container_id in self.excluded or self._is_moving(container_id):
            return True
        container = self._containers.find(container_id)
        if container is None or container.state is not LifeCycleState.CLOSED:
            return True
        replica = self._containers.replica(container_id, source)
        if replica is None or replica.state is not ReplicaState.CLOSED:
            return True
        if self._rm.container_health(container_id) is not HEALTHY:
            return True
        if self._rm.pending_ops.ops(container_id):
            return True
        size = container.used_bytes
        return not self._can_size_leave(source, size) or size_scheduled + size > self._max_size_to_move
