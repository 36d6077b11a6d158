"""DatanodeAdminMonitor: drives decommission and maintenance to completion (Ozone's DatanodeAdminMonitorImpl).

An admin command only flips a node's operational state; this monitor, run every
ozone.scm.datanode.admin.monitor.interval, finishes the job. A node may leave service only once nothing
depends on it: no pipeline still writes through it, the datanode itself has persisted the new state (so
it stops taking writes even if SCM restarts), and every container on it is closed and has enough
replicas elsewhere by the Replication Manager's own read-only check. Until then the Replication Manager
sees the node's replicas as out of service and copies them away.

Tracked nodes are found by their operational state on each run rather than registered by the admin
call, so a node that came back from an SCM restart already DECOMMISSIONING resumes its workflow (as
Ozone's NewNodeHandler does) with no extra wiring.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from pyozone.hdds.clock import Clock
from pyozone.hdds.container import ContainerInfo, ContainerReplica
from pyozone.hdds.container_health import ContainerHealthState
from pyozone.hdds.ids import ContainerID, DatanodeID, PipelineID
from pyozone.hdds.node_status import NodeStatus
from pyozone.hdds.pipeline import Pipeline
from pyozone.hdds.replication_report import ReplicationManagerReport
from pyozone.hdds.states import LifeCycleState, NodeOperationalState

if TYPE_CHECKING:
    from pyozone.scm.node.node_manager import NodeManager

log = logging.getLogger(__name__)

Op = NodeOperationalState
_TRACKED = (Op.DECOMMISSIONING, Op.ENTERING_MAINTENANCE, Op.IN_MAINTENANCE)
_ADVANCE = {Op.DECOMMISSIONING: Op.DECOMMISSIONED, Op.ENTERING_MAINTENANCE: Op.IN_MAINTENANCE}
_GONE = (LifeCycleState.DELETING, LifeCycleState.DELETED)


class NodePipelines(Protocol):
    """What the monitor needs of the PipelineManager: a node leaving service has its pipelines closed."""

    def pipelines_of_node(self, dn: DatanodeID) -> list[Pipeline]: ...

    def close_and_delete(self, pid: PipelineID) -> None: ...


class ContainerLookup(Protocol):
    """What the monitor reads of the ContainerManager."""

    def find(self, container_id: ContainerID) -> ContainerInfo | None: ...

    def replicas(self, container_id: ContainerID) -> tuple[ContainerReplica, ...]: ...


class ContainerStatusChecker(Protocol):
    """The Replication Manager's read-only checks: the health chain (ReplicationManager.checkContainerStatus),
    which fills `report` and sends nothing, and whether a container may lose a copy on a node leaving service
    (DatanodeAdminMonitorImpl)."""

    def check_container_status(
        self, container_id: ContainerID, report: ReplicationManagerReport | None = None
    ) -> ContainerHealthState: ...

    def healthy_enough_for_offline(
        self, container: ContainerInfo, replicas: tuple[ContainerReplica, ...]
    ) -> bool: ...


@dataclass(frozen=True, slots=True)
class DecommissionProgress:
    """What `datanode list` shows for a node in a workflow, as of the monitor's last run on it."""

    datanode: DatanodeID
    state: NodeOperationalState
    start_time_ms: int
    sufficiently_replicated: int = 0
    under_replicated: int = 0
    unclosed: int = 0
    pipelines_waiting: int = 0

    @property
    def containers_left(self) -> int:
        """Containers still holding the node back: not closed yet, or not yet copied elsewhere."""
        return self.under_replicated + self.unclosed


class DatanodeAdminMonitor:
    def __init__(
        self,
        clock: Clock,
        nodes: NodeManager,
        pipelines: NodePipelines,
        containers: ContainerLookup,
        checker: ContainerStatusChecker,
        logging_limit: int = 1000,
    ) -> None:
        self.clock = clock
        self.nodes = nodes
        self.pipelines = pipelines
        self.containers = containers
        self.checker = checker
        self.logging_limit = logging_limit
        self._progress: dict[DatanodeID, DecommissionProgress] = {}

    def clear(self) -> None:
        """A step-down: the workflows under way were the deposed leader's; the next leader's monitor
        starts them again from the operational states (Ozone's DecommissionManager.onBecomeLeader)."""
        self._progress.clear()

    def tracked(self) -> frozenset[DatanodeID]:
        return frozenset(self._progress)

    def progress(self, dn: DatanodeID) -> DecommissionProgress | None:
        """None for a node in no workflow (or one the monitor has not run on yet)."""
        return self._progress.get(dn)

    def run(self) -> None:
        """One pass: pick up nodes newly out of service, then move each tracked node on if it can."""
        for info in self.nodes.nodes():
            if info.status.operational_state in _TRACKED and info.uuid not in self._progress:
                self._start(info.uuid, info.status)
        for dn in sorted(self._progress):
            self._process(dn)

    # ------------------------------------------------------------------ workflow steps
    def _start(self, dn: DatanodeID, status: NodeStatus) -> None:
        """A node leaving service takes no more writes: close its pipelines now (Ozone's
        StartDatanodeAdminHandler), so their open containers close and can be replicated."""
        log.info("Starting admin workflow (%s) for datanode %s", status.operational_state.name, dn)
        self._progress[dn] = DecommissionProgress(dn, status.operational_state, self.clock.wall_ms())
        for pipeline in self.pipelines.pipelines_of_node(dn):
            self.pipelines.close_and_delete(pipeline.id)

    def _stop(self, dn: DatanodeID, back_in_service: bool, why: str) -> None:
        log.info("Admin workflow for datanode %s ends: %s", dn, why)
        del self._progress[dn]
        if back_in_service:
            self.nodes.set_operational_state(dn, Op.IN_SERVICE)

    def _process(self, dn: DatanodeID) -> None:
        info = self.nodes.get(dn)
        if info is None:
            self._stop(dn, False, "no longer registered")
            return
        status = info.status
        op = status.operational_state
        if op not in _TRACKED:
            # Recommissioned by an admin (already IN_SERVICE) or otherwise moved on.
            self._stop(dn, False, f"now {op.name}")
            return
        if status.is_dead() and op is not Op.IN_MAINTENANCE:
            # Its replicas are gone from SCM already; it is handled as any dead node.
            self._stop(dn, True, "dead while not IN_MAINTENANCE")
            return
        if status.is_maintenance() and self._expired(status):
            self._stop(dn, True, "maintenance window ended")
            return
        if op is Op.IN_MAINTENANCE:
            self._progress[dn] = DecommissionProgress(dn, op, self._progress[dn].start_time_ms)
            return
        progress = self._check(dn, op)
        persisted = info.details.persisted_op_state is op
        if progress.pipelines_waiting == 0 and persisted and progress.containers_left == 0:
            target = _ADVANCE[op]
            log.info("Datanode %s: %s complete, moving to %s", dn, op.name, target.name)
            self.nodes.set_operational_state(dn, target, status.op_state_expiry_epoch_sec)
            if target is Op.DECOMMISSIONED:
                del self._progress[dn]
            else:
                self._progress[dn] = DecommissionProgress(dn, target, progress.start_time_ms)

    def _expired(self, status: NodeStatus) -> bool:
        expiry = status.op_state_expiry_epoch_sec
        return expiry != 0 and self.clock.wall_ms() // 1000 >= expiry

    def _check(self, dn: DatanodeID, op: NodeOperationalState) -> DecommissionProgress:
        """Counts the node's containers by what still blocks it (Ozone's
        checkContainersReplicatedOnNode) and records the progress."""
        sufficient = under = unclosed = 0
        for container_id in sorted(self.nodes.containers(dn)):
            container = self.containers.find(container_id)
            if container is None:
                log.warning("Container %d on datanode %s is unknown to SCM", container_id, dn)
                continue
            if container.state in _GONE:
                continue
            replicas = self.containers.replicas(container_id)
            if not self.checker.healthy_enough_for_offline(container, replicas):
                if unclosed < self.logging_limit:
                    log.info(
                        "Datanode %s: container %d not closed yet (%s)", dn, container_id, container.state
                    )
                unclosed += 1
                continue
            report = ReplicationManagerReport(sample_limit=0)
            self.checker.check_container_status(container_id, report)
            if report.stat(ContainerHealthState.UNDER_REPLICATED) == 0:
                sufficient += 1
                continue
            if under < self.logging_limit:
                log.info("Datanode %s: container %d still under-replicated", dn, container_id)
            under += 1
        progress = DecommissionProgress(
            dn,
            op,
            self._progress[dn].start_time_ms,
            sufficient,
            under,
            unclosed,
            len(self.nodes.pipelines(dn)),
        )
        self._progress[dn] = progress
        return progress
