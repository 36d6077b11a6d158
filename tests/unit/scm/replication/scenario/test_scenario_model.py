"""Scenario files: Ozone's format read with its defaults, and every malformed input refused with an error
naming the file, the scenario and the field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pyozone.hdds.container_health import ContainerHealthState
from pyozone.hdds.states import LifeCycleState, NodeOperationalState, NodeState, ReplicaState, SCMCommandType
from pyozone.scm.replication.pending_ops import PendingOpType
from pyozone.scm.replication.scenario.model import ScenarioError, load_file, parse_scenarios

SOURCE = "test.json"


def scenario(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "description": "a scenario",
        "containerState": "CLOSED",
        "replicationConfig": "RATIS:THREE",
        "expectation": {},
    }
    return {**base, **fields}


def error(data: Any) -> str:
    with pytest.raises(ScenarioError) as e:
        parse_scenarios(data, SOURCE)
    return str(e.value)


def test_ozone_basic_json_shapes_parse_with_ozone_defaults() -> None:
    (s,) = parse_scenarios(
        scenario(
            sequenceId=12,
            replicas=[
                {
                    "state": "CLOSED",
                    "index": 0,
                    "datanode": "d1",
                    "sequenceId": 12,
                    "isEmpty": False,
                    "origin": "o1",
                },
                {
                    "state": "UNHEALTHY",
                    "datanode": "d2",
                    "operationalState": "decommissioning",
                    "healthState": "dead",
                },
            ],
            pendingReplicas=[{"type": "ADD"}, {"type": "DELETE", "datanode": "d2"}],
            expectation={"underReplicated": 1, "quasiClosedStuckMissing": 2, "underReplicatedQueue": 1},
            checkCommands=[{"type": "closeContainerCommand", "datanode": "d1|d2"}],
            commands=[{"type": "replicateContainerCommand"}],
        ),
        SOURCE,
    )
    assert (s.container_state, s.sequence_id, s.container_id, s.keys, s.used) == (
        LifeCycleState.CLOSED,
        12,
        1,
        10,
        10,
    )
    assert (s.ratis_maintenance_minimum, s.ec_maintenance_redundancy) == (2, 1)
    first, second = s.replicas
    assert (first.state, first.datanode, first.origin, first.keys, first.used) == (
        ReplicaState.CLOSED,
        "d1",
        "o1",
        10,
        10,
    )
    assert (second.index, second.sequence_id, second.origin, second.is_empty) == (0, 0, None, False)
    assert (second.operational_state, second.health_state) == (
        NodeOperationalState.DECOMMISSIONING,
        NodeState.DEAD,
    )
    assert [(p.type, p.datanode, p.replica_index) for p in s.pending_replicas] == [
        (PendingOpType.ADD, None, 0),
        (PendingOpType.DELETE, "d2", 0),
    ]
    e = s.expectation
    assert e.expected(ContainerHealthState.UNDER_REPLICATED) == 1
    assert e.expected(ContainerHealthState.QUASI_CLOSED_STUCK_MISSING) == 2
    assert e.expected(ContainerHealthState.OVER_REPLICATED) == 0
    assert (e.under_replicated_queue, e.over_replicated_queue) == (1, 0)
    assert s.check_commands[0].type is SCMCommandType.closeContainerCommand
    assert s.check_commands[0].datanodes == ("d1", "d2")
    assert s.commands[0].datanodes == ()
    assert s.name == "test.json #1: a scenario"


def test_one_object_or_a_list_and_ec_configs(tmp_path: Path) -> None:
    path = tmp_path / "one.json"
    replicas = [{"state": "CLOSED", "index": i, "datanode": f"d{i}"} for i in range(1, 6)]
    path.write_text(json.dumps(scenario(replicationConfig="EC:rs-3-2-1024k", replicas=replicas)))
    (s,) = load_file(path)
    assert s.is_ec and s.replication_config.required_nodes == 5
    assert s.source == str(path)
    assert len(parse_scenarios([scenario(description="a"), scenario(description="b")], SOURCE)) == 2


@pytest.mark.parametrize(
    ("data", "where", "problem"),
    [
        (scenario(containerState="CLOSD"), "containerState", "unknown container state 'CLOSD'"),
        (scenario(replicas=[{"state": "BROKEN"}]), "replicas[0].state", "unknown replica state 'BROKEN'"),
        (
            scenario(replicas=[{"state": "CLOSED", "operationalState": "AWAY"}]),
            "replicas[0].operationalState",
            "unknown operational state 'AWAY'",
        ),
        (
            scenario(replicas=[{"state": "CLOSED", "healthState": "ILL"}]),
            "replicas[0].healthState",
            "unknown health state 'ILL'",
        ),
        (scenario(replicationConfig="RATIS:FOUR"), "replicationConfig", "unknown replication config"),
        (scenario(replicationConfig="EC:XOR-3"), "replicationConfig", "unknown replication config"),
        (scenario(replicationConfig="RATIS/THREE"), "replicationConfig", "is not TYPE:FACTOR"),
        (scenario(replicationConfig="STAND_ALONE:ONE"), "replicationConfig", "RATIS and EC only"),
        (scenario(replicas=[{"state": "CLOSED", "index": 1}]), "replicas[0].index", "bad index 1"),
        (
            scenario(replicationConfig="EC:RS-3-2-1024k", replicas=[{"state": "CLOSED", "index": 6}]),
            "replicas[0].index",
            "bad index 6",
        ),
        (
            scenario(replicationConfig="EC:RS-3-2-1024k", replicas=[{"state": "CLOSED"}]),
            "replicas[0].index",
            "is required",
        ),
        (
            scenario(replicationConfig="EC:RS-3-2-1024k", pendingReplicas=[{"type": "ADD"}]),
            "pendingReplicas[0].replicaIndex",
            "is required",
        ),
        (scenario(pendingReplicas=[{"type": "MOVE"}]), "pendingReplicas[0].type", "unknown pending op type"),
        (
            {"description": "x", "containerState": "CLOSED", "expectation": {}},
            "replicationConfig",
            "is required",
        ),
        (
            scenario(expectation={"underreplicated": 1}),
            "expectation.underreplicated",
            "unknown expectation key",
        ),
        (scenario(expectation={"healthy": 1}), "expectation.healthy", "unknown expectation key"),
        (scenario(expectation={"missing": -1}), "expectation.missing", "must be at least 0"),
        (scenario(expectation={"missing": True}), "expectation.missing", "expected an integer"),
        (scenario(colour="red"), "colour", "unknown field"),
        (scenario(replicas=[{"state": "CLOSED", "node": "d1"}]), "replicas[0].node", "unknown field"),
        (scenario(replicas={"state": "CLOSED"}), "replicas", "expected a JSON list"),
        (scenario(replicas=["CLOSED"]), "replicas[0]", "expected a JSON object"),
        (scenario(replicas=[{"state": "CLOSED", "isEmpty": "yes"}]), "replicas[0].isEmpty", "true or false"),
        (scenario(replicas=[{"state": "CLOSED", "sequenceId": -3}]), "replicas[0].sequenceId", "at least 0"),
        (scenario(replicas=[{"state": "CLOSED", "datanode": "a|b"}]), "replicas[0].datanode", "alternatives"),
        (
            scenario(replicas=[{"state": "CLOSED", "datanode": "d1"}, {"state": "CLOSED", "datanode": "d1"}]),
            "replicas[1].datanode",
            "already holds a replica",
        ),
        (
            scenario(replicas=[{"state": "CLOSED", "containerId": 7}]),
            "replicas[0].containerId",
            "container 1",
        ),
        (scenario(commands=[{"type": "launchRocket"}]), "commands[0].type", "unknown command type"),
        (scenario(commands=[{"datanode": "d1"}]), "commands[0].type", "is required"),
        (
            scenario(
                replicas=[{"state": "CLOSED", "datanode": "d1"}],
                checkCommands=[{"type": "closeContainerCommand", "datanode": "d1|d9"}],
            ),
            "checkCommands[0].datanode",
            "alias 'd9' names no datanode",
        ),
        (scenario(description=""), "description", "non-empty string"),
    ],
)
def test_bad_input_names_file_scenario_and_field(data: dict[str, Any], where: str, problem: str) -> None:
    message = error([scenario(description="fine"), data])
    assert message.startswith(f"{SOURCE}: scenario #2")
    assert f": {where}: " in message
    assert problem in message


def test_the_scenario_is_named_by_its_description_when_it_has_one() -> None:
    message = error(scenario(description="Under replicated", containerState="SHUT"))
    assert message.startswith("test.json: scenario #1 ('Under replicated'): containerState: ")


def test_files_that_are_unreadable_empty_or_not_json(tmp_path: Path) -> None:
    for name, text, problem in (
        ("missing.json", None, "cannot read"),
        ("broken.json", "[{", "not JSON"),
        ("empty.json", "[]", "holds no scenario"),
    ):
        path = tmp_path / name
        if text is not None:
            path.write_text(text)
        with pytest.raises(ScenarioError, match=problem) as e:
            load_file(path)
        assert str(e.value).startswith(str(path))


def test_descriptions_are_unique_within_a_file() -> None:
    assert "repeats scenario #1" in error([scenario(), scenario()])


KEYS = (
    "description", "containerState", "replicationConfig", "replicas", "expectation", "state", "index",
    "datanode", "type", "commands", "underReplicated", "pendingReplicas", "bogus",
)  # fmt: skip
SCALARS = (
    st.none() | st.booleans() | st.integers(-3, 13) | st.sampled_from(["CLOSED", "EC:RS-3-2-1024k", "d1"])
)
json_values = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(KEYS), inner, max_size=5),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_any_json_either_parses_or_raises_a_scenario_error_naming_the_file(data: Any) -> None:
    try:
        parse_scenarios(data, SOURCE)
    except ScenarioError as e:
        assert str(e).startswith(f"{SOURCE}: ")


def test_a_scenario_without_expectation_expects_nothing() -> None:
    """As Ozone's harness reads it: no "expectation" is an empty one, every count and queue 0."""
    data = scenario()
    del data["expectation"]
    (s,) = parse_scenarios(data, SOURCE)
    assert s.expectation == parse_scenarios(scenario(expectation={}), SOURCE)[0].expectation
