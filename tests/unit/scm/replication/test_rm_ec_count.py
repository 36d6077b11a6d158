"""EC replica counting, Ozone's ECContainerReplicaCount (RS-3-2 unless said otherwise)."""

from __future__ import annotations

import pytest

from pyozone.hdds.states import NodeOperationalState as Op
from pyozone.scm.replication.ec_count import ECContainerReplicaCount
from pyozone.scm.replication.pending_ops import PendingOp
from tests.unit.scm.replication.rm_builders import add, container, delete, replica, statuses

STATE = {"H": "CLOSED", "U": "UNHEALTHY", "M": "CLOSED", "D": "CLOSED", "X": "UNHEALTHY"}
OP = {"M": Op.IN_MAINTENANCE, "D": Op.DECOMMISSIONING, "X": Op.DECOMMISSIONING}


def ec(
    layout: str, pending: tuple[PendingOp, ...] = (), redundancy: int = 1, config: str = "EC/RS-3-2-1024k"
) -> ECContainerReplicaCount:
    """One column per index, e.g. "H H HU - M": H closed in service, U unhealthy, M closed on a
    maintenance node, D closed on a decommissioning node, X unhealthy on a decommissioning node.
    Replica datanodes are named "<index><letter><n>", e.g. "3U0"."""
    replicas, ops = [], {}
    for index, column in enumerate(layout.split(), start=1):
        for n, kind in enumerate(column.replace("-", "")):
            dn = f"{index}{kind}{n}"
            replicas.append(replica(dn, STATE[kind], index=index))
            if kind in OP:
                ops[dn] = OP[kind]
    return ECContainerReplicaCount(container("CLOSED", config), replicas, pending, redundancy, statuses(ops))


def test_full_set_is_sufficient_not_over() -> None:
    c = ec("H H H H H")
    assert c.is_sufficiently_replicated() and not c.is_over_replicated()
    assert c.unavailable_indexes() == [] and not c.is_unrecoverable() and not c.is_missing()


def test_index_bounds() -> None:
    with pytest.raises(ValueError, match="between 1 and 5"):
        ECContainerReplicaCount(
            container("CLOSED", "EC/RS-3-2-1024k"), [replica("a", index=6)], (), 1, statuses()
        )
    with pytest.raises(ValueError, match="between 1 and 5"):
        ECContainerReplicaCount(
            container("CLOSED", "EC/RS-3-2-1024k"), [replica("a", index=0)], (), 1, statuses()
        )
    with pytest.raises(ValueError, match="pending ops"):
        ec("H H H H H", (add("x", 7),))


def test_unhealthy_copies_never_count() -> None:
    c = ec("U H H H H")
    assert c.unhealthy_indexes == {1} and c.healthy_indexes == {2: 1, 3: 1, 4: 1, 5: 1}
    assert not c.is_sufficiently_replicated() and c.unavailable_indexes() == [1]
    x = ec("X H H H H")  # unhealthy on a decommissioning node: still only unhealthy
    assert x.decommission_indexes == set() and x.unavailable_indexes() == [1]


def test_unrecoverable_versus_missing() -> None:
    c = ec("H H U U U")
    assert c.is_unrecoverable() and not c.is_missing()
    c = ec("H H - - -")
    assert c.is_unrecoverable() and c.is_missing()
    c = ec("H D M - -")  # offline copies still count toward recoverability
    assert not c.is_unrecoverable()


def test_maintenance_sufficiency() -> None:
    # one index in maintenance: 4 online >= data 3 + remaining redundancy 1
    assert ec("H H H H M").is_sufficiently_replicated()
    # two in maintenance: 3 online < 4
    c = ec("H H H M M")
    assert not c.is_sufficiently_replicated()
    assert c.unavailable_indexes() == []  # nothing to reconstruct
    assert c.maintenance_only_indexes() == {4, 5}
    assert c.additional_maintenance_copies_needed() == 1  # parity 2 - redundancy 1 = 1 allowed
    # redundancy 0 allows both
    assert ec("H H H M M", redundancy=0).is_sufficiently_replicated()
    # remaining redundancy is capped at parity
    assert ec("H H H H M", redundancy=5).remaining_maintenance_redundancy == 2


def test_decommission_copies_never_suffice() -> None:
    c = ec("H H H H D")
    assert not c.is_sufficiently_replicated()
    assert c.unavailable_indexes() == [] and c.decommissioning_only_indexes() == {5}
    assert c.decommission_count == 1
    assert ec("H H H H HD").decommissioning_only_indexes() == set()


def test_pending_adds() -> None:
    c = ec("H H H - -", (add("x", 4),))
    assert not c.is_sufficiently_replicated(True)
    assert c.unavailable_indexes(False) == [4, 5] and c.unavailable_indexes(True) == [5]
    c = ec("H H H - -", (add("x", 4), add("y", 5)))
    assert c.is_sufficiently_replicated(True) and not c.is_sufficiently_replicated(False)
    d = ec("H H H H D", (add("x", 5),))
    assert d.decommissioning_only_indexes(False) == {5} and d.decommissioning_only_indexes(True) == set()
    m = ec("H H H M M", (add("x", 4),))
    assert m.maintenance_only_indexes(True) == {5} and m.additional_maintenance_copies_needed(True) == 0


def test_pending_deletes() -> None:
    c = ec("H H H H HH", (delete("5H1", 5),))
    assert c.healthy_indexes[5] == 1
    assert c.is_over_replicated(False) and not c.is_over_replicated(True)
    assert c.over_replicated_indexes(False) == [5] and c.over_replicated_indexes(True) == []
    # a pending delete of the last copy makes the index unavailable
    u = ec("H H H H H", (delete("5H0", 5),))
    assert not u.is_sufficiently_replicated() and u.unavailable_indexes() == [5]
    # a delete aimed at an unhealthy replica is not recorded
    assert ec("H H H H HU", (delete("5U1", 5),)).pending_delete == []


def test_over_replication_ignores_offline_copies() -> None:
    assert not ec("H H H H HM").is_over_replicated()
    assert not ec("H H H H HD").is_over_replicated()
    assert not ec("H H H H HU").is_over_replicated()
    c = ec("HH H H HH H")
    assert c.over_replicated_indexes() == [1, 4]


def test_both_over_and_under() -> None:
    c = ec("HH H H H -")
    assert c.is_over_replicated() and not c.is_sufficiently_replicated()


def test_rs_6_3() -> None:
    c = ec("H H H H H H - - -", config="EC/RS-6-3-1024k")
    assert not c.is_unrecoverable() and c.unavailable_indexes() == [7, 8, 9]
    assert ec("H H H H H - - - -", config="EC/RS-6-3-1024k").is_unrecoverable()
