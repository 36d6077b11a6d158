"""The runner: a real Replication Manager per scenario, every difference reported by phase, and the
harness's fixed surroundings (statuses from the scenario, aliases, spare targets, pending ops)."""

from __future__ import annotations

from typing import Any

import pytest

from pyozone.hdds.container_health import ContainerHealthState
from pyozone.hdds.states import LifeCycleState, NodeOperationalState, NodeState, SCMCommandType
from pyozone.scm.replication.pending_ops import PendingOpType
from pyozone.scm.replication.scenario.harness import SPARE_DATANODES, ScenarioHarness, SentCommand
from pyozone.scm.replication.scenario.model import ExpectedCommand, Scenario, parse_scenarios
from pyozone.scm.replication.scenario.runner import match_commands, run_scenario
from pyozone.scm.settings import ScmSettings

SETTINGS = ScmSettings()

REPLICATE = SCMCommandType.replicateContainerCommand
CLOSE = SCMCommandType.closeContainerCommand


def load(**fields: Any) -> Scenario:
    base: dict[str, Any] = {
        "description": "s",
        "containerState": "CLOSED",
        "replicationConfig": "RATIS:THREE",
        "sequenceId": 12,
        "expectation": {},
    }
    (scenario,) = parse_scenarios({**base, **fields}, "t.json")
    return scenario


def closed(*dns: str, **extra: Any) -> list[dict[str, Any]]:
    return [{"state": "CLOSED", "datanode": dn, "sequenceId": 12, "origin": f"o{dn}", **extra} for dn in dns]


def test_a_matching_scenario_passes_every_phase() -> None:
    result = run_scenario(
        load(
            replicas=closed("d1", "d2"),
            expectation={"underReplicated": 1, "underReplicatedQueue": 1},
            commands=[{"type": "replicateContainerCommand", "datanode": "d1|d2"}],
        ),
        SETTINGS,
    )
    assert result.passed, result.differences


def test_every_phase_reports_its_own_differences() -> None:
    result = run_scenario(
        load(
            replicas=closed("d1", "d2"),
            expectation={"overReplicated": 1, "overReplicatedQueue": 1},
            checkCommands=[{"type": "closeContainerCommand", "datanode": "d1"}],
        ),
        SETTINGS,
    )
    assert not result.passed
    assert list(result.differences) == [
        "check: report underReplicated: expected 0, got 1",
        "check: report overReplicated: expected 1, got 0",
        "check: underReplicatedQueue: expected 0, got 1",
        "check: overReplicatedQueue: expected 1, got 0",
        "check commands: expected [closeContainerCommand@d1], got []"
        " (not sent: [closeContainerCommand@d1]; not expected: [])",
        "read-only check: report underReplicated: expected 0, got 1",
        "read-only check: report overReplicated: expected 1, got 0",
        "processing commands: expected [], got [replicateContainerCommand@d1]"
        " (not sent: []; not expected: [replicateContainerCommand@d1])",
    ]


def test_states_left_out_of_the_expectation_must_be_zero() -> None:
    result = run_scenario(load(replicas=[], expectation={}), SETTINGS)
    assert result.differences == (
        "check: report missing: expected 0, got 1",
        "read-only check: report missing: expected 0, got 1",
    )


def test_an_exception_in_the_rm_fails_the_scenario_with_its_type(monkeypatch: pytest.MonkeyPatch) -> None:
    def explode(self: ScenarioHarness) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(ScenarioHarness, "check", explode)
    (difference,) = run_scenario(load(), SETTINGS).differences
    assert difference.startswith("error: RuntimeError: boom (at test_scenario_runner.py:")


def test_the_harness_pins_statuses_registers_aliases_and_spares_and_loads_pending_ops() -> None:
    scenario = load(
        replicas=closed("d1")
        + closed("d2", operationalState="IN_MAINTENANCE", healthState="STALE")
        + [{"state": "CLOSED", "sequenceId": 12}],
        pendingReplicas=[{"type": "ADD", "datanode": "d9"}, {"type": "DELETE"}],
    )
    harness = ScenarioHarness(scenario, SETTINGS)
    nodes = harness.nodes
    d1, d2, d9 = (harness.aliases[a] for a in ("d1", "d2", "d9"))
    assert nodes.get(d1).status.health is NodeState.HEALTHY
    d2_info = nodes.get(d2)
    assert (d2_info.status.operational_state, d2_info.status.health) == (
        NodeOperationalState.IN_MAINTENANCE,
        NodeState.STALE,
    )
    assert d2_info.details.persisted_op_state is NodeOperationalState.IN_MAINTENANCE
    assert d2 not in {i.uuid for i in nodes.healthy_in_service()}
    # d1, d2, the unnamed replica's node, d9, the unnamed pending target and the spares
    assert len(nodes.nodes()) == 5 + SPARE_DATANODES
    assert {i.details.network_location for i in nodes.nodes()} == {"/default-rack"}
    replicas = harness.containers.replicas(scenario.container_id)
    assert len({r.origin_node_id for r in replicas}) == 3
    ops = harness.rm.pending_ops.ops(scenario.container_id)
    assert [(op.type, op.target_dn == d9) for op in ops] == [
        (PendingOpType.ADD, True),
        (PendingOpType.DELETE, False),
    ]
    assert harness.containers.get(scenario.container_id).state is LifeCycleState.CLOSED


def test_aliases_map_to_the_same_datanodes_every_run() -> None:
    scenario = load(replicas=closed("d1", "d2"))
    assert ScenarioHarness(scenario, SETTINGS).aliases == ScenarioHarness(scenario, SETTINGS).aliases


def test_an_open_container_has_its_pipeline_and_a_healthy_one_stays_quiet() -> None:
    replicas = [{"state": "OPEN", "datanode": d} for d in ("d1", "d2", "d3")]
    result = run_scenario(load(containerState="OPEN", replicas=replicas), SETTINGS)
    assert result.passed, result.differences
    harness = ScenarioHarness(load(containerState="OPEN", replicas=replicas), SETTINGS)
    assert harness.rm.services.pipeline_exists(harness.containers.get(1).pipeline_id)


def test_check_commands_are_recorded_and_the_read_only_check_sends_none() -> None:
    scenario = load(replicas=[*closed("d1", "d2"), {"state": "CLOSING", "datanode": "d3", "sequenceId": 12}])
    checked = ScenarioHarness(scenario, SETTINGS).check()
    assert [(c.type, c.alias, c.force) for c in checked.commands] == [(CLOSE, "d3", False)]
    read_only = ScenarioHarness(scenario, SETTINGS).check_read_only()
    assert read_only.commands == ()
    assert read_only.report.stat(ContainerHealthState.UNDER_REPLICATED) == 0


def test_the_read_only_check_runs_on_a_fresh_rm_so_state_changes_of_the_check_do_not_leak() -> None:
    empty = [
        {"state": "CLOSED", "datanode": d, "sequenceId": 12, "isEmpty": True} for d in ("d1", "d2", "d3")
    ]
    scenario = load(replicas=empty, expectation={"empty": 1}, checkCommands=[
        {"type": "deleteContainerCommand", "datanode": d} for d in ("d1", "d2", "d3")
    ])  # fmt: skip
    harness = ScenarioHarness(scenario, SETTINGS)
    assert harness.check().container_state is LifeCycleState.DELETING
    assert run_scenario(scenario, SETTINGS).passed


def sent(kind: SCMCommandType, alias: str) -> SentCommand:
    return SentCommand(kind, f"uuid-{alias}", alias)


def test_matching_finds_a_pairing_where_greedy_matching_would_not() -> None:
    expected = [ExpectedCommand(REPLICATE, ("d1", "d2")), ExpectedCommand(REPLICATE, ("d1",))]
    actual = [sent(REPLICATE, "d1"), sent(REPLICATE, "d2")]
    assert match_commands(expected, actual) == {0: 1, 1: 0}


def test_matching_respects_types_and_any_datanode() -> None:
    expected = [ExpectedCommand(REPLICATE), ExpectedCommand(CLOSE, ("d3",))]
    assert match_commands(expected, [sent(CLOSE, "d1"), sent(REPLICATE, "d9")]) == {0: 1}
