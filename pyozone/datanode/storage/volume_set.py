"""VolumeSet: the datanode's data and metadata volumes, and where a new container goes."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from pyozone.datanode.settings import SpaceSettings, StorageSettings
from pyozone.datanode.storage.errors import ContainerError, Result
from pyozone.datanode.storage.volume import HddsVolume, MetadataVolume
from pyozone.hdds.datanode import NodeReport

log = logging.getLogger(__name__)


class VolumeSet:
    """Data volumes from hdds.datanode.dir, metadata volumes from ozone.metadata.dirs.

    Volumes are formatted or checked on construction; a bad volume is kept, marked FAILED and reported
    as such, so the datanode starts on the disks that work.
    """

    def __init__(
        self, storage: StorageSettings, space: SpaceSettings, datanode_uuid: str, cluster_id: str
    ) -> None:
        """ConfigError when hdds.datanode.dir or ozone.metadata.dirs names no directory."""
        data_dirs, metadata_dirs = storage.data_volume_dirs(), storage.metadata_volume_dirs()
        self.container_size = space.container_size_bytes
        self.data_volumes = [
            HddsVolume(d, storage.data_dir_mode, space.reserved_bytes, min_free=space.min_free)
            for d in data_dirs
        ]
        self.metadata_volumes = [MetadataVolume(d, storage.metadata_dir_mode) for d in metadata_dirs]
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

    def check_room(self) -> None:
        """Raises choose_volume's DISK_OUT_OF_SPACE (and reports the node full) when no volume could take
        a new container now: a pipeline leader asks before a write that would create one enters the log,
        so a full disk refuses the write instead of failing the pipeline."""
        self.choose_volume(probe=True)

    def choose_volume(
        self, required_bytes: int | None = None, reserve: bool = False, probe: bool = False
    ) -> HddsVolume:
        """Round robin over healthy volumes whose usable space exceeds `required_bytes` (default: a
        container's size): free space less the floor and less what open containers were promised.
        `reserve`: the chosen volume's committed bytes grow by `required_bytes` in the same step, so
        concurrent choosers cannot all take the same room; the caller gives it back (add_committed).
        `probe`: only whether one would be found; the round robin does not move.

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
                    if not probe:
                        self._next = index + 1
                    if reserve:
                        volume.add_committed(required)
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
