"""Shared tools for the whole-core simulation tests.

Every test drives the real StorageContainerManager through SimCluster on virtual time and only reads
manager state; nothing here changes the core. The helpers come as the `sim` fixture (a namespace),
since pytest's conftest modules are not importable by name from test modules.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from types import SimpleNamespace

import pytest

from pyozone.config import OzoneConfiguration
from pyozone.hdds.ids import RATIS_ONE, RATIS_THREE, DatanodeID
from pyozone.hdds.pipeline import Pipeline
from pyozone.hdds.states import NodeState, PipelineState
from pyozone.scm.scm import StorageContainerManager
from pyozone.sim.cluster import SimCluster

SECOND = 1_000
MINUTE = 60 * SECOND
MB = 1 << 20

# Defaults the tests reason about (ozone-default.xml): heartbeat 30s, check every 3s, stale 5m, dead 10m.
HEARTBEAT = 30 * SECOND
CHECK = 3 * SECOND


def conf(overrides: Mapping[str, str] | None = None) -> OzoneConfiguration:
    """`-Dkey=value` style overrides on top of Ozone's defaults."""
    return OzoneConfiguration(dict(overrides or {}))


def cluster(
    datanodes: int, overrides: Mapping[str, str] | None = None, seed: int = 1, racks: int = 1
) -> SimCluster:
    return SimCluster(datanodes, racks=racks, conf=conf(overrides), seed=seed)


def advance_to(c: SimCluster, t_ms: int) -> None:
    """Moves virtual time to the absolute instant t_ms (no-op if already there)."""
    now = c.clock.now_ms()
    if t_ms > now:
        c.advance(t_ms - now)


def health(c: SimCluster, dn: DatanodeID) -> NodeState:
    return c.scm.nodes.node(dn).status.health


def live(scm: StorageContainerManager, config=RATIS_THREE) -> list[Pipeline]:
    """Pipelines of the config that are not CLOSED (ALLOCATED, OPEN, DORMANT): what the limits count."""
    return [p for p in scm.pipelines.pipelines(config) if p.state is not PipelineState.CLOSED]


def leave_safe_mode(c: SimCluster, timeout_ms: int = 10 * MINUTE) -> int:
    """Runs until SCM is out of safe mode; returns the virtual time it left."""
    assert c.run_until(lambda: not c.scm.safe_mode.in_safe_mode(), timeout_ms), (
        f"SCM still in safe mode: {[(r.name, r.status_text) for r in c.scm.safe_mode.rule_statuses()]}"
    )
    return c.clock.now_ms()


def track_health(
    c: SimCluster, dn: DatanodeID, until_ms: int, step_ms: int = SECOND, on_sample: Callable | None = None
) -> list[tuple[int, NodeState]]:
    """Samples one node's health every step until until_ms; returns the (time, state) changes seen."""
    changes = [(c.clock.now_ms(), health(c, dn))]
    while c.clock.now_ms() < until_ms:
        c.advance(min(step_ms, until_ms - c.clock.now_ms()))
        state = health(c, dn)
        if on_sample is not None:
            on_sample(c.clock.now_ms(), state)
        if state is not changes[-1][1]:
            changes.append((c.clock.now_ms(), state))
    return changes


def three_counts_per_node(scm: StorageContainerManager) -> Counter:
    return Counter(dn for p in live(scm) for dn in p.nodes)


def assert_three_invariants(scm: StorageContainerManager) -> None:
    """RatisPipelineProvider/PipelinePlacementPolicy invariants of RATIS/THREE pipelines that hold whatever
    the registration order.

    * every pipeline has 3 distinct members;
    * a node's non-closed RATIS/THREE pipelines never exceed its pipeline limit
      (SCMNodeManager.pipelineLimit);
    * with a fixed limit L > 0, non-closed pipelines never exceed floor(L x H / 3), H = IN_SERVICE+HEALTHY.
    """
    pipelines = live(scm)
    for p in pipelines:
        assert len(p.nodes) == 3 and len(set(p.nodes)) == 3, p
    for dn, n in three_counts_per_node(scm).items():
        assert n <= scm.nodes.pipeline_limit(dn), (dn, n, scm.nodes.pipeline_limit(dn))
    limit = scm.settings.pipeline_limits.datanode_pipeline_limit
    if limit > 0:
        healthy = len(scm.nodes.healthy_in_service())
        assert len(pipelines) <= limit * healthy // 3, (len(pipelines), limit, healthy)


def assert_creator_filled(scm: StorageContainerManager) -> None:
    """The background creator fills up to the limits (BackgroundPipelineCreator): either the cluster-level cap
    is reached, or fewer than 3 healthy nodes still have a free slot (single-rack clusters)."""
    limit = scm.settings.pipeline_limits.datanode_pipeline_limit
    healthy = [i.uuid for i in scm.nodes.healthy_in_service()]
    counts = three_counts_per_node(scm)
    with_room = [dn for dn in healthy if counts[dn] < scm.nodes.pipeline_limit(dn)]
    at_cap = limit > 0 and len(live(scm)) >= limit * len(healthy) // 3
    assert at_cap or len(with_room) < 3, (len(live(scm)), len(healthy), len(with_room))


def assert_one_per_healthy_node(scm: StorageContainerManager) -> None:
    """auto.factor.one: exactly one non-closed RATIS/ONE pipeline per healthy in-service node."""
    ones = live(scm, RATIS_ONE)
    members = Counter(p.nodes[0] for p in ones)
    healthy = {i.uuid for i in scm.nodes.healthy_in_service()}
    assert all(n == 1 for n in members.values()), members
    assert set(members) == healthy, (healthy - set(members), set(members) - healthy)


@pytest.fixture
def sim() -> SimpleNamespace:
    return SimpleNamespace(
        SECOND=SECOND,
        MINUTE=MINUTE,
        MB=MB,
        HEARTBEAT=HEARTBEAT,
        CHECK=CHECK,
        conf=conf,
        cluster=cluster,
        advance_to=advance_to,
        health=health,
        live=live,
        leave_safe_mode=leave_safe_mode,
        track_health=track_health,
        three_counts_per_node=three_counts_per_node,
        assert_three_invariants=assert_three_invariants,
        assert_creator_filled=assert_creator_filled,
        assert_one_per_healthy_node=assert_one_per_healthy_node,
    )
