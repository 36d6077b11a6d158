"""KeyInputStream: a committed key as a seekable async stream over its blocks (Ozone's KeyInputStream).

The key's blocks come from one lookupKey; each block is read by its own BlockInputStream (an EC block
group by an ECBlockInputStream), lazily and in bounded memory: once the reads move to another block the
previous one lets go of its buffers (a seek back fetches them again), so `async for piece in stream` streams
a key of any size.
"""

from __future__ import annotations

import io
import os
from bisect import bisect_right
from collections.abc import AsyncIterator

from pyozone.client.block_input import BlockInputStream, StreamCache
from pyozone.client.config import ClientConfig
from pyozone.client.ec_input import ECBlockInputStream
from pyozone.client.errors import BlockReadError
from pyozone.framework.datanode import ChannelPool
from pyozone.framework.om import OmClient
from pyozone.hdds.locations import KeyLocation
from pyozone.hdds.om_views import KeyInfo


class KeyInputStream:
    def __init__(
        self, om: OmClient, pool: ChannelPool, config: ClientConfig, info: KeyInfo, client_host: str
    ) -> None:
        self.info = info
        self.size = info.data_size
        self.buffer_size = config.buffer_size
        """The largest piece `async for` (and the sync KeyReader's iteration) yields."""
        self._om = om
        self._config = config
        self._client_host = client_host
        self._streams = StreamCache(pool, config.request_timeout_s)
        self._ec = info.is_ec
        self._blocks = [self._block(loc) for loc in info.locations]
        self._current: int | None = None  # the block read last, which holds buffers
        self._starts = [loc.offset for loc in info.locations]
        self._pos = 0
        self._reading = False
        total = sum(loc.length for loc in info.locations)
        if total != self.size:
            raise BlockReadError(f"key {self._name()} has {self.size} bytes but its blocks hold {total}")

    def _block(self, location: KeyLocation) -> BlockInputStream | ECBlockInputStream:
        if location.pipeline.ec is not None:
            return ECBlockInputStream(location, self._config, self._streams, self._refresh)
        if self._ec:  # its cells would be read as a replica's bytes: a parity cell as the key's data
            raise BlockReadError(
                f"key {self._name()} is {self.info.replication} but the pipeline of its block "
                f"{location.block_name} carries no EC config"
            )
        return BlockInputStream(location, self._config, self._streams, self._refresh)

    def _name(self) -> str:
        return f"/{self.info.volume}/{self.info.bucket}/{self.info.name}"

    async def _refresh(self, old: KeyLocation) -> KeyLocation:
        info = await self._om.lookup_key(
            self.info.volume, self.info.bucket, self.info.name, self._client_host, refresh=True,
            version=self.info.version_id,  # the version being read, not whichever is current now
        )  # fmt: skip
        for loc in info.locations:
            if (loc.container_id, loc.local_id) == (old.container_id, old.local_id):
                return loc
        raise BlockReadError(f"key {self._name()} no longer has block {old.block_name} (it was rewritten)")

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        base = {os.SEEK_SET: 0, os.SEEK_CUR: self._pos, os.SEEK_END: self.size}[whence]
        if base + offset < 0:
            raise ValueError(f"seek to {base + offset} is before the start of the key")
        self._pos = base + offset
        return self._pos

    async def read(self, n: int = -1) -> bytes:
        """Up to `n` bytes from the current position (all the rest when n < 0); b"" at the end.

        Each byte is copied once, from the range received from the datanode into the result: a read within
        one range is that slice's copy; a longer one is written piece by piece into a BytesIO, whose
        getvalue hands over its buffer without a further copy. A failed read hands out nothing and leaves
        the position; reads of one stream run one at a time (`_begin`)."""
        start = self._begin()
        try:
            end = self.size if n < 0 else min(self.size, start + n)
            if start >= end:
                return b""
            first = await self._piece(start, end - start)
            if start + len(first) == end:
                self._pos = end
                return first if isinstance(first, bytes) else bytes(first)
            out, at = io.BytesIO(), start + len(first)
            out.write(first)
            while at < end:  # `first` is no longer valid here: the next piece may reuse its buffer
                piece = await self._piece(at, end - at)
                out.write(piece)
                at += len(piece)
            self._pos = end
            return out.getvalue()
        finally:
            self._reading = False

    async def readinto(self, buffer: memoryview) -> int:
        """Fills `buffer` (a writable byte view) from the current position as far as the key goes: each
        byte copied once, from the range received from the datanode into the caller's memory. 0 at the end.
        A failed read leaves the position (what it copied into `buffer` by then is verified bytes of the
        key at their offsets)."""
        start = self._begin()
        try:
            end = min(self.size, start + len(buffer))
            at = start
            while at < end:
                piece = await self._piece(at, end - at)
                buffer[at - start : at - start + len(piece)] = piece
                at += len(piece)
            self._pos = at
            return at - start
        finally:
            self._reading = False

    def _begin(self) -> int:
        """The position a read starts from, refusing a second read while one runs: its pieces would share
        the blocks' buffers and the position would be moved under it."""
        if self._reading:
            raise RuntimeError(f"key {self._name()}: a read is already in progress on this stream")
        self._reading = True
        return self._pos

    async def readall(self) -> bytes:
        return await self.read(-1)

    async def _piece(self, pos: int, n: int) -> bytes | memoryview:
        """Up to `n` bytes at `pos`, within one block: a view (valid until the next piece of the block) or
        bytes of their own (an EC group's)."""
        index = bisect_right(self._starts, pos) - 1
        if index != self._current:
            if self._current is not None:
                await self._blocks[self._current].release()
            self._current = index
        block = self._blocks[index]
        offset = pos - block.location.offset
        piece = await (
            block.read(offset, n) if isinstance(block, ECBlockInputStream) else block.view(offset, n)
        )
        if not piece:
            raise BlockReadError(f"key {self._name()}: block {block.location.block_name} ended early")
        return piece

    async def __aiter__(self) -> AsyncIterator[bytes]:
        """Pieces of at most ozone.client.stream.buffer.size bytes from the current position."""
        while self._pos < self.size:
            yield await self.read(self.buffer_size)

    async def close(self) -> None:
        for block in self._blocks:
            block.cancel()
        await self._streams.close()

    async def __aenter__(self) -> KeyInputStream:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
