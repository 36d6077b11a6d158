"""Whether a local cluster's datanodes have the space they need, told before `cluster up` waits.

A local cluster's datanodes usually share one disk. Each data volume keeps
hdds.datanode.volume.min.free.space (or its percent of the capacity) free, and SCM places a pipeline on a
datanode only when a volume has more than ozone.scm.container.size above that floor
(NodeReport.has_volume_for): on a disk with less, SCM never opens a pipeline and `cluster up` used to wait
out its timeout without a word about space. The rule is the datanode's own (HddsVolume's usable space),
measured on the nearest existing directory of each data dir, before the daemons start.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pyozone.cluster.layout import ClusterState
from pyozone.config import OzoneConfiguration
from pyozone.config.site import load_configuration
from pyozone.datanode.settings import (
    CONTAINER_SIZE_KEY,
    MIN_FREE_SPACE_KEY,
    MIN_FREE_SPACE_PERCENT_KEY,
    DatanodeSettings,
    SpaceSettings,
)
from pyozone.datanode.storage.volume import HddsVolume
from pyozone.protocol.admin_records import DatanodeListing

DATA_DIRS_KEY = "hdds.datanode.dir"
GB = 1 << 30

HOW_TO_FIX = (
    f"free space on that disk, use a --data-dir on another one, or lower {MIN_FREE_SPACE_KEY} (and "
    f"{MIN_FREE_SPACE_PERCENT_KEY}) or {CONTAINER_SIZE_KEY} with -D KEY=VALUE, e.g. "
    f"-D {MIN_FREE_SPACE_KEY}=1GB -D {MIN_FREE_SPACE_PERCENT_KEY}=0 -D {CONTAINER_SIZE_KEY}=1GB"
)


@dataclass(frozen=True, slots=True)
class Disk:
    """One filesystem under the cluster's data volumes: how many of them share it, and what it has."""

    path: Path
    volumes: int
    free: int
    floor: int
    container_size: int

    @property
    def usable(self) -> int:
        """What a volume there may give new containers: free space above the floor (nothing committed
        yet), as the datanode reports it."""
        return self.free - self.floor

    @property
    def opens_pipelines(self) -> bool:
        """SCM places a pipeline on a datanode only with more than a container above the floor."""
        return self.usable > self.container_size

    @property
    def holds_a_container_each(self) -> bool:
        return self.usable > self.volumes * self.container_size

    def describe(self) -> str:
        return (
            f"{self.path} has {_gb(self.free)} free for {self.volumes} datanode volume(s), which keep "
            f"{_gb(self.floor)} free ({MIN_FREE_SPACE_KEY} / {MIN_FREE_SPACE_PERCENT_KEY}) and take "
            f"containers of {_gb(self.container_size)} ({CONTAINER_SIZE_KEY})"
        )


def _gb(n: int) -> str:
    return f"{n / GB:.1f} GB"


def _existing(path: Path) -> Path:
    """The directory itself, or its nearest ancestor that exists (the data dirs are made at start)."""
    path = path.absolute()
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def datanode_disks(state: ClusterState) -> list[Disk]:
    """The filesystems under every datanode's data volumes, as each datanode's settings name them (a
    ConfigError names every datanode rule its configuration breaks)."""
    by_device: dict[int, tuple[Path, int, SpaceSettings]] = {}
    for daemon in state.datanodes():
        overrides = {DATA_DIRS_KEY: d} if (d := daemon.define(DATA_DIRS_KEY)) else {}
        settings = DatanodeSettings.from_conf(load_configuration(Path(state.conf_dir), overrides))
        for data_dir in settings.storage.data_dirs:
            where = _existing(data_dir)
            device = where.stat().st_dev
            first, count, _ = by_device.get(device, (where, 0, settings.space))
            by_device[device] = (first, count + 1, settings.space)
    disks = []
    for where, count, space in by_device.values():
        volume = HddsVolume(where, 0o700, space.reserved_bytes, min_free=space.min_free)
        report = volume.report()
        disks.append(
            Disk(where, count, report.remaining, report.free_space_to_spare, space.container_size_bytes)
        )
    return disks


def space_refusal(disks: Sequence[Disk]) -> str | None:
    """Why the cluster can never open a pipeline for lack of space, or None."""
    short = [d for d in disks if not d.opens_pipelines]
    if not short:
        return None
    details = "; ".join(d.describe() for d in short)
    return (
        f"not enough free space for the datanodes: {details}. A datanode takes pipelines and containers only "
        f"with more than a container above the floor; {HOW_TO_FIX}"
    )


def space_warning(disks: Sequence[Disk]) -> str | None:
    """The datanodes sharing a disk cannot each fill one container before it reaches its floor."""
    short = [d for d in disks if d.opens_pipelines and not d.holds_a_container_each]
    if not short:
        return None
    details = "; ".join(d.describe() for d in short)
    return (
        f"warning: {details}: writes will stop at the floor before each datanode fills one container; "
        f"{HOW_TO_FIX}"
    )


def nodes_without_room(nodes: Sequence[DatanodeListing], conf: OzoneConfiguration) -> list[str]:
    """The datanodes SCM lists whose free space is not more than a container above their floor (the
    listing carries no committed bytes: a new cluster has none)."""
    space = DatanodeSettings.from_conf(conf).space
    floor, size = space.min_free, space.container_size_bytes
    return [n.details.hostname for n in nodes if n.remaining - floor.floor(n.capacity) <= size]
