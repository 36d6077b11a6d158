"""The health functions against classification tables derived from Ozone's ECReplicationCheckHandler and
RatisReplicationCheckHandler."""

from __future__ import annotations

import pytest

from pyozone.hdds.states import NodeOperationalState as Op
from pyozone.scm.replication.health_check import apply_pending, ec_check_health, ratis_check_health
from pyozone.scm.replication.placement import ContainerPlacementStatus, validate_container_placement
from pyozone.scm.replication.results import (
    HealthType,
    OverReplicatedHealthResult,
    UnderReplicatedHealthResult,
)
from pyozone.scm.replication.unhealthy import select_unhealthy_replicas_for_delete
from tests.unit.scm.replication.rm_builders import SEQ, add, container, delete, replica, statuses
from tests.unit.scm.replication.test_rm_ec_count import ec

UNDER, OVER, HEALTHY = HealthType.UNDER_REPLICATED, HealthType.OVER_REPLICATED, HealthType.HEALTHY
MIS, UNHEALTHY = HealthType.MIS_REPLICATED, HealthType.UNHEALTHY


# layout, result, remaining redundancy (under) or excess (over), unrecoverable, missing
EC_TABLE = [
    ("H H H H H", HEALTHY, None, False, False),
    ("H H H H HU", HEALTHY, None, False, False),  # left to ClosedWithUnhealthyReplicasHandler
    ("U H H H H", UNDER, 1, False, False),
    ("H H H U -", UNDER, 0, False, False),
    ("H H H U U", UNDER, 0, False, False),
    ("H H H - -", UNDER, 0, False, False),
    ("H H - H H", UNDER, 1, False, False),
    ("HU H H U H", UNDER, 1, False, False),
    ("HH H H H H", OVER, 1, False, False),
    ("HH H H H -", UNDER, 1, False, False),
    ("H H U U U", UNDER, -1, True, False),  # reported UNHEALTHY
    ("H H U U -", UNDER, -1, True, False),
    ("H H U - -", UNDER, -1, True, False),
    ("H H - - -", UNDER, -1, True, True),  # reported MISSING
    ("H - - - -", UNDER, -2, True, True),
    ("U U U U U", UNDER, -3, True, False),
]


@pytest.mark.parametrize(("layout", "kind", "amount", "unrecoverable", "missing"), EC_TABLE)
def test_ec_table(
    layout: str, kind: HealthType, amount: int | None, unrecoverable: bool, missing: bool
) -> None:
    result = ec_check_health(ec(layout))
    assert result.health_type is kind
    if isinstance(result, UnderReplicatedHealthResult):
        assert result.remaining_redundancy == amount and not result.due_to_out_of_service
        assert (result.unrecoverable, result.is_missing) == (unrecoverable, missing)
        assert not result.replicated_ok_after_pending and not result.has_unreplicated_offline_indexes
    if isinstance(result, OverReplicatedHealthResult):
        assert result.excess_redundancy == amount and not result.replicated_ok_after_pending


def test_ec_offline_variants() -> None:
    # idx1 H in service + idx2 H decommissioning: unrecoverable and missing, with an offline index
    r = ec_check_health(ec("H D - - -"))
    assert isinstance(r, UnderReplicatedHealthResult)
    assert r.unrecoverable and r.is_missing and r.has_unreplicated_offline_indexes
    assert not r.offline_indexes_ok_after_pending and r.remaining_redundancy == -1
    r = ec_check_health(ec("H D U - -"))
    assert r.unrecoverable and not r.is_missing and r.has_unreplicated_offline_indexes
    r = ec_check_health(ec("H D U - -", (add("x", 2),)))
    assert r.has_unreplicated_offline_indexes and r.offline_indexes_ok_after_pending


def test_ec_only_offline_copies_missing_is_out_of_service() -> None:
    r = ec_check_health(ec("H H H H D"))
    assert isinstance(r, UnderReplicatedHealthResult)
    assert r.due_to_out_of_service and r.remaining_redundancy == 2 and r.weighted_redundancy == 5
    r = ec_check_health(ec("H H H H D", (add("x", 5),)))
    assert r.replicated_ok_after_pending


def test_ec_over_ok_after_pending_delete() -> None:
    r = ec_check_health(ec("HH H H H H", (delete("1H1", 1),)))
    assert r.health_type is OVER and r.replicated_ok_after_pending


def always_satisfied(dns, expected) -> ContainerPlacementStatus:
    return ContainerPlacementStatus(True, 1, 1, expected, 0)


RATIS_KINDS = {
    "C": ("CLOSED", SEQ),
    "Q<": ("QUASI_CLOSED", SEQ - 1),
    "Q=": ("QUASI_CLOSED", SEQ),
    "U": ("UNHEALTHY", SEQ),
    "Cg": ("CLOSING", SEQ),
}


def ratis(spec: str, pending=(), placement=always_satisfied, state="CLOSED", ops=None):
    replicas = []
    for i, token in enumerate(spec.split()):
        state_name, seq = RATIS_KINDS[token]
        replicas.append(replica(f"dn{i}", state_name, seq=seq))
    return ratis_check_health(container(state), replicas, pending, 2, statuses(ops), placement)


# replicas, result, detail: remaining redundancy (under) or excess (over)
RATIS_TABLE = [
    ("C C C", HEALTHY, None),
    ("C C", UNDER, 1),
    ("", UNDER, 0),  # unrecoverable: reported MISSING
    ("C C C C", OVER, 1),
    ("C C U U", UNDER, 1),
    ("C C C U", OVER, 1),
    ("C C C U U U", OVER, 3),
    ("C C Cg U U U", OVER, 3),
    ("C C Q<", UNDER, 1),
    ("C C C Q<", OVER, 1),
    ("C C Q=", HEALTHY, None),
    ("Cg Cg Cg", HEALTHY, None),
    ("U U", UNDER, 0),
    ("U U U", UNDER, 0),
    ("U U U U", UNDER, 0),
    ("Q< Q< Q< Q<", UNDER, 0),
    ("Q< Q<", UNDER, 0),
]


@pytest.mark.parametrize(("spec", "kind", "detail"), RATIS_TABLE)
def test_ratis_table(spec: str, kind: HealthType, detail: int | None) -> None:
    result = ratis(spec)
    assert result.health_type is kind
    if isinstance(result, UnderReplicatedHealthResult):
        assert result.remaining_redundancy == detail
        assert result.unrecoverable == (spec == "")
    if isinstance(result, OverReplicatedHealthResult):
        assert result.excess_redundancy == detail


def test_ratis_table_flags() -> None:
    # all-unhealthy containers: under without healthy replicas, left to the unhealthy handler (12)
    assert not ratis("U U U").has_healthy_replicas and ratis("C C U U").has_healthy_replicas
    mixed = ratis("C C Cg U U U")
    assert mixed.has_mismatched_replicas and not mixed.is_safely_over_replicated  # not queued
    clean = ratis("C C C C")
    assert not clean.has_mismatched_replicas and clean.is_safely_over_replicated


def test_ratis_unhealthy_result() -> None:
    # sufficient, not over, placement fine, but an unhealthy copy on a maintenance node
    r = ratis("C C C U", ops={"dn3": Op.IN_MAINTENANCE})
    assert r.health_type is UNHEALTHY


def test_ratis_pending_ops() -> None:
    r = ratis("C C", (add("x"),))
    assert r.health_type is UNDER and r.replicated_ok_after_pending  # still under for the report
    r = ratis("C C C C", (delete("dn0"),))
    assert r.health_type is OVER and r.replicated_ok_after_pending


def test_ratis_quasi_closed_over_replication_needs_a_deletable_copy() -> None:
    qc = container("QUASI_CLOSED")

    def check(replicas):
        return ratis_check_health(qc, replicas, (), 2, statuses(), always_satisfied)

    base = [replica(f"q{i}", "QUASI_CLOSED", origin=f"O{i}") for i in range(3)]
    # the extra UNHEALTHY copy has a unique origin: kept, so the container is healthy
    assert check([*base, replica("u", "UNHEALTHY", origin="OX")]).health_type is HEALTHY
    # same origin as a QUASI_CLOSED copy: deletable, so over-replicated
    assert check([*base, replica("u", "UNHEALTHY", origin="O0")]).health_type is OVER


def test_ratis_mis_replication() -> None:
    racks = {"dn0": "r1", "dn1": "r1", "dn2": "r1", "x": "r2"}

    def placement(dns, expected):
        return validate_container_placement(dns, expected, racks.get, 2, "RACK_AWARE")

    r = ratis("C C C", placement=placement)
    assert r.health_type is MIS and r.remaining_redundancy == 6 and not r.replicated_ok_after_pending
    r = ratis("C C C", (add("x"),), placement=placement)
    assert r.health_type is MIS and r.replicated_ok_after_pending
    # over wins over mis
    assert ratis("C C C C", placement=placement).health_type is OVER


def test_apply_pending() -> None:
    assert apply_pending(["a", "b"], [add("c"), delete("a"), add("b")]) == ["b", "c"]


def test_select_unhealthy_replicas_for_delete() -> None:
    closed = container("CLOSED")
    rs = [
        replica("a"),
        replica("b"),
        replica("q", "QUASI_CLOSED", seq=SEQ - 1),
        replica("u", "UNHEALTHY", seq=3),
    ]
    picked = select_unhealthy_replicas_for_delete(closed, rs, 0, statuses())
    assert [r.datanode for r in picked] == ["u", "q"]  # lowest BCSID first
    assert select_unhealthy_replicas_for_delete(closed, rs, 1, statuses()) == []  # a delete pending
    assert select_unhealthy_replicas_for_delete(closed, rs[2:], 0, statuses()) == []  # only 2 replicas
    nomatch = [replica("c", "CLOSING"), *rs[2:]]
    assert select_unhealthy_replicas_for_delete(closed, nomatch, 0, statuses()) == []
    off = statuses({"u": Op.DECOMMISSIONING})
    assert [r.datanode for r in select_unhealthy_replicas_for_delete(closed, rs, 0, off)] == ["q"]
    # QUASI_CLOSED container: a QUASI_CLOSED copy is preferred over an UNHEALTHY copy of one origin
    qc = container("QUASI_CLOSED")
    rs = [
        replica("a", "QUASI_CLOSED", origin="A"),
        replica("b", "QUASI_CLOSED", origin="B"),
        replica("u1", "UNHEALTHY", origin="C"),
        replica("u2", "UNHEALTHY", origin="C"),
    ]
    assert [r.datanode for r in select_unhealthy_replicas_for_delete(qc, rs, 0, statuses())] == ["u2"]
