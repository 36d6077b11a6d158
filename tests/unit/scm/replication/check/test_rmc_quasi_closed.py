"""(3) QuasiClosedContainerHandler: force close when safe, else QUASI_CLOSED_STUCK; never stops."""

from __future__ import annotations

import pytest

from pyozone.scm.replication.check.quasi_closed import (
    QuasiClosedContainerHandler,
    can_force_close,
    is_quasi_closed_stuck,
)
from tests.unit.scm.replication.check.rmc_fakes import S, container, ec_container, handle, replica

H = QuasiClosedContainerHandler()
QC = container("QUASI_CLOSED")


def qc(dn: str, seq: int = 10, origin: str | None = None) -> object:
    return replica(dn, "QUASI_CLOSED", seq=seq, origin=origin)


def test_three_origins_force_close_only_the_highest_bcsid() -> None:
    replicas = [qc("a", 10), qc("b", 10), qc("c", 9)]
    out = handle(H, QC, replicas)
    assert out.stopped is False and out.recorded() == {}
    assert out.calls == [("close", "a", True), ("close", "b", True)]


def test_unhealthy_replicas_count_as_origins_when_not_ahead() -> None:
    replicas = [qc("a", 10), replica("b", "UNHEALTHY", seq=10), replica("c", "UNHEALTHY", seq=4)]
    assert can_force_close(QC, replicas)
    out = handle(H, QC, replicas)
    assert out.stopped is False and out.recorded() == {}
    assert out.calls == [("close", "a", True)]


@pytest.mark.parametrize(
    "replicas",
    [
        [qc("a"), qc("b")],  # only two origins
        [qc("a", origin="o"), qc("b", origin="o"), qc("c", origin="p")],  # three replicas, two origins
        [qc("a", 10), qc("b", 10), replica("c", "UNHEALTHY", seq=11)],  # an unhealthy copy is ahead
        [replica("a", "UNHEALTHY"), replica("b", "UNHEALTHY"), replica("c", "UNHEALTHY")],  # no QC copy
        [qc("a"), qc("b"), replica("c", "OPEN")],  # OPEN copies are not QC/UNHEALTHY origins
        [],
    ],
)
def test_stuck_is_reported_and_nothing_sent(replicas: list) -> None:
    assert is_quasi_closed_stuck(QC, replicas)
    out = handle(H, QC, replicas)
    assert out.stopped is False
    out.assert_only(S.QUASI_CLOSED_STUCK)
    assert out.calls == []


def test_read_only_reports_stuck_and_sends_nothing() -> None:
    out = handle(H, QC, [qc("a"), qc("b")], read_only=True)
    out.assert_only(S.QUASI_CLOSED_STUCK)
    assert out.stopped is False and out.calls == []
    out = handle(H, QC, [qc("a"), qc("b"), qc("c")], read_only=True)
    assert out.stopped is False and out.recorded() == {} and out.calls == []


def test_ratis_one_needs_a_single_origin() -> None:
    info = container("QUASI_CLOSED", "RATIS/ONE")
    out = handle(H, info, [qc("a")])
    assert out.recorded() == {} and out.calls == [("close", "a", True)]


@pytest.mark.parametrize("info", [container("CLOSED"), container("CLOSING"), ec_container("QUASI_CLOSED")])
def test_other_containers_pass_through(info: object) -> None:
    out = handle(H, info, [replica("a", "QUASI_CLOSED", index=1)])
    assert out.stopped is False and out.recorded() == {} and out.calls == []
