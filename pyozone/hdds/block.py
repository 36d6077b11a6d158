"""A block as SCM hands it out, and what a writer asks SCM to avoid when it allocates the next one."""

from __future__ import annotations

from dataclasses import dataclass

from pyozone.hdds.ids import BlockID, ContainerID, DatanodeID, PipelineID
from pyozone.hdds.pipeline import Pipeline


@dataclass(frozen=True, slots=True)
class ExcludeList:
    """What the client found failing: SCM avoids these datanodes, pipelines and containers if it can."""

    datanodes: frozenset[DatanodeID] = frozenset()
    pipelines: frozenset[PipelineID] = frozenset()
    containers: frozenset[ContainerID] = frozenset()

    def is_empty(self) -> bool:
        return not (self.datanodes or self.pipelines or self.containers)


@dataclass(frozen=True, slots=True)
class AllocatedBlock:
    block_id: BlockID
    pipeline: Pipeline
    container_id: ContainerID


NO_EXCLUSIONS = ExcludeList()
