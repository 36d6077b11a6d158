"""A balancer run over a snapshot: SCM's own BalancerIteration (scm/balancer/iteration.py) fed a snapshot's
datanodes and movable containers instead of SCM's managers, so `analytics balance` and SCM cannot disagree
on which datanodes are sources and targets, which containers may move, or where each goes.

Every rule stays the balancer's: eligible_usages and the limits, ContainerBalancerSelectionCriteria,
FindSourceGreedy / FindTargetGreedyByUsageInfo, placement through the Replication Manager's
validate_container_placement (rm_rules.SnapshotCheckServices). What this module supplies is state:

- the movable containers, as the Spark stage found them: CLOSED and HEALTHY by the Replication Manager's
  check chain, with no pending op and not in exclude.containers. That is only a narrowing: the criteria
  still look at each one, and the others would be refused by those same criteria;
- moves that succeed: each iteration's moves complete before the next begins (the run as planned, not
  its failures), the source's replica going to the target and the container's bytes with it, as the
  next node reports show SCM.

The run's stop rules are ContainerBalancer's: `iterations` done, no datanode outside the threshold
(iteration.unbalanced), or an iteration that could move nothing (CAN_NOT_BALANCE_ANY_MORE).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, cast

from pyozone.analytics.rm_rules import CheckContext, SnapshotCheckServices
from pyozone.hdds.balancer import IterationResult, IterationStatus
from pyozone.hdds.container import ContainerInfo, ContainerReplica
from pyozone.hdds.container_health import ContainerHealthState
from pyozone.hdds.datanode import DatanodeDetails
from pyozone.hdds.ids import ContainerID, DatanodeID
from pyozone.hdds.node_status import NodeStatus
from pyozone.scm.balancer.balancer import COMPLETED, not_initialized
from pyozone.scm.balancer.config import ContainerBalancerConfiguration
from pyozone.scm.balancer.iteration import BalancerIteration, eligible_usages
from pyozone.scm.balancer.move_manager import MoveDataNodePair, MoveResult
from pyozone.scm.replication.pending_ops import PendingOp

if TYPE_CHECKING:
    from pyozone.scm.balancer.move_manager import MoveManager
    from pyozone.scm.container.manager import ContainerManager
    from pyozone.scm.node.node_manager import NodeManager
    from pyozone.scm.replication.manager import ReplicationManager


@dataclass(frozen=True, slots=True)
class SnapshotDatanode:
    """What the balancer reads of a DatanodeInfo: its names, status and the storage its last report gave."""

    details: DatanodeDetails
    status: NodeStatus
    capacity_bytes: int
    remaining_bytes: int

    @property
    def uuid(self) -> DatanodeID:
        return self.details.uuid

    def capacity(self) -> int:
        return self.capacity_bytes

    def remaining(self) -> int:
        return self.remaining_bytes


class _NoPendingOps:
    """The movable containers have none (the Spark stage left out those with some)."""

    def ops(self, container_id: ContainerID) -> tuple[PendingOp, ...]:
        return ()


class _ReplicationView:
    """The ReplicationManager queries an iteration makes: health (HEALTHY: the check chain ran on Spark),
    pending ops, and placement as the RM validates it."""

    def __init__(self, services: SnapshotCheckServices) -> None:
        self.services = services
        self.pending_ops = _NoPendingOps()

    def container_health(self, container_id: ContainerID) -> ContainerHealthState:
        return ContainerHealthState.HEALTHY


class _PlannedMoves:
    """MoveManager's part in an iteration: every move it is asked for starts (and completes later)."""

    def is_moving(self, container_id: ContainerID) -> bool:
        return False

    def move(self, container_id: ContainerID, source: DatanodeID, target: DatanodeID) -> MoveResult | None:
        return None

    def cancel(self, container_id: ContainerID) -> None:
        return None


class SnapshotCluster:
    """The datanodes and movable containers the balancer sees, as NodeManager and ContainerManager answer
    the iteration; `apply` makes an iteration's moves happen."""

    def __init__(
        self,
        datanodes: Iterable[SnapshotDatanode],
        containers: Iterable[ContainerInfo],
        replicas: Iterable[ContainerReplica],
        check: CheckContext,
    ) -> None:
        self._datanodes = {dn.uuid: dn for dn in datanodes}
        self._containers = {c.container_id: c for c in containers}
        self._replicas: dict[ContainerID, dict[DatanodeID, ContainerReplica]] = {}
        self._held: dict[DatanodeID, set[ContainerID]] = {}
        for replica in replicas:
            self._add(replica)
        self.replication = _ReplicationView(SnapshotCheckServices(check))
        self.moves = _PlannedMoves()

    @property
    def movable_containers(self) -> int:
        return len(self._containers)

    # ------------------------------------------------------------------ NodeManager's answers
    def healthy_in_service(self) -> list[SnapshotDatanode]:
        """NodeManager.healthy_in_service: the writable ones (IN_SERVICE and HEALTHY)."""
        return [dn for dn in self._datanodes.values() if dn.status.is_node_writable()]

    def containers(self, dn: DatanodeID) -> frozenset[ContainerID]:
        return frozenset(self._held.get(dn, ()))

    # ------------------------------------------------------------------ ContainerManager's answers
    def find(self, container_id: ContainerID) -> ContainerInfo | None:
        return self._containers.get(container_id)

    def get(self, container_id: ContainerID) -> ContainerInfo:
        return self._containers[container_id]

    def replica(self, container_id: ContainerID, dn: DatanodeID) -> ContainerReplica | None:
        return self._replicas.get(container_id, {}).get(dn)

    def replicas(self, container_id: ContainerID) -> tuple[ContainerReplica, ...]:
        return tuple(self._replicas.get(container_id, {}).values())

    # ------------------------------------------------------------------ the run
    def iteration(self, number: int, config: ContainerBalancerConfiguration) -> BalancerIteration:
        """SCM's iteration over this state (the casts: these objects answer what it asks of SCM's)."""
        return BalancerIteration(
            number,
            config,
            cast("NodeManager", self),
            cast("ContainerManager", self),
            cast("ReplicationManager", self.replication),
            cast("MoveManager", self.moves),
            0,
        )

    def utilizations(self, config: ContainerBalancerConfiguration) -> list[float]:
        """The utilization of every datanode the balancer would consider now."""
        return [usage.utilization() for usage in eligible_usages(cast("NodeManager", self), config)]

    def apply(self, moves: dict[ContainerID, MoveDataNodePair]) -> None:
        """The moves completed: each replica is on its target, the bytes counted there, not on the source."""
        for container_id, pair in moves.items():
            size = self._containers[container_id].used_bytes
            replica = self._replicas[container_id].pop(pair.source)
            self._held[pair.source].discard(container_id)
            self._add(replace(replica, datanode=pair.target))
            self._resize(pair.source, size)
            self._resize(pair.target, -size)

    def _add(self, replica: ContainerReplica) -> None:
        self._replicas.setdefault(replica.container_id, {})[replica.datanode] = replica
        self._held.setdefault(replica.datanode, set()).add(replica.container_id)

    def _resize(self, dn: DatanodeID, freed: int) -> None:
        node = self._datanodes[dn]
        self._datanodes[dn] = replace(node, remaining_bytes=node.remaining_bytes + freed)


@dataclass(frozen=True, slots=True)
class PlannedIteration:
    """One iteration as the balancer would run it: its status (moves all completed), who moved what where,
    and the spread of utilization (most minus least used, in points) before and after it."""

    status: IterationStatus
    sources: int
    targets: int
    moves: dict[ContainerID, MoveDataNodePair]
    spread_before: float
    spread_after: float


@dataclass(frozen=True, slots=True)
class PlannedRun:
    iterations: Sequence[PlannedIteration]
    stop_reason: str
    spread_before: float
    spread_after: float


def _spread(utilizations: Sequence[float]) -> float:
    return 100 * (max(utilizations) - min(utilizations)) if utilizations else 0.0


def plan_run(cluster: SnapshotCluster, config: ContainerBalancerConfiguration) -> PlannedRun:
    """ContainerBalancer's run from its first iteration, every move completing (the cluster changes)."""
    planned: list[PlannedIteration] = []
    first = _spread(cluster.utilizations(config))
    number = 0
    while True:
        if config.iterations_done(number):
            reason = COMPLETED
            break
        iteration = cluster.iteration(number + 1, config)
        if not iteration.unbalanced:
            reason = not_initialized(number)
            break
        before = _spread([u.utilization() for u in iteration.usages.values()])
        iteration.select()
        for container_id in list(iteration.outstanding):
            iteration.on_move_result(container_id, MoveResult.COMPLETED)
        iteration.finish(interrupted=False)
        cluster.apply(iteration.container_to_pair)
        planned.append(
            PlannedIteration(
                iteration.status(0),
                len(iteration.over),
                len(iteration.under),
                dict(iteration.container_to_pair),
                before,
                _spread(cluster.utilizations(config)),
            )
        )
        number += 1
        if iteration.result is IterationResult.CAN_NOT_BALANCE_ANY_MORE:
            reason = IterationResult.CAN_NOT_BALANCE_ANY_MORE.value
            break
    return PlannedRun(planned, reason, first, _spread(cluster.utilizations(config)))
