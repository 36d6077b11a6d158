"""Fakes and builders for the processing-stage tests: a node manager with controllable command counts
and node states, and a RepairContext over it with a real sender, pending-op table and placement."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from pyozone.hdds.clock import ManualClock
from pyozone.hdds.commands import SCMCommand
from pyozone.hdds.container import ContainerInfo, ContainerReplica
from pyozone.hdds.datanode import DatanodeDetails, DatanodeInfo, LayoutVersion
from pyozone.hdds.ids import ContainerID, DatanodeID, ReplicationConfig
from pyozone.hdds.node_status import NodeStatus
from pyozone.hdds.states import LifeCycleState, NodeOperationalState, NodeState, ReplicaState, SCMCommandType
from pyozone.scm.ha.context import ScmContext
from pyozone.scm.node.commands import CommandQueue
from pyozone.scm.replication.commands import ReplicationCommandSender
from pyozone.scm.replication.config import ReplicationManagerConfig
from pyozone.scm.replication.metrics import ReplicationManagerMetrics
from pyozone.scm.replication.pending_ops import ContainerReplicaPendingOps, PendingOp, PendingOpType
from pyozone.scm.replication.placement import ContainerPlacementStatus, validate_container_placement
from pyozone.scm.replication.results import OverReplicatedHealthResult, UnderReplicatedHealthResult
from pyozone.scm.replication.targets import placement_policy_for
from tests.builders import GB, dn_id, node_report

Op = NodeOperationalState
T = SCMCommandType
CID = 1
SEQ = 10
USED = GB
EPOCH_MS = 1_767_225_600_000
MINUTE = 60_000


def dn(i: int) -> DatanodeID:
    return dn_id(i)


def container(
    state: str = "CLOSED",
    config: str = "RATIS/THREE",
    cid: ContainerID = CID,
    used: int = USED,
    seq: int = SEQ,
) -> ContainerInfo:
    return ContainerInfo(
        cid, LifeCycleState[state], 0, "pipeline-1", ReplicationConfig.parse(config), "test", used, 10, seq
    )


def ec(state: str = "CLOSED", scheme: str = "RS-3-2", cid: ContainerID = CID) -> ContainerInfo:
    return container(state, f"EC/{scheme}-1024k", cid)


def replica(
    node: DatanodeID,
    state: str = "CLOSED",
    index: int = 0,
    seq: int = SEQ,
    origin: DatanodeID | None = None,
    empty: bool = False,
    cid: ContainerID = CID,
) -> ContainerReplica:
    return ContainerReplica(cid, node, ReplicaState[state], origin or node, seq, 10, USED, index, empty)


def under(c: ContainerInfo, vulnerable: bool = False, mis: bool = False) -> UnderReplicatedHealthResult:
    return UnderReplicatedHealthResult(
        c, 1, False, False, False, has_vulnerable_unhealthy=vulnerable, is_mis_replicated=mis
    )


def over(c: ContainerInfo) -> OverReplicatedHealthResult:
    return OverReplicatedHealthResult(c, 1, False)


@dataclass(frozen=True)
class Sent:
    """A queued command, flattened for assertions."""

    to: DatanodeID
    command: SCMCommand

    @property
    def type(self) -> SCMCommandType:
        return self.command.type

    @property
    def fields(self) -> dict[str, Any]:
        """The command's own fields by name, its envelope (term, deadline, id) left out."""
        own = (f.name for f in dataclasses.fields(self.command) if f.name not in _ENVELOPE)
        return {name: getattr(self.command, name) for name in own}


_ENVELOPE = frozenset(f.name for f in dataclasses.fields(SCMCommand))


class FakeNodeManager:
    """Registered datanodes (each on a rack) with datanode-reported command counts the test sets; SCM-
    queued commands live in a real CommandQueue and count toward the totals like NodeManager's."""

    def __init__(self, term: int = 7) -> None:
        self.context = ScmContext.ha_leader(term)
        self.commands = CommandQueue()
        self.log: list[Sent] = []
        self._nodes: dict[DatanodeID, DatanodeInfo] = {}
        self._reported: dict[tuple[DatanodeID, SCMCommandType], int] = {}

    def add(
        self,
        node: DatanodeID,
        rack: str = "/r1",
        op: NodeOperationalState = Op.IN_SERVICE,
        health: NodeState = NodeState.HEALTHY,
        remaining: int = 500 * GB,
    ) -> DatanodeInfo:
        details = DatanodeDetails(node, f"host-{node[-4:]}", "10.0.0.1", (), rack, op)
        info = DatanodeInfo(
            details, NodeStatus(op, health), 0, 0, LayoutVersion(1, 1), node_report(data_remaining=remaining)
        )
        self._nodes[node] = info
        return info

    def set_state(
        self, node: DatanodeID, op: NodeOperationalState | None = None, health: NodeState | None = None
    ):
        info = self._nodes[node]
        op = op or info.status.operational_state
        info.status = NodeStatus(op, health or info.status.health)
        d = info.details
        info.details = DatanodeDetails(d.uuid, d.hostname, d.ip_address, d.ports, d.network_location, op)

    def report(self, node: DatanodeID, command_type: SCMCommandType, count: int) -> None:
        """What the datanode says it has queued (its last heartbeat)."""
        self._reported[node, command_type] = count

    def drain(self) -> None:
        """A heartbeat of every node: queued commands leave SCM (reported counts are left as set)."""
        for node in self._nodes:
            self.commands.drain(node)

    # the node manager API the sender and placement use
    def get(self, node: DatanodeID) -> DatanodeInfo | None:
        return self._nodes.get(node)

    def nodes(self) -> list[DatanodeInfo]:
        return list(self._nodes.values())

    def count(self, op: None = None, health: NodeState | None = None) -> int:
        return sum(1 for i in self._nodes.values() if health is None or i.status.health is health)

    def add_datanode_command(self, node: DatanodeID, command: SCMCommand) -> None:
        self.commands.add(node, command)
        self.log.append(Sent(node, command))

    def total_datanode_command_count(self, node: DatanodeID, command_type: SCMCommandType) -> int:
        return self.commands.count(node, command_type) + max(0, self._reported.get((node, command_type), -1))


class FakeContext:
    """A RepairContext: replicas set by the test, racks from the nodes' network locations (a DEAD node
    is out of the topology), real placement validation by container type."""

    def __init__(
        self,
        nodes: FakeNodeManager | None = None,
        config: ReplicationManagerConfig | None = None,
        seed: int = 1,
        container_size: int = USED,
    ) -> None:
        self.nodes = nodes or FakeNodeManager()
        self.config = config or ReplicationManagerConfig()
        self.clock = ManualClock(epoch_ms=EPOCH_MS)
        self.pending_ops = ContainerReplicaPendingOps(self.clock, self.config.event_timeout_ms)
        self.metrics = ReplicationManagerMetrics()
        self.sender = ReplicationCommandSender(
            self.nodes, self.pending_ops, self.config, self.clock, self.metrics
        )
        self.rng = random.Random(seed)
        self.container_size = container_size
        self.replica_map: dict[ContainerID, list[ContainerReplica]] = {}

    def set_replicas(self, *replicas: ContainerReplica) -> None:
        for r in replicas:
            self.replica_map.setdefault(r.container_id, []).append(r)

    def pending(self, cid: ContainerID = CID) -> list[tuple[PendingOpType, DatanodeID, int]]:
        return [(op.type, op.target_dn, op.replica_index) for op in self.pending_ops.ops(cid)]

    def add_pending(self, op_type: PendingOpType, node: DatanodeID, index: int = 0, cid: ContainerID = CID):
        deadline = self.clock.wall_ms() + self.config.event_timeout_ms
        if op_type is PendingOpType.ADD:
            self.pending_ops.schedule_add(cid, node, index, None, deadline)
        else:
            self.pending_ops.schedule_delete(cid, node, index, None, deadline)

    @property
    def sent(self) -> list[Sent]:
        return self.nodes.log

    # RepairContext
    def node_status(self, node: DatanodeID) -> NodeStatus | None:
        info = self.nodes.get(node)
        return None if info is None else info.status

    def replicas(self, cid: ContainerID) -> tuple[ContainerReplica, ...]:
        return tuple(self.replica_map.get(cid, ()))

    def placement_status(self, c: ContainerInfo, dns: Sequence[DatanodeID]) -> ContainerPlacementStatus:
        required = c.replication_config.required_nodes
        return validate_container_placement(
            dns, required, self.rack_of, self.rack_count(), placement_policy_for(c)
        )

    def candidate_nodes(self) -> list[DatanodeInfo]:
        return self.nodes.nodes()

    def rack_of(self, node: DatanodeID) -> str | None:
        info = self.nodes.get(node)
        if info is None or info.status.is_dead():
            return None
        return info.details.network_location

    def rack_count(self) -> int:
        return len({self.rack_of(i.uuid) for i in self.nodes.nodes()} - {None})


def cluster(racks: Iterable[str], **kwargs) -> FakeContext:
    """One node per rack name given, dn(1), dn(2), ... in order."""
    ctx = FakeContext(**kwargs)
    for i, rack in enumerate(racks, 1):
        ctx.nodes.add(dn(i), rack)
    return ctx


def pending_op(op_type: PendingOpType, node: DatanodeID, index: int = 0) -> PendingOp:
    return PendingOp(op_type, node, index, None, 1 << 60)
