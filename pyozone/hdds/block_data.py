"""A block's record on a datanode: its chunks (ChunkInfo) and client metadata (BlockData), as Ozone's
hdds-common keeps them (org.apache.hadoop.ozone.container.common.helpers.BlockData and ChunkInfo): the
storage layer persists them and the container protocol carries them (protocol/container.py).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

from pyozone.hdds.checksum import ChecksumData
from pyozone.hdds.ids import BlockID


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
    def json_names_chunks(raw: bytes) -> bool:
        """Whether a stored block names any chunk, without decoding it: `to_json` writes none as
        `"chunks":[]`, which no string value can hold unescaped (a put's check on the write path)."""
        return b'"chunks":[]' not in raw

    @staticmethod
    def extent_of_json(raw: bytes) -> tuple[int, int]:
        """(bcsid, size) of a stored block without building its chunks: a read that only needs to know
        how far the block goes skips decoding thousands of checksums."""
        d = json.loads(raw)
        return int(d.get("bcsid", 0)), sum(int(c["len"]) for c in d["chunks"])
