"""Ozone's QuasiClosedStuckReplicaCount."""

from __future__ import annotations

from pyozone.hdds.states import NodeOperationalState as Op
from pyozone.scm.replication.qc_stuck_count import QuasiClosedStuckReplicaCount
from tests.unit.scm.replication.rm_builders import SEQ, replica, statuses


def qc(dn: str, origin: str, seq: int = SEQ, state: str = "QUASI_CLOSED"):
    return replica(dn, state, seq=seq, origin=origin)


def count(replicas, ops=None, min_maint=2, best=3, other=2) -> QuasiClosedStuckReplicaCount:
    return QuasiClosedStuckReplicaCount(replicas, min_maint, best, other, statuses(ops))


def deltas(origins) -> dict[str, int]:
    return {o.origin: o.replica_delta for o in origins}


def test_single_origin_needs_three_whatever_the_config() -> None:
    c = count([qc("a", "A"), qc("b", "A")], best=5, other=5)
    assert deltas(c.under_replicated_origins()) == {"A": 1}
    assert [r.datanode for r in c.under_replicated_origins()[0].sources] == ["a", "b"]
    assert not count([qc("a", "A"), qc("b", "A"), qc("c", "A")]).is_under_replicated()
    over = count([qc(x, "A") for x in "abcd"])
    assert deltas(over.over_replicated_origins()) == {"A": 1}


def test_single_origin_with_maintenance_uses_min_healthy() -> None:
    c = count([qc("a", "A"), qc("m", "A")], {"m": Op.IN_MAINTENANCE})
    assert deltas(c.under_replicated_origins()) == {"A": 1}  # 2 - 1 in service
    c = count([qc("a", "A"), qc("b", "A"), qc("m", "A")], {"m": Op.IN_MAINTENANCE})
    assert not c.is_under_replicated()


def test_multiple_origins_best_gets_more() -> None:
    c = count([qc("a", "A"), qc("b", "B", seq=SEQ - 1)])
    assert c.best_origins == {"A"}
    assert deltas(c.under_replicated_origins()) == {"A": 2, "B": 1}
    ties = count([qc("a", "A"), qc("b", "B")])
    assert deltas(ties.under_replicated_origins()) == {"A": 2, "B": 2}


def test_unhealthy_copies_are_never_best() -> None:
    c = count([qc("a", "A", seq=SEQ - 1), qc("u", "B", seq=SEQ + 5, state="UNHEALTHY")])
    assert c.best_origins == {"A"} and c.has_healthy_replicas
    assert not count([qc("u", "B", state="UNHEALTHY")]).has_healthy_replicas


def test_multiple_origins_maintenance_needs_one_online() -> None:
    reps = [qc("a", "A"), qc("m", "B"), qc("b", "B", seq=SEQ - 1)]
    c = count(reps, {"m": Op.IN_MAINTENANCE, "b": Op.DECOMMISSIONING})
    # B has a maintenance copy and nothing in service: one more
    assert deltas(c.under_replicated_origins()) == {"A": 2, "B": 1}
    assert c.has_out_of_service_replicas
    c = count([qc("a", "A"), qc("m", "B"), qc("b", "B", seq=SEQ - 1)], {"m": Op.IN_MAINTENANCE})
    assert deltas(c.under_replicated_origins()) == {"A": 2}  # B has one in service: enough


def test_decommissioning_copies_count_for_nothing() -> None:
    c = count([qc("a", "A"), qc("b", "A"), qc("d", "A")], {"d": Op.DECOMMISSIONED})
    assert deltas(c.under_replicated_origins()) == {"A": 1}
    assert c.has_out_of_service_replicas and c.available_origins == 1


def test_multiple_origins_over_replication() -> None:
    reps = [qc(f"a{i}", "A") for i in range(4)] + [qc(f"b{i}", "B", seq=SEQ - 1) for i in range(3)]
    c = count(reps)
    assert deltas(c.over_replicated_origins()) == {"A": 1, "B": 1}
    # maintenance copies are ignored for over-replication
    reps = [qc(f"a{i}", "A") for i in range(3)] + [qc("am", "A"), qc("b0", "B"), qc("b1", "B")]
    assert not count(reps, {"am": Op.IN_MAINTENANCE}).is_over_replicated()


def test_no_replicas() -> None:
    c = count([])
    assert c.available_origins == 0 and not c.is_under_replicated() and not c.is_over_replicated()
