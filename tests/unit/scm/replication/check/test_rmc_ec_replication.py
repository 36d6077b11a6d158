"""(8) ECReplicationCheckHandler: report and queue EC under/over-replication (HEAD report names)."""

from __future__ import annotations

import pytest

from pyozone.scm.replication.check.ec_replication import ECReplicationCheckHandler
from pyozone.scm.replication.config import ReplicationManagerConfig
from pyozone.scm.replication.results import OverReplicatedHealthResult, UnderReplicatedHealthResult
from tests.unit.scm.replication.check.rmc_fakes import (
    RecordingServices,
    S,
    add,
    container,
    delete,
    ec_container,
    ec_replicas,
    handle,
)

H = ECReplicationCheckHandler()
EC = ec_container()


def run(layout: str, pending: tuple = (), services: RecordingServices | None = None, read_only: bool = False):
    services = services or RecordingServices()
    return handle(H, EC, ec_replicas(layout, services), services, pending, read_only)


def test_healthy_passes_on() -> None:
    out = run("H H H H H")
    assert out.stopped is False and out.recorded() == {}


def test_unhealthy_extra_copy_is_not_this_handlers_business() -> None:
    out = run("H H H H HU")
    assert out.stopped is False and out.recorded() == {}


def test_under_replicated_is_queued_with_its_remaining_redundancy() -> None:
    out = run("H H H - -")
    assert out.stopped is True
    out.assert_only(S.UNDER_REPLICATED)
    assert out.under == [UnderReplicatedHealthResult(EC, 0, False, False, False, requeue_count=1)]
    assert out.calls == []


def test_pending_add_for_the_missing_index_reports_but_does_not_queue() -> None:
    out = run("H H H H -", (add("new", 5),))
    out.assert_only(S.UNDER_REPLICATED)
    assert out.under == []


def test_over_replicated_is_queued_unless_a_delete_is_pending() -> None:
    out = run("HH H H H H")
    assert out.stopped is True
    out.assert_only(S.OVER_REPLICATED)
    assert out.over == [OverReplicatedHealthResult(EC, 1, False)] and out.under == []
    out = run("HH H H H H", (delete("1H1", 1),))
    out.assert_only(S.OVER_REPLICATED)
    assert out.over == []


def test_decommissioning_only_index_is_out_of_service_work() -> None:
    out = run("H H H H D")
    out.assert_only(S.UNDER_REPLICATED)
    [queued] = out.under
    assert (queued.remaining_redundancy, queued.due_to_out_of_service, queued.weighted_redundancy) == (
        2,
        True,
        6,
    )


def test_maintenance_copies_cover_while_enough_redundancy_remains() -> None:
    assert run("H H H H M").recorded() == {}
    services = RecordingServices(config=ReplicationManagerConfig(maintenance_remaining_redundancy=2))
    out = run("H H H H M", services=services)
    out.assert_only(S.UNDER_REPLICATED)
    assert [u.due_to_out_of_service for u in out.under] == [True]


@pytest.mark.parametrize(
    ("layout", "state"),
    [
        ("H H U U U", S.UNHEALTHY),
        ("H H - - -", S.MISSING),
        ("H D - - -", S.MISSING_UNDER_REPLICATED),
        ("H D U - -", S.UNHEALTHY_UNDER_REPLICATED),
    ],
)
def test_unrecoverable_states(layout: str, state: S) -> None:
    out = run(layout)
    assert out.stopped is True
    out.assert_only(state)
    # Only the offline index can be saved: queued only when there is one.
    assert len(out.under) == (state in (S.MISSING_UNDER_REPLICATED, S.UNHEALTHY_UNDER_REPLICATED))


def test_read_only_reports_without_queueing() -> None:
    out = run("H H H - -", read_only=True)
    out.assert_only(S.UNDER_REPLICATED)
    assert out.under == [] and out.calls == []


def test_ratis_passes_through() -> None:
    out = handle(H, container("CLOSED"), [])
    assert out.stopped is False and out.recorded() == {}
