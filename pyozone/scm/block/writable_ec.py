"""WritableECContainerProvider (Ozone's class of that name): the container an EC block group goes to.

An EC pipeline holds one container. While fewer EC pipelines of the config are OPEN than the maximum,
every allocation opens a new pipeline with its container, so writes spread over many datanode sets;
at the maximum, an existing pipeline's container with room takes the block, and a pipeline whose
container is full (or gone) is closed on the way, which frees a place for a new one. The client's
exclude list (datanodes, pipelines, containers) is honoured throughout.

Sans-IO like the rest of the core: a new EC pipeline is OPEN at once, so nothing is waited for.
"""

from __future__ import annotations

import logging
import random
from typing import TYPE_CHECKING

from pyozone.hdds.block import ExcludeList
from pyozone.hdds.container import ContainerInfo
from pyozone.hdds.datanode import NodeReport
from pyozone.hdds.exceptions import ResultCode, SCMException
from pyozone.hdds.ids import DatanodeID, ReplicationConfig
from pyozone.hdds.pipeline import Pipeline
from pyozone.hdds.states import PipelineState, ReplicationType

if TYPE_CHECKING:
    from pyozone.scm.container.manager import ContainerManager
    from pyozone.scm.node.node_manager import NodeManager
    from pyozone.scm.pipeline.manager import PipelineManager
    from pyozone.scm.settings import ScmSettings

log = logging.getLogger(__name__)

_OPEN = (PipelineState.OPEN,)


def maximum_ec_pipelines(
    config: ReplicationConfig, minimum: int, per_volume_factor: float, healthy_volumes: int
) -> int:
    """max(ozone.scm.ec.pipeline.minimum, floor(per.volume.factor x healthy volumes / required nodes)).

    Ozone truncates the factor to an int before multiplying (`(int) factor * volumes`), so a factor
    below 1 gives 0 there; this takes the factor as written (docs/differences.md)."""
    by_volume = (
        int(per_volume_factor * healthy_volumes // config.required_nodes) if per_volume_factor > 0 else 0
    )
    return max(by_volume, minimum)


class WritableECContainerProvider:
    def __init__(
        self,
        settings: ScmSettings,
        node_manager: NodeManager,
        pipeline_manager: PipelineManager,
        container_manager: ContainerManager,
        rng: random.Random | None = None,
    ) -> None:
        self.minimum = settings.pipeline.ec_minimum
        factor = settings.pipeline.ec_per_volume_factor
        if factor < 0:
            log.warning(
                "ozone.scm.ec.pipeline.per.volume.factor must be non-negative, was %s: using 1", factor
            )
            factor = 1.0
        self.per_volume_factor = factor
        self.container_size = settings.container.size_bytes
        self._nodes = node_manager
        self._pipelines = pipeline_manager
        self._containers = container_manager
        self._rng = rng or random.Random()
        self._volumes: dict[DatanodeID, tuple[NodeReport, int]] = {}

    def maximum_pipelines(self, config: ReplicationConfig) -> int:
        return maximum_ec_pipelines(config, self.minimum, self.per_volume_factor, self._healthy_volumes())

    def _healthy_volumes(self) -> int:
        """Healthy data volumes of the IN_SERVICE + HEALTHY nodes (Ozone's totalHealthyVolumeCount).

        Asked on every EC allocation: each node's count is cached until its next node report, which
        makes this a lookup per node instead of a scan of every volume report."""
        total = 0
        for info in self._nodes.healthy_in_service():
            cached = self._volumes.get(info.uuid)
            if cached is None or cached[0] is not info.report:
                cached = self._volumes[info.uuid] = (info.report, info.healthy_volume_count())
            total += cached[1]
        return total

    def get_container(
        self, size: int, config: ReplicationConfig, owner: str, excluded: ExcludeList
    ) -> ContainerInfo:
        """A new pipeline's container below the maximum, else an open one with room; SCMException if none."""
        if config.type is not ReplicationType.EC:
            raise SCMException(f"{config} is not an EC replication config", ResultCode.INTERNAL_ERROR)
        maximum = self.maximum_pipelines(config)
        open_count = self._pipelines.count(config, _OPEN)
        if open_count < maximum:
            try:
                return self._allocate(config, owner, excluded)
            except SCMException as e:
                log.warning(
                    "Unable to allocate a container with %d open pipelines; %s for %s: %s",
                    open_count, config, owner, e,
                )  # fmt: skip
        candidates = self._pipelines.pipelines(config, PipelineState.OPEN)
        tried = len(candidates)
        while candidates:
            pipeline = candidates.pop(self._rng.randrange(len(candidates)))
            container = self._container_of(pipeline)
            if container is None or container.used_bytes + size > self.container_size:
                log.info("Closing EC pipeline %s: its container is full or closed", pipeline.id)
                self._pipelines.close_pipeline(pipeline.id)
                open_count -= 1
            elif not _excluded(pipeline, container, excluded):
                return container
        counted = open_count
        if open_count >= maximum:
            # Every open pipeline was full or excluded: one more try, allowing as many pipelines as there
            # are healthy nodes, and not counting those with a datanode the caller found dead (SCM closes
            # them when it goes stale): a writer that lost a datanode mid-key is not refused because
            # every open pipeline holds it (docs/differences.md)
            maximum = max(maximum, len(self._nodes.healthy_in_service()))
            if excluded.datanodes:
                counted -= sum(
                    1
                    for p in self._pipelines.pipelines(config, PipelineState.OPEN)
                    if not excluded.datanodes.isdisjoint(p.nodes)
                )
        if counted < maximum:
            return self._allocate(config, owner, excluded)
        raise SCMException(
            f"Unable to allocate a container for {config} after trying {tried} existing ones: pipeline limit "
            f"({maximum}) reached ({open_count} open), none closed; excluded: {len(excluded.datanodes)} "
            f"datanodes, {len(excluded.pipelines)} pipelines, {len(excluded.containers)} containers",
            ResultCode.FAILED_TO_FIND_SUITABLE_NODE,
        )

    def _allocate(self, config: ReplicationConfig, owner: str, excluded: ExcludeList) -> ContainerInfo:
        pipeline = self._pipelines.create_pipeline(config, excluded.datanodes)
        try:
            return self._containers.allocate_container(pipeline, owner)
        except SCMException:
            # a pipeline without a container would count against the maximum for nothing
            self._pipelines.close_pipeline(pipeline.id)
            raise

    def _container_of(self, pipeline: Pipeline) -> ContainerInfo | None:
        """The pipeline's OPEN container: FINALIZE takes a container off its pipeline's set."""
        ids = self._pipelines.containers(pipeline.id)
        if not ids:
            return None
        return self._containers.find(min(ids))


def _excluded(pipeline: Pipeline, container: ContainerInfo, excluded: ExcludeList) -> bool:
    return (
        container.container_id in excluded.containers
        or pipeline.id in excluded.pipelines
        or not excluded.datanodes.isdisjoint(pipeline.nodes)
    )
