"""The Replication Manager's check over snapshot rows: SCM's own chain (pyozone.scm.replication.check), fed
from a snapshot instead of SCM's managers, so `analytics rm-report` and the SCM cannot disagree on a rule.

Parity means: the report `check_partition` builds over all of a snapshot's containers equals the report
`ReplicationManager.process_all()` returns on the same state, counts and samples. process_all runs the
chain in acting mode while this runs it read-only, and the two record the same states:
every handler records before it looks at `read_only`, the closing handler returns True in both modes, and
the one handler read-only mode skips (mismatched replicas) never records. The actions process_all takes
(commands, state changes) only touch the container being checked, after its states are recorded, and the
scan reads nothing they write; tests/analytics/test_rm_parity.py holds the two equal on every scenario
file and on whole clusters. The one fact a snapshot states differently from SCM's view is a DEAD node's
rack (see CheckContext.from_rows): taken at face value it changed the report of a cluster with a dead rack.

Rows come as ContainerRow / ReplicaRow tuples whose fields are ContainerInfo's / ContainerReplica's, in
their order: the full scan's shortcut (plainly_healthy.py) reads a row as it reads the record, so the
containers it passes, nearly all of them, never become objects; the rest are built for the chain.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, NamedTuple

from pyozone.analytics.schema import SnapshotError
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
from pyozone.scm.replication.config import ReplicationManagerConfig
from pyozone.scm.replication.pending_ops import PendingOp, PendingOpType
from pyozone.scm.replication.placement import ContainerPlacementStatus, validate_container_placement
from pyozone.scm.replication.plainly_healthy import PlainTest, plainly_healthy_test
from pyozone.scm.replication.queue import NullQueue
from pyozone.scm.replication.targets import placement_policy_for

HEALTHY = ContainerHealthState.HEALTHY
lifecycle_state = LifeCycleState.__getitem__
replica_state = ReplicaState.__getitem__
pending_op_type = PendingOpType.__getitem__
replication_config = cache(ReplicationConfig.parse)
"""Decoders of the snapshot's names (schema.py stores enums by name, configs as Ozone writes them)."""


class ContainerRow(NamedTuple):
    """A containers-table row, decoded: ContainerInfo's fields in ContainerInfo's order."""

    container_id: ContainerID
    state: LifeCycleState
    state_entered_ms: int
    pipeline_id: PipelineID | None
    replication_config: ReplicationConfig
    owner: str
    used_bytes: int
    number_of_keys: int
    sequence_id: int
    suppressed: bool
    replicas_reported: bool


class ReplicaRow(NamedTuple):
    """A replicas-table row, decoded: ContainerReplica's fields in its order (the snapshot has no
    data checksum, which no check reads)."""

    container_id: ContainerID
    datanode: DatanodeID
    state: ReplicaState
    origin_node_id: DatanodeID
    sequence_id: int
    key_count: int
    bytes_used: int
    replica_index: int
    is_empty: bool


class PendingOpRow(NamedTuple):
    """A pending_ops-table row, decoded (the sent command is not in a snapshot; no check reads it)."""

    container_id: ContainerID
    type: PendingOpType
    target: DatanodeID
    replica_index: int
    deadline_epoch_ms: int


ContainerGroup = tuple[ContainerRow, Sequence[ReplicaRow], Sequence[PendingOpRow]]
"""One container with its replicas and pending ops."""


class ReadOnlyViolation(RuntimeError):
    """A handler tried to act during the snapshot check: the chain broke its read-only contract."""


@dataclass(frozen=True, slots=True)
class CheckContext:
    """Everything the check needs beside the containers: small (one entry per node and pipeline), built
    once on the driver and broadcast to every task."""

    config: ReplicationManagerConfig
    statuses: Mapping[DatanodeID, NodeStatus]
    racks: Mapping[DatanodeID, str]
    """The rack of each node in SCM's network topology."""
    pipelines: frozenset[PipelineID]
    wall_ms: int
    """The snapshot's time: what the check's clock reads."""

    @classmethod
    def from_rows(
        cls,
        nodes: Iterable[Mapping[str, Any]],
        pipeline_ids: Iterable[PipelineID],
        config: ReplicationManagerConfig,
        wall_ms: int,
    ) -> CheckContext:
        """From nodes-table rows (uuid, rack, health, operational_state, op_state_expiry_epoch_sec).

        The table gives every node its configured rack, but SCM's topology, which placement counts,
        has dropped the DEAD ones (the dead-node handler runs as the node turns DEAD), so they get none."""
        statuses: dict[DatanodeID, NodeStatus] = {}
        racks: dict[DatanodeID, str] = {}
        for row in nodes:
            try:
                status = NodeStatus(
                    NodeOperationalState[row["operational_state"]],
                    NodeState[row["health"]],
                    row["op_state_expiry_epoch_sec"] or 0,
                )
            except KeyError as e:
                raise SnapshotError(f"nodes: datanode {row['uuid']} has an unknown state {e}") from None
            statuses[row["uuid"]] = status
            if row["rack"] is not None and not status.is_dead():
                racks[row["uuid"]] = row["rack"]
        return cls(config, statuses, racks, frozenset(pipeline_ids), wall_ms)

    def plain_test(self) -> PlainTest:
        """ReplicationManager._plainly_healthy over the snapshot's nodes, with no pending containers:
        check_partition asks it only about containers without pending ops, the one use of that set."""
        leaving = frozenset(dn for dn, status in self.statuses.items() if not status.is_in_service())
        racks = self.racks if len(set(self.racks.values())) > 1 else None
        return plainly_healthy_test(leaving, frozenset(), racks)


class SnapshotCheckServices:
    """CheckServices over a CheckContext: the queries answer as ReplicationServices would on the live SCM
    the snapshot came from; every action raises ReadOnlyViolation."""

    def __init__(self, context: CheckContext) -> None:
        self.config = context.config
        self.clock = ManualClock(0, context.wall_ms)
        self._statuses = context.statuses
        self._pipelines = context.pipelines
        self._rack_of = context.racks.get
        self._rack_count = len(set(context.racks.values()))

    def node_status(self, dn: DatanodeID) -> NodeStatus | None:
        return self._statuses.get(dn)

    def pipeline_exists(self, pipeline_id: PipelineID | None) -> bool:
        return pipeline_id is not None and pipeline_id in self._pipelines

    def placement_status(
        self, container: ContainerInfo, dns: Sequence[DatanodeID]
    ) -> ContainerPlacementStatus:
        return validate_container_placement(
            dns,
            container.replication_config.required_nodes,
            self._rack_of,
            self._rack_count,
            placement_policy_for(container),
        )

    def send_close(self, container: ContainerInfo, replica: ContainerReplica, force: bool) -> None:
        raise ReadOnlyViolation(f"send_close for container {container.container_id}")

    def send_delete(self, container: ContainerInfo, replica: ContainerReplica, force: bool) -> None:
        raise ReadOnlyViolation(f"send_delete for container {container.container_id}")

    def update_container_state(self, container_id: ContainerID, event: LifeCycleEvent) -> None:
        raise ReadOnlyViolation(f"update_container_state({event.name}) for container {container_id}")

    def fire_close_container(self, container_id: ContainerID) -> None:
        raise ReadOnlyViolation(f"fire_close_container for container {container_id}")

    def update_sequence_id(self, container_id: ContainerID, sequence_id: int) -> None:
        raise ReadOnlyViolation(f"update_sequence_id for container {container_id}")


def check_partition(
    groups: Iterable[ContainerGroup],
    context: CheckContext,
    unhealthy: list[tuple[ContainerID, ContainerHealthState]] | None = None,
) -> ReplicationManagerReport:
    """process_all over these containers, in the order given: the report (lifecycle states counted,
    health states counted and sampled) and, into `unhealthy` when given, each container's final health
    when it is not HEALTHY (what ReplicationManager.container_health would answer).

    Samples are the first ids in the order given; given in ascending id order, they are the smallest,
    and ReplicationManagerReport.merge then combines partitions into exactly the full scan's report."""
    config = context.config
    report = ReplicationManagerReport(config.container_sample_limit)
    services = SnapshotCheckServices(context)
    plainly_healthy = context.plain_test()
    queue = NullQueue()
    ec = ReplicationType.EC
    lifecycle: Counter[LifeCycleState] = Counter()
    for container, replicas, ops in groups:
        lifecycle[container.state] += 1
        if not ops and plainly_healthy(container, replicas):  # a row reads as its record
            continue
        info = ContainerInfo(*container)
        # Ozone's processContainer, as ReplicationManager._check builds the request
        if info.replication_config.type is ec:
            redundancy = config.maintenance_remaining_redundancy
        else:
            redundancy = config.maintenance_replica_minimum
        request = ContainerCheckRequest(
            info,
            tuple(ContainerReplica(*r) for r in replicas),
            tuple(PendingOp(o.type, o.target, o.replica_index, None, o.deadline_epoch_ms) for o in ops),
            report,
            queue,
            redundancy,
            read_only=True,
        )
        state = run_chain(request, services)
        if state is not HEALTHY and unhealthy is not None:
            unhealthy.append((info.container_id, state))
    seed = ReplicationManagerReport.from_dict(
        {"sampleLimit": config.container_sample_limit, "stats": {s.name: n for s, n in lifecycle.items()}}
    )
    return seed.merge(report)
