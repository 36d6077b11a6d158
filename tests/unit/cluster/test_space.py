"""`cluster up` on a disk without room for its datanodes (issue 28 defect 18): it stalled until its timeout
with a message that never mentioned space. It now says so before anything starts, naming the keys to lower,
and a timeout names the datanodes SCM lists without room. Ozone's defaults stay as they are."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import NamedTuple

import pytest

from pyozone.cli import cluster as cluster_cli
from pyozone.cli.main import main
from pyozone.cluster import space, supervisor
from pyozone.cluster.layout import plan_cluster
from pyozone.config.site import load_configuration
from pyozone.hdds.datanode import DatanodeDetails, DatanodeInfo, LayoutVersion, NodeReport, StorageReport
from pyozone.hdds.node_status import NodeStatus
from pyozone.hdds.states import NodeOperationalState, NodeState
from pyozone.protocol.admin_records import DatanodeListing

GB = 1 << 30
DISK = 252 * GB  # Ozone's defaults on it: a 20 GB floor (2 % is less), 5 GB containers


class Usage(NamedTuple):
    total: int
    used: int
    free: int


def disk_with(monkeypatch: pytest.MonkeyPatch, free: int) -> None:
    monkeypatch.setattr(shutil, "disk_usage", lambda _path: Usage(DISK, DISK - free, free))


def test_cluster_up_refuses_a_disk_without_a_container_above_the_floor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    disk_with(monkeypatch, free=24 * GB)  # 4 GB above the floor: SCM would never open a pipeline
    started: list[str] = []
    monkeypatch.setattr(supervisor, "start", lambda _state, name: started.append(name))
    assert main(["cluster", "up", "--data-dir", str(tmp_path / "c"), "--timeout", "1"]) != 0
    err = capsys.readouterr().err
    assert "not enough free space for the datanodes" in err and "24.0 GB free for 3 datanode volume(s)" in err
    for key in (
        "hdds.datanode.volume.min.free.space",
        "hdds.datanode.volume.min.free.space.percent",
        "ozone.scm.container.size",
    ):
        assert key in err
    assert started == []  # refused before any daemon starts (and before SCM's init)


def test_a_disk_that_opens_pipelines_but_cannot_fill_a_container_each_is_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = plan_cluster(tmp_path, 3, 1, {})
    disk_with(monkeypatch, free=30 * GB)  # 10 GB above the floor: one container, not three
    disks = space.datanode_disks(state)
    assert [(d.volumes, d.floor, d.container_size) for d in disks] == [(3, 20 * GB, 5 * GB)]
    assert space.space_refusal(disks) is None
    assert "before each datanode fills one container" in (space.space_warning(disks) or "")
    disk_with(monkeypatch, free=40 * GB)
    assert space.space_warning(space.datanode_disks(state)) is None
    state = plan_cluster(tmp_path / "small", 3, 1, {"hdds.datanode.volume.min.free.space": "1GB",
                                                     "ozone.scm.container.size": "1GB"})  # fmt: skip
    disk_with(monkeypatch, free=24 * GB)  # lowered keys: room again (2 % of 252 GB is the floor now)
    assert space.space_refusal(space.datanode_disks(state)) is None


def listing(name: str, remaining: int) -> DatanodeListing:
    report = NodeReport((StorageReport("vol", "/data", DISK, DISK - remaining, remaining),))
    status = NodeStatus(NodeOperationalState.IN_SERVICE, NodeState.HEALTHY)
    info = DatanodeInfo(DatanodeDetails(name, name, "127.0.0.1"), status, 0, 0, LayoutVersion(1, 1), report)
    return DatanodeListing.of(info)


class FakeAdmin:
    def __init__(self, nodes: list[DatanodeListing]) -> None:
        self.nodes = nodes

    def datanodes(self) -> list[DatanodeListing]:
        return self.nodes


def test_a_timeout_names_the_datanodes_scm_lists_without_room(tmp_path: Path) -> None:
    state = plan_cluster(tmp_path, 2, 1, {})
    conf = load_configuration(Path(state.conf_dir), {})
    assert space.nodes_without_room([listing("dn1", 24 * GB), listing("dn2", 60 * GB)], conf) == ["dn1"]
    hint = cluster_cli._space_hint(state, FakeAdmin([listing("dn1", 24 * GB)]))  # type: ignore[arg-type]
    assert "without room for a container above their free-space floor (dn1)" in hint
    assert "hdds.datanode.volume.min.free.space" in hint
    assert cluster_cli._space_hint(state, FakeAdmin([listing("dn1", 60 * GB)])) == ""  # type: ignore[arg-type]
