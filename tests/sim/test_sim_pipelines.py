"""Pipeline counts under the limits (RatisPipelineProvider, BackgroundPipelineCreator) and the scrubber,
through the whole core."""

from __future__ import annotations

from collections import Counter
from itertools import combinations

import pytest

from pyozone.hdds.ids import RATIS_ONE, RATIS_THREE
from pyozone.hdds.states import NodeState, PipelineState
from pyozone.sim.cluster import SimCluster


def _settle(c, sim, minutes: int = 8) -> None:
    """Registration (30s), one-shot + 120s creator runs and reports: everything opens within minutes."""
    sim.leave_safe_mode(c)
    c.advance(minutes * sim.MINUTE)
    assert all(sim.health(c, dn) is NodeState.HEALTHY for dn in c.datanodes)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_ten_nodes_limit_one_settle_at_exactly_three(sim, seed):
    c = sim.cluster(10, {"ozone.scm.datanode.pipeline.limit": "1"}, seed=seed)
    _settle(c, sim)
    three = sim.live(c.scm)
    assert len(three) == 3 == 1 * 10 // 3
    assert all(p.state is PipelineState.OPEN for p in three)
    sim.assert_three_invariants(c.scm)
    # Ten more minutes of creator runs change nothing.
    ids = sorted(p.id for p in three)
    c.advance(10 * sim.MINUTE)
    assert sorted(p.id for p in sim.live(c.scm)) == ids


def test_nine_nodes_limit_one_settle_at_exactly_three(sim):
    c = sim.cluster(9, {"ozone.scm.datanode.pipeline.limit": "1"})
    _settle(c, sim)
    three = sim.live(c.scm)
    assert len(three) == 3
    # L=1: the three pipelines partition the nine nodes.
    assert sorted(dn for p in three for dn in p.nodes) == sorted(c.datanodes)


@pytest.mark.parametrize(("datanodes", "racks"), [(9, 1), (10, 1), (12, 3), (20, 4)])
def test_default_limit_invariants_with_gradual_registration(sim, datanodes, racks):
    """Default L=2: nodes register over 30s, so which pipelines form depends on the order; the
    invariants do not: per-node counts <= limit, total <= floor(2H/3), and the creator fills up."""
    c = sim.cluster(datanodes, racks=racks)
    assert c.scm.settings.pipeline_limits.datanode_pipeline_limit == 2
    while c.scm.safe_mode.in_safe_mode():
        c.advance(sim.SECOND)
        sim.assert_three_invariants(c.scm)
    _settle(c, sim)
    sim.assert_three_invariants(c.scm)
    sim.assert_creator_filled(c.scm)
    assert all(p.state is PipelineState.OPEN for p in sim.live(c.scm))
    if racks > 1:
        rack_of = c.scm.nodes.topology.rack_of
        assert all(len({rack_of(dn) for dn in p.nodes}) >= 2 for p in sim.live(c.scm))


def test_ratis_one_pipeline_per_healthy_node(sim):
    c = sim.cluster(7)
    assert c.scm.settings.pipeline.creation_auto_factor_one
    _settle(c, sim)
    sim.assert_one_per_healthy_node(c.scm)
    assert len(sim.live(c.scm, RATIS_ONE)) == 7
    assert all(p.state is PipelineState.OPEN for p in sim.live(c.scm, RATIS_ONE))


def test_no_ratis_one_pipelines_without_auto_factor_one(sim):
    c = sim.cluster(6, {"ozone.scm.pipeline.creation.auto.factor.one": "false"})
    _settle(c, sim)
    assert c.scm.pipelines.pipelines(RATIS_ONE) == []
    sim.assert_creator_filled(c.scm)


def test_stuck_allocated_pipeline_is_scrubbed_after_allocated_timeout(sim):
    """Two members never hear of the pipeline: it stays ALLOCATED and the scrubber removes it once
    allocated.timeout (5m) passed, on its next run (every scrub.interval, after the post-safe-mode wait).
    The stale interval is raised so that the silent members are still HEALTHY when that happens, and the
    no-leader timeout so that the member which joined alone does not ask SCM to close it first."""
    c = sim.cluster(
        6,
        {
            "ozone.scm.datanode.pipeline.limit": "1",
            "ozone.scm.pipeline.scrub.interval": "30s",
            "hdds.scm.wait.time.after.safemode.exit": "30s",
            "ozone.scm.stale.node.interval": "10m",
            "ozone.scm.dead.node.interval": "20m",
            "hdds.ratis.raft.server.Notification.no-leader.timeout": "20m",
        },
    )
    scm = c.scm
    allocated_timeout = scm.settings.pipeline.allocated_timeout_ms
    assert allocated_timeout == 5 * sim.MINUTE
    # The second RATIS/THREE pipeline is created when the sixth node registers; catch it at once.
    assert c.run_until(lambda: len(sim.live(scm)) == 2, sim.MINUTE)
    unheard = [p for p in sim.live(scm) if not any(p.id in c.datanodes[dn].pipelines for dn in p.nodes)]
    assert unheard, "every new pipeline already reached a member"
    stuck = unheard[-1]
    created = c.clock.now_ms()
    for dn in stuck.nodes[:2]:
        c.partition(dn)

    assert c.run_until(lambda: scm.pipelines.find(stuck.id) is None, allocated_timeout + 2 * sim.MINUTE)
    removed = c.clock.now_ms()
    scrub_interval = scm.settings.pipeline.scrub_interval_ms
    assert created + allocated_timeout <= removed <= created + allocated_timeout + scrub_interval + sim.SECOND
    assert scm.services_ready()
    # Removed by the scrubber, not by the node handlers: every member is still HEALTHY.
    assert all(sim.health(c, dn) is NodeState.HEALTHY for dn in stuck.nodes)
    assert all(stuck.id not in scm.nodes.pipelines(dn) for dn in stuck.nodes)


def test_scrubber_waits_for_the_time_after_safe_mode_exit(sim):
    c = sim.cluster(
        6,
        {
            "ozone.scm.datanode.pipeline.limit": "1",
            "ozone.scm.pipeline.scrub.interval": "30s",
            "ozone.scm.pipeline.allocated.timeout": "60s",
            "ozone.scm.stale.node.interval": "10m",
            "ozone.scm.dead.node.interval": "20m",
            # the member that joined alone would ask SCM to close it at the no-leader timeout (5 min)
            "hdds.ratis.raft.server.Notification.no-leader.timeout": "20m",
        },
    )
    scm = c.scm
    wait = scm.settings.safe_mode.wait_after_exit_ms
    assert wait == 5 * sim.MINUTE
    assert c.run_until(lambda: len(sim.live(scm)) == 2, sim.MINUTE)
    stuck = [p for p in sim.live(scm) if not any(p.id in c.datanodes[dn].pipelines for dn in p.nodes)][-1]
    for dn in stuck.nodes[:2]:
        c.partition(dn)
    exited = sim.leave_safe_mode(c)

    sim.advance_to(c, exited + wait - sim.SECOND)
    assert scm.pipelines.get(stuck.id).state is PipelineState.ALLOCATED, "scrubbed before the wait time"
    assert c.run_until(lambda: scm.pipelines.find(stuck.id) is None, 30 * sim.SECOND + 2 * sim.SECOND)
    assert c.clock.now_ms() <= exited + wait + 30 * sim.SECOND + sim.SECOND


def test_closed_pipeline_is_removed_after_destroy_timeout(sim):
    c = sim.cluster(
        6,
        {
            "ozone.scm.pipeline.scrub.interval": "10s",
            "hdds.scm.wait.time.after.safemode.exit": "30s",
        },
    )
    scm = c.scm
    _settle(c, sim, minutes=2)
    destroy = scm.settings.pipeline.destroy_timeout_ms
    assert destroy == 66 * sim.SECOND
    victim = sim.live(scm)[0]
    scm.pipelines.close_pipeline(victim.id)
    closed = c.clock.now_ms()
    assert scm.pipelines.get(victim.id).state is PipelineState.CLOSED

    sim.advance_to(c, closed + destroy - sim.SECOND)
    assert scm.pipelines.get(victim.id).state is PipelineState.CLOSED
    assert c.run_until(lambda: scm.pipelines.find(victim.id) is None, 10 * sim.SECOND + 2 * sim.SECOND)
    # Its members were told to drop the Ratis group, and the creator refilled the freed slots.
    assert c.run_until(
        lambda: all(victim.id not in c.datanodes[dn].pipelines for dn in victim.nodes), 2 * sim.MINUTE
    )
    c.advance(scm.settings.pipeline.creation_interval_ms)
    sim.assert_three_invariants(scm)
    sim.assert_creator_filled(scm)
    assert all(p.id != victim.id for p in scm.pipelines.pipelines(RATIS_THREE))


def test_dynamic_limit_from_metadata_disks(sim):
    """L=0: pipelineLimit(dn) = per.metadata.disk (2) x metadata volumes (2) = 4; no cluster-level cap."""
    c = SimCluster(12, metadata_disks=2, conf=sim.conf({"ozone.scm.datanode.pipeline.limit": "0"}), seed=2)
    _settle(c, sim)
    scm = c.scm
    assert {scm.nodes.pipeline_limit(dn) for dn in c.datanodes} == {4}
    sim.assert_three_invariants(scm)
    sim.assert_creator_filled(scm)
    assert len(sim.live(scm)) <= 12 * 4 // 3


def test_disallow_same_peers(sim):
    c = sim.cluster(12, {"ozone.scm.datanode.disallow.same.peers": "true"}, seed=2)
    _settle(c, sim)
    pairs = Counter(pair for p in sim.live(c.scm) for pair in combinations(sorted(p.nodes), 2))
    assert pairs and max(pairs.values()) == 1, "two pipelines share a pair of members"
    sim.assert_three_invariants(c.scm)
