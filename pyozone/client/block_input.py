"""BlockInputStream: ranged reads of one committed block from whichever datanode answers correctly.

GetBlock (with the committed BCSID) gives the chunk list; each read fetches one chunk's range, widened to
checksum-piece boundaries (a piece can only be verified whole, and the datanode refuses other ranges),
and verifies it locally when ozone.client.verify.checksum. A replicated block no longer than one chunk
(ozone.client.stream.buffer.size: what the writer sent as one putSmallFile) is read whole by one
GetSmallFile instead (Ozone's ContainerProtocolCalls.readSmallFile): its chunk list and data in one round
trip. Any failure (an error result, a wrong length,
a local checksum mismatch, an unreachable node, a timeout) moves on to the next datanode of the
location; when all failed, the location is refreshed from OM (the container may have moved or closed)
and the round repeats, at most ozone.client.read.max.retries times with read.retry.interval between.
Only the last fetched range is kept (and the next one read ahead), and the key's stream releases a block
once its reads move to another one, so a key of any size streams in bounded memory.

An EC block group reads each replica index through a BlockInputStream of its own (ec_input.py): one round
over that index's datanodes, no refresh (the group decides what a failed index means), and the GetBlock
names the replica index it expects, which the datanode's answer must carry.
"""

from __future__ import annotations

import asyncio
from bisect import bisect_right
from collections.abc import Awaitable, Callable

from pyozone.client.config import ClientConfig
from pyozone.client.datastream_read import DatastreamReader
from pyozone.client.errors import BlockReadError
from pyozone.framework.datanode import ChannelPool, DatanodeCallError, XceiverStream
from pyozone.hdds.checksum import ChecksumMismatch, ChecksumType, verify
from pyozone.hdds.chunks import ChunkInfo
from pyozone.hdds.errors import ProtocolError
from pyozone.hdds.limits import MAX_CHUNK_BYTES
from pyozone.hdds.locations import DatanodeRef, KeyLocation
from pyozone.protocol import data as wire

Refresh = Callable[[KeyLocation], Awaitable[KeyLocation]]
Data = bytes | memoryview
READ_SPAN = 8 << 20
"""At most this much is read from a datanode's datastream port at once (and read ahead)."""


class _ReadFailed(Exception):
    pass


class StreamCache:
    """One read stream per datanode, shared by the blocks of a key; a broken stream is replaced."""

    def __init__(self, pool: ChannelPool, timeout_s: float) -> None:
        self._pool = pool
        self._timeout_s = timeout_s
        self._streams: dict[str, XceiverStream] = {}
        self._readers: dict[str, DatastreamReader] = {}

    def reader(self, datanode: DatanodeRef) -> DatastreamReader:
        reader = self._readers.get(datanode.address)
        if reader is None:
            reader = DatastreamReader(datanode, self._timeout_s, self._pool.tls)  # the client's certificate
            self._readers[datanode.address] = reader
        return reader

    def get(self, datanode: DatanodeRef) -> XceiverStream:
        stream = self._streams.get(datanode.address)
        if stream is None:
            stream = self._pool.stream(datanode, self._timeout_s)
            self._streams[datanode.address] = stream
        return stream

    async def drop(self, datanode: DatanodeRef) -> None:
        reader = self._readers.pop(datanode.address, None)
        if reader is not None:
            reader.close()
        stream = self._streams.pop(datanode.address, None)
        if stream is not None:
            await stream.close()

    async def close(self) -> None:
        for reader in self._readers.values():
            reader.close()
        self._readers.clear()
        streams, self._streams = list(self._streams.values()), {}
        for stream in streams:
            await stream.close()


class BlockInputStream:
    def __init__(
        self,
        location: KeyLocation,
        config: ClientConfig,
        streams: StreamCache,
        refresh: Refresh | None,
        span: int = READ_SPAN,
    ) -> None:
        """`refresh` None: one round over the datanodes, then BlockReadError (the caller handles it);
        `span`: how much one datastream read fetches (and reads ahead)."""
        self.location = location
        self._config = config
        self._streams = streams
        self._refresh = refresh
        self._span = span
        self._replica_index = location.pipeline.replica_indexes[0] if location.pipeline.replica_indexes else 0
        self._chunks: tuple[ChunkInfo, ...] | None = None
        self._starts: list[int] = []
        self._preferred: DatanodeRef | None = None
        self._cache_start = 0
        self._cache: Data = b""
        self._spare: bytearray | None = None  # a span buffer no longer read from, to receive into again
        self._ahead: tuple[int, asyncio.Task[tuple[int, Data]]] | None = None

    @property
    def length(self) -> int:
        return self.location.length

    async def read(self, offset: int, n: int) -> bytes:
        """Up to `n` bytes from `offset` within the block (fewer at a fetched range's end), as bytes of the
        caller's own; b"" past the end."""
        return bytes(await self.view(offset, n))

    async def view(self, offset: int, n: int) -> memoryview:
        """Up to `n` bytes from `offset` within the block (fewer at a fetched range's end), without a copy:
        a view of the fetched range, valid only until the next `view`, `read` or `release` of this block,
        which may receive into its buffer again. The caller copies what it keeps (KeyInputStream copies
        straight into its result or the caller's buffer: a read's one copy). Empty past the end.

        While the caller consumes one range the next one is already being read (one range ahead), so
        the datanode's disk read and the transfer overlap the caller's work."""
        if offset >= self.length or n <= 0:
            return memoryview(b"")
        if not self._cache_start <= offset < self._cache_start + len(self._cache):
            old = self._cache
            self._cache_start, self._cache = await self._take_ahead(offset) or await self._fetch(offset)
            if isinstance(old, memoryview) and isinstance(old.obj, bytearray):
                self._spare = old.obj  # the caller is done with its views, and no thread writes into it
            following = self._cache_start + len(self._cache)
            if following < self.length:
                task = asyncio.ensure_future(self._fetch(following))
                task.add_done_callback(lambda t: t.cancelled() or t.exception())  # read by _take_ahead
                self._ahead = (following, task)
        skip = offset - self._cache_start
        return memoryview(self._cache)[skip : skip + min(n, self.length - offset)]

    async def _take_ahead(self, offset: int) -> tuple[int, Data] | None:
        """The chunk read ahead, if it starts at `offset`; a read ahead of another place is dropped."""
        ahead, self._ahead = self._ahead, None
        if ahead is None:
            return None
        start, task = ahead
        if start == offset:
            return await task
        task.cancel()
        return None

    def cancel(self) -> None:
        """Stops a read ahead (the stream is closing)."""
        if self._ahead is not None:
            self._ahead[1].cancel()
            self._ahead = None

    async def release(self) -> None:
        """Lets go of the fetched range, the spare buffer and the chunk list once the read ahead has stopped:
        the key's reads moved on to another block, and a key of many blocks must not hold one range (up to
        READ_SPAN) per block. A later read (a seek back) fetches them again."""
        ahead, self._ahead = self._ahead, None
        if ahead is not None:
            ahead[1].cancel()
            await asyncio.wait([ahead[1]])
        self._cache_start, self._cache, self._spare = 0, b"", None
        self._chunks, self._starts = None, []

    async def _fetch(self, offset: int) -> tuple[int, bytes]:
        tried: list[str] = []
        rounds = self._config.read_max_retries + 1 if self._refresh is not None else 1
        for round_ in range(rounds):
            if round_:
                assert self._refresh is not None
                await asyncio.sleep(self._config.read_retry_interval_s)
                try:
                    self.location = await self._refresh(self.location)
                except Exception as e:
                    tried.append(f"refresh from OM: {e}")
                    continue
                self._chunks, self._preferred = None, None
            order = list(self.location.read_order())
            if not order:
                tried.append("the block's location names no datanode (SCM knows no replica of its container)")
            if self._preferred in order:
                order.remove(self._preferred)
                order.insert(0, self._preferred)
            for datanode in order:
                try:
                    result = await self._fetch_from(datanode, offset)
                except (DatanodeCallError, ChecksumMismatch, _ReadFailed, ProtocolError) as e:
                    tried.append(f"{datanode.address} ({datanode.uuid[:8]}): {e}")
                    if isinstance(e, DatanodeCallError) and e.unreachable:
                        await self._streams.drop(datanode)
                    if self._preferred == datanode:
                        self._preferred = None
                    continue
                self._preferred = datanode
                return result
        raise BlockReadError(
            f"block {self.location.block_name}{self._index_name()} (bytes {offset}.. of {self.length}): "
            f"every datanode failed in {rounds} round{'s' * (rounds > 1)}: " + "; ".join(tried)
        )

    async def _fetch_from(self, datanode: DatanodeRef, offset: int) -> tuple[int, bytes]:
        stream = self._streams.get(datanode)
        if self._chunks is None and self._small:
            whole = await self._get_small_file(stream)
            if whole is not None:
                return 0, whole
        if self._chunks is None:
            response = await stream.call(wire.get_block_request(self.location, self._replica_index))
            held, chunks = wire.block_from_proto(response)
            if self._replica_index and held != self._replica_index:  # OM's locations are out of date
                raise _ReadFailed(f"holds replica index {held}, not {self._replica_index}")
            if sum(c.length for c in chunks) < self.length:
                raise _ReadFailed(f"has {sum(c.length for c in chunks)} bytes of a {self.length}-byte block")
            self._chunks, self._starts = chunks, [c.offset for c in chunks]
        first = bisect_right(self._starts, offset) - 1
        if datanode.datastream_port is not None:
            return await self._stream_span(datanode, first, offset)
        chunk = self._chunks[first]
        start, end = chunk.aligned_range(offset - chunk.offset, self.length - chunk.offset)
        data = await self._read_chunk(stream, chunk, start, end)
        self._check(chunk, start, end, data)
        return chunk.offset + start, data

    @property
    def _small(self) -> bool:
        """A replicated block no longer than one chunk, as the writer cuts them and a datanode answers a
        GetSmallFile (MAX_CHUNK_BYTES)."""
        return not self._replica_index and self.length <= min(self._config.buffer_size, MAX_CHUNK_BYTES)

    async def _get_small_file(self, stream: XceiverStream) -> bytes | None:
        """The whole block and its chunk list by one GetSmallFile, verified; None when the block has more
        than one chunk (the answer describes only the last: GetBlock and ranged reads verify each)."""
        answer = await stream.call(wire.get_small_file_request(self.location))
        chunk, data = wire.small_file_from_proto(answer)
        if chunk.offset or chunk.length != len(data):
            return None
        if len(data) < self.length:
            raise _ReadFailed(f"has {len(data)} bytes of a {self.length}-byte block")
        self._check(chunk, 0, len(data), data)
        self._chunks, self._starts = (chunk,), [0]
        return data

    async def _stream_span(self, datanode: DatanodeRef, first: int, offset: int) -> tuple[int, memoryview]:
        """From `offset` over the following chunks, up to the span (READ_SPAN), in one datastream read: fewer
        round trips than a read per chunk; each chunk's part is verified against its own checksums."""
        assert self._chunks is not None
        chunk = self._chunks[first]
        start, end = chunk.aligned_range(offset - chunk.offset, self.length - chunk.offset)
        parts = [(chunk, start, end)]
        span_start, span_end = chunk.offset + start, chunk.offset + end
        for following in self._chunks[first + 1 :]:
            whole = end == chunk.length and following.offset == span_end
            if not whole or span_end - span_start >= self._span:
                break
            chunk = following
            end = min(chunk.length, self.length - chunk.offset)
            parts.append((chunk, 0, end))
            span_end = chunk.offset + end
        loc = self.location
        # A buffer whose read was cancelled is never reused: its thread may still be writing into it.
        into, self._spare = self._spare, None
        data = await self._streams.reader(datanode).read(
            loc.container_id, loc.local_id, loc.bcsid, span_start, span_end - span_start, into, loc.token
        )
        await asyncio.to_thread(self._check_parts, parts, data)  # off the loop: it serves the consumer
        return span_start, data

    def _check_parts(self, parts: list[tuple[ChunkInfo, int, int]], data: memoryview) -> None:
        view, at = data, 0
        for chunk, start, end in parts:
            self._check(chunk, start, end, view[at : at + end - start])
            at += end - start

    def _check(self, chunk: ChunkInfo, start: int, end: int, data: bytes | bytearray | memoryview) -> None:
        if len(data) != end - start:
            raise _ReadFailed(f"sent {len(data)} bytes for a {end - start}-byte range of {chunk.name}")
        if self._config.verify_checksum and chunk.checksum_data.type is not ChecksumType.NONE:
            verify(data, chunk.checksum_data, start)

    async def _read_chunk(self, stream: XceiverStream, chunk: ChunkInfo, start: int, end: int) -> bytes:
        """The range by ReadChunk over pyozone.rpc: for a datanode without a datastream port."""
        answer = await stream.call(wire.read_chunk_request(self.location, chunk, start, end))
        return wire.read_chunk_data(answer)

    def _index_name(self) -> str:
        return f" replica index {self._replica_index}" if self._replica_index else ""
