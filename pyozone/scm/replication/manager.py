"""ReplicationManager: the check stage, the processing stage and their schedule (Ozone's ReplicationManager).

The check stage walks every container through the handler chain, producing a report and a queue of
repairs; the processing stage drains the queue under the throttling rules (ReplicationManager's
sendThrottled*). Both are sans-IO: SCM's tick runs them through PeriodicTasks on the injected clock, so a
daemon and the simulator share one schedule.

Beyond Ozone's fixed schedule, a node that dies or leaves service gets its own containers checked and
repaired at once (issue 5; Ozone's HDDS-8660 idea), instead of waiting up to thread.interval for the
next full scan. The targeted check merges into the current queue; the full scan keeps its own interval
and still replaces the queue, so nothing targeted can starve or outlive it.

The periodic full scan runs in steps of SCAN_STEP containers, one step per SCM tick (issue 16): Ozone
runs it on its own thread, and pyozone's single-threaded core would otherwise answer nothing for the
seconds a million containers take. Until its last step the previous report, queue and health stay what
readers see; then the new ones replace them at once. `process_all()` is the same scan in one go.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Collection, Generator, Iterable, Sequence
from typing import TYPE_CHECKING

from pyozone.hdds.clock import Clock
from pyozone.hdds.container import ContainerInfo, ContainerReplica
from pyozone.hdds.container_health import ContainerHealthState
from pyozone.hdds.ids import ContainerID, DatanodeID
from pyozone.hdds.node_status import NodeStatus
from pyozone.hdds.replication_report import ReplicationManagerReport
from pyozone.hdds.states import LifeCycleState, ReplicationType
from pyozone.scm.events import EventQueue, SCMEvent
from pyozone.scm.periodic import MORE, PeriodicTask
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
from pyozone.scm.replication.replica_match import copies_a_delete_may_rely_on
from pyozone.scm.replication.services import ReplicationServices

if TYPE_CHECKING:
    from pyozone.scm.container.manager import ContainerManager
    from pyozone.scm.node.node_manager import NodeManager
    from pyozone.scm.pipeline.manager import PipelineManager

log = logging.getLogger(__name__)

HEALTHY = ContainerHealthState.HEALTHY
SCAN_STEP = 20_000
"""Containers the periodic full scan checks per SCM tick: about 50 ms of the event loop (a container
costs about 2.6 us when plainly healthy), so a million-container scan spans 50 ticks."""
NotifyPayload = DatanodeID | tuple[DatanodeID, Collection[ContainerID]]
"""REPLICATION_MANAGER_NOTIFY carries the node, and for a dead node the containers it held (its
replicas are already gone from SCM when the event fires)."""


class ReplicationManager:
    def __init__(
        self,
        config: ReplicationManagerConfig,
        clock: Clock,
        events: EventQueue,
        nodes: NodeManager,
        containers: ContainerManager,
        pipelines: PipelineManager,
        services_ready: Callable[[], bool],
        rng: random.Random,
    ) -> None:
        self.config = config
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
        # The periodic scan under way (None between scans), the last container it has passed, and the
        # containers a targeted check saw after the scan had passed them (checked again at its end).
        self._scan: Generator[ContainerID, None, ReplicationManagerReport] | None = None
        self._scan_upto: ContainerID = 0
        self._revisit: set[ContainerID] = set()
        self.under_processor = UnderReplicatedProcessor(
            lambda: self.queue,
            lambda result: handle_under_replicated(result, self.services),
            self.inflight_limit,
            self.pending_ops.inflight_add_count,
            self.should_run,
            self.metrics,
        )
        self.over_processor = OverReplicatedProcessor(
            lambda: self.queue,
            lambda result: handle_over_replicated(result, self.services),
            self.inflight_limit,
            self.pending_ops.inflight_add_count,
            self.should_run,
            self.metrics,
        )
        c = self.config
        self.scan_task = PeriodicTask(
            "ReplicationMonitor", c.thread_interval_ms, self._monitor, self.should_run
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
        """Running, and SCM out of safe mode for hdds.scm.wait.time.after.safemode.exit. On becoming ready the
        pending-op table is cleared: commands of an earlier term are void."""
        ready = self._services_ready()
        if ready and not self._was_ready:
            log.info("Replication Manager ready: clearing pending replica operations")
            self.pending_ops.clear()
        self._was_ready = ready
        return ready and self._running

    def clear_leader_state(self) -> None:
        """A step-down (Ozone's SCMStateMachine.notifyNotLeader): the queue, the scan under way and the
        pending replica operations were the deposed leader's; the next ready leader starts from the
        reports."""
        self.pending_ops.clear()
        self.queue = ReplicationQueue()
        self._scan = None
        self._scan_upto = 0
        self._revisit.clear()
        self._was_ready = False

    # ------------------------------------------------------------------ check stage
    def process_all(self) -> ReplicationManagerReport:
        """The full scan (ReplicationManager.processAll) in one go: every container in id order through the
        chain, into a new report and a new queue, which then replace the old ones (stale entries vanish). A
        periodic scan under way is left to go on (and publish when it ends)."""
        scan = self._full_scan(None)
        while True:
            try:
                next(scan)
            except StopIteration as done:
                report: ReplicationManagerReport = done.value
                return report

    def scan_in_progress(self) -> bool:
        """A periodic full scan has started and not yet published."""
        return self._scan is not None

    def _monitor(self) -> object:
        """The ReplicationMonitor task: starts a full scan, or runs the next step of the one under way;
        MORE until the scan has published."""
        if self._scan is None:
            self._revisit = set()
            self._scan = self._full_scan(SCAN_STEP, self._revisit)
        try:
            self._scan_upto = next(self._scan)
        except StopIteration:
            self._scan = None
            return None
        except BaseException:
            self._scan = None
            raise
        return MORE

    def _full_scan(
        self, step: int | None, revisit: Collection[ContainerID] = ()
    ) -> Generator[ContainerID, None, ReplicationManagerReport]:
        """The full scan (ReplicationManager.processAll): every container in id order through the chain, into
        a new report, queue and health map, which replace the old ones at once when it ends; returns the
        report.

        With a `step`, it yields after every `step` containers (the id of the last one passed) and goes
        on when resumed; without, it runs in one go. Between steps SCM goes on, so each step reads the
        nodes and pending ops afresh, and checks each container as it is when its turn comes: one deleted
        meanwhile is skipped, one added is left to the next scan. The report's lifecycle counts are the
        counts at the scan's start. Containers in `revisit` at the end (a targeted check saw them after
        the scan had passed them) are checked again into the new queue and health, not counted again.

        Resumed when SCM is no longer ready (out of safe mode long enough), the scan stops
        there and publishes what it found, as Ozone's does (its loop checks shouldRun() before each
        container and breaks); containers not reached keep their health. A stopped Replication Manager
        does not stop a scan: Ozone's stop() interrupts the monitor thread, which only ends its wait
        after the pass."""
        ids = self.containers.container_ids()
        count = self.containers.count
        report = ReplicationManagerReport.from_dict(
            {
                "sampleLimit": self.config.container_sample_limit,
                "stats": {state.name: count(state) for state in LifeCycleState},
            }
        )
        queue = ReplicationQueue()
        health: dict[ContainerID, ContainerHealthState] = {}
        size = step or max(len(ids), 1)
        for start in range(0, len(ids), size):
            if start:
                yield ids[start - 1]
                if not self._services_ready():
                    log.info("SCM is not ready: the full scan stops at container %d", ids[start])
                    health.update((cid, state) for cid, state in self._health.items() if cid >= ids[start])
                    break
            plainly_healthy = self._plainly_healthy()
            find, replicas_of = self.containers.find, self.containers.replicas
            for container in map(find, ids[start : start + size]):
                if container is None:
                    continue
                replicas = replicas_of(container.container_id)
                if plainly_healthy(container, replicas):
                    continue
                state = self._check(container, replicas, report, queue, read_only=False)
                if state is not HEALTHY:
                    health[container.container_id] = state
        else:
            if revisit:
                scratch = ReplicationManagerReport(self.config.container_sample_limit)
                self._check_into(sorted(revisit), scratch, queue, health)
        report.set_complete(self.clock.wall_ms())
        self.queue, self.report, self._health = queue, report, health
        log.info(
            "Replication Manager scanned %d containers: %d under-, %d over-replicated queued",
            len(ids),
            queue.under_size(),
            queue.over_size(),
        )
        return report

    def check_container_status(
        self, container_id: ContainerID, report: ReplicationManagerReport | None = None
    ) -> ContainerHealthState:
        """The read-only check (ReplicationManager.checkContainerStatus) of block deletion, the admin monitor
        and admin tools: the same chain into `report` (a fresh one by default), no commands, no state changes,
        nothing queued."""
        return self.replication_health(
            self.containers.get(container_id), self.containers.replicas(container_id), report
        )

    def replication_health(
        self,
        container: ContainerInfo,
        replicas: Sequence[ContainerReplica],
        report: ReplicationManagerReport | None = None,
    ) -> ContainerHealthState:
        """Ozone's getContainerReplicationHealth, for the balancer's moves: the chain's read-only verdict
        on `replicas` (as they are, or as a move would leave them) with the container's pending ops."""
        if report is None:
            report = ReplicationManagerReport(self.config.container_sample_limit)
        return self._check(container, tuple(replicas), report, NullQueue(), read_only=True)

    def copies_a_delete_may_rely_on(
        self, container: ContainerInfo, replicas: Sequence[ContainerReplica]
    ) -> list[ContainerReplica]:
        """The over-replication handlers' rule, for the balancer's source delete: only copies on
        heartbeating nodes (EC: in service too) count when a good copy is deleted as a spare."""
        return copies_a_delete_may_rely_on(container, replicas, self._node_status)

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
        ids = sorted(container_ids)
        if self._scan is not None:  # the scan under way found the ones it passed as they were before
            self._revisit.update(cid for cid in ids if cid <= self._scan_upto)
        scratch = ReplicationManagerReport(self.config.container_sample_limit)
        self._check_into(ids, scratch, self.queue, self._health)

    def _check_into(
        self,
        container_ids: Sequence[ContainerID],
        report: ReplicationManagerReport,
        queue: ReplicationQueue,
        health: dict[ContainerID, ContainerHealthState],
    ) -> None:
        for container_id in container_ids:
            container = self.containers.find(container_id)
            if container is None:
                continue
            replicas = self.containers.replicas(container_id)
            state = self._check(container, replicas, report, queue, read_only=False)
            if state is HEALTHY:
                health.pop(container_id, None)
            else:
                health[container_id] = state

    def _check(
        self,
        container: ContainerInfo,
        replicas: tuple[ContainerReplica, ...],
        report: ReplicationManagerReport,
        queue: ReplicationQueue,
        read_only: bool,
    ) -> ContainerHealthState:
        """Ozone's processContainer: maintenance redundancy by type, then the chain."""
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
        """hdds.scm.replication.inflight.limit.factor: the cluster cap on pending ADDs (0: none)."""
        return cluster_inflight_limit(self.nodes, self.config)

    # ------------------------------------------------------------------ events and pending ops
    def on_node_notify(self, payload: NotifyPayload) -> None:
        """REPLICATION_MANAGER_NOTIFY: a node died or changed its persisted operational state.

        Its containers are checked and repaired now. Ozone's own rule
        (ReplicationManager.notifyNodeStateChange) applies as well: if the queue was empty and no scan is
        under way, the full scan is woken early (it starts on the next tick)."""
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
        if queue_was_empty and self._scan is None:
            self.scan_task.next_due_ms = self.clock.now_ms()

    def scrub_pending_ops(self) -> None:
        self.pending_ops.remove_expired()

    def _on_pending_op_done(self, op: PendingOp, container_id: ContainerID, timed_out: bool) -> None:
        """A timed-out DELETE is resent with a fresh deadline (as Ozone's ContainerReplicaPendingOps); a
        timed-out ADD is dropped and left for the next scan to find again."""
        if timed_out and op.type is PendingOpType.DELETE:
            self.sender.resend_delete(container_id, op)
