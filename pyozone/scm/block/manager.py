"""BlockManager: block allocation in writable Ratis and EC containers (Ozone's BlockManagerImpl) and
deleteBlocks from OM. EC block groups go through the WritableECContainerProvider (block/writable_ec.py).

Sans-IO: where Ozone waits for a freshly created pipeline to open, this raises
FAILED_TO_FIND_ACTIVE_PIPELINE and the caller retries once datanodes have reported the pipeline.

Unlike Ozone, the client's exclude list is never dropped: when every OPEN pipeline is excluded, SCM tries a
new pipeline away from the excluded datanodes and otherwise asks the caller to retry, because the excluded
pipeline is usually the dead one the client just left and would fail the write again at once
(docs/differences.md).
"""

from __future__ import annotations

import logging
import random
from collections import Counter
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from pyozone.hdds.block import NO_EXCLUSIONS, AllocatedBlock, ExcludeList
from pyozone.hdds.container import ContainerInfo
from pyozone.hdds.exceptions import ResultCode, SCMException
from pyozone.hdds.ids import BlockID, ContainerID, ReplicationConfig
from pyozone.hdds.states import PipelineState, ReplicationType
from pyozone.scm.block.deleted_block_log import DeletedBlockLog
from pyozone.scm.block.sequence_id import LOCAL_ID, SequenceIdGenerator
from pyozone.scm.block.writable_ec import WritableECContainerProvider
from pyozone.scm.events import EventQueue
from pyozone.scm.store import SCMMetadataStore

if TYPE_CHECKING:
    from pyozone.scm.container.manager import ContainerManager
    from pyozone.scm.pipeline.manager import PipelineManager
    from pyozone.scm.settings import ScmSettings

log = logging.getLogger(__name__)


class BlockManager:
    def __init__(
        self,
        settings: ScmSettings,
        clock,
        events: EventQueue,
        store: SCMMetadataStore,
        container_manager: ContainerManager,
        pipeline_manager: PipelineManager,
        sequence_ids: SequenceIdGenerator,
        in_safe_mode: Callable[[], bool],
        rng: random.Random | None = None,
        deleted_block_log: DeletedBlockLog | None = None,
        ec_containers: WritableECContainerProvider | None = None,
    ) -> None:
        """`ec_containers` places EC block groups; without one, EC allocations are refused."""
        self.clock = clock
        self.events = events
        self.container_size = settings.container.size_bytes
        self._containers = container_manager
        self._pipelines = pipeline_manager
        self._sequence_ids = sequence_ids
        self._in_safe_mode = in_safe_mode
        self._rng = rng or random.Random()
        self.ec_containers = ec_containers
        # blocks handed out since start, per replication config (SCM's metrics export it)
        self.allocated: Counter[ReplicationConfig] = Counter()
        self.deleted_block_log = (
            deleted_block_log
            if deleted_block_log is not None
            else DeletedBlockLog(settings.block_deletion, clock, store, container_manager, sequence_ids)
        )

    # ------------------------------------------------------------------ allocation
    def allocate_block(
        self,
        size: int,
        replication_config: ReplicationConfig,
        owner: str,
        excluded: ExcludeList = NO_EXCLUSIONS,
    ) -> AllocatedBlock:
        if self._in_safe_mode():
            raise SCMException("SafeModePrecheck failed for allocateBlock", ResultCode.SAFE_MODE_EXCEPTION)
        if size < 0 or size > self.container_size:
            raise SCMException(f"Unsupported block size: {size}", ResultCode.INVALID_BLOCK_SIZE)
        if replication_config.type is ReplicationType.EC:
            if self.ec_containers is None:
                raise SCMException(
                    f"this SCM cannot allocate {replication_config} blocks", ResultCode.INTERNAL_ERROR
                )
            container = self.ec_containers.get_container(size, replication_config, owner, excluded)
        else:
            container = self._writable_container(size, replication_config, owner, excluded)
        pipeline = self._pipelines.get(container.pipeline_id)
        local_id = self._sequence_ids.next_id(LOCAL_ID)
        self.allocated[replication_config] += 1
        return AllocatedBlock(BlockID(container.container_id, local_id), pipeline, container.container_id)

    def _writable_container(
        self, size: int, config: ReplicationConfig, owner: str, excluded: ExcludeList
    ) -> ContainerInfo:
        """WritableRatisContainerProvider: an OPEN pipeline's container, else try creating a pipeline
        on datanodes the client did not exclude."""
        container = self._from_open_pipelines(size, config, owner, excluded)
        if container is not None:
            return container
        try:
            pipeline = self._pipelines.create_pipeline(config, excluded.datanodes)
            reason = f"created pipeline {pipeline.id}, not OPEN yet"
        except SCMException as e:
            allocated = [
                p
                for p in self._pipelines.pipelines(config, PipelineState.ALLOCATED)
                if p.id not in excluded.pipelines and not excluded.datanodes.intersection(p.nodes)
            ]
            reason = f"{len(allocated)} ALLOCATED pipelines, not OPEN yet" if allocated else str(e)
            log.warning("Pipeline creation for %s failed: %s", config, e)
        if not excluded.is_empty():
            reason += f"; excluded: {len(excluded.datanodes)} datanodes, {len(excluded.pipelines)} pipelines"
        container = self._from_open_pipelines(size, config, owner, excluded)
        if container is not None:
            return container
        raise SCMException(
            f"Unable to allocate a container to the block of size: {size}, "
            f"replicationConfig: {config}. {reason}",
            ResultCode.FAILED_TO_FIND_ACTIVE_PIPELINE,
        )

    def _from_open_pipelines(
        self, size: int, config: ReplicationConfig, owner: str, excluded: ExcludeList
    ) -> ContainerInfo | None:
        pipelines = self._pipelines.open_pipelines(config, excluded.datanodes, excluded.pipelines)
        while pipelines:
            pipeline = pipelines.pop(self._rng.randrange(len(pipelines)))
            container = self._containers.get_matching_container(size, owner, pipeline, excluded.containers)
            if container is not None:
                return container
        return None

    # ------------------------------------------------------------------ deletion
    def delete_blocks(self, block_ids: Sequence[BlockID]) -> list[int]:
        """One delete transaction per container, persisted; returns the new transaction ids."""
        if self._in_safe_mode():
            raise SCMException("SafeModePrecheck failed for deleteBlocks", ResultCode.SAFE_MODE_EXCEPTION)
        by_container: dict[ContainerID, list[int]] = {}
        for block in block_ids:
            by_container.setdefault(block.container_id, []).append(block.local_id)
        return self.deleted_block_log.add_transactions(by_container)
