"""The OM's storage identity and where its files live: `<ozone.metadata.dirs>/om/current/VERSION` and
`<ozone.om.db.dirs, else ozone.metadata.dirs>/om.db`, as in Ozone.

OM takes its cluster id from SCM the first time it starts and keeps it: a later start against an SCM of
another cluster is refused, since every block id in om.db names that cluster's containers.
"""

from __future__ import annotations

import re
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from pyozone.common.fsutil import atomic_write
from pyozone.hdds.version_file import format_version_file, read_version_file

OM_DB_DIRS_KEY = "ozone.om.db.dirs"
"""Where om.db lives (om/settings.py's om_db_path resolves it at the daemon's edge)."""
OM_DB_NAME = "om.db"
NODE_TYPE = "OM"
OM_LAYOUT_VERSION = 1

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.IGNORECASE)


class OMStorageError(Exception):
    """The OM's storage cannot be used; the message names the path (or both cluster ids)."""


@dataclass(frozen=True, slots=True)
class OMStorage:
    cluster_id: str
    om_uuid: str
    ctime: int
    layout_version: int = OM_LAYOUT_VERSION

    def to_properties(self) -> bytes:
        return format_version_file(
            self.ctime,
            {
                "nodeType": NODE_TYPE,
                "clusterID": self.cluster_id,
                "omUuid": self.om_uuid,
                "cTime": self.ctime,
                "layoutVersion": self.layout_version,
            },
        )


def version_file(metadata_dir: Path) -> Path:
    return metadata_dir / "om" / "current" / "VERSION"


def read_om_storage(metadata_dir: Path) -> OMStorage | None:
    """The identity, or None before the first start."""
    path = version_file(metadata_dir)
    if metadata_dir.exists() and not metadata_dir.is_dir():
        raise OMStorageError(f"the OM metadata directory {metadata_dir} is not a directory")
    if not path.exists():
        return None
    props = read_version_file(path, ("nodeType", "clusterID", "omUuid", "cTime"), OMStorageError)
    if props["nodeType"] != NODE_TYPE:
        raise OMStorageError(
            f"corrupt VERSION file {path}: nodeType={props['nodeType']!r} is not {NODE_TYPE}"
        )
    if not _UUID.fullmatch(props["omUuid"]) or not props["cTime"].isdigit():
        raise OMStorageError(f"corrupt VERSION file {path}: bad omUuid or cTime")
    layout = int(props.get("layoutVersion") or OM_LAYOUT_VERSION)
    if layout > OM_LAYOUT_VERSION:
        raise OMStorageError(
            f"{path}: layout version {layout} is newer than this software's; upgrade pyozone"
        )
    return OMStorage(props["clusterID"], props["omUuid"], int(props["cTime"]), layout)


def bind_to_cluster(metadata_dir: Path, scm_cluster_id: str) -> tuple[OMStorage, bool]:
    """The identity for SCM's cluster: written on the first start (True), checked on every later one."""
    existing = read_om_storage(metadata_dir)
    if existing is not None:
        if existing.cluster_id != scm_cluster_id:
            raise OMStorageError(
                f"SCM belongs to cluster {scm_cluster_id} but this OM ({version_file(metadata_dir)}) "
                f"belongs to cluster {existing.cluster_id}: refusing to start"
            )
        return existing, False
    storage = OMStorage(scm_cluster_id, str(uuid.uuid4()), time.time_ns() // 1_000_000)
    path = version_file(metadata_dir)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, storage.to_properties())
    except OSError as e:
        raise OMStorageError(f"cannot write {path}: {e.strerror or e}") from None
    return storage, True
