"""StorageContainerManager: the sans-IO SCM core that composes every manager.

Inputs are registrations, heartbeats, admin calls and `tick()`; outputs are the commands returned
with each heartbeat. No sockets, no threads, no sleeps: the SCM daemon (pyozone/scm/server) and the
simulator drive this same object.

Its ScmContext says whether it leads (a lone SCM always does, in term 0). A follower of an HA service
takes every registration and report into its views (replicas, node health, pipeline leaders) but moves
no record, sends no command and runs none of the leader's services (SCMNodeManager; Ozone's
SCMContext.isLeader).
"""

from __future__ import annotations

import functools
import logging
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pyozone.common.timers import Timers
from pyozone.hdds.clock import Clock
from pyozone.hdds.commands import SCMCommand
from pyozone.hdds.container_health import ContainerHealthState
from pyozone.hdds.datanode import DatanodeDetails, LayoutVersion, NodeReport
from pyozone.hdds.messages import ContainerReplicaReport, Heartbeat, PipelineReport
from pyozone.hdds.states import SCMCommandType
from pyozone.hdds.topology import NetworkTopology
from pyozone.scm.balancer.balancer import ContainerBalancer
from pyozone.scm.block.deleted_block_log import DeletedBlockLog
from pyozone.scm.block.deleting_service import SCMBlockDeletingService
from pyozone.scm.block.manager import BlockManager
from pyozone.scm.block.sequence_id import SequenceIdGenerator
from pyozone.scm.block.writable_ec import WritableECContainerProvider
from pyozone.scm.container.actions_handler import ContainerActionsHandler
from pyozone.scm.container.close_handler import CloseContainerEventHandler
from pyozone.scm.container.manager import ContainerManager
from pyozone.scm.container.report_handler import ContainerReportHandler
from pyozone.scm.events import EventQueue, SCMEvent
from pyozone.scm.ha.context import ScmContext
from pyozone.scm.node.admin_monitor import DatanodeAdminMonitor
from pyozone.scm.node.handlers import NodeEventHandlers
from pyozone.scm.node.node_manager import NodeManager
from pyozone.scm.periodic import PeriodicTask
from pyozone.scm.pipeline.creator import BackgroundPipelineCreator
from pyozone.scm.pipeline.manager import PipelineManager
from pyozone.scm.replication.manager import ReplicationManager
from pyozone.scm.replication.placement import PlacementPolicy
from pyozone.scm.replication.targets import choose_datanodes
from pyozone.scm.safemode.manager import SafeModeManager
from pyozone.scm.store import SCMMetadataStore

if TYPE_CHECKING:
    from pyozone.scm.settings import ScmSettings

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class RegisteredNode:
    cluster_id: str
    datanode_uuid: str
    network_location: str


class StorageContainerManager:
    def __init__(
        self,
        settings: ScmSettings,
        clock: Clock,
        store: SCMMetadataStore,
        cluster_id: str = "CID-pyozone",
        topology: NetworkTopology | None = None,
        rng: random.Random | None = None,
        creator_budget: int | None = None,
        context: ScmContext | None = None,
    ) -> None:
        self.settings = settings
        self.clock = clock
        self.store = store
        self.cluster_id = cluster_id
        self.rng = rng or random.Random()
        self.context = context or ScmContext.standalone()
        self.events = EventQueue()
        self.timers = Timers()
        self.nodes = NodeManager(settings, clock, self.events, topology, context=self.context, store=store)
        self.pipelines = PipelineManager(
            settings,
            clock,
            self.events,
            store,
            self.nodes,
            precheck_passed=lambda: self.safe_mode.precheck_passed(),
            in_safe_mode=lambda: self.safe_mode.in_safe_mode(),
            rng=self.rng,
            ec_placement=functools.partial(choose_datanodes, PlacementPolicy.RACK_SCATTER),
        )
        self.sequence_ids = SequenceIdGenerator(store, settings.sequence_id_batch_size)
        self.containers = ContainerManager(
            settings.container, clock, self.events, store, self.nodes, self.pipelines, self.sequence_ids
        )
        self.container_reports = ContainerReportHandler(
            settings.container, self.events, self.nodes, self.containers
        )
        self.close_containers = CloseContainerEventHandler(
            settings.container, clock, self.timers, self.containers, self.pipelines, self.nodes
        )
        self.events.add_handler(SCMEvent.CLOSE_CONTAINER, self.close_containers.on_close_container)
        self.container_actions = ContainerActionsHandler(self.events)
        self.replication = ReplicationManager(
            settings.replication,
            clock,
            self.events,
            self.nodes,
            self.containers,
            self.pipelines,
            self.services_ready,
            self.rng,
        )
        self.balancer = ContainerBalancer(
            settings,
            clock,
            store,
            self.context,
            self.nodes,
            self.containers,
            self.replication,
            in_safe_mode=lambda: self.safe_mode.in_safe_mode(),
            services_ready=self.services_ready,
        )
        self.admin_monitor = DatanodeAdminMonitor(
            clock,
            self.nodes,
            self.pipelines,
            self.containers,
            self.replication,
            settings.admin_monitor_logging_limit,
        )
        self.deleted_blocks = DeletedBlockLog(
            settings.block_deletion,
            clock,
            store,
            self.containers,
            self.sequence_ids,
            container_health_ok=self._replication_healthy,
        )
        self.blocks = BlockManager(
            settings,
            clock,
            self.events,
            store,
            self.containers,
            self.pipelines,
            self.sequence_ids,
            in_safe_mode=lambda: self.safe_mode.in_safe_mode(),
            rng=self.rng,
            deleted_block_log=self.deleted_blocks,
            ec_containers=WritableECContainerProvider(
                settings, self.nodes, self.pipelines, self.containers, rng=self.rng
            ),
        )
        self.block_deleting = SCMBlockDeletingService(
            settings.block_deletion, self.deleted_blocks, self.nodes
        )
        self.creator = BackgroundPipelineCreator(settings.pipeline, self.pipelines, budget=creator_budget)
        self.node_handlers = NodeEventHandlers(
            self.events,
            self.nodes,
            self.pipelines,
            self.containers,
            self.creator,
            on_dead_node=[self.deleted_blocks.on_datanode_dead],
        )
        self.safe_mode = SafeModeManager(
            settings,
            clock,
            self.events,
            self.nodes,
            self.pipelines,
            self.containers,
            self.context.state_machine_ready if self.context.ha else None,
        )
        self.leader_ready_at_ms = clock.now_ms()  # when this SCM last became the ready leader
        self.context.add_ready_listener(self._state_machine_ready)
        self.events.add_handler(SCMEvent.PRE_CHECK_COMPLETED, lambda _: self.creator.trigger())
        self.tasks = self._periodic_tasks()
        self.safe_mode.start()

    def _state_machine_ready(self) -> None:
        """HA: this SCM's records are the service's (a follower caught up, the leader ready): safe mode's
        rules re-read them before the StateMachineReadyRule may let safe mode exit (Ozone's
        SCMStateMachine.tryStartDNServerAndRefreshSafeMode)."""
        if self.context.is_leader_ready():
            self.leader_ready_at_ms = self.clock.now_ms()
        self.safe_mode.reinitialize()
        self.events.fire(SCMEvent.STATEMACHINE_READY, True)

    def _replication_healthy(self, container_id: int) -> bool:
        """Block deletion waits until the Replication Manager finds the container HEALTHY
        (DeletedBlockLogImpl.getTransactions)."""
        if self.containers.find(container_id) is None:
            return False
        return self.replication.check_container_status(container_id) is ContainerHealthState.HEALTHY

    # ------------------------------------------------------------------ periodic work
    def _periodic_tasks(self) -> list[PeriodicTask]:
        s = self.settings
        return [
            PeriodicTask("NodeHealthCheck", s.health.check_interval_ms, self.nodes.check_health),
            PeriodicTask(
                "SafeModeRefresh",
                s.safe_mode.refresh_interval_ms,
                self.safe_mode.refresh,
                self.safe_mode.in_safe_mode,
            ),
            PeriodicTask(
                "BackgroundPipelineCreator",
                s.pipeline.creation_interval_ms,
                self._run_creator,
                self._creator_running,
            ),
            PeriodicTask(
                "PipelineScrubber",
                s.pipeline.scrub_interval_ms,
                self.pipelines.scrub_pipelines,
                self.services_ready,
            ),
            PeriodicTask(
                "SCMBlockDeletingService",
                s.block_deletion.interval_ms,
                self.block_deleting.run,
                self.services_ready,
            ),
            *self.replication.tasks,
            PeriodicTask(
                "DatanodeAdminMonitor",
                s.admin_monitor_interval_ms,
                self.admin_monitor.run,
                self.context.is_leader_ready,
            ),
        ]

    def services_ready(self) -> bool:
        """The ready leader, out of safe mode, both for hdds.scm.wait.time.after.safemode.exit:
        the Replication Manager, block deletion and the pipeline scrubber run only then. The wait counts
        from the later of safe mode's exit and this SCM becoming the ready leader, as Ozone's services
        count it from their last PAUSING to RUNNING (ReplicationManager.notifyStatusChanged,
        lastTimeToBeReadyInMillis): a new leader, whose pending replica operations start empty, lets the
        replications of the deposed leader's term finish and be reported before it repairs anything, or
        it would copy again what is being copied (issue 31's replication storm)."""
        exited = self.safe_mode.exited_at_ms
        if not self.context.is_leader_ready() or exited is None or self.safe_mode.in_safe_mode():
            return False
        since = max(exited, self.leader_ready_at_ms)
        return self.clock.now_ms() - since >= self.settings.safe_mode.wait_after_exit_ms

    def _creator_running(self) -> bool:
        if not self.context.is_leader_ready():
            return False
        creation_in_safe_mode = self.settings.safe_mode.pipeline_creation
        if self.safe_mode.in_safe_mode():
            return creation_in_safe_mode
        return creation_in_safe_mode or self.services_ready()

    def _run_creator(self) -> None:
        self.creator.create_pipelines()

    def tick(self) -> None:
        """Runs every periodic service that is due, one-shot pipeline creation, due timers, and the
        Container Balancer's run (balancer/balancer.py)."""
        now = self.clock.now_ms()
        for task in self.tasks:
            task.run_if_due(now)
        if self.creator.one_shot and self._creator_running():
            self.creator.create_pipelines()
        self.timers.run_due(now)
        self.balancer.tick()

    # ------------------------------------------------------------------ datanode protocol
    def register(
        self,
        details: DatanodeDetails,
        node_report: NodeReport | None = None,
        container_report: Sequence[ContainerReplicaReport] = (),
        pipeline_reports: Sequence[PipelineReport] = (),
        layout: LayoutVersion | None = None,
    ) -> RegisteredNode:
        info = self.nodes.register(details, node_report, layout)
        self.container_reports.process_full_report(details.uuid, container_report, from_registration=True)
        self._pipeline_reports(details.uuid, pipeline_reports)
        self.events.fire(SCMEvent.NODE_REGISTRATION_CONT_REPORT, details.uuid)
        return RegisteredNode(self.cluster_id, details.uuid, info.details.network_location)

    def heartbeat(self, hb: Heartbeat) -> list[SCMCommand]:
        """SCMHeartbeatRequestProto: reports in, queued commands out (SCMDatanodeHeartbeatDispatcher)."""
        dn = hb.datanode.uuid
        if not self.nodes.is_registered(dn):
            return self.nodes.process_heartbeat(dn)
        if hb.node_report is not None:
            self.nodes.process_node_report(dn, hb.node_report)
        # The datanode queued these ICRs before it took its full report: older, so processed first (else
        # a stale one re-adds a replica the full report has just removed)
        if hb.incremental_container_reports:
            self.container_reports.process_incremental_report(dn, hb.incremental_container_reports)
        if hb.container_report is not None:
            self.container_reports.process_full_report(dn, hb.container_report, from_registration=False)
        if hb.pipeline_reports is not None:
            self._pipeline_reports(dn, hb.pipeline_reports)
        for action in hb.pipeline_actions:
            self.pipelines.process_pipeline_action(dn, action.pipeline_id, action.reason)
        if hb.container_actions:
            self.container_actions.process_actions(dn, hb.container_actions)
        if hb.command_status_reports and self.context.is_leader():
            # ACKs of delete transactions count on the leader only (DeletedBlockLogImpl.onMessage)
            self.deleted_blocks.process_command_status(dn, hb.command_status_reports)
        commands = self.nodes.process_heartbeat(
            dn,
            hb.persisted_op_state,
            hb.datanode.persisted_op_state_expiry,
            hb.layout,
            hb.command_queue_report,
        )
        for command in commands:
            if command.type is SCMCommandType.deleteBlocksCommand:
                self.deleted_blocks.on_sent(dn, command)
        return commands

    def _pipeline_reports(self, dn: str, reports: Sequence[PipelineReport]) -> None:
        for report in reports:
            self.pipelines.process_pipeline_report(dn, report.pipeline_id, report.is_leader)
        self.events.fire(SCMEvent.PIPELINE_REPORT, (dn, list(reports)))
