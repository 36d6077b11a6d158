"""VolumeSet: the datanode's data and metadata volumes, and where a new container goes."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path

from pyozone.config import ConfigError, OzoneConfiguration
from pyozone.config.dirs import METADATA_PERMISSIONS_KEY, dir_permissions
from pyozone.datanode.storage.errors import ContainerError, Result
from pyozone.datanode.storage.volume import HddsVolume, MetadataVolume, MinFreeSpace
from pyozone.hdds.datanode import NodeReport

log = logging.getLogger(__name__)

DATA_DIRS_KEY = "hdds.datanode.dir"
METADATA_DIRS_KEY = "ozone.metadata.dirs"
CONTAINER_SIZE_KEY = "ozone.scm.container.size"
DATA_PERMISSIONS_KEY = "hdds.datanode.data.dir.permissions"


def _dirs(conf: OzoneConfiguration, key: str) -> list[Path]:
    value = conf.get(key)
    dirs = list(dict.fromkeys(d.strip() for d in (value or "").split(",") if d.strip()))
    if not dirs:
        raise ConfigError(f"{key} is not set: a datanode needs at least one directory there")
    return [Path(d) for d in dirs]


class VolumeSet:
    """Data volumes from hdds.datanode.dir, metadata volumes from ozone.metadata.dirs.

    Volumes are formatted or checked on construction; a bad volume is kept, marked FAILED and reported
    as such, so the datanode starts on the disks that work.
    """

    def __init__(
        self,
        conf: OzoneConfiguration,
        datanode_uuid: str,
        cluster_id: str,
        reserved_bytes: int = 0,
    ) -> None:
        data_dirs, metadata_dirs = _dirs(conf, DATA_DIRS_KEY), _dirs(conf, METADATA_DIRS_KEY)
        self.container_size: int = conf.get(CONTAINER_SIZE_KEY)
        data_mode = dir_permissions(conf, DATA_PERMISSIONS_KEY)
        metadata_mode = dir_permissions(conf, METADATA_PERMISSIONS_KEY)
        min_free = MinFreeSpace.from_conf(conf)
        self.data_volumes = [HddsVolume(d, data_mode, reserved_bytes, min_free=min_free) for d in data_dirs]
        self.metadata_volumes = [MetadataVolume(d, metadata_mode) for d in metadata_dirs]
        for volume in self.data_volumes:
            volume.load(cluster_id, datanode_uuid)
        for meta in self.metadata_volumes:
            meta.load()
        self._next = 0
        self._lock = threading.Lock()
        self.on_full: Callable[[], None] = lambda: None
        """Runs when a new container finds no volume with room (the daemon reports the node at once)."""
        failed = [v for v in self.data_volumes if v.is_failed]
        if failed:
            log.error("%d of %d data volumes failed to load", len(failed), len(self.data_volumes))

    def healthy_volumes(self) -> list[HddsVolume]:
        return [v for v in self.data_volumes if not v.is_failed]

    def choose_volume(self, required_bytes: int | None = None) -> HddsVolume:
        """Round robin over healthy volumes whose usable space exceeds `required_bytes` (default: a
        container's size): free space less the floor and less what open containers were promised.

        Ozone's RoundRobinVolumeChoosingPolicy with its AvailableSpaceFilter: successive containers spread
        over the disks, and none goes where it would eat into the floor or another container's space.
        """
        required = self.container_size if required_bytes is None else required_bytes
        usable: dict[int, int] = {}
        with self._lock:
            volumes = self.data_volumes
            for step in range(len(volumes)):
                index = (self._next + step) % len(volumes)
                volume = volumes[index]
                if volume.is_failed:
                    continue
                usable[index] = volume.report().usable
                if usable[index] > required:
                    self._next = index + 1
                    return volume
        if not usable:
            reasons = "; ".join(f"{v.root}: {v.failure_reason}" for v in volumes)
            raise ContainerError(Result.DISK_OUT_OF_SPACE, f"no healthy data volume ({reasons})")
        self.on_full()
        raise ContainerError(
            Result.DISK_OUT_OF_SPACE,
            f"out of space: the volume with the most usable space ({max(usable.values())} B: free space "
            f"above hdds.datanode.volume.min.free.space, less committed bytes) has no more than the "
            f"{required} B needed",
        )

    def full_volumes(self) -> list[HddsVolume]:
        """Healthy data volumes down to their floor: no new containers or data until space returns."""
        return [v for v in self.healthy_volumes() if v.is_full]

    def check_volumes(self) -> list[HddsVolume]:
        """Probes every volume; returns the data volumes that failed in this check (a full one has not)."""
        newly_failed = [v for v in self.healthy_volumes() if not v.check()]
        for meta in self.metadata_volumes:
            meta.check()
        return newly_failed

    def node_report(self) -> NodeReport:
        return NodeReport(
            tuple(v.report() for v in self.data_volumes), tuple(m.report() for m in self.metadata_volumes)
        )

    def close(self) -> None:
        for volume in self.data_volumes:
            volume.close()
