"""(2) ClosingContainerHandler: close replicas of CLOSING containers; always ends the chain."""

from __future__ import annotations

import pytest

from pyozone.hdds.states import LifeCycleEvent
from pyozone.scm.replication.check.closing import ClosingContainerHandler
from pyozone.scm.replication.config import ReplicationManagerConfig
from tests.unit.scm.replication.check.rmc_fakes import (
    CID,
    RecordingServices,
    S,
    container,
    ec_container,
    handle,
    replica,
)

H = ClosingContainerHandler()
WAIT_MS = 5 * 300_000


def test_ratis_replicas_are_closed_without_force_except_unhealthy() -> None:
    replicas = [
        replica("a", "OPEN"),
        replica("b", "CLOSING"),
        replica("c", "UNHEALTHY"),
        replica("d", "CLOSED"),
    ]
    out = handle(H, container("CLOSING"), replicas)
    assert out.stopped is True and out.recorded() == {}
    assert out.calls == [("close", "a", False), ("close", "b", False), ("close", "d", False)]


def test_ec_replicas_are_force_closed() -> None:
    replicas = [
        replica("a", "OPEN", index=1),
        replica("b", "UNHEALTHY", index=2),
        replica("c", "CLOSING", index=3),
    ]
    out = handle(H, ec_container("CLOSING"), replicas)
    assert out.calls == [("close", "a", True), ("close", "c", True)]


@pytest.mark.parametrize(
    ("config", "event"),
    [("RATIS/THREE", LifeCycleEvent.QUASI_CLOSE), ("EC/RS-3-2-1024k", LifeCycleEvent.CLOSE)],
)
def test_all_unhealthy_moves_the_container_on(config: str, event: LifeCycleEvent) -> None:
    index = 1 if config.startswith("EC") else 0
    out = handle(H, container("CLOSING", config), [replica("a", "UNHEALTHY", index=index)])
    assert out.stopped is True and out.recorded() == {}
    assert out.calls == [("event", CID, event)]


def test_no_replicas_is_missing_and_waits_before_closing() -> None:
    services = RecordingServices()
    info = container("CLOSING", keys=0, entered_ms=services.clock.wall_ms())
    out = handle(H, info, [], services)
    assert out.stopped is True
    out.assert_only(S.MISSING)
    assert out.calls == []


def test_empty_container_without_replicas_closes_strictly_after_five_intervals() -> None:
    services = RecordingServices()
    info = container("CLOSING", keys=0, entered_ms=services.clock.wall_ms())
    services.clock.advance(WAIT_MS)
    assert handle(H, info, [], services).calls == []  # exactly at the deadline: not yet
    services.clock.advance(1)
    out = handle(H, info, [], services)
    out.assert_only(S.MISSING)
    assert out.calls == [("event", CID, LifeCycleEvent.CLOSE)]


def test_wait_follows_the_configured_thread_interval() -> None:
    services = RecordingServices(config=ReplicationManagerConfig(thread_interval_ms=1_000))
    info = container("CLOSING", keys=0, entered_ms=services.clock.wall_ms())
    services.clock.advance(5_001)
    assert handle(H, info, [], services).calls == [("event", CID, LifeCycleEvent.CLOSE)]


def test_container_with_keys_and_no_replicas_is_never_closed_by_rm() -> None:
    services = RecordingServices()
    info = container("CLOSING", keys=3, entered_ms=services.clock.wall_ms())
    services.clock.advance(10 * WAIT_MS)
    out = handle(H, info, [], services)
    out.assert_only(S.MISSING)
    assert out.calls == []


def test_never_written_container_without_replicas_is_empty_not_missing() -> None:
    """Issue 11 defect 4: a failed-write burst left allocated-but-never-created CLOSING containers that
    the report showed as MISSING until the RM closed them; no datanode ever held their data."""
    services = RecordingServices()
    info = container("CLOSING", seq=0, keys=0, entered_ms=services.clock.wall_ms(), reported=False)
    out = handle(H, info, [], services)
    out.assert_only(S.EMPTY)
    assert out.calls == []
    services.clock.advance(WAIT_MS + 1)
    out = handle(H, info, [], services)
    out.assert_only(S.EMPTY)
    assert out.calls == [("event", CID, LifeCycleEvent.CLOSE)]


def test_written_container_without_replicas_is_missing_even_with_no_keys() -> None:
    out = handle(H, container("CLOSING", seq=7, keys=0), [])
    out.assert_only(S.MISSING)


def test_container_created_on_a_datanode_then_lost_is_missing_before_any_full_report() -> None:
    """Slow suite (test_e2e_affected_keys): keys written, then every datanode of their pipeline killed
    before a full container report (hdds.container.report.interval, 60 minutes). SCM saw the replicas
    (their creation's incremental reports) but never a key or a sequence id; the containers were reported
    EMPTY and affected-keys found none of the lost keys."""
    out = handle(H, container("CLOSING", seq=0, keys=0, reported=True), [])
    out.assert_only(S.MISSING)


def test_read_only_reports_missing_and_does_nothing() -> None:
    services = RecordingServices()
    services.clock.advance(10 * WAIT_MS)
    out = handle(H, container("CLOSING", keys=0), [], services, read_only=True)
    assert out.stopped is True
    out.assert_only(S.MISSING)
    assert out.calls == []
    out = handle(H, container("CLOSING"), [replica("a", "OPEN"), replica("b", "UNHEALTHY")], read_only=True)
    assert out.stopped is True and out.recorded() == {} and out.calls == []


@pytest.mark.parametrize("state", ["OPEN", "QUASI_CLOSED", "CLOSED", "DELETING"])
def test_other_states_pass_through(state: str) -> None:
    out = handle(H, container(state), [])
    assert out.stopped is False and out.recorded() == {} and out.calls == []
