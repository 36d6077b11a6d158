"""(10) ClosedWithUnhealthyReplicasHandler: drop UNHEALTHY extras of a complete CLOSED EC container."""

from __future__ import annotations

import pytest

from pyozone.scm.replication.check.closed_with_unhealthy import ClosedWithUnhealthyReplicasHandler
from tests.unit.scm.replication.check.rmc_fakes import (
    RecordingServices,
    S,
    check,
    container,
    ec_container,
    ec_replicas,
    handle,
    replica,
)

H = ClosedWithUnhealthyReplicasHandler()
EC = ec_container()


def test_unhealthy_extras_are_force_deleted() -> None:
    out = handle(H, EC, ec_replicas("HU H HU H H"))
    assert out.stopped is True
    out.assert_only(S.UNHEALTHY_OVER_REPLICATED)
    assert out.calls == [("delete", "1U1", True), ("delete", "3U1", True)]
    assert out.under == [] and out.over == []


def test_nothing_is_deleted_if_any_unhealthy_index_lacks_a_closed_copy() -> None:
    # index 1's UNHEALTHY copy is a spare, but index 2 has only a CLOSING and an UNHEALTHY copy
    replicas = [
        *ec_replicas("HU - H H H"),
        replica("2Cg", "CLOSING", index=2),
        replica("2U", "UNHEALTHY", index=2),
    ]
    out = handle(H, EC, replicas)
    assert out.stopped is False and out.recorded() == {} and out.calls == []


def test_no_unhealthy_replicas_passes_on() -> None:
    out = handle(H, EC, ec_replicas("H H H H H"))
    assert out.stopped is False and out.recorded() == {} and out.calls == []


def test_read_only_reports_and_deletes_nothing() -> None:
    out = handle(H, EC, ec_replicas("H H H H HU"), read_only=True)
    assert out.stopped is True
    out.assert_only(S.UNHEALTHY_OVER_REPLICATED)
    assert out.calls == []


@pytest.mark.parametrize("info", [container("CLOSED"), ec_container("QUASI_CLOSED")])
def test_other_containers_pass_through(info: object) -> None:
    out = handle(H, info, [replica("a", "CLOSED", index=1), replica("b", "UNHEALTHY", index=1)])
    assert out.stopped is False and out.recorded() == {} and out.calls == []


def test_in_the_chain_only_after_the_ec_check_found_it_sufficient() -> None:
    services = RecordingServices()
    out = check(EC, ec_replicas("HU H H U H"), services)  # index 4 has no good copy: under-replicated
    out.assert_only(S.UNDER_REPLICATED)
    assert out.calls == []
