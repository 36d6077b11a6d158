"""The datanode's identity (Ozone's datanode.id): who it is, where it listens, its operational state.

The uuid is the datanode's name in SCM and in every volume's VERSION file, so it is created once and
reused on every start. The file is JSON, written atomically; the cluster id is added once SCM confirmed
it, so a later start against another cluster's SCM is refused before any data is touched.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pyozone import __version__
from pyozone.common.fsutil import atomic_write
from pyozone.datanode.errors import DatanodeError
from pyozone.datanode.settings import StorageSettings
from pyozone.hdds.datanode import DatanodeDetails
from pyozone.hdds.states import NodeOperationalState
from pyozone.hdds.version_file import parse_properties

log = logging.getLogger(__name__)

ID_FILE = "datanode.id"


@dataclass(frozen=True, slots=True)
class DatanodeIdentity:
    uuid: str
    hostname: str
    ip_address: str
    ports: dict[str, int] = field(default_factory=dict)
    persisted_op_state: NodeOperationalState = NodeOperationalState.IN_SERVICE
    persisted_op_state_expiry: int = 0  # epoch seconds; 0: no expiry
    cluster_id: str | None = None
    setup_time_ms: int = 0

    def details(self) -> DatanodeDetails:
        """What SCM is told this datanode is (registration and every heartbeat)."""
        return DatanodeDetails(
            uuid=self.uuid,
            hostname=self.hostname,
            ip_address=self.ip_address,
            ports=tuple(sorted(self.ports.items())),
            persisted_op_state=self.persisted_op_state,
            persisted_op_state_expiry=self.persisted_op_state_expiry,
            version=__version__,
        )

    def to_json(self) -> bytes:
        doc: dict[str, Any] = {
            "uuid": self.uuid,
            "hostname": self.hostname,
            "ipAddress": self.ip_address,
            "ports": dict(self.ports),
            "persistedOpState": self.persisted_op_state.name,
            "persistedOpStateExpiry": self.persisted_op_state_expiry,
            "setupTime": self.setup_time_ms,
        }
        if self.cluster_id is not None:
            doc["clusterId"] = self.cluster_id
        return (json.dumps(doc, indent=2, sort_keys=True) + "\n").encode()

    @classmethod
    def from_json(cls, raw: bytes, source: Path) -> DatanodeIdentity:
        try:
            doc = json.loads(raw)
            ports = doc.get("ports", {})
            if not isinstance(ports, dict) or not all(isinstance(p, int) for p in ports.values()):
                raise ValueError(f"ports must map names to numbers, got {ports!r}")
            return cls(
                uuid=str(uuid.UUID(doc["uuid"])),
                hostname=str(doc["hostname"]),
                ip_address=str(doc["ipAddress"]),
                ports=ports,
                persisted_op_state=NodeOperationalState[doc.get("persistedOpState", "IN_SERVICE")],
                persisted_op_state_expiry=int(doc.get("persistedOpStateExpiry", 0)),
                cluster_id=doc.get("clusterId"),
                setup_time_ms=int(doc.get("setupTime", 0)),
            )
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            raise DatanodeError(f"{source}: corrupt datanode identity ({type(e).__name__}: {e})") from None


def _volume_versions(data_dirs: tuple[Path, ...]) -> list[dict[str, str]]:
    """The VERSION files already on the data volumes, read without changing anything."""
    found = []
    for root in data_dirs:
        try:
            found.append(parse_properties((root / "hdds" / "VERSION").read_text("latin-1")))
        except OSError:
            continue
    return found


class IdentityStore:
    """datanode.id on disk and the identity in memory; every change is persisted before it is used."""

    def __init__(self, storage: StorageSettings) -> None:
        """ConfigError when neither ozone.scm.datanode.id.dir nor ozone.metadata.dirs is set."""
        self.path = storage.identity_dir() / ID_FILE
        self._data_dirs = storage.data_dirs
        self._lock = threading.Lock()
        self.is_new = not self.path.exists()
        self.identity = self._load()

    def _load(self) -> DatanodeIdentity:
        if not self.is_new:
            try:
                raw = self.path.read_bytes()
            except OSError as e:
                raise DatanodeError(f"cannot read {self.path}: {e}") from None
            return DatanodeIdentity.from_json(raw, self.path)
        # A lost datanode.id next to volumes that name their datanode: keep that name, or every volume
        # would be refused as another datanode's.
        owners = {v["datanodeUuid"] for v in _volume_versions(self._data_dirs) if v.get("datanodeUuid")}
        if len(owners) == 1:
            node_id = owners.pop()
            log.warning("%s is missing; reusing uuid %s found on the data volumes", self.path, node_id)
        else:
            node_id = str(uuid.uuid4())
        return DatanodeIdentity(node_id, "", "", setup_time_ms=time.time_ns() // 1_000_000)

    @property
    def uuid(self) -> str:
        return self.identity.uuid

    def known_cluster_id(self) -> str | None:
        """The cluster this datanode already belongs to: from datanode.id, else from its volumes."""
        if self.identity.cluster_id:
            return self.identity.cluster_id
        clusters = [v["clusterID"] for v in _volume_versions(self._data_dirs) if v.get("clusterID")]
        return clusters[0] if clusters else None

    def check_cluster(self, scm_cluster_id: str, scm_address: str) -> None:
        """Refuses to join another cluster: its volumes and containers are that cluster's data."""
        known = self.known_cluster_id()
        if known is not None and known != scm_cluster_id:
            raise DatanodeError(
                f"datanode {self.uuid} belongs to cluster {known}, SCM at {scm_address} is cluster "
                f"{scm_cluster_id}; refusing to start (no data was changed)"
            )

    def update(self, **changes: Any) -> DatanodeIdentity:
        """Applies and persists `changes` (DatanodeIdentity fields) atomically; returns the new identity."""
        with self._lock:
            new = replace(self.identity, **changes)
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                atomic_write(self.path, new.to_json())
            except OSError as e:
                raise DatanodeError(f"cannot write {self.path}: {e}") from None
            if self.is_new:
                log.info("created datanode identity %s in %s", new.uuid, self.path)
                self.is_new = False
            self.identity = new
            return new
