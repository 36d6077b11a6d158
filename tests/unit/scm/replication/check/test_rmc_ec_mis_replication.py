"""(11) ECMisReplicationCheckHandler: EC replicas badly spread over racks."""

from __future__ import annotations

from dataclasses import replace

from pyozone.scm.replication.check.ec_mis_replication import ECMisReplicationCheckHandler
from pyozone.scm.replication.results import MisReplicatedHealthResult
from tests.unit.scm.replication.check.rmc_fakes import (
    RecordingServices,
    S,
    add,
    check,
    container,
    ec_container,
    ec_replicas,
    handle,
    rack_placement,
)

H = ECMisReplicationCheckHandler()
EC = ec_container()
# Five racks; indexes 1 and 2 share r1, r5 is empty.
RACKS = {"1H0": "r1", "2H0": "r1", "3H0": "r2", "4H0": "r3", "5H0": "r4", "new": "r5"}
CROWDED = RecordingServices(placement=rack_placement(RACKS, total_racks=5))


def test_satisfied_placement_passes_on() -> None:
    out = handle(H, EC, ec_replicas("H H H H H"))
    assert out.stopped is False and out.recorded() == {}


def test_unsatisfied_placement_is_queued_as_mis_replicated() -> None:
    out = handle(H, EC, ec_replicas("H H H H H"), CROWDED)
    assert out.stopped is True
    out.assert_only(S.MIS_REPLICATED)
    assert out.under == [replace(MisReplicatedHealthResult.of(EC, False), requeue_count=1)]
    assert out.calls == []


def test_pending_ops_that_fix_placement_prevent_queueing() -> None:
    out = handle(H, EC, ec_replicas("H H H H H"), CROWDED, pending=[add("new", 2)])
    out.assert_only(S.MIS_REPLICATED)
    assert out.under == []


def test_read_only_reports_without_queueing() -> None:
    out = handle(H, EC, ec_replicas("H H H H H"), CROWDED, read_only=True)
    out.assert_only(S.MIS_REPLICATED)
    assert out.under == []


def test_ratis_passes_through() -> None:
    out = handle(H, container(), [], CROWDED)
    assert out.stopped is False and out.recorded() == {}


def test_chain_checks_placement_only_once_replication_is_fine() -> None:
    out = check(EC, ec_replicas("H H H H H"), CROWDED)
    out.assert_only(S.MIS_REPLICATED)
    under = check(EC, ec_replicas("H H H H -"), CROWDED)
    under.assert_only(S.UNDER_REPLICATED)
