"""A chunk as a block's reader knows it (Ozone's ContainerProtos.ChunkInfo): where its bytes sit in the block
and their checksums. The messages it comes from are read in protocol/data.py."""

from __future__ import annotations

from dataclasses import dataclass

from pyozone.hdds.checksum import ChecksumData, ChecksumType


@dataclass(frozen=True, slots=True)
class ChunkInfo:
    """`length` bytes at `offset` in the block, with their checksums (piece i covers bytes
    [i*bpc, (i+1)*bpc) of the chunk)."""

    name: str
    offset: int
    length: int
    checksum_data: ChecksumData

    def aligned_range(self, start: int, limit: int) -> tuple[int, int]:
        """[start, end) within the chunk covering `start` to the chunk's end (or the block's committed end,
        `limit`), widened to whole checksum pieces: a piece can only be verified whole, and a datanode
        refuses other ranges."""
        bpc = self.checksum_data.bytes_per_checksum
        end = min(self.length, limit)
        if self.checksum_data.type is ChecksumType.NONE or bpc <= 0:
            return start, end
        return start - start % bpc, min(self.length, -(-end // bpc) * bpc)
