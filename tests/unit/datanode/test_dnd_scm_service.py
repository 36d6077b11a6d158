"""A datanode of an SCM HA service reports to every SCM of it (Ozone's SCMConnectionManager), takes
commands from the leader's term alone, and rides out any SCM being down."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from pyozone.config import OzoneConfiguration
from pyozone.datanode.errors import DatanodeError
from pyozone.hdds.commands import CloseContainerCommand
from pyozone.hdds.messages import ContainerReplicaReport
from pyozone.hdds.states import ReplicaState, SCMCommandType
from tests.polling import wait_for_async
from tests.unit.datanode.dnd_helpers import FakeScm, async_test, dn_conf, new_datanode, running

SERVICE = "scmservice"


@pytest.fixture
def scms() -> Iterator[list[FakeScm]]:
    with ExitStack() as stack:
        yield [stack.enter_context(FakeScm()) for _ in range(3)]


def _service_conf(root: Path, scms: list[FakeScm]) -> OzoneConfiguration:
    """The datanode's configuration naming the three SCMs as one service (no lone SCM address)."""
    conf = dn_conf(
        root,
        "",
        **{
            "ozone.scm.service.ids": SERVICE,
            f"ozone.scm.nodes.{SERVICE}": "scm1,scm2,scm3",
            **{f"ozone.scm.address.{SERVICE}.scm{i}": "127.0.0.1" for i in (1, 2, 3)},
            **{f"ozone.scm.datanode.port.{SERVICE}.scm{i}": str(s.port) for i, s in enumerate(scms, 1)},
        },
    )
    return conf


@async_test
async def test_registers_and_heartbeats_with_every_scm_of_the_service(tmp_path: Path, scms: list[FakeScm]):
    async with running(_service_conf(tmp_path, scms)) as dn:
        await wait_for_async(lambda: all(len(s.beats()) >= 2 for s in scms), what="heartbeats to every SCM")
        for scm in scms:
            [registration] = scm.registrations
            assert registration.datanode.uuid == dn.uuid
        assert [s["node"] for s in dn.scm_connections.status()] == ["scm1", "scm2", "scm3"]
        await wait_for_async(
            lambda: all(s["registered"] and s["heartbeats"] >= 2 for s in dn.scm_connections.status()),
            what="every SCM's answers counted by the datanode",
        )


@async_test
async def test_every_scm_hears_every_incremental_report(tmp_path: Path, scms: list[FakeScm]):
    async with running(_service_conf(tmp_path, scms)) as dn:
        await wait_for_async(lambda: all(s.registrations for s in scms), what="registered everywhere")
        report = ContainerReplicaReport(4242, ReplicaState.CLOSED, origin_node_id=dn.uuid)
        dn.reports.replica_changed(report)
        for scm in scms:
            await wait_for_async(
                lambda s=scm: any(report in hb.incremental_container_reports for hb in s.beats()),
                what=f"the report at SCM {scm.address}",
            )


@async_test
async def test_an_scm_down_at_start_is_registered_with_once_it_answers(tmp_path: Path, scms: list[FakeScm]):
    """Its registration's full report supersedes what was queued for it meanwhile (review R22 D2: a queued
    report delivered after it would re-add a replica the full report left out, as Ozone's
    getFullContainerReportDiscardPendingICR prevents)."""
    scms[0].down = True
    async with running(_service_conf(tmp_path, scms)) as dn:
        await wait_for_async(lambda: scms[1].beats() and scms[2].beats(), what="the two SCMs that answer")
        assert dn.registered and not scms[0].registrations
        gone = ContainerReplicaReport(7, ReplicaState.CLOSED, origin_node_id=dn.uuid)
        dn.reports.replica_changed(gone)  # while scm1 is down; the replica is not in the datanode's set
        for scm in scms[1:]:
            await wait_for_async(
                lambda s=scm: any(gone in hb.incremental_container_reports for hb in s.beats()),
                what="the report at the SCMs that answer",
            )
        await wait_for_async(lambda: scms[0].refused >= 2, what="scm1 refused")
        scms[0].down = False
        await wait_for_async(lambda: len(scms[0].beats()) >= 3, what="heartbeats to scm1 once it answers")
        [registration] = scms[0].registrations
        assert all(r.container_id != 7 for r in registration.container_report)
        assert not any(gone in hb.incremental_container_reports for hb in scms[0].beats())


@async_test
async def test_a_deposed_leaders_commands_are_dropped(tmp_path: Path, scms: list[FakeScm]):
    """scm2 leads term 4; scm1, deposed in term 3 but still reaching the datanode, sends a command:
    dropped, as the new leader's term is newer."""
    scms[1].term = 4
    async with running(_service_conf(tmp_path, scms)) as dn:
        await wait_for_async(lambda: dn.queue.max_term == 4, what="term 4 heard from scm2")
        scms[0].term = 3
        stale = CloseContainerCommand(container_id=99, term=3)
        scms[0].send(stale)
        await wait_for_async(
            lambda: dn.queue.received[SCMCommandType.closeContainerCommand], what="the command"
        )
        [outcome] = [o for o in dn.queue.recent if o.command_id == stale.id]
        assert outcome.result == "dropped" and "older than the newest SCM term 4" in outcome.reason


@async_test
async def test_an_scm_of_another_cluster_is_fatal(tmp_path: Path, scms: list[FakeScm]):
    scms[2].cluster_id = "CID-other"
    scms[2].down = True  # the datanode learns its cluster from scm1 or scm2 first
    dn = new_datanode(_service_conf(tmp_path, scms))
    task = asyncio.create_task(dn.run(asyncio.Event()))
    await wait_for_async(lambda: dn.registered or task.done(), what="registered with scm1 and scm2")
    scms[2].down = False
    with pytest.raises(DatanodeError, match=r"SCM at 127\.0\.0\.1:\d+ manages cluster CID-other"):
        await asyncio.wait_for(task, 15)
