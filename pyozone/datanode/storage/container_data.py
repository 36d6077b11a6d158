"""The container's descriptor (the .container file); its blocks' records are the kernel's
(hdds/block_data.py).

The .container file carries a SHA-256 of its own fields, as Ozone's does: a torn or bit-rotted
descriptor is detected on load, and the replica is then reported UNHEALTHY rather than trusted.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from pyozone.hdds.states import ReplicaState

CONTAINER_TYPE = "KeyValueContainer"
SCHEMA_VERSION = "3"
LAYOUT_FILE_PER_BLOCK = 2  # Ozone's ContainerLayoutVersion: 1 = FILE_PER_CHUNK, 2 = FILE_PER_BLOCK


class ContainerFileError(ValueError):
    """A .container file that cannot be trusted: unparsable, incomplete or failing its checksum."""


@dataclass(frozen=True, slots=True)
class ContainerData:
    """The descriptor persisted in <containerDir>/metadata/<id>.container.

    `bcsid` here is a snapshot taken at the last state change (so an exported file carries the
    BCSID of the closed container); the live BCSID lives in the volume DB with the blocks.
    """

    container_id: int
    state: ReplicaState
    max_size: int
    origin_node_id: str
    origin_pipeline_id: str
    chunks_path: str
    metadata_path: str
    replica_index: int = 0
    bcsid: int = 0
    layout_version: int = LAYOUT_FILE_PER_BLOCK
    schema_version: str = SCHEMA_VERSION

    def _fields(self) -> dict[str, Any]:
        return {
            "containerID": self.container_id,
            "containerType": CONTAINER_TYPE,
            "state": self.state.name,
            "maxSize": self.max_size,
            "originNodeId": self.origin_node_id,
            "originPipelineId": self.origin_pipeline_id,
            "replicaIndex": self.replica_index,
            "layoutVersion": self.layout_version,
            "chunksPath": self.chunks_path,
            "metadataPath": self.metadata_path,
            "schemaVersion": self.schema_version,
            "blockCommitSequenceId": self.bcsid,
            "containerDBType": "RocksDB",
        }

    def to_file_bytes(self) -> bytes:
        fields = self._fields()
        fields["checksum"] = _checksum(fields)
        return (json.dumps(fields, indent=2, sort_keys=True) + "\n").encode()

    @classmethod
    def from_file_bytes(cls, raw: bytes) -> ContainerData:
        try:
            fields = json.loads(raw)
            if not isinstance(fields, dict):
                raise ContainerFileError("not a JSON object")
            stored = fields.pop("checksum", None)
            if stored != _checksum(fields):
                raise ContainerFileError("checksum mismatch: the file was changed or damaged")
            if fields["containerType"] != CONTAINER_TYPE or fields["schemaVersion"] != SCHEMA_VERSION:
                kind, schema = fields["containerType"], fields["schemaVersion"]
                raise ContainerFileError(f"unsupported container type {kind!r}, schema {schema!r}")
            if fields["layoutVersion"] != LAYOUT_FILE_PER_BLOCK:
                raise ContainerFileError(f"unsupported chunk layout version {fields['layoutVersion']!r}")
            return cls(
                int(fields["containerID"]),
                ReplicaState[fields["state"]],
                int(fields["maxSize"]),
                str(fields["originNodeId"]),
                str(fields["originPipelineId"]),
                str(fields["chunksPath"]),
                str(fields["metadataPath"]),
                int(fields["replicaIndex"]),
                int(fields["blockCommitSequenceId"]),
            )
        except ContainerFileError:
            raise
        except (ValueError, KeyError, TypeError) as e:
            raise ContainerFileError(f"malformed: {type(e).__name__}: {e}") from None


def _checksum(fields: dict[str, Any]) -> str:
    canonical = json.dumps(fields, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(canonical).hexdigest()
