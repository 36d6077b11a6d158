"""(1) OpenContainerHandler: every OPEN container ends the chain; an unhealthy one is closed."""

from __future__ import annotations

import pytest

from pyozone.scm.replication.check.open_container import OpenContainerHandler
from tests.unit.scm.replication.check.rmc_fakes import (
    CID,
    RecordingServices,
    S,
    check,
    container,
    ec_container,
    handle,
    replica,
)

H = OpenContainerHandler()


@pytest.mark.parametrize("config", ["RATIS/THREE", "RATIS/ONE", "EC/RS-3-2-1024k"])
def test_healthy_open_container_stops_the_chain_silently(config: str) -> None:
    replicas = [replica(f"dn{i}", "OPEN", index=i + 1 if config.startswith("EC") else 0) for i in range(3)]
    out = handle(H, container("OPEN", config), replicas)
    assert out.stopped is True and out.recorded() == {} and out.calls == []
    assert out.health is S.HEALTHY


def test_open_with_too_few_replicas_is_not_checked_for_replication() -> None:
    out = check(container("OPEN"), [replica("dn0", "OPEN")])
    assert out.recorded() == {} and out.under == [] and out.calls == []


def test_replica_not_open_makes_it_open_unhealthy_and_fires_close() -> None:
    out = handle(H, container("OPEN"), [replica("a", "OPEN"), replica("b", "CLOSING"), replica("c", "OPEN")])
    assert out.stopped is True
    out.assert_only(S.OPEN_UNHEALTHY)
    assert out.calls == [("fire_close", CID)]


def test_unhealthy_replica_of_open_ec_container() -> None:
    out = handle(H, ec_container("OPEN"), [replica("a", "OPEN", index=1), replica("b", "UNHEALTHY", index=2)])
    out.assert_only(S.OPEN_UNHEALTHY)
    assert out.calls == [("fire_close", CID)]


def test_missing_pipeline_wins_over_unhealthy_replicas() -> None:
    services = RecordingServices(pipelines=set())
    out = handle(H, container("OPEN"), [replica("a", "QUASI_CLOSED")], services)
    out.assert_only(S.OPEN_WITHOUT_PIPELINE)
    assert out.calls == [("fire_close", CID)]


def test_no_pipeline_id_at_all() -> None:
    out = handle(H, container("OPEN", pipeline=None), [replica("a", "OPEN")])
    out.assert_only(S.OPEN_WITHOUT_PIPELINE)
    assert out.calls == [("fire_close", CID)]


@pytest.mark.parametrize("pipelines", [set(), {"pipeline-1"}])
def test_read_only_reports_but_fires_nothing(pipelines: set[str]) -> None:
    services = RecordingServices(pipelines=pipelines)
    out = handle(H, container("OPEN"), [replica("a", "CLOSED")], services, read_only=True)
    expected = S.OPEN_UNHEALTHY if pipelines else S.OPEN_WITHOUT_PIPELINE
    assert out.stopped is True
    out.assert_only(expected)
    assert out.calls == []


@pytest.mark.parametrize("state", ["CLOSING", "QUASI_CLOSED", "CLOSED", "DELETING", "DELETED"])
def test_other_states_pass_through(state: str) -> None:
    out = handle(H, container(state, pipeline=None), [replica("a", "OPEN")])
    assert out.stopped is False and out.recorded() == {} and out.calls == []
