"""The chaos suite's kill plan and its reading of what was down when: pure functions, no cluster."""

from __future__ import annotations

import itertools
import random

import pytest

from benchmarks.chaos_plan import (
    LEADER,
    SCM_PARTITION,
    Action,
    Conditions,
    Event,
    KillTiming,
    conditions,
    groups_led,
    is_leader_kill,
    max_datanodes_down,
    plan_kills,
    scm_outages,
)

DATANODES = [f"dn{i}" for i in range(1, 6)]


@pytest.mark.parametrize("seed", range(30))
@pytest.mark.parametrize("max_down", [1, 2])
def test_a_plan_keeps_its_bounds(seed: int, max_down: int) -> None:
    plan = plan_kills(900, DATANODES, max_down, random.Random(seed))
    assert [e.at_s for e in plan] == sorted(e.at_s for e in plan)
    assert all(0 <= e.at_s <= 900 for e in plan)
    assert max_datanodes_down(plan) <= max_down
    kills = [e.daemon for e in plan if e.action is Action.KILL]
    assert kills.count("om") == 1 and kills.count("scm") == 1
    # the run this reproduces: about one datanode kill a minute
    assert 8 <= sum(1 for k in kills if k.startswith("dn")) <= 25
    down: set[str] = set()
    for e in plan:
        assert (e.daemon in down) == (e.action is Action.START), (
            e
        )  # kills only what runs, starts only what is down
        (down.discard if e.action is Action.START else down.add)(e.daemon)
    assert not down  # everything is started again by the end


def test_pairs_bring_two_datanodes_down_at_once() -> None:
    assert any(max_datanodes_down(plan_kills(900, DATANODES, 2, random.Random(s))) == 2 for s in range(5))


def test_the_same_seed_gives_the_same_plan() -> None:
    assert plan_kills(300, DATANODES, 2, random.Random(7)) == plan_kills(300, DATANODES, 2, random.Random(7))


def test_om_and_scm_outages_are_spaced() -> None:
    plan = plan_kills(600, DATANODES, 2, random.Random(1))
    om = [e.at_s for e in plan if e.daemon == "om"]
    scm = [e.at_s for e in plan if e.daemon == "scm"]
    assert om[1] < scm[0]


EVENTS = [
    Event(10, Action.KILL, "dn1"),
    Event(20, Action.KILL, "dn2"),
    Event(25, Action.START, "dn1"),
    Event(30, Action.KILL, "om"),
    Event(40, Action.START, "om"),
    Event(45, Action.START, "dn2"),
]


@pytest.mark.parametrize(
    ("start", "end", "expected"),
    [
        (0, 9, Conditions(5, False, False)),  # before anything
        (12, 15, Conditions(4, False, False)),  # dn1 down throughout
        (15, 22, Conditions(3, False, False)),  # dn2 killed while dn1 down
        (26, 29, Conditions(4, False, False)),
        (26, 31, Conditions(4, True, False)),  # OM killed within the interval
        (41, 50, Conditions(4, False, False)),  # dn2 was still down at the start
        (46, 50, Conditions(5, False, False)),
    ],
)
def test_conditions_over_an_interval(start: float, end: float, expected: Conditions) -> None:
    assert conditions(EVENTS, 5, start, end) == expected


def test_om_kills_spread_over_the_first_two_thirds_each_started_again() -> None:
    plan = plan_kills(90, DATANODES, 2, random.Random(1), om_kills=3)
    om = [(e.at_s, e.action) for e in plan if e.daemon == "om"]
    assert om == [
        (10, Action.KILL),
        (20, Action.START),
        (30, Action.KILL),
        (40, Action.START),
        (50, Action.KILL),
        (60, Action.START),
    ]
    assert plan_kills(120, DATANODES, 2, random.Random(1)) == plan_kills(
        120, DATANODES, 2, random.Random(1), om_kills=1
    )


@pytest.mark.parametrize("seed", range(10))
def test_every_third_datanode_outage_kills_a_pipeline_leader_at_the_same_times(seed: int) -> None:
    """Issue 30: the plan with leader kills is the plan without them, some datanode outages renamed to a
    placeholder the run resolves to the leader of the moment; each is started again."""
    plain = plan_kills(900, DATANODES, 2, random.Random(seed), KillTiming(leader_every=0))
    plan = plan_kills(900, DATANODES, 2, random.Random(seed))
    assert [(e.at_s, e.action) for e in plan] == [(e.at_s, e.action) for e in plain]
    assert max_datanodes_down(plan) == max_datanodes_down(plain)
    datanode_kills = [e for e in plain if e.daemon.startswith("dn") and e.action is Action.KILL]
    leaders = [e.daemon for e in plan if is_leader_kill(e.daemon) and e.action is Action.KILL]
    assert len(leaders) == len(datanode_kills) // 3 >= 2
    assert leaders == [f"{LEADER}{n}" for n in range(1, len(leaders) + 1)]
    for name in leaders:
        kill, start = (e for e in plan if e.daemon == name)
        assert kill.action is Action.KILL and start.action is Action.START and kill.at_s < start.at_s
    kinds = [e for e in plan if not is_leader_kill(e.daemon)]
    assert all(e in plain for e in kinds)


PROM = """\
# HELP ratis_server_role 1 for this member's role in its group
ratis_server_peerCommitIndex{instance="u1",group="group-AAAAAAAAAAAA",follower="u1"} 7.0
ratis_server_peerCommitIndex{instance="u1",group="group-AAAAAAAAAAAA",follower="u2"} 7.0
ratis_server_peerCommitIndex{instance="u1",group="group-AAAAAAAAAAAA",follower="u3"} 6.0
ratis_server_peerCommitIndex{instance="u1",group="group-BBBBBBBBBBBB",follower="u1"} 3.0
ratis_server_peerCommitIndex{instance="u1",group="group-CCCCCCCCCCCC",follower="u1"} 9.0
ratis_server_peerCommitIndex{instance="u1",group="group-CCCCCCCCCCCC",follower="u4"} 9.0
ratis_server_peerCommitIndex{instance="u1",group="group-CCCCCCCCCCCC",follower="u5"} 9.0
ratis_server_role{instance="u1",group="group-AAAAAAAAAAAA",role="LEADER"} 1.0
ratis_server_role{instance="u1",group="group-AAAAAAAAAAAA",role="FOLLOWER"} 0.0
ratis_server_role{instance="u1",group="group-BBBBBBBBBBBB",role="LEADER"} 1.0
ratis_server_role{instance="u1",group="group-CCCCCCCCCCCC",role="LEADER"} 0.0
ratis_server_role{instance="u1",group="group-CCCCCCCCCCCC",role="FOLLOWER"} 1.0
"""


def test_the_groups_a_datanode_leads_are_read_from_its_prom() -> None:
    """The leader kill's target: groups of more than one member (RATIS/ONE's lone member always leads)
    whose ratis_server_role is LEADER here."""
    assert groups_led(PROM) == ["group-AAAAAAAAAAAA"]
    assert groups_led("") == []


def test_scm_outages_alternate_kills_and_partitions_the_last_at_two_thirds() -> None:
    assert scm_outages(120, 1, 0) == [(80, "scm")]
    outages = scm_outages(600, 3, 2)
    assert [name for _, name in outages] == ["scm", SCM_PARTITION, "scm", SCM_PARTITION, "scm"]
    times = [at for at, _ in outages]
    assert times[-1] == pytest.approx(400)
    assert all(b - a == pytest.approx(60) for a, b in itertools.pairwise(times))  # 600 / (2 * 5)
    assert [name for _, name in scm_outages(600, 1, 3)] == [
        "scm",
        SCM_PARTITION,
        SCM_PARTITION,
        SCM_PARTITION,
    ]


def test_scm_kills_and_partitions_each_end_before_the_next() -> None:
    plan = plan_kills(300, DATANODES, 2, random.Random(3), scm_kills=2, scm_partitions=2)
    scm = [e for e in plan if e.daemon in ("scm", SCM_PARTITION)]
    assert [(e.action, e.daemon) for e in scm] == [
        (action, name)
        for name in ("scm", SCM_PARTITION, "scm", SCM_PARTITION)
        for action in (Action.KILL, Action.START)
    ]


def test_an_ha_service_member_or_a_paused_leader_counts_as_its_service_down() -> None:
    events = [Event(10, Action.KILL, "scm2"), Event(20, Action.START, "scm2"), Event(30, Action.KILL, "om3")]
    assert conditions(events, 5, 12, 15) == Conditions(5, om_down=False, scm_down=True)
    assert conditions(events, 5, 21, 25) == Conditions(5, om_down=False, scm_down=False)
    assert conditions(events, 5, 25, 35) == Conditions(5, om_down=True, scm_down=False)
    paused = [Event(10, Action.KILL, SCM_PARTITION)]
    assert conditions(paused, 5, 12, 15).scm_down
