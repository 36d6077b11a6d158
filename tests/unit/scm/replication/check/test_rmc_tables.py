"""The whole chain over every row of the classification tables derived from Ozone's check handlers (all nodes
IN_SERVICE and HEALTHY, no pending ops unless said), the offline EC variants, and the same rows in read-only
mode."""

from __future__ import annotations

import pytest

from pyozone.scm.replication.check import run_chain
from pyozone.scm.replication.ec_count import ECContainerReplicaCount
from pyozone.scm.replication.health_check import ec_check_health
from pyozone.scm.replication.pending_ops import PendingOp
from pyozone.scm.replication.queue import ReplicationQueue
from pyozone.scm.replication.results import UnderReplicatedHealthResult
from tests.unit.scm.replication.check.rmc_fakes import (
    RecordingServices,
    S,
    add,
    check,
    container,
    ec_container,
    ec_replicas,
    make_request,
    ratis_replicas,
)

# layout, report state, queue ("under", "over" or None), remaining redundancy (excess for the over row),
# commands during the check
EC_TABLE = [
    ("H H H H H", S.HEALTHY, None, None, []),
    ("H H H H HU", S.UNHEALTHY_OVER_REPLICATED, None, None, [("delete", "5U1", True)]),
    ("U H H H H", S.UNDER_REPLICATED, "under", 1, []),
    ("H H H U -", S.UNDER_REPLICATED, "under", 0, []),
    ("H H H U U", S.UNDER_REPLICATED, "under", 0, []),
    ("H H H - -", S.UNDER_REPLICATED, "under", 0, []),
    ("H H - H H", S.UNDER_REPLICATED, "under", 1, []),
    ("HU H H U H", S.UNDER_REPLICATED, "under", 1, []),
    ("HH H H H H", S.OVER_REPLICATED, "over", 1, []),
    ("HH H H H -", S.UNDER_REPLICATED, "under", 1, []),
    ("H H U U U", S.UNHEALTHY, None, -1, []),
    ("H H U U -", S.UNHEALTHY, None, -1, []),
    ("H H U - -", S.UNHEALTHY, None, -1, []),
    ("H H - - -", S.MISSING, None, -1, []),
    ("H - - - -", S.MISSING, None, -2, []),
    ("U U U U U", S.UNHEALTHY, None, -3, []),
]

# layout (see rmc_fakes.RATIS_KINDS), report state, queue, remaining redundancy / excess, check commands
RATIS_TABLE = [
    ("C C C", S.HEALTHY, None, None, []),
    ("C C", S.UNDER_REPLICATED, "under", 1, []),
    ("", S.MISSING, None, None, []),
    ("C C C C", S.OVER_REPLICATED, "over", 1, []),
    ("C C U U", S.UNDER_REPLICATED, "under", 1, []),
    ("C C C U", S.OVER_REPLICATED, "over", 1, []),
    ("C C C U U U", S.OVER_REPLICATED, "over", 3, []),
    ("C C Cg U U U", S.OVER_REPLICATED, None, None, [("close", "Cg2", False)]),
    ("C C Q<", S.UNDER_REPLICATED, "under", 1, []),
    ("C C C Q<", S.OVER_REPLICATED, "over", 1, []),
    ("C C Q=", S.HEALTHY, None, None, [("close", "Q=2", True)]),
    (
        "Cg Cg Cg",
        S.HEALTHY,
        None,
        None,
        [("close", "Cg0", False), ("close", "Cg1", False), ("close", "Cg2", False)],
    ),
    ("U U", S.UNHEALTHY_UNDER_REPLICATED, "under", 1, []),
    ("U U U", S.UNHEALTHY, None, None, []),
    ("U U U U", S.UNHEALTHY_OVER_REPLICATED, "over", 1, []),
    ("Q< Q< Q< Q<", S.UNHEALTHY_OVER_REPLICATED, "over", 1, []),
    ("Q< Q<", S.UNHEALTHY_UNDER_REPLICATED, "under", 1, []),
]


def assert_row(out, state: S, queue: str | None, amount: int | None, commands: list) -> None:
    assert out.health is state
    if state is S.HEALTHY:
        assert out.recorded() == {}
    else:
        out.assert_only(state)
    assert out.calls == commands
    assert (len(out.under), len(out.over)) == {None: (0, 0), "under": (1, 0), "over": (0, 1)}[queue]
    for result in out.under:
        assert result.remaining_redundancy == amount and result.requeue_count == 1
        assert not result.replicated_ok_after_pending and not result.is_mis_replicated
    for result in out.over:
        assert result.excess_redundancy == amount and not result.replicated_ok_after_pending


@pytest.mark.parametrize(("layout", "state", "queue", "amount", "commands"), EC_TABLE)
def test_ec_table(layout: str, state: S, queue: str | None, amount: int | None, commands: list) -> None:
    info = ec_container()
    out = check(info, ec_replicas(layout))
    assert_row(out, state, queue, amount, commands)
    if amount is not None and queue is None:
        # Not queued, so read the table's remaining redundancy off the health the handler saw.
        health = ec_check_health(ECContainerReplicaCount(info, ec_replicas(layout), (), 1, lambda dn: None))
        assert isinstance(health, UnderReplicatedHealthResult) and health.remaining_redundancy == amount


@pytest.mark.parametrize(("layout", "state", "queue", "amount", "commands"), RATIS_TABLE)
def test_ratis_table(layout: str, state: S, queue: str | None, amount: int | None, commands: list) -> None:
    assert_row(check(container("CLOSED"), ratis_replicas(layout)), state, queue, amount, commands)


OFFLINE = [
    ("H D - - -", S.MISSING_UNDER_REPLICATED),
    ("H D U - -", S.UNHEALTHY_UNDER_REPLICATED),
]


@pytest.mark.parametrize(("layout", "state"), OFFLINE)
def test_ec_offline_variants_are_queued(layout: str, state: S) -> None:
    services = RecordingServices()
    out = check(ec_container(), ec_replicas(layout, services), services)
    assert out.health is state
    out.assert_only(state)
    [queued] = out.under
    assert (
        queued.remaining_redundancy == -1 and queued.has_unreplicated_offline_indexes and queued.unrecoverable
    )
    assert out.over == [] and out.calls == []


@pytest.mark.parametrize(("layout", "state"), OFFLINE)
def test_ec_offline_variants_with_pending_add_are_reported_not_queued(layout: str, state: S) -> None:
    services = RecordingServices()
    out = check(ec_container(), ec_replicas(layout, services), services, pending=[add("new", 2)])
    out.assert_only(state)
    assert out.under == [] and out.over == [] and out.calls == []


def _read_only_matches(info, replicas, services_factory, pending: tuple[PendingOp, ...] = ()) -> None:
    normal_services, ro_services = services_factory(), services_factory()
    normal = make_request(info, replicas, normal_services, pending)
    ro = make_request(info, replicas, ro_services, pending, read_only=True, queue=ReplicationQueue())
    assert run_chain(ro, ro_services) is run_chain(normal, normal_services)
    assert ro.report == normal.report
    assert ro_services.calls == [] and ro.queue.is_empty()


@pytest.mark.parametrize("layout", [row[0] for row in EC_TABLE])
def test_ec_table_read_only(layout: str) -> None:
    _read_only_matches(ec_container(), ec_replicas(layout), RecordingServices)


@pytest.mark.parametrize("layout", [row[0] for row in RATIS_TABLE])
def test_ratis_table_read_only(layout: str) -> None:
    _read_only_matches(container("CLOSED"), ratis_replicas(layout), RecordingServices)


@pytest.mark.parametrize(
    ("layout", "pending"), [(row[0], p) for row in OFFLINE for p in [(), (add("new", 2),)]]
)
def test_ec_offline_read_only(layout: str, pending: tuple[PendingOp, ...]) -> None:
    def services_with_offline_nodes() -> RecordingServices:
        services = RecordingServices()
        ec_replicas(layout, services)
        return services

    replicas = ec_replicas(layout, RecordingServices())
    _read_only_matches(ec_container(), replicas, services_with_offline_nodes, pending)
