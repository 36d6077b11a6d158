"""The scenario files shipped in scenarios/rm: every one passes against the real Replication Manager, on a
lone SCM and on the leader of term 7 of an HA service (every command then carries term 7), and together
they exercise every check handler, report state, queue and command kind the harness can reach."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import pyozone
from pyozone.hdds.container_health import ContainerHealthState
from pyozone.hdds.states import LifeCycleState, NodeOperationalState, NodeState, SCMCommandType
from pyozone.scm.ha.context import ScmContext
from pyozone.scm.replication.check import default_chain
from pyozone.scm.replication.check.request import CheckServices, ContainerCheckRequest
from pyozone.scm.replication.pending_ops import PendingOpType
from pyozone.scm.replication.scenario.harness import ScenarioHarness
from pyozone.scm.replication.scenario.model import Scenario, load_file
from pyozone.scm.replication.scenario.runner import run_scenario
from pyozone.scm.settings import ScmSettings

SETTINGS = ScmSettings()

SCENARIO_DIR = Path(pyozone.__file__).parents[1] / "scenarios" / "rm"
FILES = sorted(SCENARIO_DIR.glob("*.json"))
UNREACHABLE_STATES = {
    # Placement is always satisfied in the harness (as TestReplicationManagerScenarios), and every OPEN
    # container has its pipeline.
    ContainerHealthState.MIS_REPLICATED,
    ContainerHealthState.OPEN_WITHOUT_PIPELINE,
    ContainerHealthState.HEALTHY,
}
UNREACHABLE_HANDLERS = {"ECMisReplicationCheckHandler"}  # placement is always satisfied
HA_LEADER_TERM = 7


def all_scenarios() -> Iterator[Scenario]:
    for path in FILES:
        yield from load_file(path)


@pytest.mark.parametrize("leader_term", [0, HA_LEADER_TERM], ids=["lone-scm", "ha-leader-term-7"])
@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_every_shipped_scenario_passes(path: Path, leader_term: int) -> None:
    """The runner also checks that every command sent carries the leader's term."""
    failures = {
        s.description: r.differences
        for s in load_file(path)
        if not (r := run_scenario(s, SETTINGS, leader_term)).passed
    }
    assert not failures


def test_the_commands_of_a_leader_of_term_7_carry_it() -> None:
    """The term check above is not vacuous: the scenarios send commands of every kind, each with term 7."""
    sent = []
    for scenario in all_scenarios():
        harness = ScenarioHarness(scenario, SETTINGS, ScmContext.ha_leader(HA_LEADER_TERM))
        sent += [*harness.check().commands, *harness.process_first()]
    assert len({c.type for c in sent}) == 4
    assert {c.term for c in sent} == {HA_LEADER_TERM}


def test_a_command_with_another_term_is_a_difference(monkeypatch: pytest.MonkeyPatch) -> None:
    scenario = next(s for s in all_scenarios() if s.commands)
    assert run_scenario(scenario, SETTINGS, HA_LEADER_TERM).passed
    monkeypatch.setattr(ScmContext, "term_of_leader", lambda self: 6)
    differences = run_scenario(scenario, SETTINGS, HA_LEADER_TERM).differences
    assert differences and all("carries term 6, expected 7" in d for d in differences)


def test_the_files_cover_every_reachable_state_queue_and_command_kind() -> None:
    scenarios = list(all_scenarios())
    assert len(FILES) >= 10 and len(scenarios) >= 120
    expected_states = {state for s in scenarios for state, n in s.expectation.states.items() if n}
    assert expected_states == set(ContainerHealthState) - UNREACHABLE_STATES
    assert any(s.expectation.under_replicated_queue for s in scenarios)
    assert any(s.expectation.over_replicated_queue for s in scenarios)
    kinds = {c.type for s in scenarios for c in (*s.check_commands, *s.commands)}
    assert kinds == {
        SCMCommandType.closeContainerCommand,
        SCMCommandType.deleteContainerCommand,
        SCMCommandType.replicateContainerCommand,
        SCMCommandType.reconstructECContainersCommand,
    }
    assert {s.container_state for s in scenarios} == set(LifeCycleState) - {LifeCycleState.RECOVERING}
    assert {r.operational_state for s in scenarios for r in s.replicas} == set(NodeOperationalState)
    assert NodeState.DEAD in {r.health_state for s in scenarios for r in s.replicas}
    assert {p.type for s in scenarios for p in s.pending_replicas} == set(PendingOpType)
    assert {s.is_ec for s in scenarios} == {True, False}


def test_every_reachable_check_handler_decides_some_shipped_scenario(monkeypatch: pytest.MonkeyPatch) -> None:
    """A handler "decides" a scenario when it stops the chain, records a report state or sends a command."""
    acted: set[str] = set()
    for handler in default_chain():
        cls = type(handler)
        original = cls.handle

        def handle(
            self: object, request: ContainerCheckRequest, services: CheckServices, _original=original
        ) -> bool:
            before = (request.report.to_dict()["stats"], len(getattr(services.nodes, "sent", ())))
            stopped = _original(self, request, services)
            after = (request.report.to_dict()["stats"], len(getattr(services.nodes, "sent", ())))
            if stopped or before != after:
                acted.add(type(self).__name__)
            return stopped

        monkeypatch.setattr(cls, "handle", handle)
    for scenario in all_scenarios():
        run_scenario(scenario, SETTINGS)
    assert acted == {type(h).__name__ for h in default_chain()} - UNREACHABLE_HANDLERS
