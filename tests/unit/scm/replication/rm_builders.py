"""Containers, replicas, node statuses and pending ops for the Replication Manager unit tests."""

from __future__ import annotations

from collections.abc import Mapping

from pyozone.hdds.container import ContainerInfo, ContainerReplica
from pyozone.hdds.ids import ReplicationConfig
from pyozone.hdds.node_status import NodeStatus
from pyozone.hdds.states import LifeCycleState, NodeOperationalState, NodeState, ReplicaState
from pyozone.scm.replication.pending_ops import PendingOp, PendingOpType
from pyozone.scm.replication.replica_match import NodeStatusFn

SEQ = 10
Op = NodeOperationalState


def container(
    state: str = "CLOSED", config: str = "RATIS/THREE", seq: int = SEQ, cid: int = 1, keys: int = 10
) -> ContainerInfo:
    return ContainerInfo(
        cid, LifeCycleState[state], 0, None, ReplicationConfig.parse(config), "test", 10, keys, seq
    )


def replica(
    dn: str,
    state: str = "CLOSED",
    index: int = 0,
    seq: int = SEQ,
    origin: str | None = None,
    empty: bool = False,
    cid: int = 1,
) -> ContainerReplica:
    return ContainerReplica(cid, dn, ReplicaState[state], origin or dn, seq, 10, 10, index, empty)


def statuses(
    ops: Mapping[str, NodeOperationalState] | None = None, health: Mapping[str, NodeState] | None = None
) -> NodeStatusFn:
    """Every datanode IN_SERVICE and HEALTHY unless listed."""
    ops, health = ops or {}, health or {}

    def lookup(dn: str) -> NodeStatus:
        return NodeStatus(ops.get(dn, Op.IN_SERVICE), health.get(dn, NodeState.HEALTHY))

    return lookup


ALL_IN_SERVICE = statuses()


def add(dn: str, index: int = 0) -> PendingOp:
    return PendingOp(PendingOpType.ADD, dn, index, None, 1 << 60)


def delete(dn: str, index: int = 0) -> PendingOp:
    return PendingOp(PendingOpType.DELETE, dn, index, None, 1 << 60)
