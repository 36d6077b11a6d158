"""ContainerManager: container records in memory and in the `containers` table, the replica map, and
the writable-container choice of block allocation (ContainerManagerImpl, WritableRatisContainerProvider).

Per-state and per-pipeline indices keep lookups proportional to the answer, not to the cluster: a
simulated SCM holds 100k+ containers and asks "which are OPEN on this pipeline" on every block.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from pyozone.hdds.container import ContainerInfo, ContainerReplica
from pyozone.hdds.exceptions import ResultCode, SCMException
from pyozone.hdds.ids import ContainerID, DatanodeID, PipelineID
from pyozone.hdds.states import LifeCycleEvent, LifeCycleState
from pyozone.scm.block.sequence_id import CONTAINER_ID, SequenceIdGenerator
from pyozone.scm.container.lifecycle import check_reverse, next_state
from pyozone.scm.container.replicas import ContainerReplicaMap, ReplicaListener
from pyozone.scm.events import EventQueue
from pyozone.scm.store import RecordCodec, SCMMetadataStore

if TYPE_CHECKING:
    from pyozone.hdds.pipeline import Pipeline
    from pyozone.scm.node.node_manager import NodeManager
    from pyozone.scm.pipeline.manager import PipelineManager
    from pyozone.scm.settings import ContainerSettings

log = logging.getLogger(__name__)


class ContainerManager:
    def __init__(
        self,
        settings: ContainerSettings,
        clock,
        events: EventQueue,
        store: SCMMetadataStore,
        node_manager: NodeManager,
        pipeline_manager: PipelineManager,
        sequence_ids: SequenceIdGenerator,
    ) -> None:
        self.clock = clock
        self.events = events
        self.container_size = settings.size_bytes
        self._nodes = node_manager
        self._pipelines = pipeline_manager
        self._sequence_ids = sequence_ids
        self._table = store.int_table("containers", RecordCodec(ContainerInfo))
        self._containers: dict[ContainerID, ContainerInfo] = {}
        self._by_state: dict[LifeCycleState, set[ContainerID]] = {s: set() for s in LifeCycleState}
        self._by_pipeline: dict[PipelineID, set[ContainerID]] = {}
        self._membership = 0  # bumped when a container is added or changes state
        self._sorted: dict[LifeCycleState | None, tuple[int, tuple[ContainerID, ...]]] = {}
        self._last_used: dict[tuple[str, PipelineID], ContainerID] = {}
        self._replicas = ContainerReplicaMap()
        self._arrival_listeners: list[Callable[[ContainerID], None]] = []
        self._load()

    def _load(self) -> None:
        """Restart recovery: every record back in memory, OPEN ones back in their pipeline's set."""
        for info in self._table.values():
            self._index(info)
            if info.state is LifeCycleState.OPEN and info.pipeline_id is not None:
                try:
                    self._pipelines.add_container_to_pipeline(info.pipeline_id, info.container_id, force=True)
                except SCMException as e:
                    # Ozone leaves it to the Replication Manager's OpenContainerHandler (HDDS-10231).
                    log.warning(
                        "OPEN container %d has no pipeline %s: %s", info.container_id, info.pipeline_id, e
                    )
        log.info("Loaded %d containers", len(self._containers))

    # ------------------------------------------------------------------ indices
    def _index(self, info: ContainerInfo) -> None:
        old = self._containers.get(info.container_id)
        if old is None or old.state is not info.state:
            self._membership += 1
        if old is not None and old.state is not info.state:
            self._by_state[old.state].discard(info.container_id)
        self._containers[info.container_id] = info
        self._by_state[info.state].add(info.container_id)
        if info.pipeline_id is not None:
            self._by_pipeline.setdefault(info.pipeline_id, set()).add(info.container_id)

    def _unindex(self, info: ContainerInfo) -> None:
        del self._containers[info.container_id]
        self._by_state[info.state].discard(info.container_id)
        self._membership += 1
        if info.pipeline_id is not None:
            self._by_pipeline.get(info.pipeline_id, set()).discard(info.container_id)

    def _save(self, info: ContainerInfo) -> ContainerInfo:
        self._table.put(info.container_id, info)
        self._index(info)
        return info

    # ------------------------------------------------------------------ HA record listener
    def record_changed(self, key: bytes, value: bytes | None) -> None:
        """A `containers` record as it now stands (SCM HA's record listener): a follower applying the leader's
        record, or a deposed leader's undo back to the committed one (None: no record). The stats are kept
        from memory, where reports put them on every SCM, once a replica was reported here; before that the
        record's (the leader's at its last state change) are the best known, e.g. for safe mode's
        container rules on an SCM restarted behind the log (review R17 D1). An OPEN container is in its
        pipeline's set, any other state out of it."""
        container_id = self._table.key_codec.decode(key)
        old = self._containers.get(container_id)
        if value is None:
            if old is None:
                return
            self._unindex(old)
            if old.pipeline_id is not None:
                self._pipelines.remove_container_from_pipeline(old.pipeline_id, container_id)
                pipeline = self._pipelines.find(old.pipeline_id)
                for dn in pipeline.nodes if pipeline is not None else ():
                    self._nodes.pending_containers.remove(dn, container_id)
            return
        info = self._table.value_codec.decode(value)
        if old is not None and self._replicas.replicas(container_id):
            info = replace(
                info,
                sequence_id=old.sequence_id,
                used_bytes=old.used_bytes,
                number_of_keys=old.number_of_keys,
            )
        self._index(info)
        self._place_in_pipeline(info)
        if old is None and info.state is LifeCycleState.OPEN and info.pipeline_id is not None:
            pipeline = self._pipelines.find(info.pipeline_id)
            if pipeline is not None:
                self._nodes.pending_containers.record(pipeline.nodes, container_id)
        if old is None:
            for listener in self._arrival_listeners:
                listener(container_id)

    def add_arrival_listener(self, listener: Callable[[ContainerID], None]) -> None:
        """Called with a container's id when its record first arrives here from the leader's log."""
        self._arrival_listeners.append(listener)

    def record_keys(self) -> list[bytes]:
        """The keys of the records in memory, as stored (`ScmReplication.reload_all`)."""
        return [self._table.key_codec.encode(cid) for cid in self._containers]

    def pipeline_changed(self, pipeline_id: PipelineID) -> None:
        """A `pipelines` record changed under this SCM (SCM HA's record listener): its set of OPEN containers
        is derived again from the container records."""
        for container_id in sorted(self._by_pipeline.get(pipeline_id, ())):
            self._place_in_pipeline(self._containers[container_id])

    def _place_in_pipeline(self, info: ContainerInfo) -> None:
        if info.pipeline_id is None:
            return
        if info.state is not LifeCycleState.OPEN:
            self._pipelines.remove_container_from_pipeline(info.pipeline_id, info.container_id)
        elif self._pipelines.find(info.pipeline_id) is not None:
            self._pipelines.add_container_to_pipeline(info.pipeline_id, info.container_id, force=True)

    def bulk_load(self, infos: Iterable[ContainerInfo], replicas: Iterable[ContainerReplica]) -> None:
        """Puts records straight into memory, without writing the store: for benchmarks and offline
        analysis over millions of containers, where building them through reports would dominate."""
        for info in infos:
            self._index(info)
        for replica in replicas:
            self._replicas.update(replica)

    # ------------------------------------------------------------------ queries
    def find(self, container_id: ContainerID) -> ContainerInfo | None:
        return self._containers.get(container_id)

    def get(self, container_id: ContainerID) -> ContainerInfo:
        info = self._containers.get(container_id)
        if info is None:
            raise SCMException(f"Container {container_id} not found", ResultCode.CONTAINER_NOT_FOUND)
        return info

    def containers(self, state: LifeCycleState | None = None) -> list[ContainerInfo]:
        """In container id order."""
        return [self._containers[cid] for cid in self.container_ids(state)]

    def container_ids(self, state: LifeCycleState | None = None) -> Sequence[ContainerID]:
        """Ids in order (every container, or one state's), sorted once until a container is added or
        changes state: a page of a million-container list costs its own rows, not a sort."""
        cached = self._sorted.get(state)
        if cached is None or cached[0] != self._membership:
            ids = self._containers if state is None else self._by_state[state]
            cached = self._sorted[state] = (self._membership, tuple(sorted(ids)))
        return cached[1]

    def count(self, state: LifeCycleState | None = None) -> int:
        return len(self._containers) if state is None else len(self._by_state[state])

    def pipeline_containers(
        self, pipeline_id: PipelineID, state: LifeCycleState | None = None
    ) -> list[ContainerInfo]:
        """Every container ever allocated on the pipeline (any state unless given), in id order."""
        infos = (self._containers[cid] for cid in sorted(self._by_pipeline.get(pipeline_id, ())))
        return [info for info in infos if state is None or info.state is state]

    # ------------------------------------------------------------------ lifecycle
    def allocate_container(self, pipeline: Pipeline, owner: str) -> ContainerInfo:
        """A new OPEN container on the pipeline; refused (SCMException) if the pipeline is CLOSED or a
        member has no room for one more container (as Ozone). Its members count it as pending until they
        report it (PendingContainerTracker), so the next allocation sees the room it takes."""
        if not self._nodes.have_room_for_container(pipeline.nodes):
            raise SCMException(
                f"no new container on pipeline {pipeline.id}: a member has no room for one (usable space "
                "less the containers allocated there since its last node report)",
                ResultCode.FAILED_TO_FIND_NODES_WITH_SPACE,
            )
        container_id = self._sequence_ids.next_id(CONTAINER_ID)
        info = ContainerInfo(
            container_id,
            LifeCycleState.OPEN,
            self.clock.wall_ms(),
            pipeline.id,
            pipeline.replication_config,
            owner,
        )
        self._pipelines.add_container_to_pipeline(pipeline.id, container_id)
        self._save(info)
        self._nodes.pending_containers.record(pipeline.nodes, container_id)
        log.info("Allocated container %d on pipeline %s for %s", container_id, pipeline.id, owner)
        return info

    def update_state(self, container_id: ContainerID, event: LifeCycleEvent) -> ContainerInfo:
        """Applies `event`; the stored state only ever moves to a larger number
        (ContainerStateManagerImpl)."""
        info = self.get(container_id)
        target = next_state(info.state, event)
        if target <= info.state:
            return info
        updated = self._save(replace(info, state=target, state_entered_ms=self.clock.wall_ms()))
        log.info("Container %d: %s -> %s (%s)", container_id, info.state.name, target.name, event.name)
        if event is LifeCycleEvent.FINALIZE and info.pipeline_id is not None:
            self._pipelines.remove_container_from_pipeline(info.pipeline_id, container_id)
        return updated

    def transition_deleting_or_deleted_to(
        self, container_id: ContainerID, target: LifeCycleState
    ) -> ContainerInfo:
        """The one way back: a DELETING/DELETED container with live data becomes CLOSED or QUASI_CLOSED."""
        info = self.get(container_id)
        check_reverse(info.state, target)
        log.info("Container %d: %s -> %s (resurrected)", container_id, info.state.name, target.name)
        return self._save(replace(info, state=target, state_entered_ms=self.clock.wall_ms()))

    def replica_reported(self, container_id: ContainerID) -> ContainerInfo:
        """A datanode reported a replica: the container was created on one. Stored at once (once per
        container), so a restarted SCM still tells it from one never written if every replica is lost."""
        info = self.get(container_id)
        if info.replicas_reported:
            return info
        return self._save(replace(info, replicas_reported=True))

    def update_stats(
        self, container_id: ContainerID, sequence_id: int, used_bytes: int, number_of_keys: int
    ) -> ContainerInfo:
        """Report-driven stats; kept in memory and persisted with the next state change, as in Ozone."""
        info = self.get(container_id)
        if (info.sequence_id, info.used_bytes, info.number_of_keys) == (
            sequence_id,
            used_bytes,
            number_of_keys,
        ):
            return info
        updated = replace(info, sequence_id=sequence_id, used_bytes=used_bytes, number_of_keys=number_of_keys)
        self._containers[container_id] = updated
        return updated

    # ------------------------------------------------------------------ replicas
    def replicas(self, container_id: ContainerID) -> tuple[ContainerReplica, ...]:
        self.get(container_id)
        return self._replicas.replicas(container_id)

    def replica(self, container_id: ContainerID, dn: DatanodeID) -> ContainerReplica | None:
        return self._replicas.replica(container_id, dn)

    def containers_on(self, dn: DatanodeID) -> frozenset[ContainerID]:
        return self._replicas.containers_on(dn)

    def update_replica(self, replica: ContainerReplica) -> None:
        self.get(replica.container_id)
        self._replicas.update(replica)

    def remove_replica(self, container_id: ContainerID, dn: DatanodeID) -> ContainerReplica | None:
        return self._replicas.remove(container_id, dn)

    def add_replica_listener(self, listener: ReplicaListener) -> None:
        self._replicas.add_listener(listener)

    # ------------------------------------------------------------------ writable container choice
    def get_matching_container(
        self,
        size: int,
        owner: str,
        pipeline: Pipeline,
        excluded_containers: frozenset[ContainerID] = frozenset(),
    ) -> ContainerInfo | None:
        """WritableRatisContainerProvider: top the owner up to the open-container limit, then round-robin for
        space, else allocate. A new container only if every member has room for one (HDDS-12468), counting the
        containers just allocated there (PendingContainerTracker); the existing ones keep the space their
        datanodes committed to them.

        None when a needed allocation is refused (the caller then tries another pipeline).
        """
        try:
            ids = self._owner_containers(pipeline.id, owner)
            if len(ids) < self._nodes.open_container_limit(
                pipeline.nodes
            ) and self._nodes.have_room_for_container(pipeline.nodes):
                self.allocate_container(pipeline, owner)
                ids = self._owner_containers(pipeline.id, owner)
            candidates = [cid for cid in ids if cid not in excluded_containers]
            chosen = self._next_with_space(size, owner, pipeline.id, candidates)
            if chosen is None and not self._nodes.have_room_for_container(pipeline.nodes):
                log.debug("No new container on pipeline %s: a member has no room for one", pipeline.id)
                return None
            return chosen or self.allocate_container(pipeline, owner)
        except SCMException as e:
            log.warning("No container for %s on pipeline %s: %s", owner, pipeline.id, e)
            return None

    def _owner_containers(self, pipeline_id: PipelineID, owner: str) -> list[ContainerID]:
        """The pipeline's container set (its OPEN containers) narrowed to the owner, in id order."""
        return sorted(
            cid
            for cid in self._pipelines.containers(pipeline_id)
            if (info := self._containers.get(cid)) is not None and info.owner == owner
        )

    def _next_with_space(
        self, size: int, owner: str, pipeline_id: PipelineID, ids: list[ContainerID]
    ) -> ContainerInfo | None:
        """Ozone's round-robin: ids after the last used one first, then wrapping round to it, inclusive."""
        if not ids:
            return None
        key = (owner, pipeline_id)
        last = self._last_used.get(key, ids[0])
        after = [cid for cid in ids if cid > last] or ids
        chosen = self._first_with_space(size, after) or self._first_with_space(
            size, [cid for cid in ids if cid <= last]
        )
        if chosen is not None:
            self._last_used[key] = chosen.container_id
        return chosen

    def _first_with_space(self, size: int, ids: list[ContainerID]) -> ContainerInfo | None:
        """Room by the used bytes the replicas report: like Ozone's ContainerStateManagerImpl, SCM counts
        none of the blocks it hands out, so blocks nobody writes take no container's room (issue 29)."""
        for cid in ids:
            info = self._containers[cid]
            if info.used_bytes + size <= self.container_size:
                return info
        return None
