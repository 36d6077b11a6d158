"""(12) RatisUnhealthyReplicationCheckHandler: Ratis containers with only unhealthy replicas."""

from __future__ import annotations

import pytest

from pyozone.scm.replication.check.ratis_unhealthy import RatisUnhealthyReplicationCheckHandler
from pyozone.scm.replication.results import OverReplicatedHealthResult, UnderReplicatedHealthResult
from tests.unit.scm.replication.check.rmc_fakes import (
    S,
    add,
    container,
    delete,
    ec_container,
    handle,
    ratis_replicas,
)

H = RatisUnhealthyReplicationCheckHandler()
CLOSED = container("CLOSED")


@pytest.mark.parametrize("layout", ["U U", "Q< Q<", "U Q<"])
def test_too_few_unhealthy_replicas(layout: str) -> None:
    out = handle(H, CLOSED, ratis_replicas(layout))
    assert out.stopped is True
    out.assert_only(S.UNHEALTHY_UNDER_REPLICATED)
    assert out.under == [UnderReplicatedHealthResult(CLOSED, 1, False, False, False, False, requeue_count=1)]


def test_exactly_enough_is_unhealthy_and_the_chain_goes_on() -> None:
    out = handle(H, CLOSED, ratis_replicas("U U U"))
    assert out.stopped is False
    out.assert_only(S.UNHEALTHY)
    assert out.under == [] and out.over == []


@pytest.mark.parametrize("layout", ["U U U U", "Q< Q< Q< Q<"])
def test_too_many_unhealthy_replicas(layout: str) -> None:
    out = handle(H, CLOSED, ratis_replicas(layout))
    assert out.stopped is True
    out.assert_only(S.UNHEALTHY_OVER_REPLICATED)
    assert out.over == [OverReplicatedHealthResult(CLOSED, 1, False, False, False)]


def test_pending_ops_that_fix_it_prevent_queueing() -> None:
    out = handle(H, CLOSED, ratis_replicas("U U"), pending=[add("x")])
    out.assert_only(S.UNHEALTHY_UNDER_REPLICATED)
    assert out.under == []
    out = handle(H, CLOSED, ratis_replicas("U U U U"), pending=[delete("U0")])
    out.assert_only(S.UNHEALTHY_OVER_REPLICATED)
    assert out.over == []


@pytest.mark.parametrize("layout", ["", "C U U", "Q= U U", "Cg U U"])
def test_any_healthy_replica_or_none_at_all_passes_on(layout: str) -> None:
    out = handle(H, CLOSED, ratis_replicas(layout))
    assert out.stopped is False and out.recorded() == {}


def test_read_only_reports_without_queueing() -> None:
    out = handle(H, CLOSED, ratis_replicas("U U"), read_only=True)
    out.assert_only(S.UNHEALTHY_UNDER_REPLICATED)
    assert out.under == [] and out.calls == []


def test_ec_passes_through() -> None:
    out = handle(H, ec_container(), ratis_replicas("U"))
    assert out.stopped is False and out.recorded() == {}
