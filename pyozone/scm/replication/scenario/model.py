"""Replication Manager scenarios in the JSON format of Ozone's TestReplicationManagerScenarios.

A file holds one scenario object or a list of them. Each names one container (state, replication
config, BCSID), its replicas (with the state of the datanode each sits on), pending replica operations,
and what the Replication Manager must make of it: report counts and queue sizes after the check, the
commands sent during the check, and the commands sent when the first queued item is processed.

Parsing is strict, like Ozone's Jackson reader: an unknown field, state name, replication config or
expectation key is an error (a typo would otherwise silently test nothing). Every error names the file,
the scenario (position and description) and the field, e.g.
`ratis.json: scenario #3 ("Under replicated"): replicas[1].state: unknown replica state 'CLOSD'`.
Defaults are Ozone's: no expectation is an empty one (every count and queue 0), container CLOSED with
10 keys and 10 bytes used, replicas CLOSED on IN_SERVICE HEALTHY datanodes with 10 keys and 10 bytes,
sequence ids 0, maintenance settings from the RM defaults.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any, TypeVar

from pyozone.hdds.container_health import ContainerHealthState
from pyozone.hdds.ids import ReplicationConfig
from pyozone.hdds.states import (
    LifeCycleState,
    NodeOperationalState,
    NodeState,
    ReplicaState,
    ReplicationType,
    SCMCommandType,
)
from pyozone.scm.replication.config import ReplicationManagerConfig
from pyozone.scm.replication.pending_ops import PendingOpType

E = TypeVar("E", bound=Enum)
_RM_DEFAULTS = ReplicationManagerConfig()
UNDER_QUEUE = "underReplicatedQueue"
OVER_QUEUE = "overReplicatedQueue"
ALTERNATIVES = "|"


class ScenarioError(ValueError):
    """A malformed scenario file; the message says where and what."""


@dataclass(frozen=True, slots=True)
class ScenarioReplica:
    """One replica; `datanode` and `origin` are aliases (None: a datanode or origin of its own)."""

    state: ReplicaState
    index: int = 0
    datanode: str | None = None
    sequence_id: int = 0
    is_empty: bool = False
    origin: str | None = None
    operational_state: NodeOperationalState = NodeOperationalState.IN_SERVICE
    health_state: NodeState = NodeState.HEALTHY
    keys: int = 10
    used: int = 10


@dataclass(frozen=True, slots=True)
class PendingReplica:
    """A pending ADD or DELETE; `datanode` None targets a datanode no replica names."""

    type: PendingOpType
    datanode: str | None = None
    replica_index: int = 0


@dataclass(frozen=True, slots=True)
class ExpectedCommand:
    """A command of `type` sent to one of `datanodes` (aliases); any datanode when empty."""

    type: SCMCommandType
    datanodes: tuple[str, ...] = ()

    def __str__(self) -> str:
        return f"{self.type.name}@{ALTERNATIVES.join(self.datanodes)}" if self.datanodes else self.type.name


@dataclass(frozen=True, slots=True)
class Expectation:
    """Report counts per health state (unlisted states are expected to be 0) and queue sizes."""

    states: Mapping[ContainerHealthState, int] = field(default_factory=dict)
    under_replicated_queue: int = 0
    over_replicated_queue: int = 0

    def expected(self, state: ContainerHealthState) -> int:
        return self.states.get(state, 0)


@dataclass(frozen=True, slots=True)
class Scenario:
    source: str
    position: int
    description: str
    container_state: LifeCycleState
    replication_config: ReplicationConfig
    expectation: Expectation
    sequence_id: int = 0
    container_id: int = 1
    keys: int = 10
    used: int = 10
    owner: str = "theowner"
    replicas: tuple[ScenarioReplica, ...] = ()
    pending_replicas: tuple[PendingReplica, ...] = ()
    check_commands: tuple[ExpectedCommand, ...] = ()
    commands: tuple[ExpectedCommand, ...] = ()
    ratis_maintenance_minimum: int = _RM_DEFAULTS.maintenance_replica_minimum
    ec_maintenance_redundancy: int = _RM_DEFAULTS.maintenance_remaining_redundancy

    @property
    def name(self) -> str:
        return f"{self.source} #{self.position}: {self.description}"

    @property
    def is_ec(self) -> bool:
        return self.replication_config.type is ReplicationType.EC


# ------------------------------------------------------------------ loading
def load_file(path: Path) -> list[Scenario]:
    """Every scenario of one file; ScenarioError if the file is unreadable, not JSON or malformed."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ScenarioError(f"{path}: cannot read: {e}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ScenarioError(f"{path}: not JSON: {e}") from None
    return parse_scenarios(data, str(path))


def parse_scenarios(data: Any, source: str) -> list[Scenario]:
    """A list of scenario objects, or one; descriptions must be unique within the file (they name
    the scenarios in reports)."""
    items = data if isinstance(data, list) else [data]
    if not items:
        raise ScenarioError(f"{source}: holds no scenario")
    scenarios: list[Scenario] = []
    seen: dict[str, int] = {}
    for position, item in enumerate(items, 1):
        scenario = _Parser(source, position, item).scenario()
        if scenario.description in seen:
            raise ScenarioError(
                f"{source}: scenario #{position}: description {scenario.description!r} "
                f"repeats scenario #{seen[scenario.description]}'s"
            )
        seen[scenario.description] = position
        scenarios.append(scenario)
    return scenarios


_SCENARIO_FIELDS = {
    "description", "containerState", "replicationConfig", "sequenceId", "id", "keys", "used", "owner",
    "replicas", "pendingReplicas", "expectation", "checkCommands", "commands", "ratisMaintenanceMinimum",
    "ecMaintenanceRedundancy",
}  # fmt: skip
_REQUIRED = ("description", "containerState", "replicationConfig")
_REPLICA_FIELDS = {
    "state", "index", "datanode", "sequenceId", "isEmpty", "origin", "operationalState", "healthState",
    "keys", "used", "containerId",
}  # fmt: skip
_PENDING_FIELDS = {"type", "datanode", "replicaIndex"}
_COMMAND_FIELDS = {"type", "datanode"}
_EXPECTATION_KEYS = {s.camel_name: s for s in ContainerHealthState if s is not ContainerHealthState.HEALTHY}
"""HEALTHY is no key: the check never records it (a healthy container is one no handler reported)."""


class _Parser:
    """Reads one scenario object; `fail` prefixes every error with the file and the scenario."""

    def __init__(self, source: str, position: int, data: Any) -> None:
        self.source = source
        self.position = position
        self.data = data
        self.label = f"scenario #{position}"

    def fail(self, where: str, problem: str) -> ScenarioError:
        return ScenarioError(f"{self.source}: {self.label}: {where}: {problem}")

    def scenario(self) -> Scenario:
        data = self._object(self.data, "scenario", _SCENARIO_FIELDS)
        description = data.get("description")
        if isinstance(description, str) and description:
            self.label += f" ({description!r})"
        for name in _REQUIRED:
            if name not in data:
                raise self.fail(name, "is required")
        config = self._replication_config(data["replicationConfig"])
        container_id = self._int(data, "id", 1, minimum=1)
        replicas = tuple(
            self._replica(r, f"replicas[{i}]", config, container_id)
            for i, r in enumerate(self._list(data, "replicas"))
        )
        self._unique_datanodes(replicas)
        pending = tuple(
            self._pending(p, f"pendingReplicas[{i}]", config)
            for i, p in enumerate(self._list(data, "pendingReplicas"))
        )
        aliases = {r.datanode for r in replicas} | {p.datanode for p in pending}
        aliases.discard(None)
        return Scenario(
            source=self.source,
            position=self.position,
            description=self._text(data["description"], "description"),
            container_state=self._enum(LifeCycleState, data["containerState"], "containerState"),
            replication_config=config,
            expectation=self._expectation(data.get("expectation", {})),
            sequence_id=self._int(data, "sequenceId", 0),
            container_id=container_id,
            keys=self._int(data, "keys", 10),
            used=self._int(data, "used", 10),
            owner=self._text(data.get("owner", "theowner"), "owner"),
            replicas=replicas,
            pending_replicas=pending,
            check_commands=self._commands(data, "checkCommands", aliases),
            commands=self._commands(data, "commands", aliases),
            ratis_maintenance_minimum=self._int(
                data, "ratisMaintenanceMinimum", _RM_DEFAULTS.maintenance_replica_minimum
            ),
            ec_maintenance_redundancy=self._int(
                data, "ecMaintenanceRedundancy", _RM_DEFAULTS.maintenance_remaining_redundancy
            ),
        )

    # ---------------------------------------------------------------- parts
    def _replica(
        self, item: Any, where: str, config: ReplicationConfig, container_id: int
    ) -> ScenarioReplica:
        data = self._object(item, where, _REPLICA_FIELDS)
        if "state" not in data:
            raise self.fail(f"{where}.state", "is required")
        if self._int(data, "containerId", container_id, where=where) != container_id:
            raise self.fail(f"{where}.containerId", f"is not the scenario's container {container_id}")
        if config.type is ReplicationType.EC and "index" not in data:
            raise self.fail(f"{where}.index", f"is required for an {config} container")
        return ScenarioReplica(
            state=self._enum(ReplicaState, data["state"], f"{where}.state"),
            index=self._index(data.get("index", 0), f"{where}.index", config),
            datanode=self._alias(data.get("datanode"), f"{where}.datanode"),
            sequence_id=self._int(data, "sequenceId", 0, where=where),
            is_empty=self._bool(data.get("isEmpty", False), f"{where}.isEmpty"),
            origin=self._alias(data.get("origin"), f"{where}.origin"),
            operational_state=self._enum(
                NodeOperationalState, data.get("operationalState", "IN_SERVICE"), f"{where}.operationalState"
            ),
            health_state=self._enum(NodeState, data.get("healthState", "HEALTHY"), f"{where}.healthState"),
            keys=self._int(data, "keys", 10, where=where),
            used=self._int(data, "used", 10, where=where),
        )

    def _pending(self, item: Any, where: str, config: ReplicationConfig) -> PendingReplica:
        data = self._object(item, where, _PENDING_FIELDS)
        if "type" not in data:
            raise self.fail(f"{where}.type", "is required")
        if config.type is ReplicationType.EC and "replicaIndex" not in data:
            raise self.fail(f"{where}.replicaIndex", f"is required for an {config} container")
        return PendingReplica(
            type=self._enum(PendingOpType, data["type"], f"{where}.type"),
            datanode=self._alias(data.get("datanode"), f"{where}.datanode"),
            replica_index=self._index(data.get("replicaIndex", 0), f"{where}.replicaIndex", config),
        )

    def _expectation(self, item: Any) -> Expectation:
        valid = {*_EXPECTATION_KEYS, UNDER_QUEUE, OVER_QUEUE}
        data = self._object(item, "expectation", valid, "expectation key")
        states = {
            _EXPECTATION_KEYS[key]: self._int(data, key, 0, where="expectation")
            for key in data
            if key in _EXPECTATION_KEYS
        }
        return Expectation(
            states,
            self._int(data, UNDER_QUEUE, 0, where="expectation"),
            self._int(data, OVER_QUEUE, 0, where="expectation"),
        )

    def _commands(self, data: dict[str, Any], name: str, aliases: set[str]) -> tuple[ExpectedCommand, ...]:
        commands = []
        for i, item in enumerate(self._list(data, name)):
            where = f"{name}[{i}]"
            command = self._object(item, where, _COMMAND_FIELDS)
            if "type" not in command:
                raise self.fail(f"{where}.type", "is required")
            kind = self._enum(SCMCommandType, command["type"], f"{where}.type", upper=False)
            datanodes: tuple[str, ...] = ()
            if command.get("datanode") is not None:
                text = self._text(command["datanode"], f"{where}.datanode")
                datanodes = tuple(a.strip() for a in text.split(ALTERNATIVES))
                for alias in datanodes:
                    if alias not in aliases:
                        known = ", ".join(sorted(aliases)) or "none"
                        raise self.fail(
                            f"{where}.datanode", f"alias {alias!r} names no datanode (known: {known})"
                        )
            commands.append(ExpectedCommand(kind, datanodes))
        return tuple(commands)

    def _unique_datanodes(self, replicas: Sequence[ScenarioReplica]) -> None:
        """SCM keeps at most one replica of a container per datanode."""
        seen: set[str] = set()
        for i, replica in enumerate(replicas):
            if replica.datanode is None:
                continue
            if replica.datanode in seen:
                raise self.fail(
                    f"replicas[{i}].datanode",
                    f"{replica.datanode!r} already holds a replica of the container",
                )
            seen.add(replica.datanode)

    # ---------------------------------------------------------------- values
    def _object(self, item: Any, where: str, allowed: set[str], what: str = "field") -> dict[str, Any]:
        if not isinstance(item, dict):
            raise self.fail(where, f"expected a JSON object, got {_kind(item)}")
        unknown = sorted(set(item) - allowed)
        if unknown:
            raise self.fail(
                f"{where}.{unknown[0]}" if where != "scenario" else unknown[0],
                f"unknown {what} (valid: {', '.join(sorted(allowed))})",
            )
        return item

    def _list(self, data: dict[str, Any], name: str) -> list[Any]:
        value = data.get(name, [])
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.fail(name, f"expected a JSON list, got {_kind(value)}")
        return value

    def _int(self, data: dict[str, Any], name: str, default: int, minimum: int = 0, where: str = "") -> int:
        value = data.get(name, default)
        label = f"{where}.{name}" if where else name
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(label, f"expected an integer, got {_kind(value)}")
        if value < minimum:
            raise self.fail(label, f"must be at least {minimum}, got {value}")
        return value

    def _bool(self, value: Any, where: str) -> bool:
        if not isinstance(value, bool):
            raise self.fail(where, f"expected true or false, got {_kind(value)}")
        return value

    def _text(self, value: Any, where: str) -> str:
        if not isinstance(value, str) or not value.strip():
            raise self.fail(where, f"expected a non-empty string, got {_kind(value)}")
        return value

    def _alias(self, value: Any, where: str) -> str | None:
        if value is None:
            return None
        alias = self._text(value, where)
        if ALTERNATIVES in alias:
            raise self.fail(where, f"{alias!r}: '{ALTERNATIVES}' separates alternatives in commands only")
        return alias

    def _enum(self, enum: type[E], value: Any, where: str, upper: bool = True) -> E:
        """By name; operational and health states are case-insensitive as in Ozone's harness."""
        if isinstance(value, str):
            name = value.upper() if upper else value
            if name in enum.__members__:
                return enum[name]
        valid = ", ".join(enum.__members__)
        raise self.fail(where, f"unknown {_ENUM_WHAT.get(enum, enum.__name__)} {value!r} (valid: {valid})")

    def _replication_config(self, value: Any) -> ReplicationConfig:
        """RATIS:ONE, RATIS:THREE or EC:CODEC-DATA-PARITY-CHUNKk, as Ozone's harness writes them."""
        text = self._text(value, "replicationConfig")
        if ":" not in text:
            raise self.fail(
                "replicationConfig", f"{text!r} is not TYPE:FACTOR (e.g. RATIS:THREE, EC:RS-3-2-1024k)"
            )
        try:
            config = ReplicationConfig.parse(text)
        except ValueError as e:
            raise self.fail("replicationConfig", f"unknown replication config {text!r}: {e}") from None
        if config.type not in (ReplicationType.RATIS, ReplicationType.EC):
            raise self.fail(
                "replicationConfig", f"{text!r}: the Replication Manager handles RATIS and EC only"
            )
        return config

    def _index(self, value: Any, where: str, config: ReplicationConfig) -> int:
        """0 for Ratis; 1..data+parity for EC (Ozone rejects any other EC index)."""
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(where, f"expected an integer, got {_kind(value)}")
        if config.type is ReplicationType.EC:
            if not 1 <= value <= config.required_nodes:
                raise self.fail(
                    where, f"bad index {value}: {config} replicas have 1..{config.required_nodes}"
                )
        elif value != 0:
            raise self.fail(where, f"bad index {value}: Ratis replicas have index 0")
        return value


_ENUM_WHAT: dict[type, str] = {
    LifeCycleState: "container state",
    ReplicaState: "replica state",
    NodeOperationalState: "operational state",
    NodeState: "health state",
    PendingOpType: "pending op type",
    SCMCommandType: "command type",
}


def _kind(value: Any) -> str:
    names: dict[type, str] = {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}
    if value is None:
        return "null"
    if isinstance(value, int | float) and not isinstance(value, bool):
        return repr(value)
    return f"{names.get(type(value), type(value).__name__)} {json.dumps(value)[:40]}"
