"""Volumes: format, reload, refusal of foreign disks, health probe, reports and volume choice."""

from __future__ import annotations

import errno
import os
import shutil
import stat
from pathlib import Path

import pytest

from pyozone.config import ConfigError, OzoneConfiguration
from pyozone.datanode.storage import ContainerError, HddsVolume, Result, VolumeState
from pyozone.datanode.storage.container_files import io_error
from pyozone.datanode.storage.volume_db import DBError
from pyozone.hdds.version_file import parse_properties
from tests.unit.datanode.storage.dn_helpers import CLUSTER, DN_UUID, make_conf, open_node, volume_set


def loaded(root: Path, cluster: str = CLUSTER, dn: str = DN_UUID, reserved: int = 0) -> HddsVolume:
    volume = HddsVolume(root, 0o700, reserved)
    volume.load(cluster, dn)
    return volume


def test_format_writes_version_and_layout(tmp_path: Path) -> None:
    volume = loaded(tmp_path / "disk")
    props = parse_properties((tmp_path / "disk/hdds/VERSION").read_text())
    assert props["clusterID"] == CLUSTER and props["datanodeUuid"] == DN_UUID
    assert props["storageID"].startswith("DS-") and props["storageID"] == volume.storage_id
    assert props["layOutVersion"] == "1" and props["storageType"] == "DISK" and props["cTime"].isdigit()
    assert volume.state is VolumeState.NORMAL
    assert (tmp_path / f"disk/hdds/{CLUSTER}/current").is_dir()
    assert (tmp_path / f"disk/hdds/{CLUSTER}/db/CURRENT").is_file()
    assert volume.container_dir(1023) == tmp_path / f"disk/hdds/{CLUSTER}/current/containerDir1/1023"
    assert volume.container_dir(511).parent.name == "containerDir0"
    volume.close()


def test_reload_keeps_identity(tmp_path: Path) -> None:
    first = loaded(tmp_path / "disk")
    first.close()
    version = (tmp_path / "disk/hdds/VERSION").read_bytes()
    again = loaded(tmp_path / "disk")
    assert again.storage_id == first.storage_id and again.state is VolumeState.NORMAL
    assert (tmp_path / "disk/hdds/VERSION").read_bytes() == version
    again.close()


@pytest.mark.parametrize(
    ("cluster", "dn", "words"),
    [("CID-other", DN_UUID, "belongs to cluster " + CLUSTER), (CLUSTER, "another-dn", "belongs to datanode")],
)
def test_foreign_volume_is_refused_never_reformatted(
    tmp_path: Path, cluster: str, dn: str, words: str
) -> None:
    loaded(tmp_path / "disk").close()
    version = (tmp_path / "disk/hdds/VERSION").read_bytes()
    volume = loaded(tmp_path / "disk", cluster, dn)
    assert volume.state is VolumeState.FAILED and words in volume.failure_reason
    assert (tmp_path / "disk/hdds/VERSION").read_bytes() == version
    assert volume.report().failed and volume.available() == 0
    with pytest.raises(Exception, match="not loaded"):
        _ = volume.db


def test_data_without_version_is_refused(tmp_path: Path) -> None:
    (tmp_path / "disk/hdds/CID-x/current").mkdir(parents=True)
    volume = loaded(tmp_path / "disk")
    assert volume.is_failed and "no VERSION" in volume.failure_reason
    assert not (tmp_path / "disk/hdds/VERSION").exists()


def test_corrupt_version_is_refused(tmp_path: Path) -> None:
    (tmp_path / "disk/hdds").mkdir(parents=True)
    (tmp_path / "disk/hdds/VERSION").write_text("clusterID=" + CLUSTER + "\n")
    volume = loaded(tmp_path / "disk")
    assert volume.is_failed and "missing field storageID" in volume.failure_reason


def test_root_that_is_a_file_fails(tmp_path: Path) -> None:
    (tmp_path / "disk").write_text("not a directory")
    assert loaded(tmp_path / "disk").is_failed


def test_check_passes_and_leaves_nothing(tmp_path: Path) -> None:
    volume = loaded(tmp_path / "disk")
    assert volume.check()
    assert list(volume.probe_dir.iterdir()) == []
    volume.close()


def test_check_failure_marks_failed(tmp_path: Path) -> None:
    volume = loaded(tmp_path / "disk")
    shutil.rmtree(volume.tmp_dir)
    volume.tmp_dir.write_text("a file where the tmp directory should be")
    assert not volume.check()
    assert volume.state is VolumeState.FAILED and "disk check failed" in volume.failure_reason
    assert not volume.check()  # failure is sticky
    volume.close()


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EDQUOT])
def test_no_space_for_the_probe_is_a_full_volume_not_a_failed_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int
) -> None:
    volume = loaded(tmp_path / "disk")

    def no_space(fd: int) -> None:
        raise OSError(code, os.strerror(code))

    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", no_space)
    assert volume.check()
    assert volume.state is VolumeState.NORMAL and volume.failure_reason == ""
    # free bytes may remain (no inodes left, a full quota), but no new data fits: the volume is full
    report = volume.report()
    assert not report.failed and report.remaining == 0 and volume.is_full
    assert list(volume.probe_dir.iterdir()) == []
    monkeypatch.setattr(os, "fsync", real_fsync)
    assert volume.check()
    assert volume.report().remaining > 0 and not volume.is_full  # space is back, no restart
    volume.close()


def test_an_io_error_in_the_probe_still_fails_the_volume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    volume = loaded(tmp_path / "disk")

    def broken(fd: int) -> None:
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(os, "fsync", broken)
    assert not volume.check()
    assert volume.is_failed and "Input/output error" in volume.failure_reason
    volume.close()


@pytest.mark.parametrize(
    "error",
    [OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)), DBError("put: IO error: No space left on device")],
)
def test_no_space_in_a_write_is_disk_out_of_space_and_fails_nothing(tmp_path: Path, error: Exception) -> None:
    volume = loaded(tmp_path / "disk")
    assert io_error(volume, "write chunk", error).result is Result.DISK_OUT_OF_SPACE
    assert not volume.is_failed
    volume.close()


def test_report_tracks_used_incrementally(tmp_path: Path) -> None:
    volume = loaded(tmp_path / "disk", reserved=1 << 20)
    report = volume.report()
    assert report.storage_uuid == volume.storage_id and report.location == str(tmp_path / "disk")
    assert report.capacity > 0 and report.used == 0 and not report.failed
    assert 0 < report.remaining <= shutil.disk_usage(tmp_path).free  # the disk's other users hold > 1 MB
    volume.add_used(5000)
    volume.add_used(-1000)
    assert volume.report().used == 4000
    volume.close()


def test_reserved_space_makes_a_volume_full(tmp_path: Path) -> None:
    volume = loaded(tmp_path / "disk", reserved=1 << 62)
    assert volume.is_full and volume.report().remaining == 0 and not volume.is_failed
    volume.close()


MB = 1 << 20


def test_reserved_space_covers_the_disks_other_users_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ozone's VolumeUsage.getRemainingReserved: two volumes on one 100 MB disk (30 MB free, 10 MB of it
    held by one volume, 60 MB by others) with 80 MB reserved each report their own data: capacity 20 MB,
    remaining 20 MB - used. Reserved below what the others hold leaves the disk's free space."""
    usage = shutil.disk_usage(tmp_path)
    monkeypatch.setattr(shutil, "disk_usage", lambda _: usage._replace(total=100 * MB, free=30 * MB))
    full, empty = loaded(tmp_path / "a", reserved=80 * MB), loaded(tmp_path / "b", reserved=80 * MB)
    full.add_used(10 * MB)
    assert [(v.report().capacity, v.report().remaining) for v in (full, empty)] == [
        (20 * MB, 10 * MB),
        (20 * MB, 20 * MB),
    ]
    for reserved in (0, 50 * MB):
        full.reserved_bytes = reserved
        assert full.report().remaining == 30 * MB
    full.close()
    empty.close()


def test_a_full_volume_takes_no_container_until_space_returns(tmp_path: Path) -> None:
    node = open_node(tmp_path, disks=1)
    volume = node.volumes.data_volumes[0]
    volume.reserved_bytes = 1 << 62  # what a filled disk reads as
    assert node.volumes.full_volumes() == [volume] and not volume.is_failed
    with pytest.raises(ContainerError, match="out of space") as e:
        node.volumes.choose_volume()
    assert e.value.result is Result.DISK_OUT_OF_SPACE
    volume.reserved_bytes = 0  # the filler is removed: no restart needed
    assert node.volumes.full_volumes() == [] and node.volumes.choose_volume() is volume
    node.close()


def test_missing_data_dirs_key_is_named(tmp_path: Path) -> None:
    conf = OzoneConfiguration({"ozone.metadata.dirs": str(tmp_path / "meta")})
    with pytest.raises(ConfigError, match=r"hdds\.datanode\.dir is not set"):
        volume_set(conf)
    conf = OzoneConfiguration({"hdds.datanode.dir": str(tmp_path / "d")})
    with pytest.raises(ConfigError, match=r"ozone\.metadata\.dirs is not set"):
        volume_set(conf)


def test_volume_set_loads_reports_and_round_robins(tmp_path: Path) -> None:
    node = open_node(tmp_path, disks=3)
    vs = node.volumes
    assert [v.root.name for v in vs.data_volumes] == ["disk0", "disk1", "disk2"]
    assert [vs.choose_volume().root.name for _ in range(4)] == ["disk0", "disk1", "disk2", "disk0"]
    report = vs.node_report()
    assert len(report.storage) == 3 and len(report.metadata_storage) == 1
    assert report.metadata_storage[0].location == str(tmp_path / "meta")
    vs.data_volumes[1].mark_failed("test")
    assert [vs.choose_volume().root.name for _ in range(3)] == ["disk2", "disk0", "disk2"]
    assert vs.node_report().storage[1].failed
    node.close()


def test_data_and_metadata_dirs_are_private_to_the_datanode(tmp_path: Path) -> None:
    """Chunks (hdds dir, hdds.datanode.data.dir.permissions 700) and pipeline logs (ozone.metadata.dirs,
    750) are not for other local users, whose reads would bypass tokens and ACLs; an existing volume is
    set again at start."""
    node = open_node(tmp_path, disks=2)
    modes = {p: stat.S_IMODE(p.stat().st_mode) for p in (tmp_path / "disk0/hdds", tmp_path / "meta")}
    assert modes == {tmp_path / "disk0/hdds": 0o700, tmp_path / "meta": 0o750}
    node.close()
    (tmp_path / "disk1/hdds").chmod(0o755)
    conf = make_conf(tmp_path, disks=2)
    conf.set("hdds.datanode.data.dir.permissions", "rwxr-x---")
    vs = volume_set(conf)
    assert stat.S_IMODE((tmp_path / "disk1/hdds").stat().st_mode) == 0o750
    vs.close()


def test_volume_set_keeps_a_foreign_disk_failed_and_uses_the_rest(tmp_path: Path) -> None:
    open_node(tmp_path, disks=1, cluster="CID-old").close()
    conf = make_conf(tmp_path, disks=2)
    vs = volume_set(conf)
    assert [v.is_failed for v in vs.data_volumes] == [True, False]
    assert vs.choose_volume().root.name == "disk1"
    vs.close()


def test_no_room_or_no_volume_is_a_clear_error(tmp_path: Path) -> None:
    node = open_node(tmp_path, disks=2)
    with pytest.raises(ContainerError, match="out of space") as e:
        node.volumes.choose_volume(1 << 62)
    assert e.value.result is Result.DISK_OUT_OF_SPACE
    for v in node.volumes.data_volumes:
        v.mark_failed("broken disk")
    with pytest.raises(ContainerError, match=r"no healthy data volume.*broken disk"):
        node.volumes.choose_volume()
    node.close()


def test_check_volumes_returns_the_newly_failed(tmp_path: Path) -> None:
    node = open_node(tmp_path, disks=2)
    bad = node.volumes.data_volumes[0]
    shutil.rmtree(bad.tmp_dir)
    bad.tmp_dir.write_text("x")
    assert node.volumes.check_volumes() == [bad]
    assert node.volumes.check_volumes() == []
    node.close()


def test_a_second_datanode_on_the_same_disk_is_refused(tmp_path: Path) -> None:
    first = loaded(tmp_path / "disk")
    staged = first.tmp_dir / "import-in-progress"
    staged.mkdir()
    second = loaded(tmp_path / "disk")
    assert second.is_failed and "lock" in second.failure_reason.lower()
    assert staged.is_dir()  # the running datanode's work is untouched
    first.close()
