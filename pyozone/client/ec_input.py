"""ECBlockInputStream: ranged reads of one EC block group, degraded when indexes fail (Ozone's
ECBlockInputStream and ECBlockReconstructedStripeInputStream).

A normal read asks only the data indexes, cell by cell (StripeLayout.cells), each index through a
BlockInputStream of its own: its checksums verified, its next span read ahead, the cells of one read
fetched from their indexes at once. An index whose datanodes are unreachable, refuse, lack the block or send
a cell whose checksum fails is missing for the rest of the block group (no dead node is asked per cell).
Once a data index is missing the group is degraded: it reads whole stripes, from any `data` healthy indexes
(data cells zero-padded to the stripe's first cell, parity cells that long already; a data cell past the
group's end is known zeros and needs no read), and the codec rebuilds the missing cells off the event loop.
The stripe read is kept (small sequential reads decode it once) and the next one is rebuilt ahead, so its
reads and decoding overlap the caller's work. More than `parity` indexes missing: the locations are fetched
again from OM (forceUpdateContainerCache) once, then a BlockReadError names the block group.

Memory: each index stream keeps at most two spans (max(cell, READ_SPAN / data) each), a degraded group two
stripes; the key's stream releases all of them once its reads move to another block. Copies: a read that
spans several cells joins them (one copy); a degraded stripe pads short data cells (one copy of those cells)
and slices the caller's bytes from the rebuilt stripe.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import replace

from pyozone.client.block_input import READ_SPAN, BlockInputStream, Refresh, StreamCache
from pyozone.client.config import ClientConfig
from pyozone.client.errors import BlockReadError
from pyozone.hdds.ec.codec import codec_for
from pyozone.hdds.ec.layout import Cell, StripeLayout, padded
from pyozone.hdds.ids import ReplicationConfig
from pyozone.hdds.locations import KeyLocation, PipelineRef

Buffer = bytes | memoryview


class _IndexFailed(Exception):
    """An index went missing during a read; the read starts over knowing it."""


class ECBlockInputStream:
    def __init__(
        self, location: KeyLocation, config: ClientConfig, streams: StreamCache, refresh: Refresh
    ) -> None:
        ec = location.pipeline.ec
        if ec is None:
            raise ValueError(f"block {location.block_name} has no EC config")
        self.location = location
        self.ec: ReplicationConfig = ec
        self._layout = StripeLayout.of(ec)
        self._codec = codec_for(ec)
        self._config = config
        self._streams = streams
        self._refresh = refresh
        self._refreshed = False
        self._indexes: dict[int, BlockInputStream] = {}
        self._missing: dict[int, str] = {}  # index -> why
        self._stripe: tuple[int, list[memoryview]] | None = None  # a degraded read's last stripe
        self._ahead: tuple[int, asyncio.Task[list[memoryview]]] | None = None  # and its next one

    @property
    def length(self) -> int:
        return self.location.length

    @property
    def missing(self) -> frozenset[int]:
        """The indexes this block group reads without."""
        return frozenset(self._missing)

    @property
    def degraded(self) -> bool:
        """Whether a data index is missing: reads then rebuild whole stripes."""
        return any(i <= self._layout.data for i in self._missing)

    def _name(self) -> str:
        return f"EC block group {self.location.block_name} ({self.ec.ec_name})"

    async def read(self, offset: int, n: int) -> bytes:
        """Up to `n` bytes from `offset` within the group, never past the stripe's end; b"" past the end."""
        if offset >= self.length or n <= 0:
            return b""
        stripe = offset // self._layout.stripe_bytes
        end = min(offset + n, self.length, (stripe + 1) * self._layout.stripe_bytes)
        cells = list(self._layout.cells(offset, end))
        while True:
            try:
                if self.degraded:
                    parts = await self._degraded(stripe, cells)
                else:
                    parts = await self._normal(cells)
            except _IndexFailed:
                continue
            return bytes(parts[0]) if len(parts) == 1 else b"".join(parts)

    async def _normal(self, cells: Sequence[Cell]) -> list[Buffer]:
        """The cells from their data indexes, at once (one cell per index: a stripe at most)."""
        return await self._gather([(c.index, c.index_offset, c.length) for c in cells])

    async def _degraded(self, stripe: int, cells: Sequence[Cell]) -> list[Buffer]:
        if self._stripe is None or self._stripe[0] != stripe:
            self._stripe = None  # the old stripe goes before the next one lands: two stripes in memory
            ahead, self._ahead = self._ahead, None
            if ahead is not None and ahead[0] == stripe:
                data = await ahead[1]
            else:
                await _stop(ahead)
                data = await self._rebuild(stripe)
            self._stripe = (stripe, data)
            if stripe + 1 < self._layout.stripes(self.length):
                task = asyncio.ensure_future(self._rebuild(stripe + 1, ahead=True))
                task.add_done_callback(lambda t: t.cancelled() or t.exception())  # awaited by the next read
                self._ahead = (stripe + 1, task)
        data = self._stripe[1]
        base = stripe * self._layout.cell
        return [data[c.index - 1][c.index_offset - base : c.index_offset - base + c.length] for c in cells]

    async def _rebuild(self, stripe: int, ahead: bool = False) -> list[memoryview]:
        """Every data cell of the stripe (its own length), read or rebuilt from `data` healthy indexes.
        Rebuilt `ahead` (no caller waits yet), too few indexes only end it: the caller's read refreshes."""
        layout = self._layout
        lengths = layout.stripe_cell_lengths(self.length, stripe)
        first, start = lengths[0], stripe * layout.cell
        zeros = [i for i in range(1, layout.data + 1) if lengths[i - 1] == 0]
        lost = [i for i in range(1, layout.data + 1) if lengths[i - 1] and i in self._missing]
        kept = [i for i in range(1, layout.data + 1) if lengths[i - 1] and i not in self._missing]
        parity = [i for i in range(layout.data + 1, layout.nodes + 1) if i not in self._missing]
        if len(parity) < len(lost):
            if not ahead:
                await self._too_few()
            raise _IndexFailed
        sources = kept + parity[: len(lost)]
        ranges = [(i, start, layout.cell_length(self.length, stripe, i)) for i in sources]
        read = dict(zip(sources, await self._gather(ranges), strict=True))
        rebuilt: dict[int, memoryview] = {}
        if lost:  # else the missing data index has no bytes in this (last) stripe
            equal = {i: padded(cell, first) for i, cell in read.items()}
            equal.update({i: bytes(first) for i in zeros})
            rebuilt = await asyncio.to_thread(self._codec.decode, equal, lost)
        out = []
        for i in range(1, layout.data + 1):
            cell = rebuilt[i] if i in rebuilt else memoryview(read[i]) if i in read else memoryview(b"")
            out.append(cell[: lengths[i - 1]])
        return out

    async def _gather(self, ranges: Sequence[tuple[int, int, int]]) -> list[Buffer]:
        """(index, offset, length) ranges read at once, one per index; every index that fails is marked
        missing before _IndexFailed (no read is left running on a stream the retry reuses)."""
        results = await asyncio.gather(*(self._read_index(*r) for r in ranges), return_exceptions=True)
        failed = False
        for (index, _, _), result in zip(ranges, results, strict=True):
            if isinstance(result, BlockReadError):
                self._lose(index, str(result))
                failed = True
            elif isinstance(result, BaseException):
                raise result
        if failed:
            raise _IndexFailed
        return results  # type: ignore[return-value]  # no exception is left among them

    async def _read_index(self, index: int, offset: int, length: int) -> Buffer:
        if index in self._missing:
            raise BlockReadError(self._missing[index])
        stream = self._index_stream(index)
        if stream is None:
            raise BlockReadError(f"no datanode holds replica index {index}")
        parts: list[bytes] = []
        got = 0
        while got < length:
            part = await stream.read(offset + got, length - got)
            if not part:
                raise BlockReadError(f"replica index {index} ended at {offset + got} of {length} bytes")
            parts.append(part)
            got += len(part)
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def _index_stream(self, index: int) -> BlockInputStream | None:
        stream = self._indexes.get(index)
        if stream is None:
            members = self.location.pipeline.by_index().get(index, ())
            if not members:
                return None
            pipeline = PipelineRef(self.location.pipeline.id, members, "", (index,) * len(members), self.ec)
            length = self._layout.index_length(self.length, index)
            location = replace(self.location, offset=0, length=length, pipeline=pipeline)
            span = max(self._layout.cell, READ_SPAN // self._layout.data)
            stream = self._indexes[index] = BlockInputStream(
                location, self._config, self._streams, None, span
            )
        return stream

    def _lose(self, index: int, why: str) -> None:
        self._missing[index] = why
        stream = self._indexes.pop(index, None)
        if stream is not None:
            stream.cancel()

    async def _too_few(self) -> None:
        """More indexes missing than parity rebuilds: ask OM afresh once, else fail naming the group."""
        why = "; ".join(f"index {i}: {self._missing[i]}" for i in sorted(self._missing))
        if self._refreshed:
            raise BlockReadError(
                f"{self._name()}: {len(self._missing)} of {self._layout.nodes} replica indexes are "
                f"unavailable, more than the {self._layout.parity} parity can rebuild: {why}"
            )
        self._refreshed = True
        try:
            self.location = await self._refresh(self.location)
        except Exception as e:
            raise BlockReadError(
                f"{self._name()}: too few replica indexes ({why}); refresh from OM: {e}"
            ) from e
        await self.release()
        self._missing.clear()

    async def release(self) -> None:
        """Lets go of the stripe read, the stripe rebuilt ahead and the index streams (their ranges and
        chunk lists): the key's reads moved on to another block, or a refresh replaces the locations. The
        indexes known missing stay so; a later read (a seek back) opens index streams again."""
        ahead, self._ahead = self._ahead, None
        await _stop(ahead)
        self._stripe = None
        indexes, self._indexes = self._indexes, {}
        for stream in indexes.values():
            stream.cancel()

    def cancel(self) -> None:
        """Stops the reads ahead, the group's and its index streams' (the stream is closing)."""
        if self._ahead is not None:
            self._ahead[1].cancel()
            self._ahead = None
        for stream in self._indexes.values():
            stream.cancel()


async def _stop(ahead: tuple[int, asyncio.Task[list[memoryview]]] | None) -> None:
    """Cancels a stripe rebuilt ahead and waits until it has let go of the index streams."""
    if ahead is not None:
        ahead[1].cancel()
        await asyncio.wait([ahead[1]])
