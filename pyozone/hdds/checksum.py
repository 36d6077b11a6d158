"""Chunk checksums as Ozone computes them: one checksum per bytes_per_checksum piece of a chunk.

The client computes them, the datanode verifies them before it writes and when it reads or scans, and
they travel with the chunk's metadata, so a bit flip anywhere between client memory and disk is caught.
CRC values are stored as 4 big-endian bytes, digests as their raw bytes (Ozone's encoding).

CRC32 is ISA-L's (python-isal's isal_zlib.crc32, the same values as zlib.crc32): every byte written is
summed by the client and verified by each replica, and on this machine zlib 1.2.13 took 0.50-0.60 ms a
MiB in 16 KB pieces against ISA-L's 0.16-0.19 (docs/write-pipeline.md, V2's checks).
"""

from __future__ import annotations

import base64
import hashlib
import struct
from collections.abc import Callable
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

import crc32c
from isal import isal_zlib


class ChecksumType(IntEnum):
    """Ozone's ContainerProtos.ChecksumType, with its numbers."""

    NONE = 1
    CRC32 = 2
    CRC32C = 3
    SHA256 = 4
    MD5 = 5


class ChecksumMismatch(Exception):
    """A piece of data does not match its checksum; `index` is the piece's index within the chunk."""

    def __init__(self, index: int, message: str) -> None:
        super().__init__(message)
        self.index = index


_U32 = struct.Struct(">I")
_SIZES = {
    ChecksumType.NONE: 0,
    ChecksumType.CRC32: 4,
    ChecksumType.CRC32C: 4,
    ChecksumType.SHA256: 32,
    ChecksumType.MD5: 16,
}


def checksum_size(kind: ChecksumType) -> int:
    """Bytes per checksum value of `kind` (0 for NONE)."""
    return _SIZES[kind]


def _function(kind: ChecksumType) -> Callable[[memoryview], bytes]:
    match kind:
        case ChecksumType.CRC32:
            return lambda piece: _U32.pack(isal_zlib.crc32(piece))
        case ChecksumType.CRC32C:
            return lambda piece: _U32.pack(crc32c.crc32c(piece))
        case ChecksumType.SHA256:
            return lambda piece: hashlib.sha256(piece).digest()
        case ChecksumType.MD5:
            return lambda piece: hashlib.md5(piece, usedforsecurity=False).digest()
    raise ValueError(f"checksum type {kind.name} computes nothing")


@dataclass(frozen=True, slots=True)
class ChecksumData:
    """The checksums of one chunk: piece i covers bytes [i*bpc, (i+1)*bpc) of the chunk."""

    type: ChecksumType
    bytes_per_checksum: int
    checksums: tuple[bytes, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON form: the checksums concatenated in base64, since every one has the type's fixed size."""
        joined = base64.b64encode(b"".join(self.checksums)).decode("ascii")
        return {"type": self.type.name, "bytesPerChecksum": self.bytes_per_checksum, "checksums": joined}

    def check_shape(self, length: int) -> None:
        """Raises ValueError unless there is exactly one checksum of the type's size per piece of a
        `length`-byte chunk (none for NONE): what is stored must be verifiable later."""
        size = _SIZES[self.type]
        expected = (
            0 if size == 0 else -(-length // self.bytes_per_checksum) if self.bytes_per_checksum > 0 else -1
        )
        if expected < 0:
            raise ValueError(f"bytes per checksum must be positive, got {self.bytes_per_checksum}")
        if len(self.checksums) != expected or any(len(c) != size for c in self.checksums):
            raise ValueError(
                f"a {length}-byte chunk needs {expected} {self.type.name} checksums of {size} bytes, "
                f"got {len(self.checksums)}"
            )

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ChecksumData:
        kind = ChecksumType[d["type"]]
        raw, size = base64.b64decode(d["checksums"], validate=True), _SIZES[kind]
        if (size == 0 and raw) or (size and len(raw) % size):
            raise ValueError(f"{len(raw)} bytes of {kind.name} checksums is not a whole number of them")
        pieces = tuple(raw[i : i + size] for i in range(0, len(raw), size)) if size else ()
        return cls(kind, int(d["bytesPerChecksum"]), pieces)


def compute(
    data: bytes | bytearray | memoryview, kind: ChecksumType, bytes_per_checksum: int
) -> ChecksumData:
    if bytes_per_checksum <= 0:
        raise ValueError(f"bytes per checksum must be positive, got {bytes_per_checksum}")
    if kind is ChecksumType.NONE:
        return ChecksumData(kind, bytes_per_checksum)
    fn, view = _function(kind), memoryview(data).cast("B")
    sums = tuple(fn(view[i : i + bytes_per_checksum]) for i in range(0, len(view), bytes_per_checksum))
    return ChecksumData(kind, bytes_per_checksum, sums)


def verify(
    data: bytes | bytearray | memoryview, checksum_data: ChecksumData, offset_in_chunk: int = 0
) -> None:
    """Checks `data`, which starts `offset_in_chunk` bytes into its chunk.

    The data must start on a piece boundary and end on one or at the chunk's end: a piece's checksum
    covers the whole piece, so part of a piece cannot be verified. A range that ends inside a piece
    that is not the chunk's last raises ValueError (a caller error), never ChecksumMismatch.
    """
    if checksum_data.type is ChecksumType.NONE:
        return
    bpc, sums = checksum_data.bytes_per_checksum, checksum_data.checksums
    if bpc <= 0 or offset_in_chunk < 0 or offset_in_chunk % bpc:
        raise ValueError(f"offset {offset_in_chunk} is not on a {bpc}-byte checksum boundary")
    end_piece, tail = divmod(offset_in_chunk + len(data), bpc)
    if tail and end_piece < len(sums) - 1:
        raise ValueError(f"range ending at byte {offset_in_chunk + len(data)} ends inside piece {end_piece}")
    fn, view, first = _function(checksum_data.type), memoryview(data).cast("B"), offset_in_chunk // bpc
    for n, start in enumerate(range(0, len(view), bpc)):
        index = first + n
        if index >= len(sums):
            raise ChecksumMismatch(index, f"data runs past its {len(sums)} checksums at piece {index}")
        if fn(view[start : start + bpc]) != sums[index]:
            raise ChecksumMismatch(
                index, f"{checksum_data.type.name} mismatch in piece {index} (bytes {index * bpc}..)"
            )
