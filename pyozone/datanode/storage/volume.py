"""Storage volumes: one directory per disk, laid out as Ozone lays out a datanode's volumes.

    <root>/hdds/VERSION                                   identity: storageID, clusterID, datanodeUuid
    <root>/hdds/<clusterID>/current/containerDir<N>/<id>/ one directory per container (N = id >> 9)
    <root>/hdds/<clusterID>/db/                           RocksDB: block metadata of all containers here
    <root>/hdds/<clusterID>/tmp/                          imports in progress, deletions, disk probes

A volume that belongs to another cluster or datanode is refused and never reformatted: formatting it
would destroy another node's data. Failure is sticky until restart, as in Ozone.

A full volume is not a failed one: it takes no new containers or data (its free space, read afresh on every
question, says so) while its replicas stay readable and reported, and it takes data again once space
returns. A disk check that cannot write its probe for lack of space (ENOSPC, EDQUOT) finds it full.

A data volume keeps a floor free (Ozone's hdds.datanode.volume.min.free.space and its percent form,
MinFreeSpace): no write crosses it, and a volume is full once its free space is down to it, so the disk
is never filled to its last byte under the other processes on it. A new container also needs the space
the volume's open containers were promised and have not written yet (committed bytes): the usable space
of a StorageReport, which SCM reads from the node report as well.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import re
import shutil
import threading
import time
import uuid
from collections.abc import Iterator
from enum import Enum
from pathlib import Path

from pyozone.common.fsutil import atomic_write
from pyozone.config.dirs import private_dir
from pyozone.datanode.settings import MinFreeSpace
from pyozone.datanode.storage.chunk_io import UNCOUNTED, IOStats
from pyozone.datanode.storage.volume_db import DBError, VolumeDB
from pyozone.hdds.datanode import StorageReport
from pyozone.hdds.version_file import format_version_file, read_version_file

log = logging.getLogger(__name__)

LAYOUT_VERSION = 1
CONTAINERS_PER_DIR_BITS = 9  # Ozone puts 512 container ids in each containerDir<N>
_SAFE_NAME = re.compile(r"[\w.-]+", re.ASCII)
_NO_SPACE = frozenset({errno.ENOSPC, errno.EDQUOT})


def out_of_space(error: BaseException) -> bool:
    """The disk (or the user's quota) is full: a state that passes, not a broken disk. RocksDB reports it
    in its message only (a DBError), in the C library's words."""
    if isinstance(error, OSError):
        return error.errno in _NO_SPACE
    return any(os.strerror(code) in str(error) for code in _NO_SPACE)


NO_FLOOR = MinFreeSpace()


class VolumeState(Enum):
    NORMAL = "NORMAL"
    FAILED = "FAILED"


class VolumeError(Exception):
    """Why a volume cannot be used; the volume is marked FAILED with this message."""


class StorageVolume:
    """A directory on one disk: a health probe, a usage report and usage tracked as files change. `mode`:
    what only the datanode's user may read is kept that way (its data, its pipeline logs)."""

    def __init__(self, root: Path, mode: int, reserved_bytes: int = 0) -> None:
        self.root = root
        self.mode = mode
        self.reserved_bytes = reserved_bytes
        self.state = VolumeState.NORMAL
        self.failure_reason = ""
        self.storage_id = f"DS-{uuid.uuid5(uuid.NAMESPACE_URL, str(root.absolute()))}"
        self._used = 0
        self._lock = threading.Lock()
        self.out_of_space = False
        """The last disk check could not write its probe for lack of space (or inodes, or quota): the
        volume takes no new data until a check can, whatever its free bytes say."""

    @property
    def probe_dir(self) -> Path:
        return self.root / "tmp" / "disk-check"

    @property
    def is_failed(self) -> bool:
        return self.state is VolumeState.FAILED

    def mark_failed(self, reason: str) -> None:
        if not self.is_failed:
            log.error("volume %s failed: %s", self.root, reason)
        self.state, self.failure_reason = VolumeState.FAILED, reason

    def check(self) -> bool:
        """Write, fsync, read back and delete a probe file; False (and FAILED) if the disk is broken.

        No space for the probe is a full volume, which stays NORMAL: failing it would drop healthy replicas
        for a condition that clears when space returns.
        """
        if self.is_failed:
            return False
        payload = os.urandom(4096)
        probe = self.probe_dir / f"probe-{uuid.uuid4().hex}"
        try:
            self.probe_dir.mkdir(parents=True, exist_ok=True)
            with open(probe, "wb") as f:
                f.write(payload)
                f.flush()
                os.fsync(f.fileno())
            read_back = probe.read_bytes()
            probe.unlink()
        except OSError as e:
            if not out_of_space(e):
                self.mark_failed(f"disk check failed: {e}")
                return False
            log.warning("volume %s is full: the disk check could not write its probe: %s", self.root, e)
            with contextlib.suppress(OSError):
                probe.unlink(missing_ok=True)
            self.out_of_space = True
            return True
        if read_back != payload:
            self.mark_failed("disk check failed: the probe file read back differently")
            return False
        self.out_of_space = False
        return True

    @property
    def used(self) -> int:
        return self._used

    def add_used(self, delta: int) -> None:
        with self._lock:
            self._used = max(0, self._used + delta)

    def available(self) -> int:
        """Bytes new data may take: the filesystem's free space less what is left of the reserved space
        once what other users hold on the disk took its share (0 if failed, or if the last disk check
        found no room for its probe).

        Ozone's VolumeUsage.getAvailable and getRemainingReserved (HDFS's FsVolumeImpl too): the reserved
        space is for the disk's other users, so their bytes (size - free - this volume's `used`) count
        against it. With it covering them, the volume has capacity - used left: datanodes sharing one
        disk then report their own data, not the disk's.
        """
        if self.is_failed or self.out_of_space:
            return 0
        try:
            disk = shutil.disk_usage(self.root)
        except OSError as e:
            self.mark_failed(f"cannot stat the filesystem: {e}")
            return 0
        other_used = max(0, disk.total - self.used - disk.free)
        return max(0, disk.free - max(0, self.reserved_bytes - other_used))

    def capacity(self) -> int:
        """The filesystem's size less the reserved space (Ozone's VolumeUsage capacity)."""
        try:
            return max(0, shutil.disk_usage(self.root).total - self.reserved_bytes)
        except OSError:
            return 0

    @property
    def free_space_to_spare(self) -> int:
        return 0

    @property
    def committed(self) -> int:
        return 0

    def writable(self) -> int:
        """Bytes a write may still add: the available space above the floor."""
        return self.available() - self.free_space_to_spare

    @property
    def is_full(self) -> bool:
        """No usable space: free space down to the floor once open containers get what they were
        promised (Ozone's HddsDispatcher.isVolumeFull). It takes no new container; its open containers
        ask to close, and their writes go on only above the floor."""
        return self.writable() - self.committed <= 0

    def report(self) -> StorageReport:
        return StorageReport(
            self.storage_id, str(self.root), self.capacity(), self.used, self.available(),
            failed=self.is_failed,
        )  # fmt: skip


class MetadataVolume(StorageVolume):
    """A directory of ozone.metadata.dirs (mode ozone.metadata.dirs.permissions): reported and probed;
    its files are not tracked."""

    def load(self) -> None:
        try:
            private_dir(self.root, self.mode)
        except OSError as e:
            self.mark_failed(f"cannot create {self.root}: {e}")


class HddsVolume(StorageVolume):
    """A data volume of hdds.datanode.dir: holds containers and the volume's block-metadata DB, under an
    hdds dir of mode hdds.datanode.data.dir.permissions (no other local user reads the chunks)."""

    def __init__(
        self,
        root: Path,
        mode: int,
        reserved_bytes: int = 0,
        storage_type: str = "DISK",
        min_free: MinFreeSpace = NO_FLOOR,
    ) -> None:
        super().__init__(root, mode, reserved_bytes)
        self.storage_type = storage_type
        self.min_free = min_free
        self.cluster_id = ""
        self._db: VolumeDB | None = None
        self._committed = 0
        self.io_stats: IOStats = UNCOUNTED
        """Where this volume's chunk I/O is counted: the daemon's VolumeIOStats (datanode/metrics.py)."""

    @property
    def committed(self) -> int:
        """Bytes promised to the open containers here and not written yet (Ozone's committedBytes)."""
        return self._committed

    def add_committed(self, delta: int) -> None:
        with self._lock:
            self._committed = max(0, self._committed + delta)

    @property
    def free_space_to_spare(self) -> int:
        return self.min_free.floor(self.capacity())

    def report(self) -> StorageReport:
        capacity = self.capacity()
        return StorageReport(
            self.storage_id, str(self.root), capacity, self.used, self.available(), failed=self.is_failed,
            committed=self.committed, free_space_to_spare=self.min_free.floor(capacity),
        )  # fmt: skip

    @property
    def hdds_dir(self) -> Path:
        return self.root / "hdds"

    @property
    def version_file(self) -> Path:
        return self.hdds_dir / "VERSION"

    @property
    def cluster_dir(self) -> Path:
        return self.hdds_dir / self.cluster_id

    @property
    def tmp_dir(self) -> Path:
        return self.cluster_dir / "tmp"

    @property
    def probe_dir(self) -> Path:
        return self.tmp_dir / "disk-check"

    @property
    def db(self) -> VolumeDB:
        if self._db is None:
            raise VolumeError(f"volume {self.root} is not loaded ({self.failure_reason or 'not loaded'})")
        return self._db

    def container_dir(self, container_id: int) -> Path:
        return (
            self.cluster_dir
            / "current"
            / f"containerDir{container_id >> CONTAINERS_PER_DIR_BITS}"
            / str(container_id)
        )

    def container_dirs(self) -> Iterator[tuple[int, Path]]:
        """Every container directory on the volume, by id; other names are ignored."""
        for group in sorted((self.cluster_dir / "current").glob("containerDir*")):
            for entry in sorted(group.iterdir()):
                if entry.name.isdigit() and entry.is_dir():
                    yield int(entry.name), entry

    def load(self, cluster_id: str, datanode_uuid: str) -> None:
        """Formats a new volume or checks an existing one's identity, then opens its DB.

        Problems mark the volume FAILED (reason in failure_reason) instead of raising: one bad disk
        must not stop the datanode.
        """
        try:
            for name, value in (("cluster id", cluster_id), ("datanode uuid", datanode_uuid)):
                if not _SAFE_NAME.fullmatch(value):
                    raise VolumeError(f"invalid {name} {value!r}")
            self._load_identity(cluster_id, datanode_uuid)
            self.cluster_id = cluster_id
            (self.cluster_dir / "current").mkdir(parents=True, exist_ok=True)
            self._db = VolumeDB(self.cluster_dir / "db")  # first: its LOCK keeps a second datanode out
            shutil.rmtree(self.tmp_dir, ignore_errors=True)  # leftovers of interrupted imports/deletes
            self.tmp_dir.mkdir(parents=True, exist_ok=True)
        except (OSError, VolumeError, DBError) as e:
            self.mark_failed(str(e))

    def _load_identity(self, cluster_id: str, datanode_uuid: str) -> None:
        if self.root.exists() and not self.root.is_dir():
            raise VolumeError(f"{self.root} is not a directory")
        private_dir(self.hdds_dir, self.mode)
        if not self.version_file.exists():
            if any(not p.name.startswith(".VERSION.") for p in self.hdds_dir.iterdir()):
                raise VolumeError(f"{self.hdds_dir} holds data but no VERSION file; refusing to format it")
            self._format(cluster_id, datanode_uuid)
        required = ("storageID", "clusterID", "datanodeUuid", "layOutVersion", "cTime")
        props = read_version_file(self.version_file, required, VolumeError)
        if props["clusterID"] != cluster_id:
            raise VolumeError(
                f"{self.root} belongs to cluster {props['clusterID']}, not {cluster_id}; refusing to use it"
            )
        if props["datanodeUuid"] != datanode_uuid:
            raise VolumeError(
                f"{self.root} belongs to datanode {props['datanodeUuid']}, not {datanode_uuid}; "
                "refusing to use it"
            )
        if not props["layOutVersion"].isdigit() or int(props["layOutVersion"]) > LAYOUT_VERSION:
            raise VolumeError(f"{self.version_file}: unsupported layOutVersion {props['layOutVersion']!r}")
        self.storage_id = props["storageID"]
        self.storage_type = props.get("storageType", self.storage_type)

    def _format(self, cluster_id: str, datanode_uuid: str) -> None:
        ctime = time.time_ns() // 1_000_000
        fields = {
            "storageType": self.storage_type,
            "clusterID": cluster_id,
            "datanodeUuid": datanode_uuid,
            "cTime": ctime,
            "layOutVersion": LAYOUT_VERSION,
            "storageID": f"DS-{uuid.uuid4()}",
        }
        atomic_write(self.version_file, format_version_file(ctime, fields))
        log.info("formatted volume %s for cluster %s", self.root, cluster_id)

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
