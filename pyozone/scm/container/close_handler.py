"""CloseContainerEventHandler: CLOSE_CONTAINER -> CLOSING, then, after a lease, close commands.

The lease (ozone.scm.close.container.wait.duration, 150s) gives clients time to finish writing the
blocks already allocated in the container before its replicas are told to close.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from pyozone.common.timers import Timers
from pyozone.hdds.commands import CloseContainerCommand
from pyozone.hdds.container import ContainerInfo
from pyozone.hdds.exceptions import SCMException
from pyozone.hdds.ids import ContainerID, DatanodeID
from pyozone.hdds.states import LifeCycleEvent, LifeCycleState, ReplicationType

if TYPE_CHECKING:
    from pyozone.scm.container.manager import ContainerManager
    from pyozone.scm.node.node_manager import NodeManager
    from pyozone.scm.pipeline.manager import PipelineManager
    from pyozone.scm.settings import ContainerSettings

log = logging.getLogger(__name__)


class CloseContainerEventHandler:
    def __init__(
        self,
        settings: ContainerSettings,
        clock,
        timers: Timers,
        container_manager: ContainerManager,
        pipeline_manager: PipelineManager,
        node_manager: NodeManager,
    ) -> None:
        self.clock = clock
        self.timers = timers
        self.wait_ms = settings.close_wait_ms
        self._containers = container_manager
        self._pipelines = pipeline_manager
        self._nodes = node_manager
        self._leases: set[ContainerID] = set()
        self._generation = 0  # a step-down voids the leases' timers

    def on_close_container(self, container_id: ContainerID) -> None:
        """The SCMEvent.CLOSE_CONTAINER handler; its payload is the container id. Leader only, as Ozone's
        ("Skip close container since current SCM is not leader"): a follower learns the CLOSING record
        from the leader, and the datanodes get the leader's close commands."""
        if not self._nodes.context.is_leader():
            log.info("Skip close container %d: this SCM is not the leader", container_id)
            return
        try:
            info = self._containers.get(container_id)
            if info.state is LifeCycleState.OPEN:
                info = self._containers.update_state(container_id, LifeCycleEvent.FINALIZE)
        except SCMException as e:
            log.error("Failed to close container %d: %s", container_id, e)
            return
        if info.state is not LifeCycleState.CLOSING:
            log.debug("Not closing container %d: it is %s", container_id, info.state.name)
            return
        if container_id in self._leases:
            log.debug("Close of container %d already waiting for its lease", container_id)
            return
        force = info.replication_config.type is not ReplicationType.RATIS
        self._leases.add(container_id)
        term = self._nodes.context.term_of_leader()
        generation = self._generation
        self.timers.call_at(
            self.clock.now_ms() + self.wait_ms,
            lambda: self._lease_expired(info, force, term) if generation == self._generation else None,
        )

    def pending(self) -> frozenset[ContainerID]:
        """Containers whose close command waits for its lease to expire."""
        return frozenset(self._leases)

    def clear(self) -> None:
        """A step-down (Ozone's notifyNotLeader): the leases were the deposed leader's; its timers send
        nothing."""
        self._leases.clear()
        self._generation += 1

    def _lease_expired(self, info: ContainerInfo, force: bool, term: int) -> None:
        self._leases.discard(info.container_id)
        for dn in self._targets(info):
            self._nodes.add_datanode_command(
                dn,
                CloseContainerCommand(
                    container_id=info.container_id, pipeline_id=info.pipeline_id, force=force, term=term
                ),
            )
        log.info("Sent close commands for container %d", info.container_id)

    def _targets(self, info: ContainerInfo) -> list[DatanodeID]:
        """The pipeline's members; if the pipeline is gone, wherever replicas are known."""
        pipeline = self._pipelines.find(info.pipeline_id) if info.pipeline_id is not None else None
        if pipeline is not None:
            return list(pipeline.nodes)
        return [replica.datanode for replica in self._containers.replicas(info.container_id)]
