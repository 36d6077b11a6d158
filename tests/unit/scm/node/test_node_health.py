"""The node health state machine and its timing (Ozone's NodeStateManager), driven by virtual time.

Default intervals: checker every 3s, STALE after 5m without a heartbeat, DEAD after 10m. Registration
at t=0 counts as the last heartbeat.
"""

from __future__ import annotations

import pytest

from pyozone.hdds.datanode import LayoutVersion
from pyozone.hdds.states import NodeState, SCMCommandType
from pyozone.scm.events import SCMEvent
from pyozone.scm.node.health import HealthIntervals, NodeLifeCycleEvent, health_transitions, next_state

E = NodeLifeCycleEvent
S = 1_000
M = 60 * S
HEALTH_EVENTS = (
    SCMEvent.STALE_NODE,
    SCMEvent.DEAD_NODE,
    SCMEvent.HEALTHY_READONLY_NODE,
    SCMEvent.HEALTHY_READONLY_TO_HEALTHY_NODE,
)
DEFAULT = HealthIntervals(3 * S, 5 * M, 10 * M)
OLD_LAYOUT = LayoutVersion(metadata_layout_version=0, software_layout_version=1)


# ---------------------------------------------------------------------------------------- state machine
@pytest.mark.parametrize(
    ("state", "event", "target"),
    [
        (NodeState.HEALTHY, E.TIMEOUT, NodeState.STALE),
        (NodeState.HEALTHY, E.LAYOUT_MISMATCH, NodeState.HEALTHY_READONLY),
        (NodeState.HEALTHY_READONLY, E.LAYOUT_MATCH, NodeState.HEALTHY),
        (NodeState.HEALTHY_READONLY, E.TIMEOUT, NodeState.STALE),
        (NodeState.STALE, E.TIMEOUT, NodeState.DEAD),
        (NodeState.STALE, E.RESTORE, NodeState.HEALTHY_READONLY),
        (NodeState.DEAD, E.RESURRECT, NodeState.HEALTHY_READONLY),
    ],
)
def test_transition_table(state: NodeState, event: NodeLifeCycleEvent, target: NodeState) -> None:
    assert next_state(state, event) is target


def test_only_the_seven_transitions_exist() -> None:
    defined = {
        (NodeState.HEALTHY, E.TIMEOUT),
        (NodeState.HEALTHY, E.LAYOUT_MISMATCH),
        (NodeState.HEALTHY_READONLY, E.LAYOUT_MATCH),
        (NodeState.HEALTHY_READONLY, E.TIMEOUT),
        (NodeState.STALE, E.TIMEOUT),
        (NodeState.STALE, E.RESTORE),
        (NodeState.DEAD, E.RESURRECT),
    }
    for state in NodeState:
        for event in E:
            if (state, event) not in defined:
                assert next_state(state, event) is None, (state, event)


def test_recovery_never_jumps_straight_to_healthy() -> None:
    for state in (NodeState.STALE, NodeState.DEAD):
        for event in E:
            assert next_state(state, event) is not NodeState.HEALTHY


@pytest.mark.parametrize(
    ("state", "last_hb", "now", "layout_ok", "events"),
    [
        (NodeState.HEALTHY, 0, 5 * M, True, []),  # exactly at the stale deadline: not yet
        (NodeState.HEALTHY, 0, 5 * M + 1, True, [E.TIMEOUT]),
        (NodeState.HEALTHY, 0, 60 * M, True, [E.TIMEOUT]),  # long overdue: still only one step (STALE)
        (NodeState.HEALTHY, 0, 1 * M, False, [E.LAYOUT_MISMATCH]),
        (NodeState.HEALTHY, 0, 6 * M, False, [E.LAYOUT_MISMATCH, E.TIMEOUT]),
        (NodeState.HEALTHY_READONLY, 0, 1 * M, True, [E.LAYOUT_MATCH]),
        (NodeState.HEALTHY_READONLY, 0, 1 * M, False, []),
        (NodeState.HEALTHY_READONLY, 0, 6 * M, False, [E.TIMEOUT]),
        (NodeState.HEALTHY_READONLY, 0, 6 * M, True, [E.LAYOUT_MATCH, E.TIMEOUT]),
        (NodeState.STALE, 0, 10 * M, True, []),  # exactly at the dead deadline: not yet
        (NodeState.STALE, 0, 10 * M + 1, True, [E.TIMEOUT]),
        (NodeState.STALE, 7 * M, 8 * M, True, [E.RESTORE]),
        (NodeState.DEAD, 0, 20 * M, True, []),
        (NodeState.DEAD, 19 * M, 20 * M, True, [E.RESURRECT]),
        (NodeState.DEAD, 19 * M, 20 * M, False, [E.RESURRECT]),
    ],
)
def test_health_transitions_per_pass(
    state: NodeState, last_hb: int, now: int, layout_ok: bool, events: list[NodeLifeCycleEvent]
) -> None:
    assert health_transitions(state, last_hb, now, layout_ok, DEFAULT) == events


# ---------------------------------------------------------------------------------------- timing
def test_stale_after_five_minutes_not_before(cluster) -> None:
    dn = cluster.add(0)
    cluster.run(5 * M)  # last pass at exactly t = 5m: the heartbeat is not older than the interval
    assert cluster.health(dn) is NodeState.HEALTHY
    assert cluster.log.of(*HEALTH_EVENTS) == []
    cluster.check()  # t = 5m 3s
    assert cluster.health(dn) is NodeState.STALE
    assert cluster.log.of(*HEALTH_EVENTS) == [(SCMEvent.STALE_NODE, dn)]


def test_dead_after_ten_minutes_not_before(cluster) -> None:
    dn = cluster.add(0)
    cluster.run(10 * M)
    assert cluster.health(dn) is NodeState.STALE
    cluster.check()  # t = 10m 3s
    assert cluster.health(dn) is NodeState.DEAD
    assert cluster.log.of(*HEALTH_EVENTS) == [(SCMEvent.STALE_NODE, dn), (SCMEvent.DEAD_NODE, dn)]
    cluster.run(30 * M)
    assert cluster.health(dn) is NodeState.DEAD
    assert len(cluster.log.of(*HEALTH_EVENTS)) == 2  # no event is fired again


def test_heartbeats_keep_a_node_healthy(cluster) -> None:
    alive, silent = cluster.add(0), cluster.add(1)
    cluster.run(15 * M, alive=[alive])
    assert cluster.health(alive) is NodeState.HEALTHY
    assert cluster.health(silent) is NodeState.DEAD
    assert cluster.log.kinds_for(alive, *HEALTH_EVENTS) == []


def test_stale_measured_from_the_last_heartbeat(cluster) -> None:
    dn = cluster.add(0)
    cluster.run(4 * M)
    cluster.clock.advance(1_000)
    cluster.nm.process_heartbeat(dn)  # last heartbeat at t = 4m 1s
    cluster.clock.advance(2_000)
    cluster.nm.check_health()  # t = 4m 3s
    cluster.run(5 * M - 3 * S)  # t = 9m: heartbeat is 4m 59s old
    assert cluster.health(dn) is NodeState.HEALTHY
    cluster.check()  # t = 9m 3s: 5m 2s old
    assert cluster.health(dn) is NodeState.STALE


def test_one_transition_per_pass_even_when_long_overdue(cluster) -> None:
    dn = cluster.add(0)
    cluster.nm.check_health()  # first pass at t = 0
    cluster.clock.advance(12 * M)
    cluster.nm.check_health()  # delayed by 12m >= min(stale, dead): skipped, nothing changes
    assert cluster.health(dn) is NodeState.HEALTHY
    assert cluster.nm.skipped_health_checks == 1
    cluster.check()  # heartbeat is 12m 3s old, past the dead interval, yet one pass moves one step
    assert cluster.health(dn) is NodeState.STALE
    cluster.check()
    assert cluster.health(dn) is NodeState.DEAD
    assert cluster.log.of(*HEALTH_EVENTS) == [(SCMEvent.STALE_NODE, dn), (SCMEvent.DEAD_NODE, dn)]


def test_a_pass_delayed_by_the_stale_interval_is_skipped(cluster) -> None:
    dn = cluster.add(0)
    cluster.nm.check_health()
    cluster.clock.advance(5 * M + 1_000)
    cluster.nm.check_health()
    assert cluster.nm.skipped_health_checks == 1
    assert cluster.health(dn) is NodeState.HEALTHY  # would be STALE had the pass run
    cluster.check()
    assert cluster.health(dn) is NodeState.STALE
    assert cluster.nm.skipped_health_checks == 1


def test_delay_exactly_the_minimum_interval_skips_just_below_does_not(cluster) -> None:
    cluster.add(0)
    cluster.nm.check_health()
    cluster.clock.advance(5 * M - 1)
    cluster.nm.check_health()
    assert cluster.nm.skipped_health_checks == 0
    cluster.clock.advance(5 * M)
    cluster.nm.check_health()
    assert cluster.nm.skipped_health_checks == 1


def test_skip_threshold_uses_the_sanitised_stale_interval(make_cluster) -> None:
    c = make_cluster({"ozone.scm.stale.node.interval": "2m", "ozone.scm.dead.node.interval": "20m"})
    dn = c.add(0)
    c.nm.check_health()
    c.clock.advance(2 * M)
    c.nm.check_health()
    assert c.nm.skipped_health_checks == 1
    c.check()  # 2m 3s since registration
    assert c.health(dn) is NodeState.STALE


def test_returning_stale_node_passes_healthy_readonly_for_one_pass(cluster) -> None:
    dn = cluster.add(0)
    cluster.run(5 * M + 3 * S)
    assert cluster.health(dn) is NodeState.STALE
    cluster.clock.advance(1_000)
    cluster.nm.process_heartbeat(dn)
    assert cluster.health(dn) is NodeState.STALE  # the heartbeat alone changes nothing
    cluster.check()
    assert cluster.health(dn) is NodeState.HEALTHY_READONLY
    cluster.check()
    assert cluster.health(dn) is NodeState.HEALTHY
    assert cluster.log.of(*HEALTH_EVENTS) == [
        (SCMEvent.STALE_NODE, dn),
        (SCMEvent.HEALTHY_READONLY_NODE, dn),
        (SCMEvent.HEALTHY_READONLY_TO_HEALTHY_NODE, dn),
    ]


def test_returning_dead_node_passes_healthy_readonly_for_one_pass(cluster) -> None:
    dn = cluster.add(0)
    cluster.run(10 * M + 3 * S)
    assert cluster.health(dn) is NodeState.DEAD
    cluster.run(60 * M)
    cluster.nm.process_heartbeat(dn)
    cluster.check()
    assert cluster.health(dn) is NodeState.HEALTHY_READONLY
    cluster.check()
    assert cluster.health(dn) is NodeState.HEALTHY
    assert cluster.log.of(*HEALTH_EVENTS) == [
        (SCMEvent.STALE_NODE, dn),
        (SCMEvent.DEAD_NODE, dn),
        (SCMEvent.HEALTHY_READONLY_NODE, dn),
        (SCMEvent.HEALTHY_READONLY_TO_HEALTHY_NODE, dn),
    ]


def test_returning_node_stays_readonly_while_its_layout_mismatches(cluster) -> None:
    dn = cluster.add(0)
    cluster.run(5 * M + 3 * S)
    cluster.nm.process_heartbeat(dn, layout=OLD_LAYOUT)
    cluster.check()
    assert cluster.health(dn) is NodeState.HEALTHY_READONLY
    cluster.run(60 * S, alive=[dn])
    assert cluster.health(dn) is NodeState.HEALTHY_READONLY
    cluster.nm.process_heartbeat(dn, layout=cluster.nm.layout)
    cluster.check()
    assert cluster.health(dn) is NodeState.HEALTHY


def test_node_registering_with_old_layout_starts_readonly(cluster, build) -> None:
    info = cluster.nm.register(build.details(0), build.node_report(), layout=OLD_LAYOUT)
    assert info.status.health is NodeState.HEALTHY_READONLY
    commands = cluster.nm.process_heartbeat(info.uuid, layout=OLD_LAYOUT)
    assert [c.type for c in commands] == [SCMCommandType.finalizeNewLayoutVersionCommand]
    cluster.check()
    assert cluster.health(info.uuid) is NodeState.HEALTHY_READONLY
    cluster.nm.process_heartbeat(info.uuid, layout=cluster.nm.layout)
    cluster.check()
    assert cluster.health(info.uuid) is NodeState.HEALTHY
    assert cluster.log.kinds_for(info.uuid, *HEALTH_EVENTS) == [SCMEvent.HEALTHY_READONLY_TO_HEALTHY_NODE]


def test_healthy_node_reporting_old_layout_becomes_readonly(cluster) -> None:
    dn = cluster.add(0)
    cluster.nm.process_heartbeat(dn, layout=OLD_LAYOUT)
    cluster.check()
    assert cluster.health(dn) is NodeState.HEALTHY_READONLY
    assert cluster.log.kinds_for(dn, *HEALTH_EVENTS) == [SCMEvent.HEALTHY_READONLY_NODE]


def test_readonly_node_without_heartbeats_goes_stale_then_dead(cluster, build) -> None:
    info = cluster.nm.register(build.details(0), build.node_report(), layout=OLD_LAYOUT)
    cluster.run(5 * M)
    assert cluster.health(info.uuid) is NodeState.HEALTHY_READONLY
    cluster.check()
    assert cluster.health(info.uuid) is NodeState.STALE
    cluster.run(5 * M)
    assert cluster.health(info.uuid) is NodeState.DEAD


def test_new_node_registers_healthy_and_fires_new_node(cluster) -> None:
    dn = cluster.add(0)
    assert cluster.health(dn) is NodeState.HEALTHY
    assert cluster.log.of(SCMEvent.NEW_NODE) == [(SCMEvent.NEW_NODE, dn)]
    assert cluster.log.of(*HEALTH_EVENTS) == []


def test_many_nodes_change_independently(cluster) -> None:
    nodes = [cluster.add(i) for i in range(6)]
    alive = nodes[:3]
    cluster.run(5 * M + 3 * S, alive=alive)
    assert [cluster.health(n) for n in nodes] == [NodeState.HEALTHY] * 3 + [NodeState.STALE] * 3
    assert cluster.nm.count(health=NodeState.STALE) == 3
    assert {p for _, p in cluster.log.of(SCMEvent.STALE_NODE)} == set(nodes[3:])
