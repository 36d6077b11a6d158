"""NodeManager: registration, heartbeats, health checks, operational state and per-node accounting.

Sans-IO: time comes from the injected clock, outputs are events and queued commands.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from pyozone.hdds.commands import (
    FinalizeNewLayoutVersionCommand,
    ReregisterCommand,
    SCMCommand,
    SetNodeOperationalStateCommand,
    is_low_priority_replication,
)
from pyozone.hdds.datanode import DatanodeDetails, DatanodeInfo, LayoutVersion, NodeReport
from pyozone.hdds.exceptions import ResultCode, SCMException
from pyozone.hdds.ids import ContainerID, DatanodeID, PipelineID
from pyozone.hdds.node_status import NodeStatus
from pyozone.hdds.states import NodeOperationalState as Op
from pyozone.hdds.states import NodeState, SCMCommandType
from pyozone.hdds.topology import NetworkTopology
from pyozone.scm.events import EventQueue, SCMEvent
from pyozone.scm.ha.context import ScmContext
from pyozone.scm.node.commands import CommandQueue
from pyozone.scm.node.health import health_transitions, next_state
from pyozone.scm.node.metrics import NodeMetrics
from pyozone.scm.node.pending_containers import PendingContainerTracker
from pyozone.scm.pipeline_limits import datanode_pipeline_limit
from pyozone.scm.store import JsonCodec, SCMMetadataStore, StrKeyCodec, Table

if TYPE_CHECKING:
    from pyozone.scm.settings import ScmSettings

log = logging.getLogger(__name__)

SCM_LAYOUT = LayoutVersion(metadata_layout_version=1, software_layout_version=1)

HEALTH_EVENTS = {
    NodeState.STALE: SCMEvent.STALE_NODE,
    NodeState.DEAD: SCMEvent.DEAD_NODE,
    NodeState.HEALTHY: SCMEvent.HEALTHY_READONLY_TO_HEALTHY_NODE,
    NodeState.HEALTHY_READONLY: SCMEvent.HEALTHY_READONLY_NODE,
}

# Operational-state changes SCM accepts; admin commands and the admin monitor both go through them.
OPERATIONAL_TRANSITIONS: frozenset[tuple[Op, Op]] = frozenset(
    {
        (Op.IN_SERVICE, Op.DECOMMISSIONING),
        (Op.DECOMMISSIONING, Op.DECOMMISSIONED),
        (Op.IN_SERVICE, Op.ENTERING_MAINTENANCE),
        (Op.ENTERING_MAINTENANCE, Op.IN_MAINTENANCE),
        *((state, Op.IN_SERVICE) for state in Op if state is not Op.IN_SERVICE),
    }
)
_NOTIFY_RM_ON = (Op.ENTERING_MAINTENANCE, Op.DECOMMISSIONING, Op.IN_SERVICE)


class NodeManager:
    def __init__(
        self,
        settings: ScmSettings,
        clock,
        events: EventQueue,
        topology: NetworkTopology | None = None,
        layout: LayoutVersion = SCM_LAYOUT,
        context: ScmContext | None = None,
        store: SCMMetadataStore | None = None,
    ) -> None:
        """`store`: its epochs hold commands back (the command barrier, pyozone/scm/node/commands.py);
        in an HA service it keeps the operational states an administrator or the admin monitor set."""
        # Leader or follower, and the leader's term that every command carries: the managers that queue
        # commands here read it from this one place.
        self.context = context or ScmContext.standalone()
        self.clock = clock
        self.events = events
        self.topology = topology or NetworkTopology()
        self.layout = layout
        self.intervals = settings.health
        self.commands = CommandQueue(store)
        # pyozone's datanodeOpStates (HA only; Ozone keeps a datanode's operational state on the datanode
        # alone): uuid -> {"state", "expiry"} as the leader set it, so a failover between an admin's answer
        # and the datanode persisting it loses nothing
        self._op_states: Table[str, Any] | None = (
            store.table("datanodeOpStates", StrKeyCodec(), JsonCodec())
            if store is not None and self.context.ha
            else None
        )
        self.metrics = NodeMetrics()
        self._nodes: dict[DatanodeID, DatanodeInfo] = {}
        # IN_SERVICE + HEALTHY nodes, kept current so placement need not scan every node
        self._writable: dict[DatanodeID, None] = {}
        self._pipelines: dict[DatanodeID, set[PipelineID]] = {}
        self._containers: dict[DatanodeID, set[ContainerID]] = {}
        self._last_check_ms: int | None = None
        self.skipped_health_checks = 0
        self._pipeline_limits = settings.pipeline_limits
        self._owner_container_count = settings.container.owner_container_count
        self._container_size = settings.container.size_bytes
        self.pending_containers = PendingContainerTracker(self._container_size, clock)

    # ------------------------------------------------------------------ registration and heartbeat
    def register(
        self, details: DatanodeDetails, report: NodeReport | None = None, layout: LayoutVersion | None = None
    ) -> DatanodeInfo:
        layout = layout or self.layout
        rack = self.topology.resolve(details.uuid, details.hostname, details.ip_address)
        details = _with_location(details, rack)
        existing = self._nodes.get(details.uuid)
        if existing is not None:
            address_changed = (existing.details.hostname, existing.details.ip_address) != (
                details.hostname,
                details.ip_address,
            )
            existing.details = details
            existing.layout = layout
            if report is not None:
                existing.report = report
            self.topology.add(details.uuid, rack)
            if address_changed:
                self.events.fire(SCMEvent.NODE_ADDRESS_UPDATE, details.uuid)
            return existing
        now = self.clock.now_ms()
        health = NodeState.HEALTHY if self._layout_matches(layout) else NodeState.HEALTHY_READONLY
        status = NodeStatus(details.persisted_op_state, health, details.persisted_op_state_expiry)
        info = DatanodeInfo(
            details,
            status,
            now,
            now,
            layout,
            report or NodeReport(),
            last_heartbeat_wall_ms=self.clock.wall_ms(),
        )
        self._nodes[details.uuid] = info
        self._track_writable(info)
        self._pipelines.setdefault(details.uuid, set())
        self._containers.setdefault(details.uuid, set())
        self.topology.add(details.uuid, rack)
        log.info("Registered datanode %s (%s) on %s", details.uuid, details.hostname, rack)
        self.events.fire(SCMEvent.NEW_NODE, details.uuid)
        return info

    def is_registered(self, dn: DatanodeID) -> bool:
        return dn in self._nodes

    def process_heartbeat(
        self,
        dn: DatanodeID,
        persisted_op_state: Op | None = None,
        persisted_op_state_expiry: int = 0,
        layout: LayoutVersion | None = None,
        command_queue_report: dict[SCMCommandType, int] | None = None,
    ) -> list[SCMCommand]:
        """Records the heartbeat and returns the commands to send back with its response."""
        info = self._nodes.get(dn)
        if info is None:
            self.metrics.num_hb_processing_failed += 1
            # Every SCM, leader or not, asks an unknown datanode to register: it answers its endpoint,
            # not a leader's command (the datanode's endpoint handles it, as SCMDatanodeHeartbeatDispatcher)
            reregister: list[SCMCommand] = [ReregisterCommand(term=self.context.known_term)]
            self.metrics.sent(dn, reregister)
            return reregister
        self.metrics.num_hb_processed += 1
        info.last_heartbeat_ms = self.clock.now_ms()
        info.last_heartbeat_wall_ms = self.clock.wall_ms()
        if layout is not None:
            info.layout = layout
            behind = layout.metadata_layout_version < self.layout.metadata_layout_version
            if behind and self.context.is_leader():
                # a follower skips it, as Ozone's "Skip sending finalize upgrade command" on NotLeader
                self.commands.add(dn, FinalizeNewLayoutVersionCommand(term=self.context.term_of_leader()))
        if persisted_op_state is not None:
            self._sync_operational_state(info, persisted_op_state, persisted_op_state_expiry)
        sent = self.commands.drain(dn)
        self.metrics.sent(dn, sent)
        if command_queue_report is not None:
            # Without a queue report Ozone keeps the last counts rather than guessing.
            self.metrics.num_node_command_queue_report_processed += 1
            self._update_command_counts(info, command_queue_report, sent)
        return sent

    def _sync_operational_state(self, info: DatanodeInfo, reported: Op, expiry: int) -> None:
        """Ozone's SCMNodeManager.updateDatanodeOpState: where the datanode's persisted op-state differs from
        SCM's, the leader commands SCM's value and a follower adopts the datanode's; the leader alone
        notifies the Replication Manager of a persisted change."""
        previous = info.details.persisted_op_state
        if (reported, expiry) != (previous, info.details.persisted_op_state_expiry):
            info.details = _with_persisted_state(info.details, reported, expiry)
            if reported in _NOTIFY_RM_ON and reported is not previous and self.context.is_leader():
                self.events.fire(SCMEvent.REPLICATION_MANAGER_NOTIFY, info.uuid)
        status = info.status
        if (reported, expiry) == (status.operational_state, status.op_state_expiry_epoch_sec):
            return
        if not self.context.is_leader():
            self._adopt_operational_state(info, reported, expiry)
            return
        self.commands.add(
            info.uuid,
            SetNodeOperationalStateCommand(
                state=status.operational_state,
                expiry_epoch_s=status.op_state_expiry_epoch_sec,
                term=self.context.term_of_leader(),
            ),
        )

    def _adopt_operational_state(self, info: DatanodeInfo, state: Op, expiry: int) -> None:
        """A follower takes the datanode's value whatever the transition (it may have missed the steps
        between); as Ozone's NodeStateManager.setNodeOperationalState, a changed state re-fires the event
        of the node's health."""
        current = info.status.operational_state
        log.info(
            "Follower SCM adopts the operational state %s (expiry %d) datanode %s reports (SCM had %s)",
            state.name,
            expiry,
            info.uuid,
            current.name,
        )
        info.status = info.status.with_operational_state(state, expiry)
        self._track_writable(info)
        if state is not current:
            self.events.fire(HEALTH_EVENTS[info.status.health], info.uuid)

    def _update_command_counts(
        self, info: DatanodeInfo, reported: dict[SCMCommandType, int], sent: list[SCMCommand]
    ) -> None:
        """DatanodeInfo.setCommandCounts: the datanode's counts replace ours, plus what this heartbeat just
        carried (but LOW priority replicates, which the datanode's counts leave out too:
        `is_low_priority_replication`)."""
        counts = {t: max(0, c) for t, c in reported.items()}
        for command in sent:
            if not is_low_priority_replication(command):
                counts[command.type] = counts.get(command.type, 0) + 1
        info.command_counts = counts
        self.events.fire(SCMEvent.DATANODE_COMMAND_COUNT_UPDATED, info.uuid)

    def process_node_report(self, dn: DatanodeID, report: NodeReport) -> None:
        """A node whose data volumes are all full stays HEALTHY (as in Ozone): it serves reads and its
        replicas count. Its report shows no usable space (placement skips it for that) and the log says
        so."""
        info = self._nodes.get(dn)
        if info is None:
            self.metrics.num_node_report_processing_failed += 1
            return
        self.metrics.num_node_report_processed += 1
        self.pending_containers.roll(dn)
        before, info.report = info.report, report
        full = _out_of_space(report)
        if before.storage and full != _out_of_space(before):
            if full:
                log.warning(
                    "Datanode %s has no space left on its data volumes (down to their free-space floor): "
                    "no pipeline or container is placed there until it reports space again",
                    dn,
                )
            else:
                log.info("Datanode %s has space again: %d B free", dn, info.remaining())

    # ------------------------------------------------------------------ health
    def check_health(self) -> None:
        """One pass of the health checker; a pass delayed by min(stale, dead) or more is skipped."""
        now = self.clock.now_ms()
        last, self._last_check_ms = self._last_check_ms, now
        if last is not None and now - last >= min(self.intervals.stale_ms, self.intervals.dead_ms):
            self.skipped_health_checks += 1
            log.warning("Health check delayed by %d ms; skipping this pass", now - last)
            return
        for info in list(self._nodes.values()):
            start = info.status.health
            for event in health_transitions(
                start, info.last_heartbeat_ms, now, self._layout_matches(info.layout), self.intervals
            ):
                target = next_state(start, event)
                if target is not None and target is not info.status.health:
                    self._set_health(info, target)

    def _set_health(self, info: DatanodeInfo, health: NodeState) -> None:
        log.info("Datanode %s: %s -> %s", info.uuid, info.status.health.name, health.name)
        info.status = info.status.with_health(health)
        self._track_writable(info)
        self.events.fire(HEALTH_EVENTS[health], info.uuid)

    def _layout_matches(self, layout: LayoutVersion) -> bool:
        return layout.metadata_layout_version == self.layout.metadata_layout_version

    # ------------------------------------------------------------------ operational state
    def set_operational_state(self, dn: DatanodeID, state: Op, expiry_epoch_sec: int = 0) -> None:
        info = self.node(dn)
        current = info.status.operational_state
        if state is not current and (current, state) not in OPERATIONAL_TRANSITIONS:
            raise SCMException(
                f"datanode {dn} cannot go from {current.name} to {state.name}",
                ResultCode.INVALID_OPERATIONAL_STATE_TRANSITION,
            )
        if self._op_states is not None:
            self._op_states.put(dn, {"state": state.name, "expiry": expiry_epoch_sec})
        info.status = info.status.with_operational_state(state, expiry_epoch_sec)
        if state is current:
            return
        self._track_writable(info)
        log.info("Datanode %s: operational state %s -> %s", dn, current.name, state.name)
        self.events.fire(HEALTH_EVENTS[info.status.health], dn)

    def follow_datanode_operational_states(self) -> None:
        """Step-down: a follower's view of every node is what its datanode persisted
        (SCMNodeManager.processHeartbeat), not what this SCM set as leader; the `datanodeOpStates` records
        count again when it leads (`adopt_operational_state_records`)."""
        for info in self._nodes.values():
            persisted = (info.details.persisted_op_state, info.details.persisted_op_state_expiry)
            if persisted != (info.status.operational_state, info.status.op_state_expiry_epoch_sec):
                # no health event again: what a follower derives from one (the replicas of a dead node
                # dropped) was done when the health changed, on every SCM alike
                info.status = info.status.with_operational_state(*persisted)
                self._track_writable(info)

    def adopt_operational_state_records(self) -> None:
        """Step-up (`ScmReplication.step_up`): the states the service's leaders set win over what this SCM
        adopted from the datanodes as a follower; the heartbeats' sync then commands the datanodes."""
        if self._op_states is None:
            return
        for dn, record in self._op_states.items():
            info = self._nodes.get(dn)
            state, expiry = Op[record["state"]], int(record["expiry"])
            if info is not None and (state, expiry) != (
                info.status.operational_state,
                info.status.op_state_expiry_epoch_sec,
            ):
                # no health event again (as at a step-down): the admin monitor picks the node up on its
                # next pass, and what a leader does about a node that went stale or dead while this SCM
                # followed is the step-up's reconciliation (`ScmReplication.step_up`)
                info.status = info.status.with_operational_state(state, expiry)
                self._track_writable(info)

    # ------------------------------------------------------------------ queries
    def node(self, dn: DatanodeID) -> DatanodeInfo:
        info = self._nodes.get(dn)
        if info is None:
            raise SCMException(f"datanode {dn} is not registered", ResultCode.NO_SUCH_DATANODE)
        return info

    def get(self, dn: DatanodeID) -> DatanodeInfo | None:
        return self._nodes.get(dn)

    def nodes(self, predicate: Callable[[NodeStatus], bool] | None = None) -> list[DatanodeInfo]:
        if predicate is None:
            return list(self._nodes.values())
        return [info for info in self._nodes.values() if predicate(info.status)]

    def healthy_in_service(self) -> list[DatanodeInfo]:
        """Ozone's inServiceHealthy(): IN_SERVICE and HEALTHY (not HEALTHY_READONLY)."""
        return [self._nodes[dn] for dn in self._writable]

    def _track_writable(self, info: DatanodeInfo) -> None:
        if info.status.is_node_writable():
            self._writable[info.uuid] = None
        else:
            self._writable.pop(info.uuid, None)

    def count(self, op: Op | None = None, health: NodeState | None = None) -> int:
        return sum(
            1
            for i in self._nodes.values()
            if (op is None or i.status.operational_state is op)
            and (health is None or i.status.health is health)
        )

    # ------------------------------------------------------------------ pipelines and containers per node
    def add_pipeline(self, pipeline_id: PipelineID, members: Iterable[DatanodeID]) -> None:
        for dn in members:
            self._pipelines.setdefault(dn, set()).add(pipeline_id)

    def remove_pipeline(self, pipeline_id: PipelineID, members: Iterable[DatanodeID]) -> None:
        for dn in members:
            self._pipelines.get(dn, set()).discard(pipeline_id)

    def pipelines(self, dn: DatanodeID) -> frozenset[PipelineID]:
        return frozenset(self._pipelines.get(dn, ()))

    def add_container(self, dn: DatanodeID, container_id: ContainerID) -> None:
        """The datanode reported the container (ICR or full report): no longer pending there."""
        self._containers.setdefault(dn, set()).add(container_id)
        self.pending_containers.remove(dn, container_id)

    def remove_container(self, dn: DatanodeID, container_id: ContainerID) -> None:
        self._containers.get(dn, set()).discard(container_id)

    def containers(self, dn: DatanodeID) -> frozenset[ContainerID]:
        return frozenset(self._containers.get(dn, ()))

    def container_count(self, dn: DatanodeID) -> int:
        """How many containers the datanode holds, without copying its set (600k ids at 1M containers)."""
        return len(self._containers.get(dn, ()))

    def storage_totals(self) -> tuple[int, int, int]:
        """Capacity, used and remaining bytes of the in-service datanodes that are not dead: Ozone's node
        stats behind DiskCapacity, DiskUsed and DiskRemaining, and the cluster usage the web UI shows."""
        online = [
            info
            for info in self.nodes()
            if info.status.health is not NodeState.DEAD and info.status.operational_state is Op.IN_SERVICE
        ]
        return (
            sum(i.capacity() for i in online),
            sum(i.used() for i in online),
            sum(i.remaining() for i in online),
        )

    def set_containers(self, dn: DatanodeID, container_ids: Iterable[ContainerID]) -> None:
        self._containers[dn] = set(container_ids)

    def pipeline_limit(self, dn: DatanodeID) -> int:
        """SCMNodeManager.pipelineLimit, as scm/pipeline_limits.py defines it."""
        return datanode_pipeline_limit(self._pipeline_limits, self._nodes.get(dn))

    def has_room_for_container(self, info: DatanodeInfo) -> bool:
        """The node reports a volume whose usable space, less the containers SCM allocated there since
        (PendingContainerTracker), exceeds a container."""
        pending = self.pending_containers.pending_bytes(info.uuid)
        return info.report.has_volume_for(self._container_size, pending)

    def have_room_for_container(self, members: Iterable[DatanodeID]) -> bool:
        """Every member has room for one more container (Ozone's PipelineManager.hasEnoughSpace before a
        new container goes on a pipeline, HDDS-12468): a member under its free-space floor, or whose room
        SCM has already allocated, takes no new container until it reports space again."""
        for dn in members:
            info = self._nodes.get(dn)
            if info is None or not self.has_room_for_container(info):
                return False
        return True

    def open_container_limit(self, members: Iterable[DatanodeID]) -> int:
        """min over members of ceil(owner.container.count x healthy volumes / pipeline limit)."""
        limits = []
        for dn in members:
            pipeline_limit = self.pipeline_limit(dn)
            if pipeline_limit <= 0:
                return 0
            info = self._nodes.get(dn)
            volumes = info.healthy_volume_count() if info else 0
            a = self._owner_container_count * volumes
            # Java's integer division truncates toward zero: with a = 0, (a - 1) / limit is 0 for limit > 1
            limits.append(1 + _java_div(a - 1, pipeline_limit))
        return min(limits) if limits else 0

    # ------------------------------------------------------------------ commands
    def add_datanode_command(self, dn: DatanodeID, command: SCMCommand) -> None:
        self.commands.add(dn, command)

    def clear_command_queue(self, dn: DatanodeID) -> list[SCMCommand]:
        return self.commands.drain(dn)

    def node_queued_command_count(self, dn: DatanodeID, command_type: SCMCommandType) -> int:
        """What the datanode last reported (plus what SCM sent with it); -1 when unknown."""
        info = self._nodes.get(dn)
        if info is None:
            return -1
        return info.command_counts.get(command_type, -1)

    def total_datanode_command_count(self, dn: DatanodeID, command_type: SCMCommandType) -> int:
        queued_on_node = max(0, self.node_queued_command_count(dn, command_type))
        return self.commands.count(dn, command_type) + queued_on_node

    def forget(self, dn: DatanodeID) -> None:
        """Drops a node from the topology (a DEAD node); it stays known until it registers again."""
        self.topology.remove(dn)


def _java_div(a: int, b: int) -> int:
    """Integer division truncating toward zero, as Java's `/` on ints (b > 0)."""
    q = abs(a) // b
    return q if a >= 0 else -q


def _with_location(details: DatanodeDetails, rack: str) -> DatanodeDetails:
    if details.network_location == rack:
        return details
    return DatanodeDetails(
        details.uuid,
        details.hostname,
        details.ip_address,
        details.ports,
        rack,
        details.persisted_op_state,
        details.persisted_op_state_expiry,
        details.version,
    )


def _with_persisted_state(details: DatanodeDetails, state: Op, expiry: int) -> DatanodeDetails:
    return DatanodeDetails(
        details.uuid,
        details.hostname,
        details.ip_address,
        details.ports,
        details.network_location,
        state,
        expiry,
        details.version,
    )


def _out_of_space(report: NodeReport) -> bool:
    """Every working data volume is full: no usable space, down to its free-space floor once its open
    containers' committed bytes are counted (failed volumes are reported as failed, not as full)."""
    working = [s for s in report.storage if not s.failed]
    return bool(working) and all(s.usable <= 0 for s in working)
