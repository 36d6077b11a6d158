"""(7) QuasiClosedStuckReplicationCheck, and quasi-closed stuck containers through the whole chain
(QuasiClosedContainerHandler and QuasiClosedStuckReplicationCheck)."""

from __future__ import annotations

import pytest

from pyozone.hdds.states import NodeOperationalState as Op
from pyozone.scm.replication.check.quasi_closed_stuck import (
    QuasiClosedStuckReplicationCheck,
    should_handle_as_quasi_closed_stuck,
)
from pyozone.scm.replication.results import OverReplicatedHealthResult, UnderReplicatedHealthResult
from tests.unit.scm.replication.check.rmc_fakes import (
    RecordingServices,
    S,
    add,
    check,
    container,
    delete,
    ec_container,
    handle,
    replica,
)

H = QuasiClosedStuckReplicationCheck()
QC = container("QUASI_CLOSED")


def qc(dn: str, origin: str, seq: int = 10, state: str = "QUASI_CLOSED") -> object:
    return replica(dn, state, seq=seq, origin=origin)


TWO_ORIGINS = [qc("a1", "A"), qc("b1", "B")]


def test_should_handle() -> None:
    assert should_handle_as_quasi_closed_stuck(QC, TWO_ORIGINS)
    assert should_handle_as_quasi_closed_stuck(QC, [])  # zero origins
    assert not should_handle_as_quasi_closed_stuck(container("CLOSED"), TWO_ORIGINS)
    # force-closable: not stuck
    assert not should_handle_as_quasi_closed_stuck(QC, [*TWO_ORIGINS, qc("c1", "C")])
    # one origin: ordinary Ratis counting copes
    assert not should_handle_as_quasi_closed_stuck(QC, [qc("a1", "A"), qc("a2", "A")])
    # stuck (an unhealthy copy is ahead) but three QUASI_CLOSED/OPEN origins: it should close soon
    ahead = [qc("a1", "A", 5), qc("b1", "B", 5), qc("c1", "C", 5, "OPEN"), qc("d1", "D", 11, "UNHEALTHY")]
    assert not should_handle_as_quasi_closed_stuck(QC, ahead)
    assert should_handle_as_quasi_closed_stuck(QC, ahead[:2] + ahead[3:])


def test_no_replicas_is_stuck_missing() -> None:
    out = handle(H, QC, [])
    assert out.stopped is True
    out.assert_only(S.QUASI_CLOSED_STUCK_MISSING)
    assert out.under == [] and out.calls == []


def test_under_replicated_origins_are_queued() -> None:
    out = handle(H, QC, TWO_ORIGINS)
    assert out.stopped is True
    out.assert_only(S.QUASI_CLOSED_STUCK_UNDER_REPLICATED)
    assert out.over == [] and out.calls == []
    assert out.under == [UnderReplicatedHealthResult(QC, 1, False, False, False, requeue_count=1)]


def test_out_of_service_replicas_mark_the_result() -> None:
    services = RecordingServices()
    services.set_node("b1", Op.DECOMMISSIONING)
    out = handle(H, QC, TWO_ORIGINS, services)
    assert [u.due_to_out_of_service for u in out.under] == [True]


def test_pending_add_reports_but_does_not_queue() -> None:
    out = handle(H, QC, TWO_ORIGINS, pending=[add("x")])
    assert out.stopped is True
    out.assert_only(S.QUASI_CLOSED_STUCK_UNDER_REPLICATED)
    assert out.under == []


# Best origin A (BCSID 10) wants 3 copies, B (BCSID 9) wants 2.
OVER = [qc("a1", "A"), qc("a2", "A"), qc("a3", "A"), qc("a4", "A"), qc("b1", "B", 9), qc("b2", "B", 9)]


def test_over_replicated_origin_is_queued() -> None:
    out = handle(H, QC, OVER)
    assert out.stopped is True
    out.assert_only(S.QUASI_CLOSED_STUCK_OVER_REPLICATED)
    assert out.under == [] and out.over == [OverReplicatedHealthResult(QC, 1, False)]


def test_pending_delete_reports_but_does_not_queue() -> None:
    out = handle(H, QC, OVER, pending=[delete("a4")])
    out.assert_only(S.QUASI_CLOSED_STUCK_OVER_REPLICATED)
    assert out.over == []


def test_correctly_replicated_stuck_container_falls_through() -> None:
    out = handle(H, QC, OVER[:3] + OVER[4:])
    assert out.stopped is False and out.recorded() == {} and out.under == [] and out.over == []


def test_only_unhealthy_replicas_are_left_to_the_unhealthy_handlers() -> None:
    out = handle(H, QC, [qc("a1", "A", state="UNHEALTHY"), qc("b1", "B", state="UNHEALTHY")])
    assert out.stopped is False and out.recorded() == {}


def test_read_only_reports_without_queueing() -> None:
    out = handle(H, QC, TWO_ORIGINS, read_only=True)
    out.assert_only(S.QUASI_CLOSED_STUCK_UNDER_REPLICATED)
    assert out.under == [] and out.calls == []
    out = handle(H, QC, OVER, read_only=True)
    out.assert_only(S.QUASI_CLOSED_STUCK_OVER_REPLICATED)
    assert out.over == []


@pytest.mark.parametrize("info", [container("CLOSED"), ec_container("QUASI_CLOSED")])
def test_other_containers_pass_through(info: object) -> None:
    out = handle(H, info, [])
    assert out.stopped is False and out.recorded() == {}


# --- the chain: (3) reports QUASI_CLOSED_STUCK, (7) adds the replication state -----------------------


def test_chain_stuck_and_missing() -> None:
    out = check(QC)
    out.assert_only(S.QUASI_CLOSED_STUCK, S.QUASI_CLOSED_STUCK_MISSING)
    assert out.health is S.QUASI_CLOSED_STUCK_MISSING and out.calls == []


def test_chain_stuck_and_under_replicated() -> None:
    out = check(QC, TWO_ORIGINS)
    out.assert_only(S.QUASI_CLOSED_STUCK, S.QUASI_CLOSED_STUCK_UNDER_REPLICATED)
    assert out.health is S.QUASI_CLOSED_STUCK_UNDER_REPLICATED
    assert len(out.under) == 1 and out.over == [] and out.calls == []


def test_chain_stuck_and_over_replicated() -> None:
    out = check(QC, OVER)
    out.assert_only(S.QUASI_CLOSED_STUCK, S.QUASI_CLOSED_STUCK_OVER_REPLICATED)
    assert out.health is S.QUASI_CLOSED_STUCK_OVER_REPLICATED and len(out.over) == 1


def test_chain_stuck_but_correctly_replicated_stays_stuck() -> None:
    # Five replicas of a factor-3 container: the Ratis check must not call it over-replicated.
    out = check(QC, OVER[:3] + OVER[4:])
    out.assert_only(S.QUASI_CLOSED_STUCK)
    assert out.health is S.QUASI_CLOSED_STUCK and out.under == [] and out.over == [] and out.calls == []


def test_chain_stuck_with_only_unhealthy_replicas() -> None:
    out = check(QC, [qc("a1", "A", state="UNHEALTHY"), qc("b1", "B", state="UNHEALTHY")])
    out.assert_only(S.QUASI_CLOSED_STUCK, S.UNHEALTHY_UNDER_REPLICATED)
    assert out.health is S.UNHEALTHY_UNDER_REPLICATED and len(out.under) == 1


def test_chain_single_origin_stuck_uses_ratis_counting() -> None:
    out = check(QC, [qc("a1", "A"), qc("a2", "A")])
    out.assert_only(S.QUASI_CLOSED_STUCK, S.UNDER_REPLICATED)
    assert [u.remaining_redundancy for u in out.under] == [1]


def test_chain_force_closable_container_is_closed_and_checked() -> None:
    out = check(QC, [qc("a1", "A"), qc("b1", "B"), qc("c1", "C", 9)])
    assert out.recorded() == {} and out.health is S.HEALTHY
    assert out.calls == [("close", "a1", True), ("close", "b1", True)]
