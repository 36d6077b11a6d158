"""(4) MismatchedReplicasHandler: close stray replicas of CLOSED/QUASI_CLOSED containers; never stops."""

from __future__ import annotations

import pytest

from pyozone.scm.replication.check.mismatched import MismatchedReplicasHandler
from tests.unit.scm.replication.check.rmc_fakes import SEQ, container, ec_container, handle, replica

H = MismatchedReplicasHandler()
MIXED = [
    replica("open", "OPEN"),
    replica("closing", "CLOSING"),
    replica("qc_same", "QUASI_CLOSED", seq=SEQ),
    replica("qc_old", "QUASI_CLOSED", seq=SEQ - 1),
    replica("bad", "UNHEALTHY"),
    replica("closed", "CLOSED"),
]


def test_closed_ratis_container() -> None:
    out = handle(H, container("CLOSED"), MIXED)
    assert out.stopped is False and out.recorded() == {}
    # Ratis OPEN/CLOSING: no force; a QC copy with the container's BCSID: force; stale QC, UNHEALTHY: nothing.
    assert out.calls == [("close", "open", False), ("close", "closing", False), ("close", "qc_same", True)]


def test_quasi_closed_ratis_container_leaves_quasi_closed_replicas() -> None:
    out = handle(H, container("QUASI_CLOSED"), MIXED)
    assert out.stopped is False
    assert out.calls == [("close", "open", False), ("close", "closing", False)]


def test_closed_ec_container_force_closes() -> None:
    replicas = [
        replica("a", "OPEN", index=1),
        replica("b", "CLOSING", index=2),
        replica("c", "UNHEALTHY", index=3),
    ]
    out = handle(H, ec_container("CLOSED"), replicas)
    assert out.calls == [("close", "a", True), ("close", "b", True)]


def test_read_only_is_skipped_entirely() -> None:
    out = handle(H, container("CLOSED"), MIXED, read_only=True)
    assert out.stopped is False and out.recorded() == {} and out.calls == []


@pytest.mark.parametrize("state", ["OPEN", "CLOSING", "DELETING", "DELETED"])
def test_other_states_pass_through(state: str) -> None:
    out = handle(H, container(state), MIXED)
    assert out.stopped is False and out.calls == []
