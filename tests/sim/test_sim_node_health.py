"""Node health through the whole core (NodeStateManager and the node handlers): kill, restart, partition,
heal, slow."""

from __future__ import annotations

from itertools import pairwise

from pyozone.hdds.ids import RATIS_THREE
from pyozone.hdds.states import NodeState, PipelineState
from pyozone.sim.status import cluster_status

H, R, S, D = NodeState.HEALTHY, NodeState.HEALTHY_READONLY, NodeState.STALE, NodeState.DEAD


def _victim(c, sim):
    """A node that is a member of at least one RATIS/THREE pipeline."""
    return sim.live(c.scm)[0].nodes[0]


def test_kill_then_restart_with_default_intervals(sim):
    c = sim.cluster(5)
    scm = c.scm
    intervals = scm.nodes.intervals
    assert (intervals.check_interval_ms, intervals.stale_ms, intervals.dead_ms) == (3_000, 300_000, 600_000)
    assert c.heartbeat_ms == sim.HEARTBEAT
    sim.leave_safe_mode(c)
    c.advance(3 * sim.MINUTE)
    sim.assert_three_invariants(scm)

    dn = _victim(c, sim)
    its_pipelines = [p.id for p in scm.pipelines.pipelines_of_node(dn)]
    its_three = [p.id for p in scm.pipelines.pipelines_of_node(dn) if p.replication_config == RATIS_THREE]
    assert its_three and all(scm.pipelines.get(p).state is PipelineState.OPEN for p in its_three)
    c.kill(dn)
    last_hb = scm.nodes.node(dn).last_heartbeat_ms
    slack = sim.CHECK + sim.HEARTBEAT

    sim.advance_to(c, last_hb + 4 * sim.MINUTE + 59 * sim.SECOND)
    assert sim.health(c, dn) is H

    # Sample every second: the node is STALE by 5m + slack, and its pipelines are CLOSED at that moment.
    assert c.run_until(lambda: sim.health(c, dn) is not H, slack + sim.SECOND)
    stale_at = c.clock.now_ms()
    assert sim.health(c, dn) is S
    assert last_hb + intervals.stale_ms < stale_at <= last_hb + intervals.stale_ms + slack
    for pid in its_pipelines:
        assert scm.pipelines.get(pid).state is PipelineState.CLOSED
    assert not any(dn in p.nodes for p in sim.live(scm))

    assert c.run_until(lambda: sim.health(c, dn) is not S, 5 * sim.MINUTE + slack + sim.SECOND)
    dead_at = c.clock.now_ms()
    assert sim.health(c, dn) is D
    assert last_hb + intervals.dead_ms < dead_at <= last_hb + intervals.dead_ms + slack
    # DeadNodeHandler removed its pipelines: no longer known, no longer listed.
    for pid in its_pipelines:
        assert scm.pipelines.find(pid) is None
    assert all(dn not in p.nodes for p in scm.pipelines.pipelines())
    assert scm.pipelines.pipelines_of_node(dn) == []
    assert scm.nodes.pipelines(dn) == frozenset()
    sim.assert_three_invariants(scm)

    c.advance(sim.MINUTE)
    c.restart(dn)
    seen = sim.track_health(c, dn, c.clock.now_ms() + 2 * sim.MINUTE)
    states = [s for _, s in seen]
    assert states[:3] == [D, R, H], seen
    assert states[-1] is H
    healthy_at = next(t for t, s in seen if s is H)

    # The HEALTHY_READONLY_TO_HEALTHY one-shot (or the 120s creator) forms pipelines including it.
    creation_interval = scm.settings.pipeline.creation_interval_ms
    sim.advance_to(c, max(c.clock.now_ms(), healthy_at + creation_interval + sim.SECOND))
    with_it = [p for p in sim.live(scm) if dn in p.nodes]
    assert with_it, "no new RATIS/THREE pipeline includes the restarted node"
    assert all(p.id not in its_pipelines for p in with_it)
    assert c.run_until(
        lambda: all(scm.pipelines.get(p.id).state is PipelineState.OPEN for p in with_it), 2 * sim.MINUTE
    )
    sim.assert_three_invariants(scm)
    sim.assert_creator_filled(scm)
    sim.assert_one_per_healthy_node(scm)


def test_new_pipeline_for_recovered_node_comes_from_the_one_shot_trigger(sim):
    """With the periodic creator far away (1h), only the HEALTHY_READONLY_TO_HEALTHY trigger can place it."""
    c = sim.cluster(
        5,
        {
            "ozone.scm.pipeline.creation.interval": "1h",
            "ozone.scm.stale.node.interval": "90s",
            "ozone.scm.dead.node.interval": "180s",
        },
    )
    scm = c.scm
    sim.leave_safe_mode(c)
    c.advance(sim.MINUTE)
    dn = _victim(c, sim)
    c.kill(dn)
    assert c.run_until(lambda: sim.health(c, dn) is D, 5 * sim.MINUTE)
    c.restart(dn)
    seen = sim.track_health(c, dn, c.clock.now_ms() + sim.MINUTE)
    assert [s for _, s in seen][:3] == [D, R, H], seen
    healthy_at = next(t for t, s in seen if s is H)
    mine = [p for p in sim.live(scm) if dn in p.nodes]
    assert mine, "the HEALTHY_READONLY_TO_HEALTHY trigger created no pipeline with the node"
    epoch = c.clock.wall_ms() - c.clock.now_ms()
    assert all(healthy_at - sim.SECOND <= p.created_ms - epoch <= healthy_at + sim.SECOND for p in mine)


def test_partition_looks_like_a_kill_to_scm_and_heal_recovers_through_readonly(sim):
    overrides = {"ozone.scm.stale.node.interval": "90s", "ozone.scm.dead.node.interval": "180s"}
    killed, parted = sim.cluster(6, overrides, seed=4), sim.cluster(6, overrides, seed=4)
    for c in (killed, parted):
        sim.leave_safe_mode(c)
        c.advance(sim.MINUTE)
    dn = _victim(killed, sim)
    assert dn == _victim(parted, sim)
    its_pipelines = [p.id for p in parted.scm.pipelines.pipelines_of_node(dn)]
    killed.kill(dn)
    parted.partition(dn)

    # SCM cannot tell the two apart: same status rows and the same pipelines at every sample.
    end = parted.clock.now_ms() + 5 * sim.MINUTE
    while parted.clock.now_ms() < end:
        killed.advance(5 * sim.SECOND)
        parted.advance(5 * sim.SECOND)
        now = parted.clock.now_ms()
        assert cluster_status(killed.scm, now) == cluster_status(parted.scm, now)
        assert sorted((p.id, p.state) for p in killed.scm.pipelines.pipelines()) == sorted(
            (p.id, p.state) for p in parted.scm.pipelines.pipelines()
        )
        assert sim.health(killed, dn) is sim.health(parted, dn)
    assert sim.health(parted, dn) is D
    assert all(parted.scm.pipelines.find(pid) is None for pid in its_pipelines)

    # Heal: the node is still registered, so its next heartbeat resurrects it through HEALTHY_READONLY.
    parted.heal(dn)
    seen = sim.track_health(parted, dn, parted.clock.now_ms() + 2 * sim.MINUTE)
    assert [s for _, s in seen] == [D, R, H], seen
    node = parted.datanodes[dn]
    # It was told to drop the Ratis groups SCM removed while it was away.
    assert not set(its_pipelines) & set(node.pipelines)
    assert parted.run_until(
        lambda: any(dn in p.nodes for p in parted.scm.pipelines.pipelines(RATIS_THREE, PipelineState.OPEN)),
        5 * sim.MINUTE,
    )


def test_short_partition_does_not_change_health(sim):
    c = sim.cluster(5)
    sim.leave_safe_mode(c)
    dn = _victim(c, sim)
    c.partition(dn)
    c.advance(4 * sim.MINUTE)
    c.heal(dn)
    seen = sim.track_health(c, dn, c.clock.now_ms() + 3 * sim.MINUTE)
    assert [s for _, s in seen] == [H]
    assert any(dn in p.nodes for p in c.scm.pipelines.pipelines(RATIS_THREE, PipelineState.OPEN))


def test_slow_node_flips_stale_and_recovers_through_readonly(sim):
    """Heartbeat every 6 min (30s x 12) with stale = 5m: STALE before each heartbeat, never DEAD."""
    c = sim.cluster(5)
    scm = c.scm
    sim.leave_safe_mode(c)
    c.advance(sim.MINUTE)
    dn = _victim(c, sim)
    c.slow(dn, 12)
    assert c.heartbeat_ms * 12 > scm.nodes.intervals.stale_ms

    stale_checks = []

    def on_sample(now, state):
        if state is S and (not stale_checks or stale_checks[-1][0] != "seen"):
            # At every STALE entry: silent for more than the stale interval, every pipeline of it CLOSED.
            silent = now - scm.nodes.node(dn).last_heartbeat_ms
            closed = all(p.state is PipelineState.CLOSED for p in scm.pipelines.pipelines_of_node(dn))
            stale_checks.append(("seen", silent, closed))
        elif state is not S and stale_checks and stale_checks[-1][0] == "seen":
            stale_checks.append(("left", 0, True))

    seen = sim.track_health(c, dn, c.clock.now_ms() + 40 * sim.MINUTE, on_sample=on_sample)
    states = [s for _, s in seen]
    assert D not in states
    # Only the legal recoveries: STALE -> HEALTHY_READONLY -> HEALTHY, never STALE -> HEALTHY.
    for before, after in pairwise(states):
        assert (before, after) in {(H, S), (S, R), (R, H)}, seen
    assert states.count(S) >= 5
    assert states.count(R) == states.count(S)
    for kind, silent, closed in stale_checks:
        if kind == "seen":
            assert (
                scm.nodes.intervals.stale_ms < silent <= scm.nodes.intervals.stale_ms + sim.CHECK + sim.SECOND
            )
            assert closed
    # Each episode: STALE for about one minute (6m heartbeat period - 5m stale interval).
    for (t0, s0), (t1, _) in pairwise(seen):
        if s0 is S:
            assert 50 * sim.SECOND <= t1 - t0 <= 60 * sim.SECOND, seen
