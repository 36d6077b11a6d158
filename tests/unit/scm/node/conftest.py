"""Builders for NodeManager tests: a virtual-time cluster of registered datanodes and an event log."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from types import SimpleNamespace

import pytest

from pyozone.config import OzoneConfiguration
from pyozone.hdds.clock import ManualClock
from pyozone.hdds.datanode import DatanodeDetails, NodeReport
from pyozone.hdds.states import NodeOperationalState
from pyozone.hdds.topology import NetworkTopology
from pyozone.scm.events import EventQueue, SCMEvent
from pyozone.scm.node.node_manager import NodeManager
from pyozone.scm.settings import ScmSettings
from tests.builders import GB, dn_id, node_report, volume

CHECK_STEP_MS = 3_000  # ozone.scm.heartbeat.thread.interval default


def details(
    i: int,
    hostname: str | None = None,
    ip: str | None = None,
    op_state: NodeOperationalState = NodeOperationalState.IN_SERVICE,
    expiry: int = 0,
) -> DatanodeDetails:
    return DatanodeDetails(
        dn_id(i),
        hostname or f"dn{i}.example.com",
        ip or f"10.0.{i // 250}.{i % 250 + 1}",
        persisted_op_state=op_state,
        persisted_op_state_expiry=expiry,
    )


class EventLog:
    """Records (event, payload) pairs for the events it listens to."""

    def __init__(self, events: EventQueue, kinds: Iterable[SCMEvent] = tuple(SCMEvent)) -> None:
        self.seen: list[tuple[SCMEvent, object]] = []
        for kind in kinds:
            events.add_handler(kind, lambda payload, kind=kind: self.seen.append((kind, payload)))

    def of(self, *kinds: SCMEvent) -> list[tuple[SCMEvent, object]]:
        return [(k, p) for k, p in self.seen if k in kinds]

    def kinds_for(self, payload: object, *kinds: SCMEvent) -> list[SCMEvent]:
        wanted = kinds or tuple(SCMEvent)
        return [k for k, p in self.seen if p == payload and k in wanted]

    def clear(self) -> None:
        self.seen.clear()


class NodeCluster:
    """A NodeManager on a ManualClock, with helpers to register nodes and to let virtual time pass."""

    def __init__(self, overrides: Mapping[str, str] | None = None, racks: Mapping[str, str] | None = None):
        self.conf = OzoneConfiguration(dict(overrides or {}))
        self.settings = ScmSettings.from_conf(self.conf)
        self.clock = ManualClock()
        self.events = EventQueue()
        self.log = EventLog(self.events)
        self.nm = NodeManager(self.settings, self.clock, self.events, NetworkTopology(dict(racks or {})))
        self.ids: list[str] = []

    def add(self, i: int, report: NodeReport | None = None, **kwargs) -> str:
        self.nm.register(details(i, **kwargs), report if report is not None else node_report())
        self.ids.append(dn_id(i))
        return dn_id(i)

    def add_nodes(
        self, n: int, metadata_volumes: Sequence[int] | int = 1, data_volumes: int = 1
    ) -> list[str]:
        first = len(self.ids)
        added = []
        for k in range(n):
            md = metadata_volumes if isinstance(metadata_volumes, int) else metadata_volumes[k]
            added.append(self.add(first + k, node_report(data_volumes, md)))
        return added

    def check(self) -> None:
        """One health-check pass after one checker interval."""
        self.clock.advance(CHECK_STEP_MS)
        self.nm.check_health()

    def run(self, ms: int, alive: Iterable[str] = ()) -> None:
        """Lets `ms` of virtual time pass in checker steps; nodes in `alive` heartbeat before every pass."""
        alive = list(alive)
        assert ms % CHECK_STEP_MS == 0
        for _ in range(ms // CHECK_STEP_MS):
            self.clock.advance(CHECK_STEP_MS)
            for dn in alive:
                self.nm.process_heartbeat(dn)
            self.nm.check_health()

    def health(self, dn: str):
        return self.nm.node(dn).status.health


@pytest.fixture
def make_cluster() -> Callable[..., NodeCluster]:
    return NodeCluster


@pytest.fixture
def cluster() -> NodeCluster:
    return NodeCluster()


@pytest.fixture
def build() -> SimpleNamespace:
    """The plain builders, for tests that need a report or identity of their own."""
    return SimpleNamespace(GB=GB, dn_id=dn_id, volume=volume, node_report=node_report, details=details)
