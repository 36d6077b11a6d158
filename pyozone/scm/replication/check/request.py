"""What a check handler is given: the container's facts (ContainerCheckRequest) and the few SCM services
it may query or act through (CheckServices), as Ozone's processContainer.

Handlers see nothing else, so the same chain runs inside the Replication Manager, in read-only mode for
the decommission monitor and admin tools, and against a recording fake in tests.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from pyozone.hdds.clock import Clock
from pyozone.hdds.container import ContainerInfo, ContainerReplica
from pyozone.hdds.container_health import ContainerHealthState
from pyozone.hdds.ids import ContainerID, DatanodeID, PipelineID
from pyozone.hdds.node_status import NodeStatus
from pyozone.hdds.replication_report import ReplicationManagerReport
from pyozone.hdds.states import LifeCycleEvent
from pyozone.scm.replication.config import ReplicationManagerConfig
from pyozone.scm.replication.pending_ops import PendingOp
from pyozone.scm.replication.placement import ContainerPlacementStatus
from pyozone.scm.replication.queue import ReplicationQueue
from pyozone.scm.replication.results import OverReplicatedHealthResult, UnderReplicatedHealthResult


class CheckServices(Protocol):
    """Queries (node_status, pipeline_exists, placement_status) may be called in any mode; the
    send_*/update_*/fire_* actions never in read-only mode."""

    clock: Clock
    config: ReplicationManagerConfig

    def node_status(self, dn: DatanodeID) -> NodeStatus | None: ...

    def pipeline_exists(self, pipeline_id: PipelineID | None) -> bool: ...

    def placement_status(
        self, container: ContainerInfo, dns: Sequence[DatanodeID]
    ) -> ContainerPlacementStatus: ...

    def send_close(self, container: ContainerInfo, replica: ContainerReplica, force: bool) -> None: ...

    def send_delete(self, container: ContainerInfo, replica: ContainerReplica, force: bool) -> None:
        """Unthrottled; schedules the pending DELETE."""
        ...

    def update_container_state(self, container_id: ContainerID, event: LifeCycleEvent) -> None: ...

    def fire_close_container(self, container_id: ContainerID) -> None: ...

    def update_sequence_id(self, container_id: ContainerID, sequence_id: int) -> None: ...


@dataclass(slots=True)
class ContainerCheckRequest:
    """One container's check. `maintenance_redundancy` is maintenance.remaining.redundancy for EC and
    maintenance.replica.minimum for Ratis (as processContainer). In read-only mode the queue is a sink and
    no handler acts, but the report is filled exactly as in a normal check."""

    container: ContainerInfo
    replicas: tuple[ContainerReplica, ...]
    pending_ops: tuple[PendingOp, ...]
    report: ReplicationManagerReport
    queue: ReplicationQueue
    maintenance_redundancy: int
    read_only: bool = False

    def record(self, state: ContainerHealthState) -> None:
        """Count and sample `state` for this container; it becomes the container's current health."""
        self.report.increment_and_sample(state, self.container.container_id)

    def enqueue_under(self, result: UnderReplicatedHealthResult) -> None:
        """Queue for repair, never in read-only mode (whatever queue the caller passed)."""
        if not self.read_only:
            self.queue.enqueue_under(result)

    def enqueue_over(self, result: OverReplicatedHealthResult) -> None:
        if not self.read_only:
            self.queue.enqueue_over(result)
