"""Runs scenarios through the harness and compares what the Replication Manager did with what each
scenario expects, phase by phase as Ozone's TestReplicationManagerScenarios does:

1. check: every report count (states the expectation leaves out must be 0), both queue sizes, and
   the commands sent during the check;
2. read-only check (checkContainerStatus) of the same scenario on a fresh RM: the same report, no
   command sent, the container's state unchanged (a fresh RM, because the check may legitimately have
   moved the container on, e.g. an empty one to DELETING);
3. processing of the first queued item: the commands sent.

Every command sent must carry the term of the SCM that leads (0 for a lone SCM; `leader_term` runs the
scenario on the ready leader of that term of an HA service).

A scenario's result lists every difference, so one run shows everything that is off.
"""

from __future__ import annotations

import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pyozone.hdds.container_health import ContainerHealthState
from pyozone.hdds.replication_report import ReplicationManagerReport
from pyozone.scm.ha.context import ScmContext
from pyozone.scm.replication.scenario.harness import CheckOutcome, ScenarioHarness, SentCommand
from pyozone.scm.replication.scenario.model import (
    OVER_QUEUE,
    UNDER_QUEUE,
    Expectation,
    ExpectedCommand,
    Scenario,
)

if TYPE_CHECKING:
    from pyozone.scm.settings import ScmSettings

REPORTED_STATES = tuple(s for s in ContainerHealthState if s is not ContainerHealthState.HEALTHY)


@dataclass(frozen=True, slots=True)
class ScenarioResult:
    scenario: Scenario
    differences: tuple[str, ...]

    @property
    def passed(self) -> bool:
        return not self.differences


def run_scenario(scenario: Scenario, settings: ScmSettings, leader_term: int = 0) -> ScenarioResult:
    """`settings`: SCM's, which the scenario's own values override. Any exception the RM raises is a
    difference too (with its type), not a crash of the run."""
    try:
        return ScenarioResult(scenario, tuple(_differences(scenario, settings, leader_term)))
    except Exception as e:  # a failing RM fails the scenario, not the run
        frame = traceback.extract_tb(e.__traceback__)[-1]
        where = f"{Path(frame.filename).name}:{frame.lineno}"
        return ScenarioResult(scenario, (f"error: {type(e).__name__}: {e} (at {where})",))


def _differences(scenario: Scenario, settings: ScmSettings, leader_term: int) -> list[str]:
    def new_harness() -> ScenarioHarness:
        context = ScmContext.ha_leader(leader_term) if leader_term else ScmContext.standalone()
        return ScenarioHarness(scenario, settings, context)

    harness = new_harness()
    checked = harness.check()
    diffs = compare_report("check", scenario.expectation, checked.report)
    diffs += compare_queues(scenario.expectation, checked)
    diffs += compare_commands("check commands", scenario.check_commands, checked.commands)
    diffs += compare_terms("check commands", leader_term, checked.commands)

    initial_state = scenario.container_state
    read_only = new_harness().check_read_only()
    diffs += compare_report("read-only check", scenario.expectation, read_only.report)
    if read_only.commands:
        diffs.append(f"read-only check: sent {_names(read_only.commands)}, expected no command")
    if read_only.container_state is not initial_state:
        moved = f"{initial_state.name} to {read_only.container_state.name}"
        diffs.append(f"read-only check: moved the container from {moved}")

    processed = harness.process_first()
    diffs += compare_commands("processing commands", scenario.commands, processed)
    diffs += compare_terms("processing commands", leader_term, processed)
    return diffs


def compare_report(phase: str, expectation: Expectation, report: ReplicationManagerReport) -> list[str]:
    return [
        f"{phase}: report {s.camel_name}: expected {expectation.expected(s)}, got {report.stat(s)}"
        for s in REPORTED_STATES
        if report.stat(s) != expectation.expected(s)
    ]


def compare_queues(expectation: Expectation, outcome: CheckOutcome) -> list[str]:
    diffs = []
    for name, expected, actual in (
        (UNDER_QUEUE, expectation.under_replicated_queue, outcome.under_queue),
        (OVER_QUEUE, expectation.over_replicated_queue, outcome.over_queue),
    ):
        if expected != actual:
            diffs.append(f"check: {name}: expected {expected}, got {actual}")
    return diffs


def compare_terms(phase: str, leader_term: int, actual: Sequence[SentCommand]) -> list[str]:
    """Every command carries the leader's term: a datanode drops one older than the newest it saw."""
    return [
        f"{phase}: {c} carries term {c.term}, expected {leader_term}" for c in actual if c.term != leader_term
    ]


def compare_commands(
    phase: str, expected: Sequence[ExpectedCommand], actual: Sequence[SentCommand]
) -> list[str]:
    """Equal when each expected command can be paired with its own sent command (same type, and one of
    the named datanodes if any are named) and nothing is left over on either side."""
    pairs = match_commands(expected, actual)
    if len(pairs) == len(expected) == len(actual):
        return []
    missing = [str(e) for i, e in enumerate(expected) if i not in pairs]
    extra = [str(a) for j, a in enumerate(actual) if j not in pairs.values()]
    return [
        f"{phase}: expected [{', '.join(map(str, expected))}], got [{_names(actual)}]"
        f" (not sent: [{', '.join(missing)}]; not expected: [{', '.join(extra)}])"
    ]


def match_commands(expected: Sequence[ExpectedCommand], actual: Sequence[SentCommand]) -> dict[int, int]:
    """A maximum matching expected index -> actual index (augmenting paths: "d1|d2" alternatives could
    otherwise steal the only command a later, stricter expectation can match)."""
    owner: dict[int, int] = {}

    def fits(e: ExpectedCommand, a: SentCommand) -> bool:
        return e.type is a.type and (not e.datanodes or a.alias in e.datanodes)

    def assign(i: int, seen: set[int]) -> bool:
        for j, command in enumerate(actual):
            if j in seen or not fits(expected[i], command):
                continue
            seen.add(j)
            if j not in owner or assign(owner[j], seen):
                owner[j] = i
                return True
        return False

    for i in range(len(expected)):
        assign(i, set())
    return {i: j for j, i in owner.items()}


def _names(commands: Sequence[SentCommand]) -> str:
    return ", ".join(map(str, commands))
