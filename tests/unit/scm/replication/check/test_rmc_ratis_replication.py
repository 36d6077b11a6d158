"""(9) RatisReplicationCheckHandler: report and queue Ratis under/over/mis-replication."""

from __future__ import annotations

from dataclasses import replace

from pyozone.hdds.states import NodeOperationalState as Op
from pyozone.scm.replication.check.ratis_replication import RatisReplicationCheckHandler
from pyozone.scm.replication.results import MisReplicatedHealthResult, UnderReplicatedHealthResult
from tests.unit.scm.replication.check.rmc_fakes import (
    RecordingServices,
    S,
    add,
    container,
    delete,
    ec_container,
    handle,
    rack_placement,
    ratis_replicas,
    replica,
)

H = RatisReplicationCheckHandler()
CLOSED = container("CLOSED")
QC = container("QUASI_CLOSED")


def test_healthy_passes_on() -> None:
    out = handle(H, CLOSED, ratis_replicas("C C C"))
    assert out.stopped is False and out.recorded() == {}


def test_unhealthy_result_passes_on() -> None:
    services = RecordingServices()
    services.set_node("U3", Op.DECOMMISSIONING)  # an unhealthy copy that is not excess
    out = handle(H, CLOSED, ratis_replicas("C C C U"), services)
    assert out.stopped is False and out.recorded() == {}


def test_under_replicated_is_queued() -> None:
    out = handle(H, CLOSED, ratis_replicas("C C"))
    assert out.stopped is True
    out.assert_only(S.UNDER_REPLICATED)
    assert out.under == [UnderReplicatedHealthResult(CLOSED, 1, False, False, False, requeue_count=1)]


def test_pending_add_reports_but_does_not_queue() -> None:
    out = handle(H, CLOSED, ratis_replicas("C C"), pending=[add("new")])
    out.assert_only(S.UNDER_REPLICATED)
    assert out.under == []


def test_decommissioning_replica_makes_out_of_service_work() -> None:
    services = RecordingServices()
    services.set_node("C2", Op.DECOMMISSIONING)
    out = handle(H, CLOSED, ratis_replicas("C C C"), services)
    out.assert_only(S.UNDER_REPLICATED)
    [queued] = out.under
    assert (queued.remaining_redundancy, queued.due_to_out_of_service) == (2, True)


def test_maintenance_replica_is_tolerated_down_to_the_minimum() -> None:
    services = RecordingServices()
    services.set_node("C2", Op.IN_MAINTENANCE)
    assert handle(H, CLOSED, ratis_replicas("C C C"), services).recorded() == {}
    services.set_node("C1", Op.IN_MAINTENANCE)
    out = handle(H, CLOSED, ratis_replicas("C C C"), services)
    out.assert_only(S.UNDER_REPLICATED)


def test_only_unhealthy_replicas_are_left_to_check_12() -> None:
    out = handle(H, CLOSED, ratis_replicas("U U"))
    assert out.stopped is False and out.recorded() == {} and out.under == []


def test_no_replicas_is_missing_and_not_queued() -> None:
    out = handle(H, CLOSED, [])
    assert out.stopped is True
    out.assert_only(S.MISSING)
    assert out.under == []


def test_over_replicated_waits_for_pending_deletes() -> None:
    out = handle(H, CLOSED, ratis_replicas("C C C C"), pending=[delete("C3")])
    assert out.stopped is True
    out.assert_only(S.OVER_REPLICATED)
    assert out.over == []


def test_over_replicated_with_mismatched_replica_is_not_queued() -> None:
    out = handle(H, CLOSED, ratis_replicas("C C C Cg"))
    out.assert_only(S.OVER_REPLICATED)
    assert out.over == []


def test_over_replicated_without_enough_matching_replicas_is_not_queued() -> None:
    # Two in-service copies plus one in maintenance suffice and the unhealthy copies make it
    # over-replicated, but only two copies match in service: not safely over-replicated.
    services = RecordingServices()
    services.set_node("C2", Op.IN_MAINTENANCE)
    out = handle(H, CLOSED, ratis_replicas("C C C U U"), services)
    out.assert_only(S.OVER_REPLICATED)
    assert out.over == [] and out.under == []


def test_quasi_closed_unhealthy_copies_with_unique_origin_are_kept() -> None:
    replicas = [replica(f"q{i}", "QUASI_CLOSED", origin=o) for i, o in enumerate("ABC")]
    unique = handle(H, QC, [*replicas, replica("u", "UNHEALTHY", origin="D")])
    assert unique.stopped is False and unique.recorded() == {}
    shared = handle(H, QC, [*replicas, replica("u", "UNHEALTHY", origin="A")])
    shared.assert_only(S.OVER_REPLICATED)
    assert [o.excess_redundancy for o in shared.over] == [1]


def test_quasi_closed_stuck_is_left_to_check_7() -> None:
    replicas = [replica("a", "QUASI_CLOSED", origin="A"), replica("b", "QUASI_CLOSED", origin="B")]
    out = handle(H, QC, replicas)
    assert out.stopped is False and out.recorded() == {}


SAME_RACK = rack_placement({"C0": "r1", "C1": "r1", "C2": "r1", "C3": "r1", "x": "r2"})


def test_mis_replicated_goes_to_the_under_queue() -> None:
    out = handle(H, CLOSED, ratis_replicas("C C C"), RecordingServices(placement=SAME_RACK))
    assert out.stopped is True
    out.assert_only(S.MIS_REPLICATED)
    assert out.under == [replace(MisReplicatedHealthResult.of(CLOSED, False), requeue_count=1)]
    assert out.under[0].remaining_redundancy == 6


def test_mis_replicated_fixed_by_pending_ops_is_not_queued() -> None:
    services = RecordingServices(placement=SAME_RACK)
    out = handle(H, CLOSED, ratis_replicas("C C C"), services, pending=[add("x")])
    out.assert_only(S.MIS_REPLICATED)
    assert out.under == []


def test_over_wins_over_mis_replicated() -> None:
    out = handle(H, CLOSED, ratis_replicas("C C C C"), RecordingServices(placement=SAME_RACK))
    out.assert_only(S.OVER_REPLICATED)
    assert len(out.over) == 1 and out.under == []


def test_ec_passes_through() -> None:
    out = handle(H, ec_container(), [])
    assert out.stopped is False and out.recorded() == {}
