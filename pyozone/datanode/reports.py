"""What the datanode owes SCM on its next heartbeats (Ozone's StateContext report queues).

Periodic reports (node, full container, pipeline) become due on their intervals or when something asks
for one; incremental container reports, container actions and command statuses accumulate between
heartbeats. A heartbeat takes what is due; if it fails, everything it took is put back, so SCM misses
nothing while it is unreachable. Replicas and command handlers change state on worker threads, so every
method is thread-safe; `on_urgent` asks the heartbeat loop for an immediate heartbeat.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from pyozone.config import OzoneConfiguration
from pyozone.hdds.messages import CommandStatusReport, ContainerAction, ContainerReplicaReport, PipelineAction
from pyozone.hdds.states import CommandStatus


class Periodic(Enum):
    NODE = "hdds.node.report.interval"
    CONTAINERS = "hdds.container.report.interval"
    PIPELINES = "hdds.pipeline.report.interval"


STATUS_INTERVAL_KEY = "hdds.command.status.report.interval"
HEARTBEAT_INTERVAL_KEY = "hdds.heartbeat.interval"


@dataclass(frozen=True, slots=True)
class Outgoing:
    """What one heartbeat carries besides its always-present parts."""

    periodic: frozenset[Periodic]
    incremental: tuple[ContainerReplicaReport, ...]
    statuses: tuple[CommandStatusReport, ...]
    actions: tuple[ContainerAction, ...]
    pipeline_actions: tuple[PipelineAction, ...] = ()


class PendingReports:
    def __init__(self, conf: OzoneConfiguration, clock: Callable[[], float] = time.monotonic) -> None:
        self._intervals_s = {p: conf.get(p.value) / 1000 for p in Periodic}
        self._status_interval_s = conf.get(STATUS_INTERVAL_KEY) / 1000
        self._full_volume_throttle_s = conf.get(HEARTBEAT_INTERVAL_KEY) / 1000
        self._clock = clock
        self._lock = threading.Lock()
        now = clock()
        self._next_due = {p: now for p in Periodic}
        self._next_pending_status = now
        self._next_full_volume_report = now
        self._incremental: list[ContainerReplicaReport] = []
        self._statuses: dict[int, CommandStatusReport] = {}
        self._actions: dict[ContainerAction, None] = {}
        self._pipeline_actions: dict[str, PipelineAction] = {}
        self.on_urgent: Callable[[], None] = lambda: None

    # ------------------------------------------------------------------ producers
    def replica_changed(self, report: ContainerReplicaReport) -> None:
        """An incremental report, sent at once (Ozone triggers a heartbeat for every ICR). Every change is
        kept, in order: SCM moves a container one step per report (OPEN -> CLOSING on a CLOSING replica,
        then CLOSED on a CLOSED one), so CLOSING then CLOSED must not collapse into CLOSED."""
        with self._lock:
            self._incremental.append(report)
        self.on_urgent()

    def add_container_action(self, action: ContainerAction) -> None:
        """Queued once until sent (Ozone's addContainerActionIfAbsent); goes with the next heartbeat."""
        with self._lock:
            self._actions[action] = None

    def add_pipeline_action(self, action: PipelineAction) -> None:
        """A pipeline member failed: SCM should close the pipeline. Sent at once, one per pipeline."""
        with self._lock:
            self._pipeline_actions.setdefault(action.pipeline_id, action)
        self.on_urgent()

    def set_command_status(self, status: CommandStatusReport) -> None:
        """PENDING statuses are re-sent every status interval; a final one goes with the next heartbeat."""
        with self._lock:
            self._statuses[status.command_id] = status

    def request(self, report: Periodic, urgent: bool = False) -> None:
        with self._lock:
            self._next_due[report] = self._clock()
        if urgent:
            self.on_urgent()

    def volume_full(self) -> None:
        """A data volume is full (a write or a new container refused for space, or a write that left it
        full): the node report goes now, so SCM stops placing pipelines and containers here at once
        rather than at the next node report (Ozone's HddsDispatcher.handleFullVolume). At most once per
        heartbeat interval: a burst of refused writes is one report, and the periodic ones follow."""
        with self._lock:
            now = self._clock()
            if now < self._next_full_volume_report:
                return
            self._next_full_volume_report = now + self._full_volume_throttle_s
            self._next_due[Periodic.NODE] = now
        self.on_urgent()

    def now(self) -> float:
        """The reports' clock: what `mark_sent`'s `built_at` is read on."""
        return self._clock()

    def mark_sent(self, reports: frozenset[Periodic], built_at: float | None = None) -> None:
        """Registration carried these reports, built at `built_at`: their intervals restart now, except
        a report asked for since they were built (a full volume's node report requested while the
        registration was in flight stays due, or SCM would hear of the full volume an interval late)."""
        with self._lock:
            if built_at is not None:
                reports = frozenset(r for r in reports if self._next_due[r] <= built_at)
            self._restart(reports, self._clock())

    def _restart(self, reports: frozenset[Periodic], now: float) -> None:
        for report in reports:
            self._next_due[report] = now + self._intervals_s[report]

    # ------------------------------------------------------------------ the heartbeat
    def take(self) -> Outgoing:
        with self._lock:
            now = self._clock()
            due = frozenset(p for p, at in self._next_due.items() if now >= at)
            self._restart(due, now)
            send_pending = now >= self._next_pending_status
            if send_pending:
                self._next_pending_status = now + self._status_interval_s
            statuses = tuple(
                s for s in self._statuses.values() if send_pending or s.status is not CommandStatus.PENDING
            )
            for s in statuses:
                if s.status is not CommandStatus.PENDING:
                    del self._statuses[s.command_id]
            outgoing = Outgoing(
                due,
                tuple(self._incremental),
                statuses,
                tuple(self._actions),
                tuple(self._pipeline_actions.values()),
            )
            self._incremental.clear()
            self._actions.clear()
            self._pipeline_actions.clear()
        return outgoing

    def put_back(self, outgoing: Outgoing) -> None:
        """A heartbeat failed: whatever it carried is owed again (final statuses: unless replaced)."""
        with self._lock:
            for report in outgoing.periodic:
                self._next_due[report] = self._clock()
            self._incremental[:0] = outgoing.incremental  # before the changes made since
            for status in outgoing.statuses:
                self._statuses.setdefault(status.command_id, status)
            for action in outgoing.actions:
                self._actions[action] = None
            for pipeline_action in outgoing.pipeline_actions:
                self._pipeline_actions.setdefault(pipeline_action.pipeline_id, pipeline_action)
