"""What the datanode owes each SCM on its next heartbeats (Ozone's StateContext report queues).

Periodic reports (node, full container, pipeline) become due on their intervals or when something asks
for one; incremental container reports, container actions and command statuses accumulate between
heartbeats. A heartbeat takes what is due; if it fails, everything it took is put back, so SCM misses
nothing while it is unreachable. Replicas and command handlers change state on worker threads, so every
method is thread-safe; `on_urgent` asks the heartbeat loops for an immediate heartbeat.

A datanode of an SCM HA service reports to every SCM (Ozone's StateContext keeps one queue per SCM
endpoint): each SCM has its own outbox, every report goes into each, and each SCM's heartbeat loop takes
from its own, so an SCM that is down misses nothing of what the others heard. An outbox that piles up
more than MAX_INCREMENTAL incremental reports (its SCM down long under writes) drops them and owes its
SCM a full container report instead, which carries every replica's latest state; its final command
statuses are bounded likewise (MAX_OWED_RESULTS). A registration's full report discards the incremental
reports queued before it (Ozone's getFullContainerReportDiscardPendingICR): delivered after it, one would
re-add a replica the full report has just left out.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import Enum

from pyozone.datanode.settings import ReportSettings
from pyozone.hdds.messages import CommandStatusReport, ContainerAction, ContainerReplicaReport, PipelineAction
from pyozone.hdds.states import CommandStatus


class Periodic(Enum):
    NODE = "hdds.node.report.interval"
    CONTAINERS = "hdds.container.report.interval"
    PIPELINES = "hdds.pipeline.report.interval"


LONE_SCM = ""
"""The outbox of a datanode reporting to one SCM."""
MAX_INCREMENTAL = 10_000
"""Incremental reports one SCM's outbox keeps at most; past it a full container report replaces them."""
MAX_OWED_RESULTS = 500_000
"""Block-deletion results (one per delete transaction) the final command statuses of one SCM's outbox carry
at most, as many as one deleteBlocks command may (hdds.scm.block.deletion.per-interval.max's default):
about 6 MB, well within a heartbeat (16 MiB). Past it the oldest final statuses are dropped: an SCM down
that long gets nothing from them (only the leader acts on a status, and a new leader sends the
transactions it has no acknowledgement of again)."""


@dataclass(frozen=True, slots=True)
class Outgoing:
    """What one heartbeat carries besides its always-present parts."""

    periodic: frozenset[Periodic]
    incremental: tuple[ContainerReplicaReport, ...]
    statuses: tuple[CommandStatusReport, ...]
    actions: tuple[ContainerAction, ...]
    pipeline_actions: tuple[PipelineAction, ...] = ()


class _Outbox:
    """What one SCM is owed."""

    def __init__(self, now: float) -> None:
        self.next_due = {p: now for p in Periodic}
        self.next_pending_status = now
        self.incremental: list[ContainerReplicaReport] = []
        self.statuses: dict[int, CommandStatusReport] = {}
        self.actions: dict[ContainerAction, None] = {}
        self.pipeline_actions: dict[str, PipelineAction] = {}

    def add_incremental(
        self, reports: Iterable[ContainerReplicaReport], now: float, first: bool = False
    ) -> None:
        if first:
            self.incremental[:0] = reports
        else:
            self.incremental.extend(reports)
        if len(self.incremental) > MAX_INCREMENTAL:
            self.incremental.clear()
            self.next_due[Periodic.CONTAINERS] = now

    def add_status(self, status: CommandStatusReport, replace: bool = True) -> None:
        if replace or status.command_id not in self.statuses:
            self.statuses[status.command_id] = status
        finals = [s for s in self.statuses.values() if s.status is not CommandStatus.PENDING]
        owed = sum(len(s.block_deletion_results) for s in finals)
        for oldest in finals[:-1]:  # the newest is kept: a command SCM sent fits a heartbeat
            if owed <= MAX_OWED_RESULTS:
                break
            del self.statuses[oldest.command_id]
            owed -= len(oldest.block_deletion_results)


class PendingReports:
    def __init__(
        self,
        settings: ReportSettings,
        clock: Callable[[], float] = time.monotonic,
        scms: Iterable[str] = (LONE_SCM,),
    ) -> None:
        """`scms`: the outboxes, one per SCM the datanode reports to (by node id; LONE_SCM for a lone SCM)."""
        intervals_ms = {
            Periodic.NODE: settings.node_interval_ms,
            Periodic.CONTAINERS: settings.container_interval_ms,
            Periodic.PIPELINES: settings.pipeline_interval_ms,
        }
        self._intervals_s = {p: ms / 1000 for p, ms in intervals_ms.items()}
        self._status_interval_s = settings.command_status_interval_ms / 1000
        self._full_volume_throttle_s = settings.full_volume_interval_ms / 1000
        self._clock = clock
        self._lock = threading.Lock()
        now = clock()
        self._outboxes = {scm: _Outbox(now) for scm in scms}
        if not self._outboxes:
            raise ValueError("a datanode reports to at least one SCM")
        self._next_full_volume_report = now
        self.on_urgent: Callable[[], None] = lambda: None

    @property
    def scms(self) -> tuple[str, ...]:
        return tuple(self._outboxes)

    # ------------------------------------------------------------------ producers (every SCM's outbox)
    def replica_changed(self, report: ContainerReplicaReport) -> None:
        """An incremental report, sent at once (Ozone triggers a heartbeat for every ICR). Every change is
        kept, in order: SCM moves a container one step per report (OPEN -> CLOSING on a CLOSING replica,
        then CLOSED on a CLOSED one), so CLOSING then CLOSED must not collapse into CLOSED."""
        with self._lock:
            now = self._clock()
            for box in self._outboxes.values():
                box.add_incremental((report,), now)
        self.on_urgent()

    def add_container_action(self, action: ContainerAction) -> None:
        """Queued once until sent (Ozone's addContainerActionIfAbsent); goes with the next heartbeat."""
        with self._lock:
            for box in self._outboxes.values():
                box.actions[action] = None

    def add_pipeline_action(self, action: PipelineAction) -> None:
        """A pipeline member failed: SCM should close the pipeline. Sent at once, one per pipeline."""
        with self._lock:
            for box in self._outboxes.values():
                box.pipeline_actions.setdefault(action.pipeline_id, action)
        self.on_urgent()

    def set_command_status(self, status: CommandStatusReport) -> None:
        """PENDING statuses are re-sent every status interval; a final one goes with the next heartbeat.
        Every SCM hears it (Ozone's datanode reports to all); only the leader's core acts on it."""
        with self._lock:
            for box in self._outboxes.values():
                box.add_status(status)

    def request(self, report: Periodic, urgent: bool = False) -> None:
        with self._lock:
            now = self._clock()
            for box in self._outboxes.values():
                box.next_due[report] = now
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
            for box in self._outboxes.values():
                box.next_due[Periodic.NODE] = now
        self.on_urgent()

    def now(self) -> float:
        """The reports' clock: what `mark_sent`'s `built_at` is read on."""
        return self._clock()

    # ------------------------------------------------------------------ one SCM's heartbeat loop
    def mark_sent(
        self, reports: frozenset[Periodic], built_at: float | None = None, scm: str = LONE_SCM
    ) -> None:
        """Registration with `scm` carried these reports, built at `built_at`: their intervals restart now,
        except a report asked for since they were built (a full volume's node report requested while the
        registration was in flight stays due, or SCM would hear of the full volume an interval late)."""
        with self._lock:
            box = self._outboxes[scm]
            if built_at is not None:
                reports = frozenset(r for r in reports if box.next_due[r] <= built_at)
            self._restart(box, reports, self._clock())

    def discard_incremental(self, scm: str = LONE_SCM) -> None:
        """A full container report for `scm` is being built (its registration's): the incremental reports
        queued before it are superseded by it."""
        with self._lock:
            self._outboxes[scm].incremental.clear()

    def _restart(self, box: _Outbox, reports: frozenset[Periodic], now: float) -> None:
        for report in reports:
            box.next_due[report] = now + self._intervals_s[report]

    def take(self, scm: str = LONE_SCM) -> Outgoing:
        with self._lock:
            box = self._outboxes[scm]
            now = self._clock()
            due = frozenset(p for p, at in box.next_due.items() if now >= at)
            self._restart(box, due, now)
            send_pending = now >= box.next_pending_status
            if send_pending:
                box.next_pending_status = now + self._status_interval_s
            statuses = tuple(
                s for s in box.statuses.values() if send_pending or s.status is not CommandStatus.PENDING
            )
            for s in statuses:
                if s.status is not CommandStatus.PENDING:
                    del box.statuses[s.command_id]
            outgoing = Outgoing(
                due,
                tuple(box.incremental),
                statuses,
                tuple(box.actions),
                tuple(box.pipeline_actions.values()),
            )
            box.incremental.clear()
            box.actions.clear()
            box.pipeline_actions.clear()
        return outgoing

    def put_back(self, outgoing: Outgoing, scm: str = LONE_SCM) -> None:
        """A heartbeat to `scm` failed: whatever it carried is owed again (final statuses: unless
        replaced)."""
        with self._lock:
            box = self._outboxes[scm]
            now = self._clock()
            for report in outgoing.periodic:
                box.next_due[report] = now
            box.add_incremental(outgoing.incremental, now, first=True)  # before the changes made since
            for status in outgoing.statuses:
                box.add_status(status, replace=False)
            for action in outgoing.actions:
                box.actions[action] = None
            for pipeline_action in outgoing.pipeline_actions:
                box.pipeline_actions.setdefault(pipeline_action.pipeline_id, pipeline_action)
