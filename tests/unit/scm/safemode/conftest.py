"""Fakes of the managers the safe-mode rules read, and a harness firing the events SCM core fires."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from types import SimpleNamespace
from typing import Any

import pytest

from pyozone.config import OzoneConfiguration
from pyozone.hdds.clock import ManualClock
from pyozone.hdds.ids import RATIS_THREE, ReplicationConfig
from pyozone.hdds.messages import PipelineReport
from pyozone.hdds.node_status import IN_SERVICE_HEALTHY, NodeStatus
from pyozone.hdds.pipeline import Pipeline
from pyozone.hdds.safemode_status import RuleStatus, SafeModeStatus
from pyozone.hdds.states import LifeCycleState, PipelineState
from pyozone.scm.events import EventQueue, SCMEvent
from pyozone.scm.safemode.manager import SafeModeManager
from pyozone.scm.settings import ScmSettings


@dataclass(frozen=True)
class FakeContainer:
    container_id: int
    state: LifeCycleState = LifeCycleState.CLOSED
    replication_config: ReplicationConfig = RATIS_THREE
    number_of_keys: int = 1


class FakeContainerManager:
    def __init__(self) -> None:
        self.by_id: dict[int, FakeContainer] = {}
        self.replica_dns: dict[int, tuple[str, ...]] = {}  # what reports put in the replica map

    def replicas(self, cid: int) -> tuple[SimpleNamespace, ...]:
        return tuple(SimpleNamespace(datanode=dn) for dn in self.replica_dns.get(cid, ()))

    def add(self, container: FakeContainer) -> None:
        self.by_id[container.container_id] = container

    def set_state(self, cid: int, state: LifeCycleState) -> None:
        self.by_id[cid] = replace(self.by_id[cid], state=state)

    def containers(self, state: LifeCycleState | None = None) -> list[FakeContainer]:
        return [c for c in self.by_id.values() if state is None or c.state is state]

    def find(self, cid: int) -> FakeContainer | None:
        return self.by_id.get(cid)


class FakePipelineManager:
    def __init__(self) -> None:
        self.by_id: dict[str, Pipeline] = {}

    def add(self, pipeline: Pipeline) -> None:
        self.by_id[pipeline.id] = pipeline

    def find(self, pid: str) -> Pipeline | None:
        return self.by_id.get(pid)

    def pipelines(
        self, replication_config: ReplicationConfig | None = None, state: PipelineState | None = None
    ) -> list[Pipeline]:
        return [
            p
            for p in self.by_id.values()
            if (replication_config is None or p.replication_config == replication_config)
            and (state is None or p.state is state)
        ]


@dataclass
class FakeNode:
    status: NodeStatus = IN_SERVICE_HEALTHY


@dataclass
class FakeNodeManager:
    by_id: dict[str, FakeNode] = field(default_factory=dict)

    def get(self, dn: str) -> FakeNode | None:
        return self.by_id.get(dn)


class Harness:
    """One SCM's safe-mode view: fakes to seed before `build()`, then events as SCM core fires them."""

    def __init__(self, conf: dict[str, str] | None = None) -> None:
        self.conf = OzoneConfiguration(conf)
        self.clock = ManualClock(start_ms=1_000)
        self.events = EventQueue()
        self.nodes = FakeNodeManager({f"d{i}": FakeNode() for i in range(1, 10)})
        self.pipelines = FakePipelineManager()
        self.containers = FakeContainerManager()
        self.statuses: list[SafeModeStatus] = []
        self.events.add_handler(SCMEvent.SAFE_MODE_STATUS, self.statuses.append)
        self.manager: SafeModeManager | None = None

    def build(self, state_machine_ready: Callable[[], bool] | None = None) -> SafeModeManager:
        """`state_machine_ready`: an SCM of an HA service (StateMachineReadyRule)."""
        self.manager = SafeModeManager(
            ScmSettings.from_conf(self.conf),
            self.clock,
            self.events,
            self.nodes,
            self.pipelines,
            self.containers,
            state_machine_ready,
        )
        return self.manager

    def add_container(
        self,
        cid: int,
        state: LifeCycleState = LifeCycleState.CLOSED,
        config: ReplicationConfig = RATIS_THREE,
        keys: int = 1,
    ) -> None:
        self.containers.add(FakeContainer(cid, state, config, keys))

    def add_pipeline(
        self,
        pid: str,
        nodes: Iterable[str] = ("d1", "d2", "d3"),
        state: PipelineState = PipelineState.OPEN,
        config: ReplicationConfig = RATIS_THREE,
    ) -> None:
        self.pipelines.add(Pipeline(pid, config, state, tuple(nodes), created_ms=0, state_entered_ms=0))

    @property
    def prechecks_completed(self) -> int:
        return self.events.fired[SCMEvent.PRE_CHECK_COMPLETED]

    def register(self, dn: str, containers: Iterable[int] = ()) -> None:
        """A datanode registers with its full container report, as SCMDatanodeProtocolServer fires it."""
        self.events.fire(SCMEvent.NODE_REGISTRATION_CONT_REPORT, dn)
        self.events.fire(SCMEvent.CONTAINER_REGISTRATION_REPORT, (dn, list(containers)))

    def open_pipeline(self, pid: str) -> None:
        self.events.fire(SCMEvent.OPEN_PIPELINE, self.pipelines.by_id[pid])

    def report_pipelines(self, dn: str, pids: Iterable[str]) -> None:
        self.events.fire(SCMEvent.PIPELINE_REPORT, (dn, [PipelineReport(pid) for pid in pids]))

    def rule(self, name: str) -> Any:
        assert self.manager is not None
        return next(r for r in self.manager.rules() if r.name == name)

    def statuses_by_name(self) -> dict[str, RuleStatus]:
        assert self.manager is not None
        return {s.name: s for s in self.manager.rule_statuses()}

    def failing(self) -> set[str]:
        return {name for name, s in self.statuses_by_name().items() if not s.validated}


@pytest.fixture
def make_harness() -> Callable[..., Harness]:
    return Harness
