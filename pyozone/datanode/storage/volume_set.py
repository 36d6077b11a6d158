"""VolumeSet: the datanode's data and metadata volumes, and where a new container goes."""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from pyozone.config import ConfigError, OzoneConfiguration
from pyozone.config.dirs import METADATA_PERMISSIONS_KEY, dir_permissions
from pyozone.datanode.storage.errors import ContainerError, Result
from pyozone.datanode.storage.volume import HddsVolume, MetadataVolume
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
        self.data_volumes = [HddsVolume(d, data_mode, reserved_bytes) for d in data_dirs]
        self.metadata_volumes = [MetadataVolume(d, metadata_mode) for d in metadata_dirs]
        for volume in self.data_volumes:
            volume.load(cluster_id, datanode_uuid)
        for meta in self.metadata_volumes:
            meta.load()
        self._next = 0
        self._lock = threading.Lock()
        failed = [v for v in self.data_volumes if v.is_failed]
        if failed:
            log.error("%d of %d data volumes failed to load", len(failed), len(self.data_volumes))

    def healthy_volumes(self) -> list[HddsVolume]:
        return [v for v in self.data_volumes if not v.is_failed]

    def choose_volume(self, required_bytes: int | None = None) -> HddsVolume:
        """Round robin over healthy volumes with room for `required_bytes` (default: a container's size).

        Ozone's RoundRobinVolumeChoosingPolicy: successive containers spread over the disks.
        """
        required = self.container_size if required_bytes is None else required_bytes
        with self._lock:
            volumes = self.data_volumes
            for step in range(len(volumes)):
                index = (self._next + step) % len(volumes)
                volume = volumes[index]
                if not volume.is_failed and volume.available() >= required:
                    self._next = index + 1
                    return volume
        healthy = self.healthy_volumes()
        if not healthy:
            reasons = "; ".join(f"{v.root}: {v.failure_reason}" for v in volumes)
            raise ContainerError(Result.DISK_OUT_OF_SPACE, f"no healthy data volume ({reasons})")
        most = max(v.available() for v in healthy)
        raise ContainerError(
            Result.DISK_OUT_OF_SPACE,
            f"out of space: the volume with the most available space ({most} B) has less than "
            f"the {required} B needed",
        )

    def full_volumes(self) -> list[HddsVolume]:
        """Healthy data volumes with no space left: no new containers or data until space returns."""
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
