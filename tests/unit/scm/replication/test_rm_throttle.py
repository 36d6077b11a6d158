from __future__ import annotations

import pytest

from pyozone.hdds.states import NodeOperationalState as Op
from pyozone.scm.replication.throttle import (
    datanode_deadline,
    fills_up,
    inflight_limit,
    inflight_limit_reached,
    is_overloaded,
    replication_limit,
    replication_load,
    scm_deadline,
)


def test_replication_load_weights_reconstruction() -> None:
    assert replication_load(5, 0, 3) == 5
    assert replication_load(5, 2, 3) == 11


@pytest.mark.parametrize(
    ("op_state", "limit"),
    [
        (Op.IN_SERVICE, 20),
        (Op.DECOMMISSIONING, 40),
        (Op.DECOMMISSIONED, 40),
        (Op.ENTERING_MAINTENANCE, 40),
        (Op.IN_MAINTENANCE, 40),
    ],
)
def test_replication_limit_out_of_service(op_state: Op, limit: int) -> None:
    assert replication_limit(20, op_state, 2.0) == limit


def test_replication_limit_factor_clamped_and_ceiled() -> None:
    assert replication_limit(20, Op.DECOMMISSIONING, 0.5) == 20  # clamped up to 1
    assert replication_limit(20, Op.DECOMMISSIONING, 50) == 200  # clamped down to 10
    assert replication_limit(7, Op.IN_MAINTENANCE, 1.5) == 11  # ceil(10.5)


def test_inflight_limit_spec_example() -> None:
    # ReplicationManager's inflight limit: 10 healthy nodes, limit 20 -> factor 1 gives 200, factor 0.75 gives
    # 150
    assert inflight_limit(10, 20, 1.0) == 200
    assert inflight_limit(10, 20, 0.75) == 150
    assert inflight_limit(3, 20, 0.3) == 18
    assert inflight_limit(1, 20, 0.01) == 1  # ceil
    assert inflight_limit(10, 20, 0) == 0
    assert inflight_limit(10, 20, -1) == 0


def test_inflight_limit_reached() -> None:
    assert not inflight_limit_reached(10_000, 0)  # 0 disables the cap
    assert not inflight_limit_reached(149, 150)
    assert inflight_limit_reached(150, 150)


def test_overload_rules() -> None:
    assert not is_overloaded(19, 20) and is_overloaded(20, 20)
    assert fills_up(19, 1, 20) and not fills_up(18, 1, 20)
    assert fills_up(17, 3, 20) and not fills_up(16, 3, 20)


def test_deadlines() -> None:
    scm = scm_deadline(1_000, 12 * 60_000)
    assert scm == 721_000
    assert datanode_deadline(scm, 6 * 60_000) == 361_000
