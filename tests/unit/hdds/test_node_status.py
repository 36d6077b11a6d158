"""NodeStatus predicates (Ozone's NodeStatus)."""

from __future__ import annotations

import pytest

from pyozone.hdds.node_status import IN_SERVICE_HEALTHY, NodeStatus
from pyozone.hdds.states import NodeOperationalState as Op
from pyozone.hdds.states import NodeState


@pytest.mark.parametrize(
    ("health", "healthy", "alive", "dead"),
    [
        (NodeState.HEALTHY, True, True, False),
        (NodeState.HEALTHY_READONLY, True, False, False),  # readonly is healthy but not "alive"
        (NodeState.STALE, False, True, False),
        (NodeState.DEAD, False, False, True),
    ],
)
def test_health_predicates(health: NodeState, healthy: bool, alive: bool, dead: bool) -> None:
    status = NodeStatus(Op.IN_SERVICE, health)
    assert status.is_healthy() is healthy
    assert status.is_alive() is alive
    assert status.is_dead() is dead


@pytest.mark.parametrize(
    ("op", "in_service", "decommission", "maintenance"),
    [
        (Op.IN_SERVICE, True, False, False),
        (Op.DECOMMISSIONING, False, True, False),
        (Op.DECOMMISSIONED, False, True, False),
        (Op.ENTERING_MAINTENANCE, False, False, True),
        (Op.IN_MAINTENANCE, False, False, True),
    ],
)
def test_operational_predicates(op: Op, in_service: bool, decommission: bool, maintenance: bool) -> None:
    status = NodeStatus(op, NodeState.HEALTHY)
    assert status.is_in_service() is in_service
    assert status.is_decommission() is decommission
    assert status.is_maintenance() is maintenance


@pytest.mark.parametrize("op", list(Op))
@pytest.mark.parametrize("health", list(NodeState))
def test_writable_only_when_healthy_and_in_service(op: Op, health: NodeState) -> None:
    expected = op is Op.IN_SERVICE and health is NodeState.HEALTHY
    assert NodeStatus(op, health).is_node_writable() is expected


def test_in_service_healthy_constant() -> None:
    assert NodeStatus(Op.IN_SERVICE, NodeState.HEALTHY) == IN_SERVICE_HEALTHY


def test_with_health_and_with_operational_state_keep_the_other_half() -> None:
    status = NodeStatus(Op.IN_MAINTENANCE, NodeState.HEALTHY, 1234)
    assert status.with_health(NodeState.DEAD) == NodeStatus(Op.IN_MAINTENANCE, NodeState.DEAD, 1234)
    assert status.with_operational_state(Op.IN_SERVICE) == NodeStatus(Op.IN_SERVICE, NodeState.HEALTHY, 0)
