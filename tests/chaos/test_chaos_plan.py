"""The chaos suite's kill plan and its reading of what was down when: pure functions, no cluster."""

from __future__ import annotations

import random

import pytest

from benchmarks.chaos_plan import Action, Conditions, Event, conditions, max_datanodes_down, plan_kills

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
