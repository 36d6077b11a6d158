"""(13) VulnerableUnhealthyReplicasHandler: UNHEALTHY copies that may be an origin's only latest data."""

from __future__ import annotations

from dataclasses import replace

import pytest

from pyozone.hdds.states import NodeOperationalState as Op
from pyozone.hdds.states import NodeState
from pyozone.scm.replication.check.vulnerable import VulnerableUnhealthyReplicasHandler
from pyozone.scm.replication.results import UnderReplicatedHealthResult
from tests.unit.scm.replication.check.rmc_fakes import (
    SEQ,
    RecordingServices,
    S,
    check,
    container,
    ec_container,
    handle,
    replica,
)

H = VulnerableUnhealthyReplicasHandler()
QC = container("QUASI_CLOSED")
GOOD = [replica(f"q{i}", "QUASI_CLOSED", origin=o) for i, o in enumerate("ABC")]


def leaving(op: Op = Op.DECOMMISSIONING, health: NodeState = NodeState.HEALTHY) -> RecordingServices:
    services = RecordingServices()
    services.set_node("u", op, health)
    return services


def test_unhealthy_last_copy_of_an_origin_on_a_leaving_node_is_queued() -> None:
    out = handle(H, QC, [*GOOD, replica("u", "UNHEALTHY", origin="D")], leaving())
    assert out.stopped is True
    out.assert_only(S.UNHEALTHY_UNDER_REPLICATED)
    [queued] = out.under
    assert queued.has_vulnerable_unhealthy
    # the count with unhealthy copies: 3 in service + 1 decommissioning, nothing else needed
    assert replace(queued, has_vulnerable_unhealthy=False) == UnderReplicatedHealthResult(
        QC, 3, False, True, False, requeue_count=1
    )


def test_read_only_reports_but_does_not_queue() -> None:
    out = handle(H, QC, [*GOOD, replica("u", "UNHEALTHY", origin="D")], leaving(), read_only=True)
    assert out.stopped is True
    out.assert_only(S.UNHEALTHY_UNDER_REPLICATED)
    assert out.under == [] and out.calls == []


@pytest.mark.parametrize(
    ("unhealthy", "services"),
    [
        (replica("u", "UNHEALTHY", origin="D", seq=SEQ - 1), leaving()),  # behind the container
        (replica("u", "UNHEALTHY", origin="D", empty=True), leaving()),  # nothing to lose
        (replica("u", "UNHEALTHY", origin="D"), leaving(health=NodeState.DEAD)),  # cannot be copied
        (replica("u", "UNHEALTHY", origin="A"), leaving()),  # origin A survives in service
        (replica("u", "UNHEALTHY", origin="D"), RecordingServices()),  # itself in service
    ],
)
def test_not_vulnerable(unhealthy: object, services: RecordingServices) -> None:
    out = handle(H, QC, [*GOOD, unhealthy], services)
    assert out.stopped is False and out.recorded() == {} and out.under == []


def test_all_unhealthy_is_not_this_handlers_case() -> None:
    out = handle(H, QC, [replica("u", "UNHEALTHY", origin="D")], leaving())
    assert out.stopped is False and out.recorded() == {}


@pytest.mark.parametrize("info", [container("CLOSED"), ec_container("QUASI_CLOSED")])
def test_other_containers_pass_through(info: object) -> None:
    out = handle(H, info, [*GOOD, replica("u", "UNHEALTHY", origin="D")], leaving())
    assert out.stopped is False and out.recorded() == {}


def test_in_the_chain_after_the_force_close() -> None:
    out = check(QC, [*GOOD, replica("u", "UNHEALTHY", origin="D")], leaving())
    out.assert_only(S.UNHEALTHY_UNDER_REPLICATED)
    assert out.health is S.UNHEALTHY_UNDER_REPLICATED
    assert [u.has_vulnerable_unhealthy for u in out.under] == [True]
    assert out.calls == [("close", "q0", True), ("close", "q1", True), ("close", "q2", True)]
