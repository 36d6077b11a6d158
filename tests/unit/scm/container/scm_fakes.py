"""A fake PipelineManager (only the API the container and block code use) and an SCM harness around it.

The fake lets tests put pipelines in any state directly and decide whether creation succeeds, so the
container and block rules are tested without the pipeline placement and limit rules.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pyozone.common.timers import Timers
from pyozone.config import OzoneConfiguration
from pyozone.hdds.clock import ManualClock
from pyozone.hdds.datanode import DatanodeDetails, NodeReport, StorageReport
from pyozone.hdds.exceptions import ResultCode, SCMException
from pyozone.hdds.ids import RATIS_THREE, ContainerID, DatanodeID, PipelineID, ReplicationConfig
from pyozone.hdds.pipeline import Pipeline
from pyozone.hdds.states import PipelineState
from pyozone.scm.block.sequence_id import SequenceIdGenerator
from pyozone.scm.container.manager import ContainerManager
from pyozone.scm.events import EventQueue, SCMEvent
from pyozone.scm.node.node_manager import NodeManager
from pyozone.scm.settings import ScmSettings
from pyozone.scm.store import SCMMetadataStore

GB = 1 << 30


class FakePipelineManager:
    def __init__(self, clock: ManualClock) -> None:
        self.clock = clock
        self._pipelines: dict[PipelineID, Pipeline] = {}
        self._containers: dict[PipelineID, set[ContainerID]] = {}
        self.create_error: SCMException | None = None
        self.create_calls: list[ReplicationConfig] = []
        self._next = 0

    # test controls
    def add(
        self,
        nodes: tuple[DatanodeID, ...],
        state: PipelineState = PipelineState.OPEN,
        config: ReplicationConfig = RATIS_THREE,
    ) -> Pipeline:
        self._next += 1
        now = self.clock.wall_ms()
        pipeline = Pipeline(f"pipeline-{self._next}", config, state, tuple(nodes), now, now)
        self._pipelines[pipeline.id] = pipeline
        self._containers[pipeline.id] = set()
        return pipeline

    def set_state(self, pid: PipelineID, state: PipelineState) -> None:
        self._pipelines[pid] = self._pipelines[pid].with_state(state, self.clock.wall_ms())

    def remove(self, pid: PipelineID) -> None:
        del self._pipelines[pid]
        del self._containers[pid]

    # the PipelineManager API
    def find(self, pid: PipelineID) -> Pipeline | None:
        return self._pipelines.get(pid)

    def get(self, pid: PipelineID) -> Pipeline:
        if pid not in self._pipelines:
            raise SCMException(f"pipeline {pid} not found", ResultCode.PIPELINE_NOT_FOUND)
        return self._pipelines[pid]

    def pipelines(self, replication_config=None, state=None) -> list[Pipeline]:
        return [
            p
            for p in self._pipelines.values()
            if (replication_config is None or p.replication_config == replication_config)
            and (state is None or p.state is state)
        ]

    def open_pipelines(self, replication_config, excluded_nodes=frozenset(), excluded_pipelines=frozenset()):
        return [
            p
            for p in self.pipelines(replication_config, PipelineState.OPEN)
            if p.id not in excluded_pipelines and not excluded_nodes.intersection(p.nodes)
        ]

    def create_pipeline(
        self, replication_config: ReplicationConfig, excluded_nodes: frozenset[DatanodeID] = frozenset()
    ) -> Pipeline:
        self.create_calls.append(replication_config)
        if self.create_error is not None:
            raise self.create_error
        return self.add(("new-1", "new-2", "new-3"), PipelineState.ALLOCATED, replication_config)

    def add_container_to_pipeline(
        self, pid: PipelineID, container_id: ContainerID, force: bool = False
    ) -> None:
        pipeline = self.get(pid)
        if pipeline.is_closed() and not force:
            raise SCMException(f"pipeline {pid} is closed", ResultCode.PIPELINE_STATE_CHANGE_NOT_ALLOWED)
        self._containers[pid].add(container_id)

    def remove_container_from_pipeline(self, pid: PipelineID, container_id: ContainerID) -> None:
        self._containers.get(pid, set()).discard(container_id)

    def containers(self, pid: PipelineID) -> frozenset[ContainerID]:
        return frozenset(self._containers.get(pid, ()))


def report_written(containers: ContainerManager, container_id: ContainerID, size: int) -> None:
    """The replicas report `size` more bytes in the container: SCM's used bytes come from reports only."""
    info = containers.get(container_id)
    containers.update_stats(container_id, info.sequence_id, info.used_bytes + size, info.number_of_keys + 1)


def node_report(volumes: int) -> NodeReport:
    storage = tuple(StorageReport(f"vol-{i}", f"/data/{i}", 100 * GB, 0, 100 * GB) for i in range(volumes))
    return NodeReport(
        storage=storage, metadata_storage=(StorageReport("meta", "/meta", 10 * GB, 0, 10 * GB),)
    )


@dataclass
class Harness:
    """The pieces of an SCM the container and block code talk to, on virtual time and an in-memory store."""

    settings: ScmSettings
    clock: ManualClock = field(default_factory=ManualClock)
    events: EventQueue = field(default_factory=EventQueue)
    store: SCMMetadataStore = field(default_factory=SCMMetadataStore.in_memory)
    timers: Timers = field(default_factory=Timers)
    fired: list[tuple[SCMEvent, object]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.nodes = NodeManager(self.settings, self.clock, self.events)
        self.pipelines = FakePipelineManager(self.clock)
        self.sequence_ids = SequenceIdGenerator(self.store, 100)
        self.containers = self.new_container_manager()
        for event in (SCMEvent.CLOSE_CONTAINER, SCMEvent.CONTAINER_REGISTRATION_REPORT):
            self.events.add_handler(event, lambda payload, e=event: self.fired.append((e, payload)))

    def new_container_manager(self) -> ContainerManager:
        return ContainerManager(
            self.settings.container,
            self.clock,
            self.events,
            self.store,
            self.nodes,
            self.pipelines,
            self.sequence_ids,
        )

    def register(self, count: int, volumes: int = 1, prefix: str = "dn") -> list[DatanodeID]:
        start = len(self.nodes.nodes())
        dns = [f"{prefix}-{start + i + 1}" for i in range(count)]
        for dn in dns:
            self.nodes.register(DatanodeDetails(dn, f"host-{dn}", "10.0.0.1"), node_report(volumes))
        return dns

    def commands(self, dn: DatanodeID):
        return self.nodes.commands.peek(dn)

    def fired_of(self, event: SCMEvent) -> list[object]:
        return [payload for e, payload in self.fired if e is event]


def make_harness(overrides: dict[str, str] | None = None) -> Harness:
    return Harness(ScmSettings.from_conf(OzoneConfiguration(overrides or {})))
