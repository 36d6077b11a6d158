"""NodeStatus: a datanode's operational state and health, with Ozone's predicates (NodeStatus)."""

from __future__ import annotations

from dataclasses import dataclass

from pyozone.hdds.states import NodeOperationalState as Op
from pyozone.hdds.states import NodeState


@dataclass(frozen=True, slots=True)
class NodeStatus:
    operational_state: Op
    health: NodeState
    op_state_expiry_epoch_sec: int = 0

    def is_healthy(self) -> bool:
        """HEALTHY or HEALTHY_READONLY: a node that heartbeats."""
        return self.health in (NodeState.HEALTHY, NodeState.HEALTHY_READONLY)

    def is_alive(self) -> bool:
        """HEALTHY or STALE (Ozone's definition; HEALTHY_READONLY is not 'alive')."""
        return self.health in (NodeState.HEALTHY, NodeState.STALE)

    def is_dead(self) -> bool:
        return self.health is NodeState.DEAD

    def is_in_service(self) -> bool:
        return self.operational_state is Op.IN_SERVICE

    def is_decommission(self) -> bool:
        return self.operational_state.is_decommission

    def is_maintenance(self) -> bool:
        return self.operational_state.is_maintenance

    def is_node_writable(self) -> bool:
        return self.health is NodeState.HEALTHY and self.operational_state is Op.IN_SERVICE

    def with_health(self, health: NodeState) -> NodeStatus:
        return NodeStatus(self.operational_state, health, self.op_state_expiry_epoch_sec)

    def with_operational_state(self, state: Op, expiry_epoch_sec: int = 0) -> NodeStatus:
        return NodeStatus(state, self.health, expiry_epoch_sec)


IN_SERVICE_HEALTHY = NodeStatus(Op.IN_SERVICE, NodeState.HEALTHY)
