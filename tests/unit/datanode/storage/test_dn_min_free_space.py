"""A data volume's free-space floor and committed bytes (issue 28, defect 18).

A datanode wrote until its disk had no byte left. Each data volume now keeps
hdds.datanode.volume.min.free.space (or its percent of the capacity, whichever is larger) free: a write
that would cross it is DISK_OUT_OF_SPACE, and a new container needs usable space (free less the floor less
what open containers were promised) above its size. The node report carries both to SCM. The disk is
simulated (shutil.disk_usage), so the tests do not depend on the host's free space.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import pytest

from pyozone.config import OzoneConfiguration
from pyozone.datanode.settings import DatanodeSettings, MinFreeSpace
from pyozone.datanode.storage import ContainerError, ContainerSet, KeyValueContainer, Result, VolumeSet
from pyozone.datanode.storage.archive import ExportStream
from pyozone.datanode.storage.archive_import import ContainerImporter
from pyozone.hdds.ids import BlockID
from pyozone.hdds.states import ReplicaState
from pyozone.protocol.heartbeat import storage_report_from_proto, storage_report_to_proto
from tests.unit.datanode.storage.dn_helpers import (
    DN_UUID,
    chunk_for,
    open_node,
    payload,
    volume_set,
    write_block,
)

MB = 1 << 20
GB = 1 << 30


class Usage(NamedTuple):
    total: int
    used: int
    free: int


class Disk:
    """What shutil.disk_usage answers for every volume: a 100 MB disk with `free` bytes free."""

    def __init__(self, free: int) -> None:
        self.total, self.free = 100 * MB, free

    def usage(self, _path: object) -> Usage:
        return Usage(self.total, self.total - self.free, self.free)


@pytest.fixture
def disk(monkeypatch: pytest.MonkeyPatch) -> Iterator[Disk]:
    fake = Disk(free=12 * MB)
    monkeypatch.setattr(shutil, "disk_usage", fake.usage)
    yield fake


def open_set(root: Path, disks: int = 1, **conf: str) -> tuple[VolumeSet, ContainerSet]:
    values = {
        "hdds.datanode.dir": ",".join(str(root / f"disk{i}") for i in range(disks)),
        "ozone.metadata.dirs": str(root / "meta"),
        "ozone.scm.container.size": "1MB",
        "hdds.datanode.volume.min.free.space": "8MB",
        "hdds.datanode.volume.min.free.space.percent": "0",
    }
    volumes = volume_set(OzoneConfiguration(values | conf))
    return volumes, ContainerSet(volumes)


def test_the_floor_is_the_larger_of_the_size_and_the_percent() -> None:
    defaults = DatanodeSettings.from_conf(OzoneConfiguration()).space.min_free
    assert defaults == MinFreeSpace(20 * GB, 0.02)  # Ozone's defaults
    assert defaults.floor(100 * GB) == 20 * GB and defaults.floor(2000 * GB) == 40 * GB
    conf = OzoneConfiguration(
        {"hdds.datanode.volume.min.free.space": "1GB", "hdds.datanode.volume.min.free.space.percent": "0.1"}
    )
    floor = DatanodeSettings.from_conf(conf).space.min_free
    assert floor.floor(100 * GB) == 10 * GB
    assert floor.floor(5 * GB) == 1 * GB


def test_a_write_that_would_cross_the_floor_is_disk_out_of_space(tmp_path: Path, disk: Disk) -> None:
    volumes, containers = open_set(tmp_path)
    [volume] = volumes.data_volumes
    container = containers.create(1, DN_UUID, "p1")
    write_block(container, 1, (4096,), bcsid=1)
    assert not volume.is_full and volume.free_space_to_spare == 8 * MB

    disk.free = 8 * MB + 100  # another process fills the disk down to 100 B above the floor
    data = payload(2, 4096)
    with pytest.raises(ContainerError, match="free-space floor") as refused:
        container.write_chunk(BlockID(1, 2), chunk_for(data, "2_chunk_0"), data)
    assert refused.value.result is Result.DISK_OUT_OF_SPACE
    assert volume.is_full and volumes.full_volumes() == [volume] and not volume.is_failed
    assert container.used_bytes == 4096  # nothing of the refused write counted

    disk.free = 20 * MB  # space returns: writes go on, no restart
    container.write_chunk(BlockID(1, 2), chunk_for(data, "2_chunk_0"), data)
    assert not volume.is_full
    volumes.close()


def test_open_containers_commit_their_size_and_keep_new_containers_out(tmp_path: Path, disk: Disk) -> None:
    volumes, containers = open_set(tmp_path)
    [volume] = volumes.data_volumes
    # 12 MB free, 8 MB floor: 4 MB usable, so three 1 MB containers fit (each needs more than 1 MB usable)
    opened = [containers.create(cid, DN_UUID, "p1") for cid in (1, 2, 3)]
    assert volume.committed == 3 * MB
    with pytest.raises(ContainerError, match="usable space") as refused:
        containers.create(4, DN_UUID, "p1")
    assert refused.value.result is Result.DISK_OUT_OF_SPACE

    write_block(opened[0], 1, (256 * 1024,), bcsid=1)
    assert volume.committed == 3 * MB - 256 * 1024  # written bytes are no longer owed
    opened[1].mark_closing()  # leaving OPEN gives its promise back (Ozone's releaseCommitSpace)
    assert volume.committed == 2 * MB - 256 * 1024
    containers.create(4, DN_UUID, "p1")
    containers.delete(3, force=True)
    assert volume.committed == 2 * MB - 256 * 1024
    opened[0].delete_blocks(1, [1])  # an open container whose block is deleted may write that much again
    assert volume.committed == 2 * MB

    report = volume.report()
    assert (report.committed, report.free_space_to_spare) == (2 * MB, 8 * MB)
    assert report.usable == report.remaining - report.committed - 8 * MB
    assert storage_report_from_proto(storage_report_to_proto(report)) == report  # SCM sees both
    volumes.close()


def test_a_restarted_datanode_commits_the_space_of_its_open_containers(tmp_path: Path, disk: Disk) -> None:
    volumes, containers = open_set(tmp_path)
    write_block(containers.create(1, DN_UUID, "p1"), 1, (4096,), bcsid=1)
    closed = containers.create(2, DN_UUID, "p1")
    closed.mark_closing()
    closed.close()
    volumes.close()

    volumes, _ = open_set(tmp_path)
    assert volumes.data_volumes[0].committed == MB - 4096
    volumes.close()


def test_new_containers_go_to_the_volume_above_its_floor(tmp_path: Path, disk: Disk) -> None:
    volumes, containers = open_set(tmp_path, disks=2)
    low, roomy = volumes.data_volumes
    low.reserved_bytes = 88 * MB + 4 * MB + 1  # beyond the disk's 88 MB other users: 8 MB - 1 B left,
    # under its 8 MB floor
    assert low.is_full and not roomy.is_full
    assert {containers.create(cid, DN_UUID, "p1").volume.root for cid in (1, 2, 3)} == {roomy.root}
    volumes.close()


def closed_replica(root: Path, cid: int) -> KeyValueContainer:
    """A closed replica of `cid` on another datanode (no floor), to export."""
    source = open_node(root, dn_uuid="99999999-2222-3333-4444-555555555555")
    container = source.containers.create(cid, "origin", "p1")
    write_block(container, 1, (300_000,), bcsid=1)
    container.mark_closing()
    container.close()
    return container


def test_a_replication_import_reserves_twice_the_container_size(tmp_path: Path, disk: Disk) -> None:
    """Concurrent imports (up to hdds.datanode.replication.streams.limit) each passed one usable-space
    check and none reserved anything, so together they crossed the floor (Ozone's ContainerImporter holds
    2 x the container size on the volume's committed bytes for the import's duration)."""
    volumes, containers = open_set(tmp_path)
    [volume] = volumes.data_volumes
    disk.free = 8 * MB + 5 * MB // 2  # 2.5 MB above the 8 MB floor: room for one import of 2 x 1 MB
    replicas = [closed_replica(tmp_path / f"src{cid}", cid) for cid in (41, 42, 43)]

    first = ContainerImporter(containers, 41)
    assert volume.committed == 2 * MB
    with pytest.raises(ContainerError, match="usable space") as refused:
        ContainerImporter(containers, 42)
    assert refused.value.result is Result.DISK_OUT_OF_SPACE
    assert volume.committed == 2 * MB

    stream = ExportStream(replicas[0], 64 << 10)
    for piece in stream:
        first.feed(piece)
    assert stream.sha256 is not None
    first.finish(stream.sha256)
    assert 41 in containers and volume.committed == 0  # a CLOSED replica is owed nothing more

    failed = ContainerImporter(containers, 42)
    with pytest.raises(ContainerError, match="bad tar header"):
        failed.feed(b"\x01" * 512)  # the import fails and gives its room back
    assert volume.committed == 0 and 42 not in containers
    ContainerImporter(containers, 43).abort()
    assert volume.committed == 0
    volumes.close()


def test_an_ec_reconstruction_target_commits_its_size(tmp_path: Path, disk: Disk) -> None:
    """A RECOVERING replica is written like an open one: it holds its size on the volume, so concurrent
    reconstructions (and new containers) do not take the same room, and gives it back when closed."""
    volumes, containers = open_set(tmp_path)
    [volume] = volumes.data_volumes
    disk.free = 8 * MB + 5 * MB // 2  # room for two 1 MB containers
    recovering = [containers.create(cid, DN_UUID, "p1", state=ReplicaState.RECOVERING) for cid in (1, 2)]
    assert volume.committed == 2 * MB
    with pytest.raises(ContainerError, match="usable space"):
        containers.create(3, DN_UUID, "p1", state=ReplicaState.RECOVERING)
    write_block(recovering[0], 1, (4096,), bcsid=1)
    assert volume.committed == 2 * MB - 4096
    recovering[0].close()
    containers.delete(2, force=True)
    assert volume.committed == 0
    volumes.close()
