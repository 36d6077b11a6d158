"""Reports: periodic ones on their intervals, incremental ones at once, container actions, command
statuses, and a failed volume reported while the datanode keeps running."""

from __future__ import annotations

import asyncio
import itertools
import shutil
import time
from pathlib import Path

from pyozone.datanode import reports as reports_module
from pyozone.datanode.reports import PendingReports, Periodic
from pyozone.datanode.settings import ReportSettings
from pyozone.hdds.messages import (
    CommandStatusReport,
    ContainerAction,
    ContainerActionReason,
    ContainerReplicaReport,
    DeleteBlockTransactionResult,
)
from pyozone.hdds.states import CommandStatus, ReplicaState, SCMCommandType
from tests.polling import wait_for_async
from tests.unit.datanode.dnd_helpers import FakeScm, async_test, dn_conf, running, wait_for_beat


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _pending(scms: tuple[str, ...] = ("",)) -> tuple[PendingReports, FakeClock]:
    clock = FakeClock()
    settings = ReportSettings(
        node_interval_ms=10_000,
        container_interval_ms=60_000,
        pipeline_interval_ms=20_000,
        command_status_interval_ms=30_000,
    )
    return PendingReports(settings, clock, scms), clock


def test_each_scm_of_a_service_is_owed_every_report_on_its_own() -> None:
    """One outbox per SCM (Ozone's StateContext per endpoint): what one SCM's heartbeat took or failed to
    deliver does not change what another is owed."""
    reports, clock = _pending(("scm1", "scm2"))
    for scm in reports.scms:
        reports.mark_sent(frozenset(Periodic), scm=scm)
    icr = ContainerReplicaReport(1, ReplicaState.CLOSING)
    reports.replica_changed(icr)
    reports.add_container_action(ContainerAction(1, ContainerActionReason.CONTAINER_FULL))
    taken = reports.take("scm1")
    assert taken.incremental == (icr,) and len(taken.actions) == 1
    reports.put_back(taken, "scm1")  # scm1 did not answer
    assert reports.take("scm2").incremental == (icr,)
    assert reports.take("scm2").incremental == ()
    assert reports.take("scm1").incremental == (icr,)
    clock.now += 10
    assert reports.take("scm1").periodic == {Periodic.NODE}
    reports.request(Periodic.PIPELINES)
    assert reports.take("scm1").periodic == {Periodic.PIPELINES}
    assert reports.take("scm2").periodic == {Periodic.NODE, Periodic.PIPELINES}


def test_an_outbox_past_its_bound_owes_a_full_container_report_instead(monkeypatch) -> None:
    """An SCM down long under writes: its incremental reports are replaced by one full report, which
    carries every replica's latest state; the other SCM keeps its own."""
    monkeypatch.setattr(reports_module, "MAX_INCREMENTAL", 3)
    reports, _ = _pending(("scm1", "scm2"))
    for scm in reports.scms:
        reports.mark_sent(frozenset(Periodic), scm=scm)
    for cid in range(3):
        reports.replica_changed(ContainerReplicaReport(cid, ReplicaState.CLOSED))
    assert len(reports.take("scm2").incremental) == 3
    reports.replica_changed(ContainerReplicaReport(3, ReplicaState.CLOSED))
    owed = reports.take("scm1")
    assert owed.incremental == () and owed.periodic == {Periodic.CONTAINERS}
    assert [r.container_id for r in reports.take("scm2").incremental] == [3]


def test_the_final_statuses_owed_to_an_scm_are_bounded_oldest_first(monkeypatch) -> None:
    """Review R22 D1: delete acknowledgements owed to an SCM down for hours grew without bound, and once
    above a heartbeat's 16 MiB that SCM refused every heartbeat for good. The newest is always kept."""
    monkeypatch.setattr(reports_module, "MAX_OWED_RESULTS", 5)
    reports, _ = _pending(("scm1", "scm2"))

    def acked(command_id: int, results: int) -> CommandStatusReport:
        acks = tuple(DeleteBlockTransactionResult(t, 1, True) for t in range(results))
        return CommandStatusReport(
            command_id, SCMCommandType.deleteBlocksCommand, CommandStatus.EXECUTED, acks
        )

    pending = CommandStatusReport(9, SCMCommandType.deleteBlocksCommand, CommandStatus.PENDING)
    reports.set_command_status(pending)
    for command_id in (1, 2, 3):
        reports.set_command_status(acked(command_id, 2))
    assert [s.command_id for s in reports.take("scm1").statuses] == [9, 2, 3]
    reports.set_command_status(acked(4, 7))  # alone above the bound: kept, the older ones dropped
    assert [s.command_id for s in reports.take("scm1").statuses] == [4]
    taken = reports.take("scm2")
    assert [s.command_id for s in taken.statuses] == [9, 4]
    reports.put_back(taken, "scm2")
    assert [s.command_id for s in reports.take("scm2").statuses] == [4]  # the PENDING one at its interval


def test_periodic_reports_come_due_on_their_intervals() -> None:
    reports, clock = _pending()
    reports.mark_sent(frozenset(Periodic))
    assert reports.take().periodic == frozenset()
    clock.now += 10
    assert reports.take().periodic == {Periodic.NODE}
    clock.now += 10
    assert reports.take().periodic == {Periodic.NODE, Periodic.PIPELINES}
    reports.request(Periodic.CONTAINERS)
    assert reports.take().periodic == {Periodic.CONTAINERS}


def test_a_report_requested_while_the_registration_was_in_flight_stays_due() -> None:
    """Issue 28, defect 16 (a flaky test found it): a full volume asked for the node report while the
    registration, built before the volume filled, was in flight; marking the registration's reports sent
    pushed the urgent one an interval away, so SCM heard of the full volume an hour late."""
    reports, clock = _pending()
    built_at = reports.now()
    clock.now += 1
    reports.volume_full()
    reports.mark_sent(frozenset(Periodic), built_at)
    assert reports.take().periodic == {Periodic.NODE}


def test_incremental_reports_keep_every_change_in_order_and_ask_for_a_heartbeat() -> None:
    reports, _ = _pending()
    urgent: list[bool] = []
    reports.on_urgent = lambda: urgent.append(True)
    reports.replica_changed(ContainerReplicaReport(1, ReplicaState.OPEN))
    reports.replica_changed(ContainerReplicaReport(2, ReplicaState.OPEN))
    reports.replica_changed(ContainerReplicaReport(1, ReplicaState.CLOSING))
    assert len(urgent) == 3
    out = reports.take()
    assert [(r.container_id, r.state) for r in out.incremental] == [
        (1, ReplicaState.OPEN),
        (2, ReplicaState.OPEN),
        (1, ReplicaState.CLOSING),
    ]
    assert reports.take().incremental == ()


def test_a_failed_heartbeat_puts_everything_back_before_newer_changes() -> None:
    reports, _ = _pending()
    reports.mark_sent(frozenset(Periodic))
    reports.replica_changed(ContainerReplicaReport(1, ReplicaState.OPEN))
    reports.replica_changed(ContainerReplicaReport(2, ReplicaState.OPEN))
    reports.add_container_action(ContainerAction(1, ContainerActionReason.CONTAINER_FULL))
    reports.set_command_status(
        CommandStatusReport(7, SCMCommandType.deleteBlocksCommand, CommandStatus.EXECUTED)
    )
    reports.request(Periodic.NODE)
    out = reports.take()
    reports.replica_changed(ContainerReplicaReport(2, ReplicaState.CLOSING))  # newer than what failed
    reports.put_back(out)
    again = reports.take()
    assert again.periodic == {Periodic.NODE}
    assert [(r.container_id, r.state) for r in again.incremental] == [
        (1, ReplicaState.OPEN),
        (2, ReplicaState.OPEN),
        (2, ReplicaState.CLOSING),
    ]
    assert again.actions == out.actions and again.statuses == out.statuses


def test_pending_statuses_repeat_on_their_interval_final_ones_go_once() -> None:
    reports, clock = _pending()
    pending = CommandStatusReport(1, SCMCommandType.deleteBlocksCommand, CommandStatus.PENDING)
    reports.set_command_status(pending)
    assert reports.take().statuses == (pending,)
    clock.now += 5
    assert reports.take().statuses == ()
    clock.now += 30
    assert reports.take().statuses == (pending,)
    done = CommandStatusReport(1, SCMCommandType.deleteBlocksCommand, CommandStatus.EXECUTED)
    reports.set_command_status(done)
    assert reports.take().statuses == (done,)
    clock.now += 60
    assert reports.take().statuses == ()


def test_container_actions_are_queued_once() -> None:
    reports, _ = _pending()
    action = ContainerAction(3, ContainerActionReason.CONTAINER_FULL)
    reports.add_container_action(action)
    reports.add_container_action(action)
    assert reports.take().actions == (action,)
    assert reports.take().actions == ()


# ---------------------------------------------------------------------- against the fake SCM
@async_test
async def test_reports_go_on_their_intervals(tmp_path: Path, scm: FakeScm) -> None:
    conf = dn_conf(
        tmp_path,
        scm.address,
        **{
            "hdds.heartbeat.interval": "40ms",
            "hdds.node.report.interval": "300ms",
            "hdds.pipeline.report.interval": "450ms",
            "hdds.container.report.interval": "600ms",
        },
    )
    async with running(conf):
        await wait_for_async(lambda: scm.registrations, what="registration")
        registered_at = time.monotonic()

        def three_of_each() -> bool:
            beats = [hb for at, hb in scm.beat_times() if at >= registered_at]
            names = ("node_report", "pipeline_reports", "container_report")
            return all(sum(getattr(hb, name) is not None for hb in beats) >= 3 for name in names)

        await wait_for_async(three_of_each, what="three reports of each kind")
    beats = [(at, hb) for at, hb in scm.beat_times() if at >= registered_at]
    for name, interval in (("node_report", 0.3), ("pipeline_reports", 0.45), ("container_report", 0.6)):
        times = [at for at, hb in beats if getattr(hb, name) is not None]
        assert len(times) >= 2, name
        # times as the fake SCM received them, so loose bounds: each report on its own interval, not on
        # every 40 ms heartbeat
        assert all(b - a >= interval * 0.5 for a, b in itertools.pairwise(times)), (name, times)
        assert all(b - a <= interval + 0.6 for a, b in itertools.pairwise(times)), (name, times)
    assert any(hb.node_report is None for _, hb in beats)


@async_test
async def test_a_replica_change_is_reported_at_once(tmp_path: Path, scm: FakeScm) -> None:
    conf = dn_conf(tmp_path, scm.address, **{"hdds.heartbeat.interval": "30s"})
    async with running(conf) as dn:
        await wait_for_async(lambda: scm.registrations, what="registration")
        started = time.monotonic()
        container = await asyncio.to_thread(dn.containers.create, 11, dn.uuid, "p1")
        hb = await wait_for_beat(scm, lambda hb: hb.incremental_container_reports, timeout=5)
        assert time.monotonic() - started < 5  # the heartbeat interval is 30 s
        assert [(r.container_id, r.state) for r in hb.incremental_container_reports] == [
            (11, ReplicaState.OPEN)
        ]
        await asyncio.to_thread(container.mark_closing)
        hb = await wait_for_beat(
            scm, lambda hb: any(r.state is ReplicaState.CLOSING for r in hb.incremental_container_reports)
        )
        assert hb.incremental_container_reports[0].container_id == 11


@async_test
async def test_a_full_containers_first_close_action_goes_at_once(tmp_path: Path, scm: FakeScm) -> None:
    """Ozone's HddsDispatcher triggers a heartbeat the first time a container asks to close, so SCM stops
    placing blocks in it before the next interval (30 s here)."""
    conf = dn_conf(tmp_path, scm.address, **{"hdds.heartbeat.interval": "30s"})
    async with running(conf) as dn:
        await wait_for_async(lambda: scm.registrations, what="registration")
        await asyncio.to_thread(dn.containers.create, 13, dn.uuid, "p1")
        await wait_for_beat(scm, lambda hb: hb.incremental_container_reports, timeout=5)
        started = time.monotonic()
        dn.dispatcher.on_container_full(13)
        hb = await wait_for_beat(scm, lambda hb: hb.container_actions, since=started, timeout=5)
        assert hb.container_actions == (ContainerAction(13, ContainerActionReason.CONTAINER_FULL),)
        assert time.monotonic() - started < 5


@async_test
async def test_container_actions_for_full_and_unhealthy_replicas(tmp_path: Path, scm: FakeScm) -> None:
    async with running(dn_conf(tmp_path, scm.address)) as dn:
        await wait_for_async(lambda: scm.registrations, what="registration")
        container = await asyncio.to_thread(dn.containers.create, 12, dn.uuid, "p1")
        dn.dispatcher.on_container_full(12)
        hb = await wait_for_beat(scm, lambda hb: hb.container_actions)
        assert hb.container_actions == (ContainerAction(12, ContainerActionReason.CONTAINER_FULL),)
        since = time.monotonic()
        await asyncio.to_thread(container.mark_unhealthy, "test damage")
        # The incremental report triggers an immediate heartbeat, so the action may ride the next one.
        await wait_for_beat(
            scm,
            lambda hb: ContainerAction(12, ContainerActionReason.CONTAINER_UNHEALTHY) in hb.container_actions,
            since,
        )
        await wait_for_beat(
            scm,
            lambda hb: (
                (12, ReplicaState.UNHEALTHY)
                in [(r.container_id, r.state) for r in hb.incremental_container_reports]
            ),
            since,
        )


@async_test
async def test_a_failed_volume_is_reported_and_the_datanode_goes_on(tmp_path: Path, scm: FakeScm) -> None:
    conf = dn_conf(tmp_path, scm.address, **{"hdds.node.report.interval": "200ms"})
    async with running(conf) as dn:
        await wait_for_async(lambda: scm.registrations, what="registration")
        first = await asyncio.to_thread(dn.containers.create, 1, dn.uuid, "p1")
        second = await asyncio.to_thread(dn.containers.create, 2, dn.uuid, "p1")
        assert first.volume is not second.volume  # round robin over the two disks
        doomed = second.volume.root
        shutil.move(doomed, tmp_path / "pulled-disk")
        doomed.write_text("a file where the disk was")
        since = time.monotonic()
        hb = await wait_for_beat(
            scm,
            lambda hb: hb.node_report is not None and any(s.failed for s in hb.node_report.storage),
            since,
        )
        failed = [s.location for s in hb.node_report.storage if s.failed]
        assert failed == [str(doomed)]
        hb = await wait_for_beat(scm, lambda hb: hb.container_report is not None, since)
        assert [r.container_id for r in hb.container_report] == [1]
        count = len(scm.beats())
        await wait_for_async(lambda: len(scm.beats()) > count + 2, what="heartbeats after the failure")
        assert dn.registered and len(dn.volumes.healthy_volumes()) == 1
        third = await asyncio.to_thread(dn.containers.create, 3, dn.uuid, "p1")
        assert third.volume is first.volume


def test_a_full_volume_sends_the_node_report_at_once_at_most_once_per_heartbeat_interval() -> None:
    """Issue 28, defect 16: SCM heard of a full volume only with the next periodic node report, and built
    a pipeline on the node every 10 s meanwhile. A full volume makes the node report due now and asks for
    a heartbeat (Ozone's HddsDispatcher.handleFullVolume); a burst of refusals asks once per heartbeat
    interval."""
    reports, clock = _pending()
    urgent: list[bool] = []
    reports.on_urgent = lambda: urgent.append(True)
    reports.mark_sent(frozenset(Periodic))
    reports.volume_full()
    assert reports.take().periodic == {Periodic.NODE} and urgent == [True]
    clock.now += 1
    reports.volume_full()  # within the heartbeat interval (30 s by default): the report already went
    assert reports.take().periodic == frozenset() and urgent == [True]
    clock.now += 30
    reports.volume_full()
    assert Periodic.NODE in reports.take().periodic and urgent == [True, True]
