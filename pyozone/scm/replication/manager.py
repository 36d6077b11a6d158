"""ReplicationManager: the check stage, the processing stage and their schedule (spec 10.1, 10.2).

The check stage walks every container through the handler chain, producing a report and a queue of
repairs; the processing stage drains the queue under the throttling rules (spec 10.7). Both are sans-IO:
SCM's tick runs them through PeriodicTasks on the injected clock, so a daemon and the simulator share
one schedule.

Beyond Ozone's fixed schedule, a node that dies or leaves service gets its own containers checked and
repaired at once (issue 5; Ozone's HDDS-8660 idea), instead of waiting up to thread.interval for the
next full scan. The targeted check merges into the current queue; the full scan keeps its own interval
and still replaces the queue, so nothing targeted can starve or outlive it.
"""

from __future__ import annotations

import logging
import random
from collections import Counter
from collections.abc import Callable, Collection, Iterable
from operator import attrgetter
from typing import TYPE_CHECKING

from pyozone.config import OzoneConfiguration
from pyozone.hdds.clock import Clock
from pyozone.hdds.container import ContainerInfo, ContainerReplica
from pyozone.hdds.container_health import ContainerHealthState
from pyozone.hdds.ids import ContainerID, DatanodeID
from pyozone.hdds.node_status import NodeStatus
from pyozone.hdds.replication_report import ReplicationManagerReport
from pyozone.hdds.states import ReplicationType
from pyozone.scm.events import EventQueue, SCMEvent
from pyozone.scm.periodic import PeriodicTask
from pyozone.scm.replication.check import ContainerCheckRequest, run_chain
from pyozone.scm.replication.commands import ReplicationCommandSender
from pyozone.scm.replication.config import ReplicationManagerConfig
from pyozone.scm.replication.metrics import ReplicationManagerMetrics
from pyozone.scm.replication.offline import healthy_enough_for_offline
from pyozone.scm.replication.pending_ops import (
    ContainerReplicaPendingOps,
    PendingOp,
    PendingOpsReplicaListener,
    PendingOpType,
)
from pyozone.scm.replication.plainly_healthy import PlainTest, plainly_healthy_test
from pyozone.scm.replication.processing import (
    OverReplicatedProcessor,
    UnderReplicatedProcessor,
    cluster_inflight_limit,
    handle_over_replicated,
    handle_under_replicated,
)
from pyozone.scm.replication.queue import NullQueue, ReplicationQueue
from pyozone.scm.replication.services import ReplicationServices

if TYPE_CHECKING:
    from pyozone.scm.container.manager import ContainerManager
    from pyozone.scm.node.node_manager import NodeManager
    from pyozone.scm.pipeline.manager import PipelineManager

log = logging.getLogger(__name__)

HEALTHY = ContainerHealthState.HEALTHY
NotifyPayload = DatanodeID | tuple[DatanodeID, Collection[ContainerID]]
"""REPLICATION_MANAGER_NOTIFY carries the node, and for a dead node the containers it held (its
replicas are already gone from SCM when the event fires)."""


class ReplicationManager:
    def __init__(
        self,
        conf: OzoneConfiguration,
        clock: Clock,
        events: EventQueue,
        nodes: NodeManager,
        containers: ContainerManager,
        pipelines: PipelineManager,
        services_ready: Callable[[], bool],
        rng: random.Random,
    ) -> None:
        self.config = ReplicationManagerConfig.from_conf(conf)
        self.clock = clock
        self.nodes = nodes
        self.containers = containers
        self._services_ready = services_ready
        self.pending_ops = ContainerReplicaPendingOps(clock, self.config.event_timeout_ms)
        containers.add_replica_listener(PendingOpsReplicaListener(self.pending_ops))
        self.metrics = ReplicationManagerMetrics()
        self.pending_ops.subscribe(self.metrics.pending_op_completed)
        self.pending_ops.subscribe(self._on_pending_op_done)
        self.sender = ReplicationCommandSender(
            nodes, self.pending_ops, self.config, clock, self.metrics, inflight_limit=self.inflight_limit
        )
        self.services = ReplicationServices(
            self.config,
            clock,
            events,
            nodes,
            containers,
            pipelines,
            self.sender,
            self.pending_ops,
            self.metrics,
            rng,
        )
        self.queue = ReplicationQueue()
        self.report = ReplicationManagerReport(self.config.container_sample_limit)
        # Only non-HEALTHY containers are kept: a million healthy entries would say nothing.
        self._health: dict[ContainerID, ContainerHealthState] = {}
        self._running = True
        self._was_ready = False
        self.under_processor = UnderReplicatedProcessor(
            lambda: self.queue,
            lambda result: handle_under_replicated(result, self.services),
            self.inflight_limit,
            self.pending_ops.pending_add_count,
            self.should_run,
            self.metrics,
        )
        self.over_processor = OverReplicatedProcessor(
            lambda: self.queue,
            lambda result: handle_over_replicated(result, self.services),
            self.inflight_limit,
            self.pending_ops.pending_add_count,
            self.should_run,
            self.metrics,
        )
        c = self.config
        self.scan_task = PeriodicTask(
            "ReplicationMonitor", c.thread_interval_ms, self.process_all, self.should_run
        )
        self.tasks = [
            self.scan_task,
            PeriodicTask(
                "UnderReplicatedProcessor",
                c.under_replicated_interval_ms,
                self.process_under_replicated,
                self.should_run,
            ),
            PeriodicTask(
                "OverReplicatedProcessor",
                c.over_replicated_interval_ms,
                self.process_over_replicated,
                self.should_run,
            ),
            PeriodicTask(
                "ExpiredContainerReplicaOpScrubber",
                c.expired_replica_op_scrub_interval_ms,
                self.scrub_pending_ops,
                self._services_ready,
            ),
        ]
        events.add_handler(SCMEvent.REPLICATION_MANAGER_NOTIFY, self.on_node_notify)
        events.add_handler(SCMEvent.DATANODE_COMMAND_COUNT_UPDATED, self.sender.on_command_counts_updated)

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> None:
        """`replicationmanager start`: resume scanning and repairing (nothing is lost while stopped)."""
        if not self._running:
            log.info("Starting the Replication Manager")
        self._running = True

    def stop(self) -> None:
        """`replicationmanager stop`: no scans, no repairs; pending ops still complete from reports."""
        if self._running:
            log.info("Stopping the Replication Manager")
        self._running = False

    def is_running(self) -> bool:
        return self._running

    def should_run(self) -> bool:
        """Running, and SCM out of safe mode for the wait time (spec 9.4, 10.1). On becoming ready the
        pending-op table is cleared: commands of an earlier term are void."""
        ready = self._services_ready()
        if ready and not self._was_ready:
            log.info("Replication Manager ready: clearing pending replica operations")
            self.pending_ops.clear()
        self._was_ready = ready
        return ready and self._running

    # ------------------------------------------------------------------ check stage
    def process_all(self) -> ReplicationManagerReport:
        """The full scan (spec 10.1): every container in id order through the chain, into a new report
        and a new queue, which then replace the old ones (stale entries vanish)."""
        scanned = self.containers.containers()
        # Lifecycle states counted in one C-speed pass, the report seeded with them (Ozone counts
        # each container as it goes; the totals are the same).
        lifecycle = Counter(map(attrgetter("state"), scanned))
        report = ReplicationManagerReport.from_dict(
            {
                "sampleLimit": self.config.container_sample_limit,
                "stats": {state.name: n for state, n in lifecycle.items()},
            }
        )
        queue = ReplicationQueue()
        health: dict[ContainerID, ContainerHealthState] = {}
        plainly_healthy = self._plainly_healthy()
        replicas_of = self.containers.replicas
        for container in scanned:
            replicas = replicas_of(container.container_id)
            if plainly_healthy(container, replicas):
                continue
            state = self._check(container, replicas, report, queue, read_only=False)
            if state is not HEALTHY:
                health[container.container_id] = state
        report.set_complete(self.clock.wall_ms())
        self.queue, self.report, self._health = queue, report, health
        log.info(
            "Replication Manager scanned %d containers: %d under-, %d over-replicated queued",
            len(scanned),
            queue.under_size(),
            queue.over_size(),
        )
        return report

    def check_container_status(
        self, container_id: ContainerID, report: ReplicationManagerReport | None = None
    ) -> ContainerHealthState:
        """The read-only check (spec 10.2) of block deletion, the admin monitor and admin tools: the same
        chain into `report` (a fresh one by default), no commands, no state changes, nothing queued."""
        container = self.containers.get(container_id)
        report = (
            report if report is not None else ReplicationManagerReport(self.config.container_sample_limit)
        )
        return self._check(
            container, self.containers.replicas(container_id), report, NullQueue(), read_only=True
        )

    def healthy_enough_for_offline(
        self, container: ContainerInfo, replicas: tuple[ContainerReplica, ...]
    ) -> bool:
        """The admin monitor's question for a node leaving service (replication/offline.py)."""
        return healthy_enough_for_offline(container, replicas, self._node_status)

    def _node_status(self, dn: DatanodeID) -> NodeStatus | None:
        info = self.nodes.get(dn)
        return None if info is None else info.status

    def container_health(self, container_id: ContainerID) -> ContainerHealthState:
        """The health the last check of the container found (HEALTHY if never found otherwise)."""
        return self._health.get(container_id, HEALTHY)

    def check_containers(self, container_ids: Iterable[ContainerID]) -> None:
        """A targeted check: these containers through the chain now, repairs into the current queue.
        The published report stays the last full scan's (a partial count would mislead)."""
        scratch = ReplicationManagerReport(self.config.container_sample_limit)
        for container_id in sorted(container_ids):
            container = self.containers.find(container_id)
            if container is None:
                continue
            replicas = self.containers.replicas(container_id)
            state = self._check(container, replicas, scratch, self.queue, read_only=False)
            if state is HEALTHY:
                self._health.pop(container_id, None)
            else:
                self._health[container_id] = state

    def _check(
        self,
        container: ContainerInfo,
        replicas: tuple[ContainerReplica, ...],
        report: ReplicationManagerReport,
        queue: ReplicationQueue,
        read_only: bool,
    ) -> ContainerHealthState:
        """processContainer (spec 10.2): maintenance redundancy by type, then the chain."""
        config = self.config
        if container.replication_config.type is ReplicationType.EC:
            redundancy = config.maintenance_remaining_redundancy
        else:
            redundancy = config.maintenance_replica_minimum
        request = ContainerCheckRequest(
            container,
            replicas,
            tuple(self.pending_ops.ops(container.container_id)),
            report,
            queue,
            redundancy,
            read_only,
        )
        return run_chain(request, self.services)

    def _plainly_healthy(self) -> PlainTest:
        """The scan's shortcut (plainly_healthy.py), over a snapshot of the nodes taken now."""
        infos = self.nodes.nodes()
        topology = self.nodes.topology
        racks = {i.uuid: topology.rack_of(i.uuid) for i in infos} if topology.rack_count() > 1 else None
        leaving = frozenset(i.uuid for i in infos if not i.status.is_in_service())
        return plainly_healthy_test(leaving, frozenset(self.pending_ops.containers()), racks)

    # ------------------------------------------------------------------ processing stage
    def process_under_replicated(self) -> None:
        """One scheduled iteration of the under-replication processor. The ops-per-node counts
        (node_ops.py) are the iteration's own, so they start from zero; the passes a dead or leaving
        node triggers in between (on_node_notify) add to the current iteration's counts instead, or a
        burst of node events would reset them again and again."""
        self.sender.node_ops.reset()
        self.under_processor.process_all()

    def process_over_replicated(self) -> None:
        self.over_processor.process_all()

    def inflight_limit(self) -> int:
        """Spec 10.7: the cluster cap on pending ADDs (0: none)."""
        return cluster_inflight_limit(self.nodes, self.config)

    # ------------------------------------------------------------------ events and pending ops
    def on_node_notify(self, payload: NotifyPayload) -> None:
        """REPLICATION_MANAGER_NOTIFY: a node died or changed its persisted operational state.

        Its containers are checked and repaired now. Ozone's own rule (spec 10.1) applies as well: if
        the queue was empty, the full scan is woken early (it runs on the next tick)."""
        if not self.should_run():
            return
        if isinstance(payload, tuple):
            dn, container_ids = payload
        else:
            dn, container_ids = payload, self.nodes.containers(payload)
        queue_was_empty = self.queue.is_empty()
        log.info("Datanode %s changed: checking its %d containers now", dn, len(container_ids))
        self.check_containers(container_ids)
        self.under_processor.process_all()
        self.process_over_replicated()
        if queue_was_empty:
            self.scan_task.next_due_ms = self.clock.now_ms()

    def scrub_pending_ops(self) -> None:
        self.pending_ops.remove_expired()

    def _on_pending_op_done(self, op: PendingOp, container_id: ContainerID, timed_out: bool) -> None:
        """A timed-out DELETE is resent with a fresh deadline (spec 10.8); a timed-out ADD is dropped
        and left for the next scan to find again."""
        if timed_out and op.type is PendingOpType.DELETE:
            self.sender.resend_delete(container_id, op)
