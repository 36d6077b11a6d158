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
from pyozone.datanode.storage import ContainerError, ContainerSet, Result, VolumeSet
from pyozone.datanode.storage.volume import MinFreeSpace
from pyozone.hdds.ids import BlockID
from pyozone.protocol.heartbeat import storage_report_from_proto, storage_report_to_proto
from tests.unit.datanode.storage.dn_helpers import CLUSTER, DN_UUID, chunk_for, payload, write_block

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
    volumes = VolumeSet(OzoneConfiguration(values | conf), DN_UUID, CLUSTER)
    return volumes, ContainerSet(volumes)


def test_the_floor_is_the_larger_of_the_size_and_the_percent() -> None:
    defaults = MinFreeSpace.from_conf(OzoneConfiguration())
    assert defaults == MinFreeSpace(20 * GB, 0.02)  # Ozone's defaults
    assert defaults.floor(100 * GB) == 20 * GB and defaults.floor(2000 * GB) == 40 * GB
    conf = OzoneConfiguration(
        {"hdds.datanode.volume.min.free.space": "1GB", "hdds.datanode.volume.min.free.space.percent": "0.1"}
    )
    assert MinFreeSpace.from_conf(conf).floor(100 * GB) == 10 * GB
    assert MinFreeSpace.from_conf(conf).floor(5 * GB) == 1 * GB


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
    low.reserved_bytes = 4 * MB + 1  # 8 MB - 1 B left to write on it: under its 8 MB floor
    assert low.is_full and not roomy.is_full
    assert {containers.create(cid, DN_UUID, "p1").volume.root for cid in (1, 2, 3)} == {roomy.root}
    volumes.close()
