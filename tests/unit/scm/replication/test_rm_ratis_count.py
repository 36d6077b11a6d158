"""Ratis replica counting (Ozone's RatisContainerReplicaCount)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pyozone.hdds.states import NodeOperationalState as Op
from pyozone.hdds.states import NodeState
from pyozone.scm.replication.pending_ops import PendingOp
from pyozone.scm.replication.ratis_count import RatisContainerReplicaCount
from tests.unit.scm.replication.rm_builders import SEQ, add, container, delete, replica, statuses

# token -> (replica state, BCSID, node op state)
KINDS = {
    "H": ("CLOSED", SEQ, Op.IN_SERVICE),
    "M": ("CLOSED", SEQ, Op.IN_MAINTENANCE),
    "EM": ("CLOSED", SEQ, Op.ENTERING_MAINTENANCE),
    "D": ("CLOSED", SEQ, Op.DECOMMISSIONING),
    "DD": ("CLOSED", SEQ, Op.DECOMMISSIONED),
    "U": ("UNHEALTHY", SEQ, Op.IN_SERVICE),
    "UM": ("UNHEALTHY", SEQ, Op.IN_MAINTENANCE),
    "UD": ("UNHEALTHY", SEQ, Op.DECOMMISSIONING),
    "Q<": ("QUASI_CLOSED", SEQ - 1, Op.IN_SERVICE),
    "Q=": ("QUASI_CLOSED", SEQ, Op.IN_SERVICE),
    "Cg": ("CLOSING", SEQ, Op.IN_SERVICE),
}


def count(
    spec: str,
    pending: tuple[PendingOp, ...] = (),
    consider_unhealthy: bool = False,
    min_maintenance: int = 2,
    state: str = "CLOSED",
    factor: str = "THREE",
) -> RatisContainerReplicaCount:
    """Replicas from tokens, on dn0, dn1, ... in order."""
    replicas, ops = [], {}
    for i, token in enumerate(spec.split()):
        rstate, seq, op_state = KINDS[token]
        replicas.append(replica(f"dn{i}", rstate, seq=seq))
        ops[f"dn{i}"] = op_state
    return RatisContainerReplicaCount(
        container(state, f"RATIS/{factor}"),
        replicas,
        pending,
        min_maintenance,
        consider_unhealthy,
        statuses(ops),
    )


def test_spec_maintenance_examples() -> None:
    # "H,H,H,M,M is healthy; H,H,H,H,M over by 1"
    c = count("H H H M M")
    assert c.is_sufficiently_replicated() and not c.is_over_replicated()
    c = count("H H H H M")
    assert c.is_over_replicated() and c.excess_redundancy(True) == 1


@pytest.mark.parametrize(
    ("spec", "min_maint", "missing", "sufficient", "due_to_oos", "remaining"),
    [
        ("H H H", 2, 0, True, False, 2),
        ("H H", 2, 1, False, False, 1),
        ("H", 2, 2, False, False, 0),
        ("", 2, 3, False, False, 0),
        ("H H M", 2, 0, True, False, 2),  # maintenance copy covers the missing one
        ("H M M", 2, 1, False, True, 2),  # but 2 must stay in service
        ("M M M", 2, 2, False, True, 2),
        ("H H M", 3, 1, False, True, 2),  # min(factor, 3) = 3 in service
        ("H H D", 2, 1, False, True, 2),  # decommission copies cover nothing
        ("H D D", 2, 2, False, True, 2),
        ("D D D", 2, 3, False, True, 2),
        ("H EM DD", 2, 1, False, True, 2),
        ("H H U", 2, 1, False, False, 1),  # unhealthy never counts
        ("H H Q<", 2, 1, False, False, 1),  # nor a lagging QUASI_CLOSED of a CLOSED container
        ("H H Q=", 2, 0, True, False, 2),
        ("H H H H", 2, -1, True, False, 3),
        ("H H H H H M", 2, -2, True, False, 5),
    ],
)
def test_missing_replicas(
    spec: str, min_maint: int, missing: int, sufficient: bool, due_to_oos: bool, remaining: int
) -> None:
    c = count(spec, min_maintenance=min_maint)
    assert c.missing_replicas() == missing
    assert c.is_sufficiently_replicated(False) is sufficient
    assert c.is_under_replicated() is not sufficient
    assert c.insufficient_due_to_out_of_service() is due_to_oos
    assert c.remaining_redundancy() == remaining


def test_counts() -> None:
    c = count("H Cg Q= Q< U UM UD M D")
    assert (c.matching_count, c.mismatched_count) == (1, 2)  # Q= is mismatched, not unhealthy
    assert c.healthy_count == 5  # H Cg Q= M D
    assert c.unhealthy_count == 4  # Q< U UM UD
    assert (c.decommission_count, c.maintenance_count) == (1, 1)
    with_unhealthy = count("H Cg Q= Q< U UM UD M D", consider_unhealthy=True)
    assert (with_unhealthy.decommission_count, with_unhealthy.maintenance_count) == (2, 2)
    assert [r.datanode for r in c.healthy_replicas()] == ["dn0", "dn1", "dn2", "dn7", "dn8"]


def test_quasi_closed_container_counts_lagging_copies_as_healthy() -> None:
    c = count("Q< Q< Q=", state="QUASI_CLOSED")
    assert c.unhealthy_count == 0 and c.matching_count == 3


def test_consider_unhealthy_counts_them_available() -> None:
    assert not count("H H U").is_sufficiently_replicated()
    assert count("H H U", consider_unhealthy=True).is_sufficiently_replicated()
    assert not count("H H H U").is_over_replicated()
    c = count("H H H U", consider_unhealthy=True)
    assert c.is_over_replicated() and c.excess_redundancy(False) == 1
    assert count("H H H U U U", consider_unhealthy=True).excess_redundancy(False) == 3


def test_pending_add_counts_only_when_asked() -> None:
    c = count("H H", (add("dnX"),))
    assert not c.is_sufficiently_replicated(False)
    assert c.is_sufficiently_replicated(True)
    assert c.in_flight_add == 1 and c.additional_replica_needed() == 0
    assert count("H", (add("dnX"),)).additional_replica_needed() == 1


def test_pending_delete_always_counts() -> None:
    c = count("H H H", (delete("dn0"),))
    assert c.in_flight_del == 1
    assert not c.is_sufficiently_replicated(False) and not c.is_sufficiently_replicated(True)
    assert c.remaining_redundancy() == 1
    assert c.additional_replica_needed() == 1
    over = count("H H H H", (delete("dn0"),))
    assert over.is_over_replicated(False) and not over.is_over_replicated(True)
    assert over.excess_redundancy(False) == 1 and over.excess_redundancy(True) == 0
    assert over.additional_replica_needed() == 0


def test_pending_delete_of_unhealthy_replica_ignored_without_unhealthy() -> None:
    # as Ozone's RatisContainerReplicaCount: else H H H U with a delete pending on U would look
    # under-replicated
    c = count("H H H U", (delete("dn3"),))
    assert c.in_flight_del == 0 and c.is_sufficiently_replicated()
    c = count("H H H U", (delete("dn3"),), consider_unhealthy=True)
    assert c.in_flight_del == 1 and c.is_over_replicated(False) and not c.is_over_replicated(True)


def test_additional_replica_needed() -> None:
    assert count("H H").additional_replica_needed() == 1
    assert count("H H H H").additional_replica_needed() == -1
    assert count("H H H H H", (delete("dn0"),)).additional_replica_needed() == -1
    assert count("H H", (delete("dn0"),)).additional_replica_needed() == 2
    assert count("H H", (add("a"), add("b"))).additional_replica_needed() == 0  # never negative


def test_unrecoverable_only_without_replicas() -> None:
    assert count("").is_unrecoverable()
    assert not count("U").is_unrecoverable()
    assert not count("D").is_unrecoverable()


def test_safely_over_replicated_needs_factor_matching() -> None:
    assert count("H H H H").is_safely_over_replicated()
    assert count("H H H Cg").missing_replicas() == -1
    assert count("H H H Cg").is_safely_over_replicated()
    assert not count("H H Cg Cg").is_safely_over_replicated()
    assert not count("H H H H", (delete("dn0"),)).is_safely_over_replicated()


def test_factor_one() -> None:
    c = count("H", factor="ONE")
    assert c.is_sufficiently_replicated() and c.min_healthy_for_maintenance == 1
    assert count("M", factor="ONE").is_sufficiently_replicated() is False  # min(1, 2) = 1 in service
    assert count("H H", factor="ONE").excess_redundancy(True) == 1


def test_health_results() -> None:
    under = count("H M M", (add("x"),)).to_under_health_result()
    assert (under.remaining_redundancy, under.due_to_out_of_service) == (2, True)
    assert under.replicated_ok_after_pending and not under.unrecoverable and under.has_healthy_replicas
    assert not count("U U").to_under_health_result().has_healthy_replicas
    assert count("").to_under_health_result().unrecoverable
    over = count("H H Cg Cg Cg", (delete("dn0"),)).to_over_health_result()
    assert over.excess_redundancy == 2 and not over.replicated_ok_after_pending
    assert over.has_mismatched_replicas and not over.is_safely_over_replicated


def test_unknown_node_counts_in_service() -> None:
    c = RatisContainerReplicaCount(
        container(), [replica("a"), replica("b"), replica("c")], (), 2, False, lambda dn: None
    )
    assert c.is_sufficiently_replicated() and c.healthy_count == 3


def test_replicas_in_deterministic_order() -> None:
    rs = [replica("dn2"), replica("dn0"), replica("dn1")]
    c = RatisContainerReplicaCount(container(), rs, (), 2, False, statuses())
    assert [r.datanode for r in c.replicas] == ["dn0", "dn1", "dn2"]


def test_healthy_enough_for_offline() -> None:
    assert count("H H U").is_healthy_enough_for_offline()
    assert not count("H H Cg").is_healthy_enough_for_offline()
    assert not count("M D").is_healthy_enough_for_offline()  # nothing in service
    assert not count("H H H", state="CLOSING").is_healthy_enough_for_offline()


def vulnerable(replicas, ops=None, health=None):
    c = RatisContainerReplicaCount(container("QUASI_CLOSED"), replicas, (), 2, False, statuses(ops, health))
    return [r.datanode for r in c.vulnerable_unhealthy_replicas(statuses(ops, health))]


def test_vulnerable_unhealthy_replicas() -> None:
    qc = [replica("a", "QUASI_CLOSED", origin="A"), replica("b", "QUASI_CLOSED", origin="A")]
    u_decom = replica("u", "UNHEALTHY", origin="B")
    # last copy of origin B is on a decommissioning node
    assert vulnerable([*qc, u_decom], {"u": Op.DECOMMISSIONING}) == ["u"]
    # in service, the copy itself keeps its origin safe
    assert vulnerable([*qc, u_decom]) == []
    # another copy of B at the container BCSID in service
    assert vulnerable([*qc, u_decom, replica("c", "UNHEALTHY", origin="B")], {"u": Op.DECOMMISSIONING}) == []
    # ... but not one at a lower BCSID
    lagging = replica("c", "UNHEALTHY", origin="B", seq=SEQ - 1)
    assert vulnerable([*qc, u_decom, lagging], {"u": Op.DECOMMISSIONING}) == ["u"]
    # empty, wrong BCSID, dead node or no healthy replica at all: nothing to save
    empty = replica("u", "UNHEALTHY", origin="B", empty=True)
    assert vulnerable([*qc, empty], {"u": Op.DECOMMISSIONING}) == []
    old = replica("u", "UNHEALTHY", origin="B", seq=SEQ - 1)
    assert vulnerable([*qc, old], {"u": Op.DECOMMISSIONING}) == []
    assert vulnerable([*qc, u_decom], {"u": Op.DECOMMISSIONING}, {"u": NodeState.DEAD}) == []
    assert vulnerable([u_decom, replica("v", "UNHEALTHY", origin="C")], {"u": Op.DECOMMISSIONING}) == []


def test_vulnerable_only_for_quasi_closed() -> None:
    c = count("H H U")
    assert c.vulnerable_unhealthy_replicas(statuses()) == []


TOKENS = st.lists(st.sampled_from(sorted(KINDS)), max_size=7)


@given(TOKENS, st.integers(0, 4), st.integers(0, 3), st.booleans())
def test_sufficiency_is_monotone_in_pending_adds(tokens: list[str], adds: int, min_m: int, unh: bool) -> None:
    spec = " ".join(tokens)
    ok = [
        count(spec, tuple(add(f"x{i}") for i in range(n)), unh, min_m).is_sufficiently_replicated(True)
        for n in range(adds + 1)
    ]
    assert ok == sorted(ok)  # once sufficient, more pending adds keep it sufficient


@given(TOKENS, st.integers(0, 3), st.booleans())
def test_never_both_over_and_under_without_pending(tokens: list[str], min_m: int, unh: bool) -> None:
    c = count(" ".join(tokens), (), unh, min_m)
    assert not (c.is_over_replicated(True) and c.is_under_replicated())
    assert not (c.is_over_replicated(False) and not c.is_sufficiently_replicated(True))
    needed = c.additional_replica_needed()
    assert (needed > 0) == c.is_under_replicated()
    assert (needed < 0) == c.is_over_replicated(True)
    assert c.remaining_redundancy() >= 0


@given(TOKENS, st.integers(0, 3))
def test_unhealthy_only_adds_availability(tokens: list[str], min_m: int) -> None:
    spec = " ".join(tokens)
    without, with_ = count(spec, (), False, min_m), count(spec, (), True, min_m)
    assert with_.missing_replicas() <= without.missing_replicas()
    assert with_.excess_redundancy(False) >= without.excess_redundancy(False)
