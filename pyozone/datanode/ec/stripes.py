"""Rebuilds one block group on its targets, stripe by stripe (Ozone's reconstructECBlockGroup).

Per stripe: `data` cells are read from the sources in parallel (data indexes first; a data cell past the
group's end is known zeros and not read), each checked against the checksums its source recorded; a cell
that fails (unreadable, wrong length, checksum mismatch) drops its source for the rest of the block and
another source is read instead. The missing cells are decoded, checksummed with the sources' checksum type
and piece size, and written to their targets as chunk n+1 of stripe n; once every write is acknowledged,
each target gets its putBlock with the group length, a target with no bytes in this group an empty one.

Memory: at most READ_AHEAD stripes are read and decoded ahead of the writes, and at most WRITE_WINDOW
stripes' writes wait for their answers: a few cells per index in flight, whatever the block's size.
Copies: the RPC answer's bytes are the cell (protobuf parses into bytes); a cell shorter than its stripe's
first is zero-padded into a new buffer (the codec takes equal lengths); the codec copies each cell once
(codec.py); a rebuilt cell is copied into its writeChunk message (protobuf takes bytes).
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pyozone.datanode.ec.groups import BlockGroup
from pyozone.datanode.ec.peers import Peer, PeerError, call, checked
from pyozone.hdds.checksum import ChecksumData, ChecksumMismatch, compute, verify
from pyozone.hdds.ec import StripeLayout, padded
from pyozone.hdds.ec.codec import Buffer, RawCodec
from pyozone.protocol import ec as wire
from pyozone.protocol.chunks import checksum_data_from_proto, chunk_info_to_proto

if TYPE_CHECKING:
    from pyozone.proto.DatanodeClientProtocol_pb2 import ChunkInfo
    from pyozone.proto.DatanodeClientProtocol_pb2 import ContainerCommandRequestProto as Request
    from pyozone.proto.DatanodeClientProtocol_pb2 import ContainerCommandResponseProto as Response

log = logging.getLogger(__name__)

READ_AHEAD = 2
"""Stripes read and decoded ahead of the one being written."""

WRITE_WINDOW = 4
"""Stripes whose writes may await their answers at once."""


class CellError(Exception):
    """A source's cell that cannot be used: not there, the wrong length, or failing its checksums."""


class NotEnoughSources(Exception):
    """Fewer than `data` cells of a stripe could be read."""


@dataclass(frozen=True, slots=True)
class Rebuilt:
    """One rebuilt cell, ready for its target."""

    index: int
    chunk: ChunkInfo
    data: memoryview


@dataclass(slots=True)
class BlockRebuild:
    """What rebuilding the blocks of one container needs; `rebuild` runs one block group."""

    container_id: int
    layout: StripeLayout
    codec: RawCodec
    sources: Mapping[int, Peer]
    targets: Mapping[int, Peer]
    datanode_uuid: str
    executor: Executor
    read_ahead: int = READ_AHEAD
    write_window: int = WRITE_WINDOW
    bytes_written: int = field(default=0, init=False)

    async def rebuild(self, group: BlockGroup) -> None:
        usable = {i for i in group.replicas if i in self.sources}
        chunks_at = {i: {c.offset: c for c in block.chunks} for i, block in group.replicas.items()}
        written: dict[int, list[ChunkInfo]] = {i: [] for i in self.targets}
        decoding: deque[asyncio.Task[list[Rebuilt]]] = deque()
        writes: deque[list[tuple[Peer, asyncio.Future[Response]]]] = deque()
        try:
            for stripe in range(self.layout.stripes(group.length)):
                decoding.append(asyncio.create_task(self._stripe(group, stripe, usable, chunks_at)))
                if len(decoding) > self.read_ahead:
                    await self._write(group, await decoding.popleft(), written, writes)
            while decoding:
                await self._write(group, await decoding.popleft(), written, writes)
            while writes:
                await _answered(writes.popleft())
        finally:
            for task in decoding:
                task.cancel()
            await asyncio.gather(*decoding, return_exceptions=True)
        puts = [
            (peer, peer.submit(self._put_block(group, index, written[index])))
            for index, peer in self.targets.items()
        ]
        await _answered(puts)

    def _put_block(self, group: BlockGroup, index: int, chunks: list[ChunkInfo]) -> Request:
        return wire.put_block(
            self.container_id, group.local_id, index, chunks, group.length, self.datanode_uuid
        )

    async def _write(
        self,
        group: BlockGroup,
        cells: Sequence[Rebuilt],
        written: dict[int, list[ChunkInfo]],
        writes: deque[list[tuple[Peer, asyncio.Future[Response]]]],
    ) -> None:
        submitted = []
        for cell in cells:
            peer = self.targets[cell.index]
            request = wire.write_chunk(
                self.container_id, group.local_id, cell.index, cell.chunk, cell.data, self.datanode_uuid
            )
            submitted.append((peer, peer.submit(request)))
            written[cell.index].append(cell.chunk)
            self.bytes_written += len(cell.data)
        writes.append(submitted)
        while len(writes) > self.write_window:
            await _answered(writes.popleft())

    # ------------------------------------------------------------------ one stripe
    async def _stripe(
        self,
        group: BlockGroup,
        stripe: int,
        usable: set[int],
        chunks_at: Mapping[int, Mapping[int, ChunkInfo]],
    ) -> list[Rebuilt]:
        layout, length = self.layout, group.length
        missing = [i for i in sorted(self.targets) if layout.cell_length(length, stripe, i) > 0]
        if not missing:
            return []
        first = layout.cell_length(length, stripe, 1)
        zeros = memoryview(bytes(first))
        cells: dict[int, Buffer] = {
            i: zeros for i in range(1, layout.data + 1) if layout.cell_length(length, stripe, i) == 0
        }
        read: dict[int, ChecksumData] = {}
        tried: set[int] = set()
        while len(cells) < self.layout.data:
            chosen = [
                i for i in sorted(usable - tried - set(cells) - set(self.targets))
                if layout.cell_length(length, stripe, i) > 0
            ][: self.layout.data - len(cells)]  # fmt: skip
            if not chosen:
                raise NotEnoughSources(
                    f"block {group.local_id} stripe {stripe}: {len(cells)} of {self.layout.data} cells "
                    f"readable (sources left: {sorted(usable)})"
                )
            tried.update(chosen)
            answers = await asyncio.gather(
                *(
                    self._read(group, i, stripe, layout.cell_length(length, stripe, i), chunks_at[i])
                    for i in chosen
                ),
                return_exceptions=True,
            )
            for index, answer in zip(chosen, answers, strict=True):
                if isinstance(answer, (PeerError, CellError)):
                    log.warning(
                        "container %d block %d stripe %d: source index %d dropped: %s",
                        self.container_id, group.local_id, stripe, index, answer,
                    )  # fmt: skip
                    usable.discard(index)
                elif isinstance(answer, BaseException):
                    raise answer
                else:
                    checksum, data = answer
                    read[index] = checksum
                    cells[index] = padded(data, first)
        checksum = next(iter(read.values()))
        return await asyncio.get_running_loop().run_in_executor(
            self.executor, self._decode, group.local_id, stripe, cells, missing, length, checksum
        )

    async def _read(
        self, group: BlockGroup, index: int, stripe: int, length: int, chunks: Mapping[int, ChunkInfo]
    ) -> tuple[ChecksumData, memoryview]:
        """The cell's bytes, checked against the checksums its source recorded, and those checksums."""
        offset = stripe * self.layout.cell
        chunk = chunks.get(offset)
        if chunk is None or chunk.len != length:
            held = "none" if chunk is None else f"{chunk.len} bytes"
            raise CellError(
                f"index {index} should hold a {length}-byte cell at offset {offset}; it has {held}"
            )
        answer = await call(
            self.sources[index], wire.read_chunk(group.replicas[index], chunk, self.datanode_uuid)
        )
        data = memoryview(answer.readChunk.data)
        if len(data) != length:
            raise CellError(
                f"index {index} answered {len(data)} bytes for its {length}-byte cell at {offset}"
            )
        try:
            checksum = checksum_data_from_proto(chunk)
            await asyncio.get_running_loop().run_in_executor(self.executor, verify, data, checksum)
        except (ChecksumMismatch, ValueError) as e:
            raise CellError(f"index {index} cell at offset {offset}: {e}") from None
        return checksum, data

    def _decode(
        self,
        local_id: int,
        stripe: int,
        cells: Mapping[int, Buffer],
        missing: list[int],
        length: int,
        checksum: ChecksumData,
    ) -> list[Rebuilt]:
        """Runs on the executor: decoding and checksums are CPU work; the rebuilt cells take the type and
        piece size of `checksum`, a source's."""
        kind, bpc = checksum.type, checksum.bytes_per_checksum or 1
        rebuilt = self.codec.decode(cells, missing)
        out = []
        for index in missing:
            data = rebuilt[index][: self.layout.cell_length(length, stripe, index)]
            sums = compute(data, kind, bpc)
            chunk = chunk_info_to_proto(
                f"{local_id}_chunk_{stripe + 1}", stripe * self.layout.cell, len(data), sums
            )
            out.append(Rebuilt(index, chunk, data))
        return out


async def _answered(
    submitted: Sequence[tuple[Peer, asyncio.Future[Response]]],
) -> None:
    for peer, future in submitted:
        checked(peer, await future)
