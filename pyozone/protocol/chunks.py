"""A chunk's description on the data path (DatanodeClientProtocol's ChunkInfo and ChecksumData), from and to
the kernel's checksums (pyozone.hdds.checksum): what a writer sends with a chunk's bytes (V2's client, EC
reconstruction) and what a reader verifies a cell against.
"""

from __future__ import annotations

from pyozone.hdds.checksum import ChecksumData, ChecksumType
from pyozone.proto import DatanodeClientProtocol_pb2 as pb


def chunk_info_to_proto(name: str, offset: int, length: int, checksum: ChecksumData) -> pb.ChunkInfo:
    """The ChunkInfo of `length` bytes at `offset` in their block, with the checksums computed over them."""
    return pb.ChunkInfo(
        chunkName=name,
        offset=offset,
        len=length,
        checksumData=pb.ChecksumData(
            type=int(checksum.type),
            bytesPerChecksum=checksum.bytes_per_checksum,
            checksums=checksum.checksums,
        ),
    )


def checksum_data_from_proto(chunk: pb.ChunkInfo) -> ChecksumData:
    """The checksums a chunk's ChunkInfo records, as given (verifying them against the bytes checks their
    shape); ValueError for a checksum type this version does not know."""
    sums = chunk.checksumData
    return ChecksumData(ChecksumType(sums.type), sums.bytesPerChecksum, tuple(sums.checksums))
