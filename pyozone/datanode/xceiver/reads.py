"""Reads of committed chunks, verified against the checksums committed with their block.

A mismatch against committed checksums proves the replica is damaged: it is marked UNHEALTHY (the listener
reports it) and the answer is CHECKSUM_MISMATCH, which sends the client to another replica. A chunk with
no committed metadata is checked against the request's own checksums, and a mismatch there marks nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyozone.datanode.storage import (
    ChecksumMismatch,
    ChecksumType,
    ChunkInfo,
    ContainerError,
    KeyValueContainer,
    Result,
)
from pyozone.hdds.errors import ProtocolError
from pyozone.hdds.ids import BlockID
from pyozone.hdds.limits import MAX_CHUNK_BYTES
from pyozone.protocol.common import integer, text
from pyozone.protocol.container import chunk_from_proto

if TYPE_CHECKING:
    from pyozone.proto import DatanodeClientProtocol_pb2 as pb


def read_committed(
    container: KeyValueContainer, block_id: BlockID, wanted: pb.ChunkInfo, field: str
) -> bytes:
    """Reads the requested range, verified against the committed chunk that holds it (`wanted`: the
    request's chunk, as sent)."""
    name = text(wanted.chunkName, f"{field}.chunkName")
    offset, length = integer(wanted.offset, f"{field}.offset"), integer(wanted.len, f"{field}.len")
    if length > MAX_CHUNK_BYTES:
        raise ProtocolError(f"{field}.len", f"{length} is above the {MAX_CHUNK_BYTES}-byte chunk limit")
    stored = _committed_chunk(container, block_id, name, offset, length)
    if stored is None:  # no committed metadata: only the request's own checksums can be checked
        chunk = chunk_from_proto(wanted, field)
        try:
            return container.read_chunk(block_id, chunk)
        except ChecksumMismatch as e:
            raise ContainerError(
                Result.CHECKSUM_MISMATCH, f"{block_id} chunk {name} (uncommitted): {e}"
            ) from None
    skip = offset - stored.offset
    _check_aligned(stored, skip, length, field)
    return verified_read(container, block_id, stored, skip, length)


def _committed_chunk(
    container: KeyValueContainer, block_id: BlockID, name: str, offset: int, length: int
) -> ChunkInfo | None:
    try:
        block = container.get_block(block_id)
    except ContainerError as e:
        if e.result is Result.NO_SUCH_BLOCK:
            return None
        raise
    holding = [c for c in block.chunks if c.offset <= offset and offset + length <= c.offset + c.length]
    return next((c for c in holding if c.name == name), holding[0] if holding else None)


def verified_read(
    container: KeyValueContainer,
    block_id: BlockID,
    chunk: ChunkInfo,
    skip: int = 0,
    length: int | None = None,
) -> bytes:
    try:
        return container.read_chunk(block_id, chunk, skip, length)
    except ChecksumMismatch as e:
        container.mark_unhealthy(f"read of {block_id} chunk {chunk.name}: {e}")
        raise ContainerError(Result.CHECKSUM_MISMATCH, f"{block_id} chunk {chunk.name}: {e}") from None


def _check_aligned(chunk: ChunkInfo, skip: int, length: int, field: str) -> None:
    """A partial read must cover whole checksum pieces: part of a piece cannot be verified, and the
    storage layer would report it as a checksum mismatch, i.e. as damage that is not there."""
    if chunk.checksum_data.type is ChecksumType.NONE:
        return
    bpc, end = chunk.checksum_data.bytes_per_checksum, skip + length
    if skip % bpc or (end % bpc and end != chunk.length):
        raise ProtocolError(
            field, f"bytes {skip}..{end} of chunk {chunk.name} are not on its {bpc}-byte checksum boundaries"
        )
