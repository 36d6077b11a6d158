"""Builders for PipelineManager tests: datanodes with racks, volumes and metadata disks, on virtual time."""

from __future__ import annotations

import functools
import random
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import SimpleNamespace

import pytest

from pyozone.config import OzoneConfiguration
from pyozone.hdds.clock import ManualClock
from pyozone.hdds.datanode import DatanodeDetails, NodeReport
from pyozone.hdds.exceptions import SCMException
from pyozone.hdds.ids import RATIS_THREE, ReplicationConfig
from pyozone.hdds.pipeline import Pipeline
from pyozone.hdds.states import NodeOperationalState, PipelineState, SCMCommandType
from pyozone.hdds.topology import NetworkTopology
from pyozone.scm.events import EventQueue, SCMEvent
from pyozone.scm.node.node_manager import NodeManager
from pyozone.scm.pipeline.manager import PipelineManager
from pyozone.scm.replication.placement import PlacementPolicy
from pyozone.scm.replication.targets import choose_datanodes
from pyozone.scm.settings import ScmSettings
from pyozone.scm.store import SCMMetadataStore
from tests.builders import GB, dn_id, node_report, volume

CHECK_STEP_MS = 3_000
MAX_NODES = 64


def details(i: int, op_state: NodeOperationalState = NodeOperationalState.IN_SERVICE) -> DatanodeDetails:
    return DatanodeDetails(
        dn_id(i), f"dn{i}.example.com", f"10.1.{i // 250}.{i % 250 + 1}", persisted_op_state=op_state
    )


class PipelineCluster:
    """NodeManager + PipelineManager over an in-memory store, a ManualClock and a seeded Random.

    `racks[i]` is the rack of node i (the topology maps datanode ids); nodes past the list, or every node
    without a list, are on /default-rack.
    """

    def __init__(
        self,
        overrides: Mapping[str, str] | None = None,
        racks: Sequence[str] | None = None,
        seed: int = 7,
        store: SCMMetadataStore | None = None,
    ) -> None:
        self.conf = OzoneConfiguration(dict(overrides or {}))
        self.settings = ScmSettings.from_conf(self.conf)
        self.clock = ManualClock()
        self.events = EventQueue()
        self.seen: list[tuple[SCMEvent, object]] = []
        for kind in SCMEvent:
            self.events.add_handler(kind, lambda payload, kind=kind: self.seen.append((kind, payload)))
        mapping = {dn_id(i): rack for i, rack in enumerate(racks or ())}
        self.nm = NodeManager(self.settings, self.clock, self.events, NetworkTopology(mapping))
        self.store = store or SCMMetadataStore.in_memory()
        self.precheck = True
        self.safe_mode = False
        self.seed = seed
        self.pm = self.new_pipeline_manager()
        self.ids: list[str] = []

    def new_pipeline_manager(self, node_manager: NodeManager | None = None) -> PipelineManager:
        return PipelineManager(
            self.settings,
            self.clock,
            self.events,
            self.store,
            node_manager or self.nm,
            precheck_passed=lambda: self.precheck,
            in_safe_mode=lambda: self.safe_mode,
            rng=random.Random(self.seed),
            ec_placement=functools.partial(choose_datanodes, PlacementPolicy.RACK_SCATTER),
        )

    # ------------------------------------------------------------------ nodes
    def add(self, report: NodeReport | None = None, op_state=NodeOperationalState.IN_SERVICE) -> str:
        i = len(self.ids)
        self.nm.register(details(i, op_state), report if report is not None else node_report())
        self.ids.append(dn_id(i))
        return dn_id(i)

    def add_nodes(
        self, n: int, metadata_volumes: Sequence[int] | int = 1, data_volumes: int = 1
    ) -> list[str]:
        out = []
        for k in range(n):
            md = metadata_volumes if isinstance(metadata_volumes, int) else metadata_volumes[k]
            out.append(self.add(node_report(data_volumes, md)))
        return out

    def run(self, ms: int, silent: Iterable[str] = ()) -> None:
        """Lets time pass in health-check steps; every registered node except `silent` keeps heartbeating."""
        silent = set(silent)
        for _ in range(ms // CHECK_STEP_MS):
            self.clock.advance(CHECK_STEP_MS)
            for dn in self.ids:
                if dn not in silent:
                    self.nm.process_heartbeat(dn)
            self.nm.check_health()

    def make_stale(self, *dns: str) -> None:
        self.run(5 * 60_000 + CHECK_STEP_MS, silent=dns)

    def make_dead(self, *dns: str) -> None:
        self.run(10 * 60_000 + CHECK_STEP_MS, silent=dns)

    def rack(self, dn: str) -> str | None:
        return self.nm.topology.rack_of(dn)

    # ------------------------------------------------------------------ pipelines
    def create_until_refusal(
        self, config: ReplicationConfig = RATIS_THREE, cap: int = 10_000, **kwargs
    ) -> tuple[list[Pipeline], SCMException]:
        made = []
        for _ in range(cap):
            try:
                made.append(self.pm.create_pipeline(config, **kwargs))
            except SCMException as e:
                return made, e
        raise AssertionError(f"no refusal after {cap} pipelines")

    def report_all(self, pipeline: Pipeline, leader: str | None = None) -> None:
        leader = leader or pipeline.nodes[0]
        for dn in pipeline.nodes:
            self.pm.process_pipeline_report(dn, pipeline.id, dn == leader)

    def three_counts(self) -> Counter[str]:
        """Non-closed RATIS/THREE pipelines per node, counted from the pipeline list."""
        counts: Counter[str] = Counter()
        for p in self.pm.pipelines(RATIS_THREE):
            if p.state is not PipelineState.CLOSED:
                counts.update(p.nodes)
        return counts

    def queued(self, dn: str, kind: SCMCommandType | None = None) -> list:
        return [c for c in self.nm.commands.peek(dn) if kind is None or c.type is kind]

    def events_of(self, kind: SCMEvent) -> list[object]:
        return [p for k, p in self.seen if k is kind]


@pytest.fixture
def make_cluster() -> Callable[..., PipelineCluster]:
    return PipelineCluster


@pytest.fixture
def cluster() -> PipelineCluster:
    return PipelineCluster()


@pytest.fixture
def build() -> SimpleNamespace:
    return SimpleNamespace(GB=GB, dn_id=dn_id, volume=volume, node_report=node_report, details=details)
