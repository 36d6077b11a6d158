"""Placement validation and repair helpers (Ozone's SCMCommonPlacementPolicy)."""

from __future__ import annotations

import pytest

from pyozone.scm.replication.placement import (
    ContainerPlacementStatus,
    PlacementPolicy,
    replicas_to_copy_to_fix_misreplication,
    replicas_to_remove_to_fix_overreplication,
    required_rack_count,
    validate_container_placement,
)
from tests.unit.scm.replication.rm_builders import replica


def validate(racks: list[str | None], expected: int, total_racks: int, policy: str = "PIPELINE"):
    dns = [f"dn{i}" for i in range(len(racks))]
    rack_of = dict(zip(dns, racks, strict=True)).get
    return validate_container_placement(dns, expected, rack_of, total_racks, policy)


@pytest.mark.parametrize("policy", ["PIPELINE", "RACK_AWARE"])
def test_spec_examples(policy: str) -> None:
    assert validate(["r1", "r1", "r2"], 3, 2, policy).satisfied
    assert validate(["r1", "r2"], 3, 2, policy).satisfied
    s = validate(["r1", "r1"], 3, 2, policy)
    assert not s.satisfied and s.mis_replication_count == 1
    assert s == ContainerPlacementStatus(False, 1, 2, 2, 1)
    assert validate(["r1"], 1, 2, policy).satisfied  # single DN, R = 1
    assert validate(["r1", "r1", "r1"], 3, 1, policy).satisfied  # one-rack cluster


def test_no_topology_or_empty() -> None:
    assert validate([None, None, None], 3, 0).satisfied
    empty = validate([], 3, 0)
    assert not empty.satisfied and empty.mis_replication_count == 1
    assert not validate([], 1, 3).satisfied


def test_excess_replicas_never_mis_replicate() -> None:
    # 4 copies of a factor-3 container: max per rack 2 + 1 excess
    assert validate(["r1", "r1", "r1", "r2"], 3, 2).satisfied
    s = validate(["r1", "r1", "r1", "r1"], 3, 2)
    assert not s.satisfied and s.max_per_rack == 3 and s.mis_replication_count == 1


def test_nodes_outside_topology_are_ignored() -> None:
    s = validate(["r1", None, "r1"], 3, 2)
    assert not s.satisfied and s.current_racks == 1


def test_rack_scatter() -> None:
    assert required_rack_count(PlacementPolicy.RACK_SCATTER, 5, 3) == 3
    assert required_rack_count("RACK_AWARE", 5, 3) == 2
    # RS-3-2 on 5 racks: one per rack
    assert validate(["r1", "r2", "r3", "r4", "r5"], 5, 5, "RACK_SCATTER").satisfied
    s = validate(["r1", "r1", "r2", "r3", "r4"], 5, 5, "RACK_SCATTER")
    assert not s.satisfied and s.max_per_rack == 1 and s.mis_replication_count == 1
    # 3 racks: ceil(5 / 3) = 2 per rack
    assert validate(["r1", "r1", "r2", "r2", "r3"], 5, 3, "RACK_SCATTER").satisfied
    s = validate(["r1", "r1", "r1", "r2", "r3"], 5, 3, "RACK_SCATTER")
    assert not s.satisfied and s.max_per_rack == 2 and s.mis_replication_count == 1
    s = validate(["r1", "r1", "r1", "r1", "r2"], 5, 3, "RACK_SCATTER")
    assert s.mis_replication_count == 2  # max(3 racks - 2, 4 - 2)


def test_unknown_policy_rejected() -> None:
    with pytest.raises(ValueError):
        validate(["r1"], 3, 2, "ROUND_ROBIN")


def test_remove_to_fix_overreplication_prefers_crowded_racks() -> None:
    racks = {"a": "r1", "b": "r1", "c": "r2", "d": "r3", "e": "r3", "f": "r3"}
    replicas = [
        replica("a", index=1),
        replica("c", index=1),
        replica("d", index=1),
        replica("b", index=2),
        replica("e", index=2),
        replica("f", index=3),
    ]
    removed = replicas_to_remove_to_fix_overreplication(replicas, 1, racks.get)
    # index 1 (3 copies) first: r3 holds 3 -> remove d; then r1 and r3 hold 2 -> r1 (seen first): a
    # index 2: r1 now 1, r3 2 -> remove e
    assert [(r.datanode, r.replica_index) for r in removed] == [("d", 1), ("a", 1), ("e", 2)]
    assert replicas_to_remove_to_fix_overreplication(replicas, 3, racks.get) == []


def test_copy_to_fix_misreplication() -> None:
    racks = {"a": "r1", "b": "r1", "c": "r1", "d": "r2"}
    rs = [replica(dn) for dn in "abcd"]
    # RS-like scatter of 4 replicas over 4 racks: r1 may keep 1, two of its copies must move
    chosen = replicas_to_copy_to_fix_misreplication(
        dict.fromkeys(rs, True), lambda r: racks[r.datanode], "RACK_SCATTER", 4
    )
    assert [r.datanode for r in chosen] == ["a", "b"]
    # only copyable replicas are chosen
    copyable = {rs[0]: False, rs[1]: True, rs[2]: False, rs[3]: True}
    chosen = replicas_to_copy_to_fix_misreplication(copyable, lambda r: racks[r.datanode], "RACK_SCATTER", 4)
    assert [r.datanode for r in chosen] == ["b"]
    # rack aware, 3 replicas on one rack of two: keep 2, copy 1
    three = [replica(dn) for dn in "abc"]
    chosen = replicas_to_copy_to_fix_misreplication(
        dict.fromkeys(three, True), lambda r: racks[r.datanode], "RACK_AWARE", 2
    )
    assert [r.datanode for r in chosen] == ["a"]
