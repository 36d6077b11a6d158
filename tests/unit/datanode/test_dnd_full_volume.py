"""A datanode whose only data volume fills up (issue 11, defect 3): the disk check's ENOSPC finds the volume
full, not failed. Its CLOSED replica stays readable and reported, writes and new containers are refused
with DISK_OUT_OF_SPACE, the open container asks to close, and once space returns the volume takes writes
again with no restart. "Full" is the free-space reading (the reserved space raised past the disk's size)
plus a disk check whose probe fsync fails with ENOSPC, as on a filled disk."""

from __future__ import annotations

import asyncio
import errno
import os
import time
from pathlib import Path

import pytest

from pyozone.config import OzoneConfiguration
from pyozone.datanode.storage import ContainerError, KeyValueContainer, Result
from pyozone.hdds.messages import ContainerAction, ContainerActionReason, Heartbeat
from pyozone.hdds.states import ReplicaState
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from tests.polling import wait_for_async
from tests.unit.datanode.dnd_helpers import FakeScm, async_test, dn_conf, running, wait_for_beat
from tests.unit.datanode.dns_helpers import PIPELINE, chunk, put, read, write

DATA = b"a block written before the disk filled" * 50


def _volume_reported(full: bool) -> object:
    def matches(hb: Heartbeat) -> bool:
        if hb.node_report is None:
            return False
        [storage] = hb.node_report.storage
        return not storage.failed and (storage.remaining == 0) == full

    return matches


def _closed_replica_reported(hb: Heartbeat) -> bool:
    return (1, ReplicaState.CLOSED) in [(r.container_id, r.state) for r in hb.container_report or ()]


@async_test
async def test_a_full_volume_keeps_its_replicas_and_takes_writes_again_when_space_returns(
    tmp_path: Path, scm: FakeScm, monkeypatch: pytest.MonkeyPatch
) -> None:
    conf = dn_conf(
        tmp_path,
        scm.address,
        **{
            "hdds.datanode.dir": str(tmp_path / "disk0"),
            "hdds.node.report.interval": "100ms",  # also the disk check's interval
            "hdds.container.report.interval": "100ms",
        },
    )
    real_fsync, probes = os.fsync, []

    def fsync_on_a_full_disk(fd: int) -> None:
        if "disk-check" in os.readlink(f"/proc/self/fd/{fd}"):
            probes.append(fd)
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real_fsync(fd)

    async with running(conf) as dn:
        [volume] = dn.volumes.data_volumes
        info = chunk("1_chunk_0", 0, DATA)

        def dispatch(request: pb.ContainerCommandRequestProto) -> pb.ContainerCommandResponseProto:
            return dn.dispatcher.dispatch(request)

        def new_container(cid: int) -> KeyValueContainer:
            return dn.containers.create(cid, dn.uuid, PIPELINE)

        closed = await asyncio.to_thread(new_container, 1)
        await asyncio.to_thread(new_container, 2)
        for request in (write(1, 1, info, DATA), put(1, 1, [info])):
            assert (await asyncio.to_thread(dispatch, request)).result == pb.SUCCESS
        await asyncio.to_thread(lambda: closed.mark_closing() and closed.close())

        volume.reserved_bytes = 1 << 62  # the disk fills
        monkeypatch.setattr(os, "fsync", fsync_on_a_full_disk)
        await wait_for_async(lambda: len(probes) >= 2, what="two disk checks on the full disk")
        assert not volume.is_failed and 1 in dn.containers and 2 in dn.containers
        since = time.monotonic()
        await wait_for_beat(scm, _volume_reported(full=True), since)
        await wait_for_beat(scm, _closed_replica_reported, since)

        answer = await asyncio.to_thread(dispatch, read(1, 1, info))
        assert answer.result == pb.SUCCESS and answer.readChunk.data == DATA
        more = chunk("2_chunk_0", 0, DATA)
        answer = await asyncio.to_thread(dispatch, write(2, 2, more, DATA))
        assert answer.result == pb.DISK_OUT_OF_SPACE, answer
        with pytest.raises(ContainerError) as refused:
            await asyncio.to_thread(new_container, 3)
        assert refused.value.result is Result.DISK_OUT_OF_SPACE
        full_action = ContainerAction(2, ContainerActionReason.CONTAINER_FULL)
        await wait_for_beat(scm, lambda hb: full_action in hb.container_actions, since)

        volume.reserved_bytes = 0  # the filler is removed
        monkeypatch.setattr(os, "fsync", real_fsync)
        await wait_for_beat(scm, _volume_reported(full=False), time.monotonic())
        for request in (write(2, 2, more, DATA), put(2, 2, [more])):
            assert (await asyncio.to_thread(dispatch, request)).result == pb.SUCCESS
        await asyncio.to_thread(new_container, 3)
        assert not volume.is_failed and dn.containers.require(1).state is ReplicaState.CLOSED


def _report_hourly(tmp_path: Path, scm: FakeScm) -> OzoneConfiguration:
    """One data volume; node reports (and disk checks) an hour apart, so only an urgent one comes."""
    return dn_conf(
        tmp_path,
        scm.address,
        **{"hdds.datanode.dir": str(tmp_path / "disk0"), "hdds.node.report.interval": "1h"},
    )


@async_test
async def test_a_write_refused_for_space_reports_the_full_volume_at_once(
    tmp_path: Path, scm: FakeScm
) -> None:
    """Issue 28, defect 16: SCM heard of a full volume only at the next node report and went on building
    pipelines on the node meanwhile. A write refused with DISK_OUT_OF_SPACE sends the node report now
    (Ozone's HddsDispatcher.handleFullVolume)."""
    async with running(_report_hourly(tmp_path, scm)) as dn:
        [volume] = dn.volumes.data_volumes
        await asyncio.to_thread(dn.containers.create, 1, dn.uuid, PIPELINE)
        volume.reserved_bytes = 1 << 62  # the disk fills
        since = time.monotonic()
        answer = await asyncio.to_thread(
            dn.dispatcher.dispatch, write(1, 1, chunk("1_chunk_0", 0, DATA), DATA)
        )
        assert answer.result == pb.DISK_OUT_OF_SPACE
        await wait_for_beat(scm, _volume_reported(full=True), since, timeout=5)


@async_test
async def test_a_container_refused_for_space_reports_the_full_volume_at_once(
    tmp_path: Path, scm: FakeScm
) -> None:
    """Issue 28, defect 16: the probe's pipelines failed their first write, the creation of their
    container on the full volume. That refusal sends the node report now, too."""
    async with running(_report_hourly(tmp_path, scm)) as dn:
        [volume] = dn.volumes.data_volumes
        volume.reserved_bytes = 1 << 62
        since = time.monotonic()
        with pytest.raises(ContainerError) as refused:
            await asyncio.to_thread(dn.containers.create, 1, dn.uuid, PIPELINE)
        assert refused.value.result is Result.DISK_OUT_OF_SPACE
        await wait_for_beat(scm, _volume_reported(full=True), since, timeout=5)
