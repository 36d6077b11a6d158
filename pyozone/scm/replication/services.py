"""The Replication Manager's view of the rest of SCM: CheckServices for the check chain and RepairContext
for the processing stage, implemented over the node, container and pipeline managers.

Handlers and repair functions talk only to these narrow protocols, so they run unchanged against
recording fakes in unit tests; this module is the one place that knows which manager answers what.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TYPE_CHECKING

from pyozone.hdds.clock import Clock
from pyozone.hdds.container import ContainerInfo, ContainerReplica
from pyozone.hdds.datanode import DatanodeInfo
from pyozone.hdds.ids import ContainerID, DatanodeID, PipelineID
from pyozone.hdds.node_status import NodeStatus
from pyozone.hdds.states import LifeCycleEvent
from pyozone.scm.events import EventQueue, SCMEvent
from pyozone.scm.replication.commands import ReplicationCommandSender
from pyozone.scm.replication.config import ReplicationManagerConfig
from pyozone.scm.replication.metrics import ReplicationManagerMetrics
from pyozone.scm.replication.pending_ops import ContainerReplicaPendingOps
from pyozone.scm.replication.placement import ContainerPlacementStatus, validate_container_placement
from pyozone.scm.replication.targets import placement_policy_for

if TYPE_CHECKING:
    from pyozone.scm.container.manager import ContainerManager
    from pyozone.scm.node.node_manager import NodeManager
    from pyozone.scm.pipeline.manager import PipelineManager


class ReplicationServices:
    """CheckServices (check/request.py) and RepairContext (processing/context.py) over the managers."""

    def __init__(
        self,
        config: ReplicationManagerConfig,
        clock: Clock,
        events: EventQueue,
        nodes: NodeManager,
        containers: ContainerManager,
        pipelines: PipelineManager,
        sender: ReplicationCommandSender,
        pending_ops: ContainerReplicaPendingOps,
        metrics: ReplicationManagerMetrics,
        rng: random.Random,
    ) -> None:
        self.config = config
        self.clock = clock
        self.events = events
        self.nodes = nodes
        self.containers = containers
        self.pipelines = pipelines
        self.sender = sender
        self.pending_ops = pending_ops
        self.metrics = metrics
        self.rng = rng
        self.container_size: int = containers.container_size

    # ------------------------------------------------------------------ queries
    def node_status(self, dn: DatanodeID) -> NodeStatus | None:
        info = self.nodes.get(dn)
        return None if info is None else info.status

    def pipeline_exists(self, pipeline_id: PipelineID | None) -> bool:
        return pipeline_id is not None and self.pipelines.find(pipeline_id) is not None

    def placement_status(
        self, container: ContainerInfo, dns: Sequence[DatanodeID]
    ) -> ContainerPlacementStatus:
        topology = self.nodes.topology
        return validate_container_placement(
            dns,
            container.replication_config.required_nodes,
            topology.rack_of,
            topology.rack_count(),
            placement_policy_for(container),
        )

    def replicas(self, container_id: ContainerID) -> tuple[ContainerReplica, ...]:
        return self.containers.replicas(container_id)

    def candidate_nodes(self) -> list[DatanodeInfo]:
        return self.nodes.nodes()

    def rack_of(self, dn: DatanodeID) -> str | None:
        return self.nodes.topology.rack_of(dn)

    def rack_count(self) -> int:
        return self.nodes.topology.rack_count()

    # ------------------------------------------------------------------ actions (never in read-only mode)
    def send_close(self, container: ContainerInfo, replica: ContainerReplica, force: bool) -> None:
        self.sender.send_close(container, replica, force)

    def send_delete(self, container: ContainerInfo, replica: ContainerReplica, force: bool) -> None:
        self.sender.send_delete(container, replica.datanode, replica.replica_index, force, throttled=False)

    def update_container_state(self, container_id: ContainerID, event: LifeCycleEvent) -> None:
        self.containers.update_state(container_id, event)

    def fire_close_container(self, container_id: ContainerID) -> None:
        self.events.fire(SCMEvent.CLOSE_CONTAINER, container_id)

    def update_sequence_id(self, container_id: ContainerID, sequence_id: int) -> None:
        info = self.containers.get(container_id)
        self.containers.update_stats(container_id, sequence_id, info.used_bytes, info.number_of_keys)
