"""The SCM's storage identity: `<ozone.metadata.dirs>/scm/current/VERSION`, a Java properties file.

The cluster id in it is what datanodes register against, so it is written once, atomically, and never
overwritten; a damaged file is reported, not repaired, because a new id would orphan every datanode.
"""

from __future__ import annotations

import re
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from pyozone.common.fsutil import atomic_write
from pyozone.config import OzoneConfiguration
from pyozone.hdds.version_file import format_version_file, read_version_file
from pyozone.scm.store.layout import scm_db_dir, scm_metadata_dir, version_file
from pyozone.scm.store.metadata_store import SCMMetadataStore
from pyozone.scm.store.scm_db import open_scm_db

SCM_LAYOUT_VERSION = 1
NODE_TYPE = "SCM"

_CLUSTER_ID = re.compile(r"CID-[\w.-]+", re.ASCII)
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.IGNORECASE)


class StorageError(Exception):
    """The SCM's storage directory cannot be used; the message names the path."""


class StorageNotInitializedError(StorageError):
    pass


class CorruptVersionError(StorageError):
    pass


@dataclass(frozen=True)
class SCMStorageConfig:
    cluster_id: str
    scm_uuid: str
    ctime: int
    layout_version: int

    def to_properties(self) -> bytes:
        return format_version_file(
            self.ctime,
            {
                "nodeType": NODE_TYPE,
                "clusterID": self.cluster_id,
                "scmUuid": self.scm_uuid,
                "cTime": self.ctime,
                "layoutVersion": self.layout_version,
            },
        )


def check_cluster_id(cluster_id: str) -> None:
    if not _CLUSTER_ID.fullmatch(cluster_id):
        raise StorageError(
            f"invalid cluster id {cluster_id!r}: expected 'CID-' followed by letters, digits, '.', '_' or '-'"
        )


def _check_dir(metadata_dir: Path) -> None:
    if metadata_dir.exists() and not metadata_dir.is_dir():
        raise StorageError(f"the SCM metadata directory {metadata_dir} is not a directory")


def read_scm_storage(metadata_dir: Path) -> SCMStorageConfig:
    _check_dir(metadata_dir)
    path = version_file(metadata_dir)
    if not path.exists():
        raise StorageNotInitializedError(
            f"SCM is not initialized: {metadata_dir} has no VERSION file; run `pyozone scm --init` first"
        )
    props = read_version_file(path, (), StorageError)

    def field(name: str) -> str:
        if not props.get(name):
            raise CorruptVersionError(f"corrupt VERSION file {path}: missing field {name}")
        return props[name]

    def bad(name: str, why: str) -> CorruptVersionError:
        return CorruptVersionError(f"corrupt VERSION file {path}: {name}={props[name]!r} {why}")

    if field("nodeType") != NODE_TYPE:
        raise bad("nodeType", f"is not {NODE_TYPE}")
    if not _CLUSTER_ID.fullmatch(field("clusterID")):
        raise bad("clusterID", "is not 'CID-' followed by an id")
    if not _UUID.fullmatch(field("scmUuid")):
        raise bad("scmUuid", "is not a UUID")
    numbers: dict[str, int] = {}
    for name in ("cTime", "layoutVersion"):
        if not re.fullmatch(r"[0-9]+", field(name)):
            raise bad(name, "is not a non-negative integer")
        numbers[name] = int(props[name])
    if numbers["layoutVersion"] > SCM_LAYOUT_VERSION:
        raise StorageError(
            f"{path}: metadata layout version {numbers['layoutVersion']} is newer than this software's "
            f"({SCM_LAYOUT_VERSION}); upgrade pyozone"
        )
    return SCMStorageConfig(props["clusterID"], props["scmUuid"], numbers["cTime"], numbers["layoutVersion"])


def init_scm_storage(metadata_dir: Path, cluster_id: str | None = None) -> tuple[SCMStorageConfig, bool]:
    """Writes a new identity, or returns the existing one and False (as Ozone's `scm --init` reuses it)."""
    if cluster_id is not None:
        check_cluster_id(cluster_id)
    _check_dir(metadata_dir)
    path = version_file(metadata_dir)
    if path.exists():
        return read_scm_storage(metadata_dir), False
    storage = SCMStorageConfig(
        cluster_id or f"CID-{uuid.uuid4()}",
        str(uuid.uuid4()),
        time.time_ns() // 1_000_000,
        SCM_LAYOUT_VERSION,
    )
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, storage.to_properties())
    except OSError as e:
        raise StorageError(f"cannot write {path}: {e.strerror or e}") from None
    return storage, True


def init_scm(conf: OzoneConfiguration, cluster_id: str | None = None) -> tuple[SCMStorageConfig, bool]:
    """`scm --init`: an empty scm.db with every column family, then VERSION (the mark of a finished init).

    An initialised SCM is left alone, scm.db included: it may be open in a running SCM.
    """
    metadata_dir = scm_metadata_dir(conf)
    if cluster_id is not None:
        check_cluster_id(cluster_id)
    _check_dir(metadata_dir)
    if not version_file(metadata_dir).exists():
        open_scm_db(scm_db_dir(conf)).close()
    return init_scm_storage(metadata_dir, cluster_id)


def open_scm_store(conf: OzoneConfiguration) -> tuple[SCMStorageConfig, SCMMetadataStore]:
    """The identity and scm.db of an initialised SCM; VERSION is checked first so bad input writes nothing."""
    storage = read_scm_storage(scm_metadata_dir(conf))
    return storage, open_scm_db(scm_db_dir(conf))
