"""What SCM does when a datanode's health changes (Ozone's StaleNodeHandler, DeadNodeHandler and kin): one
small handler per event."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from pyozone.hdds.ids import DatanodeID
from pyozone.hdds.states import LifeCycleState, NodeOperationalState, NodeState
from pyozone.scm.events import EventQueue, SCMEvent

if TYPE_CHECKING:
    from pyozone.scm.container.manager import ContainerManager
    from pyozone.scm.node.node_manager import NodeManager
    from pyozone.scm.pipeline.creator import BackgroundPipelineCreator
    from pyozone.scm.pipeline.manager import PipelineManager

log = logging.getLogger(__name__)


class NodeEventHandlers:
    def __init__(
        self,
        events: EventQueue,
        nodes: NodeManager,
        pipelines: PipelineManager,
        containers: ContainerManager,
        creator: BackgroundPipelineCreator,
        on_dead_node: list | None = None,
    ) -> None:
        self.nodes = nodes
        self.pipelines = pipelines
        self.containers = containers
        self.creator = creator
        self.on_dead_node = on_dead_node if on_dead_node is not None else []
        events.add_handler(SCMEvent.STALE_NODE, self.on_stale)
        events.add_handler(SCMEvent.DEAD_NODE, self.on_dead)
        events.add_handler(SCMEvent.HEALTHY_READONLY_NODE, self.on_healthy_readonly)
        events.add_handler(SCMEvent.HEALTHY_READONLY_TO_HEALTHY_NODE, self.on_healthy)
        events.add_handler(SCMEvent.NEW_NODE, self.on_new_node)
        events.add_handler(SCMEvent.NODE_ADDRESS_UPDATE, self.on_address_update)
        self.events = events

    def _close_pipelines(self, dn: DatanodeID) -> None:
        """Leader only: a follower gets the CLOSED records from the leader (the node handlers on a
        follower keep only their derived state: replicas, topology)."""
        if not self.nodes.context.is_leader():
            return
        for pipeline in self.pipelines.pipelines_of_node(dn):
            self.pipelines.close_pipeline(pipeline.id)

    def on_stale(self, dn: DatanodeID) -> None:
        """A silent node cannot take part in Ratis writes: close its pipelines."""
        self._close_pipelines(dn)

    def on_dead(self, dn: DatanodeID) -> None:
        info = self.nodes.get(dn)
        if info is None or info.status.health is not NodeState.DEAD:
            return
        if self.nodes.context.is_leader():
            for container_id in sorted(self.nodes.containers(dn)):
                container = self.containers.find(container_id)
                if container is not None and container.state is LifeCycleState.OPEN:
                    self.events.fire(SCMEvent.CLOSE_CONTAINER, container_id)
            for pipeline in self.pipelines.pipelines_of_node(dn):
                self.pipelines.close_and_delete(pipeline.id)
        if info.status.operational_state is not NodeOperationalState.IN_MAINTENANCE:
            # Maintenance nodes keep their replicas: they are expected back.
            held = sorted(self.nodes.containers(dn))
            for container_id in held:
                self.containers.remove_replica(container_id, dn)
            self.nodes.set_containers(dn, ())
            for callback in self.on_dead_node:
                callback(dn)
            # The containers go with the event: they are no longer the node's once it is handled, and
            # they are exactly what the Replication Manager must now check.
            self.events.fire(SCMEvent.REPLICATION_MANAGER_NOTIFY, (dn, held))
        self.nodes.clear_command_queue(dn)
        if info.status.health is NodeState.DEAD:
            self.nodes.forget(dn)

    def on_healthy_readonly(self, dn: DatanodeID) -> None:
        """A node back from STALE/DEAD (or with an old layout): no writes yet, so no pipelines."""
        self._close_pipelines(dn)
        info = self.nodes.get(dn)
        if info is not None:
            self.nodes.topology.add(dn, info.details.network_location)

    def on_healthy(self, dn: DatanodeID) -> None:
        self.creator.trigger()

    def on_new_node(self, dn: DatanodeID) -> None:
        self.creator.trigger()

    def on_address_update(self, dn: DatanodeID) -> None:
        """A node re-registered with a new address: pipelines naming the old one are useless."""
        self._close_pipelines(dn)
        self.creator.trigger()
