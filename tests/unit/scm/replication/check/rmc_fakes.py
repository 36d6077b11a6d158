"""A recording fake of CheckServices and builders for the check-chain tests.

Every action a handler takes through the services is appended to `calls` as a tuple, so a test can
assert the exact commands and events of a check, and read-only tests can assert there were none.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from pyozone.hdds.clock import ManualClock
from pyozone.hdds.container import ContainerInfo, ContainerReplica
from pyozone.hdds.container_health import ContainerHealthState
from pyozone.hdds.ids import ContainerID, DatanodeID, PipelineID, ReplicationConfig
from pyozone.hdds.node_status import NodeStatus
from pyozone.hdds.replication_report import ReplicationManagerReport
from pyozone.hdds.states import (
    LifeCycleEvent,
    LifeCycleState,
    NodeOperationalState,
    NodeState,
    ReplicaState,
    ReplicationType,
)
from pyozone.scm.replication.check import ContainerCheckRequest, run_chain
from pyozone.scm.replication.check.chain import CheckHandler
from pyozone.scm.replication.config import ReplicationManagerConfig
from pyozone.scm.replication.pending_ops import PendingOp, PendingOpType
from pyozone.scm.replication.placement import (
    ContainerPlacementStatus,
    PlacementPolicy,
    validate_container_placement,
)
from pyozone.scm.replication.queue import NullQueue, ReplicationQueue
from pyozone.scm.replication.results import OverReplicatedHealthResult, UnderReplicatedHealthResult

SEQ = 10
CID = 7
PIPELINE = "pipeline-1"
Op = NodeOperationalState
S = ContainerHealthState
SATISFIED = ContainerPlacementStatus(True, 1, 1, 1, 0)
Call = tuple[object, ...]
Placement = Callable[[ContainerInfo, Sequence[DatanodeID]], ContainerPlacementStatus]


def always_satisfied(_container: ContainerInfo, _dns: Sequence[DatanodeID]) -> ContainerPlacementStatus:
    """The scenario harness's policy (TestReplicationManagerScenarios): one rack, always satisfied."""
    return SATISFIED


def rack_placement(racks: Mapping[DatanodeID, str], total_racks: int = 2) -> Placement:
    """Real placement validation over a rack map: rack-aware for Ratis, rack scatter for EC."""

    def status(container: ContainerInfo, dns: Sequence[DatanodeID]) -> ContainerPlacementStatus:
        config = container.replication_config
        policy = (
            PlacementPolicy.RACK_SCATTER if config.type is ReplicationType.EC else PlacementPolicy.RACK_AWARE
        )
        return validate_container_placement(dns, config.required_nodes, racks.get, total_racks, policy)

    return status


@dataclass
class RecordingServices:
    """Nodes not listed in `nodes` are IN_SERVICE and HEALTHY; a node mapped to None is unknown to SCM."""

    nodes: dict[DatanodeID, NodeStatus | None] = field(default_factory=dict)
    pipelines: set[PipelineID] = field(default_factory=lambda: {PIPELINE})
    placement: Placement = always_satisfied
    clock: ManualClock = field(default_factory=ManualClock)
    config: ReplicationManagerConfig = field(default_factory=ReplicationManagerConfig)
    calls: list[Call] = field(default_factory=list)

    def node_status(self, dn: DatanodeID) -> NodeStatus | None:
        if dn in self.nodes:
            return self.nodes[dn]
        return NodeStatus(Op.IN_SERVICE, NodeState.HEALTHY)

    def pipeline_exists(self, pipeline_id: PipelineID | None) -> bool:
        return pipeline_id in self.pipelines

    def placement_status(
        self, container: ContainerInfo, dns: Sequence[DatanodeID]
    ) -> ContainerPlacementStatus:
        return self.placement(container, dns)

    def send_close(self, container: ContainerInfo, replica: ContainerReplica, force: bool) -> None:
        self.calls.append(("close", replica.datanode, force))

    def send_delete(self, container: ContainerInfo, replica: ContainerReplica, force: bool) -> None:
        self.calls.append(("delete", replica.datanode, force))

    def update_container_state(self, container_id: ContainerID, event: LifeCycleEvent) -> None:
        self.calls.append(("event", container_id, event))

    def fire_close_container(self, container_id: ContainerID) -> None:
        self.calls.append(("fire_close", container_id))

    def update_sequence_id(self, container_id: ContainerID, sequence_id: int) -> None:
        self.calls.append(("sequence_id", container_id, sequence_id))

    def set_node(self, dn: DatanodeID, op: Op = Op.IN_SERVICE, health: NodeState = NodeState.HEALTHY) -> None:
        self.nodes[dn] = NodeStatus(op, health)


def container(
    state: str = "CLOSED",
    config: str = "RATIS/THREE",
    seq: int = SEQ,
    keys: int = 10,
    pipeline: PipelineID | None = PIPELINE,
    suppressed: bool = False,
    entered_ms: int = 0,
    reported: bool = True,
) -> ContainerInfo:
    return ContainerInfo(
        CID,
        LifeCycleState[state],
        entered_ms,
        pipeline,
        ReplicationConfig.parse(config),
        "test",
        10,
        keys,
        seq,
        suppressed,
        reported,
    )


def ec_container(state: str = "CLOSED", **kwargs: object) -> ContainerInfo:
    return container(state, "EC/RS-3-2-1024k", **kwargs)  # type: ignore[arg-type]


def replica(
    dn: DatanodeID,
    state: str = "CLOSED",
    index: int = 0,
    seq: int = SEQ,
    origin: DatanodeID | None = None,
    empty: bool = False,
) -> ContainerReplica:
    return ContainerReplica(CID, dn, ReplicaState[state], origin or dn, seq, 10, 10, index, empty)


def add(dn: DatanodeID, index: int = 0) -> PendingOp:
    return PendingOp(PendingOpType.ADD, dn, index, None, 1 << 60)


def delete(dn: DatanodeID, index: int = 0) -> PendingOp:
    return PendingOp(PendingOpType.DELETE, dn, index, None, 1 << 60)


# Ratis layouts: C closed at the container BCSID, Cg closing, O open, Q= / Q< quasi-closed at / below
# the container BCSID, U unhealthy. Datanodes are named "<kind><position>", e.g. "U3".
RATIS_KINDS = {
    "C": ("CLOSED", SEQ),
    "Cg": ("CLOSING", SEQ),
    "O": ("OPEN", SEQ),
    "Q=": ("QUASI_CLOSED", SEQ),
    "Q<": ("QUASI_CLOSED", SEQ - 1),
    "U": ("UNHEALTHY", SEQ),
}


def ratis_replicas(layout: str) -> tuple[ContainerReplica, ...]:
    result = []
    for n, kind in enumerate(layout.split()):
        state, seq = RATIS_KINDS[kind]
        result.append(replica(f"{kind}{n}", state, seq=seq))
    return tuple(result)


# EC layouts, one column per index: H closed, U unhealthy, D closed on a decommissioning node,
# M closed on a maintenance node; "-" no replica. Datanodes are "<index><kind><n>", e.g. "5U1".
EC_STATES = {"H": "CLOSED", "U": "UNHEALTHY", "D": "CLOSED", "M": "CLOSED"}
EC_OPS = {"D": Op.DECOMMISSIONING, "M": Op.IN_MAINTENANCE}


def ec_replicas(layout: str, services: RecordingServices | None = None) -> tuple[ContainerReplica, ...]:
    """Replicas of `layout`; the op states of D and M nodes are set on `services`."""
    result = []
    for index, column in enumerate(layout.split(), start=1):
        for n, kind in enumerate(column.replace("-", "")):
            dn = f"{index}{kind}{n}"
            result.append(replica(dn, EC_STATES[kind], index=index))
            if kind in EC_OPS:
                assert services is not None, "offline replicas need services to hold their node status"
                services.set_node(dn, EC_OPS[kind])
    return tuple(result)


@dataclass
class Outcome:
    """What one check produced; `stopped` is the handler's return value (None for a whole chain)."""

    stopped: bool | None
    health: ContainerHealthState
    report: ReplicationManagerReport
    under: list[UnderReplicatedHealthResult]
    over: list[OverReplicatedHealthResult]
    calls: list[Call]

    def recorded(self) -> dict[ContainerHealthState, int]:
        """The non-zero health counters."""
        return {s: self.report.stat(s) for s in ContainerHealthState if self.report.stat(s)}

    def assert_only(self, *states: ContainerHealthState) -> None:
        """Exactly these states were recorded, once each, each sampling the container."""
        assert self.recorded() == dict.fromkeys(states, 1)
        for state in states:
            assert self.report.samples(state) == [CID]


def drain(
    queue: ReplicationQueue,
) -> tuple[list[UnderReplicatedHealthResult], list[OverReplicatedHealthResult]]:
    under, over = [], []
    while (u := queue.dequeue_under()) is not None:
        under.append(u)
    while (o := queue.dequeue_over()) is not None:
        over.append(o)
    return under, over


def make_request(
    info: ContainerInfo,
    replicas: Iterable[ContainerReplica],
    services: RecordingServices,
    pending: Iterable[PendingOp] = (),
    read_only: bool = False,
    queue: ReplicationQueue | None = None,
) -> ContainerCheckRequest:
    config = services.config
    redundancy = (
        config.maintenance_remaining_redundancy
        if info.replication_config.type is ReplicationType.EC
        else config.maintenance_replica_minimum
    )
    return ContainerCheckRequest(
        info,
        tuple(replicas),
        tuple(pending),
        ReplicationManagerReport(config.container_sample_limit),
        queue if queue is not None else (NullQueue() if read_only else ReplicationQueue()),
        redundancy,
        read_only,
    )


def _outcome(stopped: bool | None, request: ContainerCheckRequest, services: RecordingServices) -> Outcome:
    under, over = drain(request.queue)
    return Outcome(stopped, request.report.current_health, request.report, under, over, services.calls)


def handle(
    handler: CheckHandler,
    info: ContainerInfo,
    replicas: Iterable[ContainerReplica] = (),
    services: RecordingServices | None = None,
    pending: Iterable[PendingOp] = (),
    read_only: bool = False,
) -> Outcome:
    """Run one handler; in read-only mode a real queue is passed, so not enqueueing is proven."""
    services = services or RecordingServices()
    queue = ReplicationQueue() if read_only else None
    request = make_request(info, replicas, services, pending, read_only, queue)
    return _outcome(handler.handle(request, services), request, services)


def check(
    info: ContainerInfo,
    replicas: Iterable[ContainerReplica] = (),
    services: RecordingServices | None = None,
    pending: Iterable[PendingOp] = (),
    read_only: bool = False,
) -> Outcome:
    """Run the whole default chain."""
    services = services or RecordingServices()
    queue = ReplicationQueue() if read_only else None
    request = make_request(info, replicas, services, pending, read_only, queue)
    health = run_chain(request, services)
    outcome = _outcome(None, request, services)
    assert health is outcome.health
    return outcome
