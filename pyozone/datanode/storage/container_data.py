"""Records of the container store: chunks, blocks and the container's descriptor (the .container file).

The .container file carries a SHA-256 of its own fields, as Ozone's does: a torn or bit-rotted
descriptor is detected on load, and the replica is then reported UNHEALTHY rather than trusted.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, replace
from typing import Any

from pyozone.hdds.checksum import ChecksumData
from pyozone.hdds.ids import BlockID
from pyozone.hdds.states import ReplicaState

CONTAINER_TYPE = "KeyValueContainer"
SCHEMA_VERSION = "3"
LAYOUT_FILE_PER_BLOCK = 2  # Ozone's ContainerLayoutVersion: 1 = FILE_PER_CHUNK, 2 = FILE_PER_BLOCK


class ContainerFileError(ValueError):
    """A .container file that cannot be trusted: unparsable, incomplete or failing its checksum."""


@dataclass(frozen=True, slots=True)
class ChunkInfo:
    """A piece of a block: `length` bytes at `offset` in the block file, with their checksums."""

    name: str
    offset: int
    length: int
    checksum_data: ChecksumData

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "offset": self.offset,
            "len": self.length,
            "checksum": self.checksum_data.to_dict(),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ChunkInfo:
        chunk = cls(str(d["name"]), int(d["offset"]), int(d["len"]), ChecksumData.from_dict(d["checksum"]))
        if chunk.offset < 0 or chunk.length < 0:
            raise ValueError(f"chunk {chunk.name} has a negative offset or length")
        return chunk


FINALIZED = "finalized"
"""The block record's mark of a finalized block (absent: not finalized)."""


@dataclass(frozen=True, slots=True)
class BlockData:
    """A committed block: its chunks in order, client metadata, and the BCSID of its last putBlock.
    `finalized`: OM finalized it at its key's commit (Ozone's FinalizeBlock): it takes no more writes."""

    block_id: BlockID
    chunks: tuple[ChunkInfo, ...] = ()
    metadata: tuple[tuple[str, str], ...] = ()
    bcsid: int = 0
    finalized: bool = False

    @property
    def size(self) -> int:
        return sum(c.length for c in self.chunks)

    @property
    def file_length(self) -> int:
        """The length the block file must have at least: the end of its furthest chunk."""
        return max((c.offset + c.length for c in self.chunks), default=0)

    def with_bcsid(self, bcsid: int) -> BlockData:
        return replace(self, bcsid=bcsid)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "containerID": self.block_id.container_id,
            "localID": self.block_id.local_id,
            "bcsid": self.bcsid,
            "metadata": dict(self.metadata),
            "chunks": [c.to_dict() for c in self.chunks],
        }
        if self.finalized:
            d[FINALIZED] = True
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> BlockData:
        return cls(
            BlockID(int(d["containerID"]), int(d["localID"])),
            tuple(ChunkInfo.from_dict(c) for c in d["chunks"]),
            tuple((str(k), str(v)) for k, v in d.get("metadata", {}).items()),
            int(d.get("bcsid", 0)),
            bool(d.get(FINALIZED, False)),
        )

    def to_json(self) -> bytes:
        return json.dumps(self.to_dict(), separators=(",", ":")).encode()

    @classmethod
    def from_json(cls, raw: bytes) -> BlockData:
        return cls.from_dict(json.loads(raw))

    @staticmethod
    def extent_of_json(raw: bytes) -> tuple[int, int]:
        """(bcsid, size) of a stored block without building its chunks: a read that only needs to know
        how far the block goes skips decoding thousands of checksums."""
        d = json.loads(raw)
        return int(d.get("bcsid", 0)), sum(int(c["len"]) for c in d["chunks"])


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
