"""ECKeyOutputStream: a key striped over EC block groups (Ozone's ECKeyOutputStream).

The caller's bytes gather into a stripe of `data` cells (StripeLayout, cell = the EC chunk size). A full
stripe, or the last short one at close, gets its parity from the codec, then each cell goes to its replica
index's datanode (ec_index.py); all d+p cells of a stripe are sent at once, and while they travel the next
stripe fills and is coded, with its checksums, on a worker thread. Every ozone.client.stream.buffer.flush.size
of stripes and at the group's end each index gets a putBlock carrying the group's length; a stripe is
acknowledged once every index acknowledged the putBlock covering it, and until then its bytes stay in
memory. At most ozone.client.stream.buffer.max.size of stripes are unacknowledged. A group holds up to
data x ozone.scm.block.size bytes (as OM allocated it); then the next group comes from OM.

A failure (an index's datanode dies or refuses) ends the group at the last stripe all indexes acknowledged:
commitKey lists it with that length, as readers take it, while indexes that took later putBlocks record a
longer blockGroupLen, which Ozone's reconstruction also meets (it takes the smallest). The failed datanode
(its pipeline) or the closed container goes into the exclude list, and every stripe not acknowledged is
rewritten in a new group. Retries count by ozone.client.max.ec.stripe.write.retries (retry.py's run).

Copies: a stripe is one `bytes` object (pyeclib codes only bytes): a slice of the caller's bytes copied once,
or the join of the pieces it spans; a caller's mutable buffer is copied when written (PendingBytes). Cells
are views of it; an RPC writeChunk copies a cell into its request, the datastream port sends the view. A
short last stripe is zero-padded, in a copy, for coding only: data indexes store their real lengths.
EC keys have no hflush/hsync (neither has Ozone's ECKeyOutputStream): bytes become durable at close().
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

from pyozone.client.block_output import BlockFailure, FailureKind, PendingBytes
from pyozone.client.config import ClientConfig
from pyozone.client.ec_index import ECIndexOutput, index_output
from pyozone.client.errors import OzoneClientError
from pyozone.client.key_output import KeyOutputStream
from pyozone.framework.datanode import ChannelPool
from pyozone.framework.om import OmClient
from pyozone.hdds.checksum import ChecksumData, compute
from pyozone.hdds.ec.codec import codec_for
from pyozone.hdds.ec.layout import StripeLayout
from pyozone.hdds.locations import KeyLocation


@dataclass(frozen=True, slots=True)
class _Coded:
    """A stripe ready to send: its data and, by replica index, each cell with its checksums."""

    data: bytes
    cells: tuple[tuple[int, memoryview, ChecksumData], ...]


@dataclass(eq=False, slots=True)
class _Batch:
    """Stripes sent and not yet acknowledged, up to one putBlock per index: their data (what a retry
    rewrites) and the group's length once they are acknowledged. `puts` is empty until the putBlocks
    covering them went out."""

    stripes: list[bytes]
    end: int
    puts: tuple[asyncio.Task[None], ...] = field(default=())

    def acknowledged(self) -> bool:
        """After the puts settled: whether every index acknowledged the batch."""
        puts = self.puts
        return bool(puts) and all(t.done() and not t.cancelled() and t.exception() is None for t in puts)


class _Group:
    """One block group being written: a writer per replica index and its unacknowledged stripes.

    Every index gets a putBlock after each ozone.client.stream.buffer.flush.size of the group's bytes
    (at least every stripe) and at the group's end. Ozone puts after every stripe; a putBlock lists every
    chunk so far, so over a group of hundreds of stripes that costs the client and each datanode a
    quadratic amount of block metadata (measured: a fifth of the client's time)."""

    def __init__(
        self, location: KeyLocation, config: ClientConfig, pool: ChannelPool, datastream: bool
    ) -> None:
        ec = location.pipeline.ec
        assert ec is not None
        self.location = location
        self.layout = layout = StripeLayout.of(ec)
        self.codec = codec_for(ec)
        most = layout.group_capacity(config.block_size)
        self.capacity = min(location.length, most) if location.length > 0 else most
        self.put_every = max(1, config.flush_size // layout.stripe_bytes)  # stripes
        # stripes unacknowledged: two at least, one travelling while the next is coded
        self.window = max(2, self.put_every, config.max_size // layout.stripe_bytes)
        self.length = 0  # group bytes sent
        self.acked = 0  # group bytes every index acknowledged
        self.eof = False  # the last putBlocks went out
        self.inflight: deque[_Batch] = deque()
        self.writers: dict[int, ECIndexOutput] = {}
        self._config, self._pool, self._datastream = config, pool, datastream

    def open(self) -> None:
        """A writer for every replica index: its datanode is the first member holding it."""
        members = self.location.pipeline.by_index()
        missing = [i for i in range(1, self.layout.nodes + 1) if not members.get(i)]
        if missing:
            raise BlockFailure(
                FailureKind.PIPELINE, "NO_REPLICA_INDEX",
                f"EC pipeline {self.location.pipeline.id} has no member for replica indexes {missing}",
            )  # fmt: skip
        for index in range(1, self.layout.nodes + 1):
            member = members[index][0]
            self.writers[index] = index_output(
                self.location, index, member, self._config, self._pool, self._datastream
            )

    @property
    def room(self) -> int:
        """Bytes the next stripe takes: a full stripe unless the group ends sooner."""
        return min(self.layout.stripe_bytes, self.capacity - self.length)

    @property
    def full(self) -> bool:
        """Whether the window of unacknowledged stripes is full (its oldest batch has its putBlocks:
        an open batch holds fewer than put_every <= window stripes)."""
        return sum(len(b.stripes) for b in self.inflight) >= self.window

    def code(self, piece: bytes | memoryview) -> _Coded:
        """The next stripe's cells, parity and checksums from its bytes (pending, immutable). Touches
        nothing shared, so it runs on a worker thread while the loop sends the stripe before (zlib's CRCs
        and the loop's socket writes release the GIL; the stripe's copy and pyeclib hold it)."""
        layout, config, data = self.layout, self._config, _as_bytes(piece)
        lengths = layout.stripe_cell_lengths(self.length + len(data), self.length // layout.stripe_bytes)
        first = lengths[0]
        padded = data if len(data) == layout.data * first else data + bytes(layout.data * first - len(data))
        view = memoryview(data)
        cells = [
            (index, view[(index - 1) * layout.cell :][:length])
            for index, length in enumerate(lengths, start=1)
            if length
        ]
        cells += enumerate(self.codec.encode_stripe(padded, first), start=layout.data + 1)
        return _Coded(
            data,
            tuple((i, c, compute(c, config.checksum_type, config.bytes_per_checksum)) for i, c in cells),
        )

    def send(self, stripe: _Coded, eof: bool) -> None:
        """Sends a coded stripe's cells (and the putBlocks when due); raises BlockFailure (the stripe is
        then in `inflight`, unacknowledged)."""
        if not self.inflight or self.inflight[-1].puts:
            self.inflight.append(_Batch([], self.length))
        batch = self.inflight[-1]
        batch.stripes.append(stripe.data)
        self.length += len(stripe.data)
        for index, cell, sums in stripe.cells:
            self.writers[index].write_cell(cell, sums)
        batch.end = self.length
        if eof or len(batch.stripes) >= self.put_every:
            self._put(batch, eof)

    def finish(self) -> None:
        """The last putBlocks (eof), of the open batch or, with none, of the group as it is."""
        if not self.inflight or self.inflight[-1].puts:
            self.inflight.append(_Batch([], self.length))
        self._put(self.inflight[-1], eof=True)

    def _put(self, batch: _Batch, eof: bool) -> None:
        self.eof = eof
        batch.puts = tuple(w.put(batch.end, eof) for w in self.writers.values())

    async def ack_oldest(self) -> None:
        """Waits until every index acknowledged the oldest batch; raises its BlockFailure."""
        batch = self.inflight[0]
        await asyncio.gather(*batch.puts)
        self.inflight.popleft()
        self.acked = batch.end

    async def settle(self) -> list[BlockFailure]:
        """After a failure: lets the putBlocks in flight finish, keeps the acknowledged batches at the
        front, and names every failure the indexes met."""
        await asyncio.gather(*(t for b in self.inflight for t in b.puts), return_exceptions=True)
        while self.inflight and self.inflight[0].acknowledged():
            self.acked = self.inflight.popleft().end
        failures = [w.failure for w in self.writers.values() if w.failure is not None]
        for batch in self.inflight:
            failures += [e for t in batch.puts if t.done() and isinstance(e := t.exception(), BlockFailure)]
        return list({id(f): f for f in failures}.values())

    def unacknowledged(self) -> bytes:
        """The bytes of every stripe not acknowledged, in order (what a new group rewrites)."""
        return b"".join(stripe for batch in self.inflight for stripe in batch.stripes)

    def committed(self, key_offset: int) -> KeyLocation:
        """The group as commitKey lists it: its acknowledged length (no pipeline log, so no BCSID)."""
        return replace(self.location, bcsid=0, offset=key_offset, length=self.acked)

    async def close(self) -> None:
        for writer in self.writers.values():
            await writer.close()


class ECKeyOutputStream(KeyOutputStream):
    """A KeyOutputStream whose blocks are EC block groups (its commit and retry rules are the same)."""

    RETRIES_KEY = "ozone.client.max.ec.stripe.write.retries"

    def __init__(
        self,
        om: OmClient,
        pool: ChannelPool,
        config: ClientConfig,
        volume: str,
        bucket: str,
        key: str,
        client_id: int,
        preallocated: list[KeyLocation],
        clock: Callable[[], float] = time.monotonic,
        metadata: Mapping[str, str] | None = None,
        part: tuple[str, int] | None = None,
        datastream: bool = False,
    ) -> None:
        """`datastream`: cells go over the datanodes' datastream ports (ClientConfig.uses_datastream of the
        key's size), else as RPC writeChunks."""
        super().__init__(
            om, pool, config, volume, bucket, key, client_id, preallocated, clock, None, metadata, part
        )
        self._retry_policy = config.ec_write_retry
        self._pending = PendingBytes()  # accepted, not yet in a stripe
        self._group: _Group | None = None
        self._datastream = datastream

    @property
    def write_path(self) -> str:
        return "EC"

    async def abort(self) -> None:
        if self._state != "open":
            return
        self._state = "aborted"
        if self._group is not None:
            group, self._group = self._group, None
            await group.close()

    # ------------------------------------------------------------------ internals
    async def _run(self, view: memoryview, final: bool) -> None:
        if view:
            self._pending.add(view)
        while True:
            try:
                await self._stripes(final)
                return
            except BlockFailure as failure:
                await self._fail(failure)
            except BaseException:
                await self.abort()
                raise

    async def _stripes(self, final: bool) -> None:
        """Sends every full stripe (with `final`, the rest too) and ends the groups that fill up."""
        pending = self._pending
        while pending:
            group = await self._open_group()
            size = group.room
            if len(pending) < size and not final:
                return
            size = min(size, len(pending))
            stripe = await asyncio.to_thread(group.code, pending.peek(size))
            while group.full:  # the bytes stay pending until sent: a failure here rewrites them
                await group.ack_oldest()
            pending.drop(size)
            last = group.length + size == group.capacity or (final and not pending)
            group.send(stripe, eof=last)
            if last:
                await self._end(group)
        if final and self._group is not None:
            await self._end(self._group)

    async def _open_group(self) -> _Group:
        if self._group is None:
            while self._preallocated:
                location = self._preallocated.popleft()
                members = tuple(m.uuid for m in location.pipeline.members)
                if not self._exclude.excludes(location.container_id, location.pipeline.id, members):
                    break
            else:
                location = await self._allocate()
            if location.pipeline.ec is None:
                raise OzoneClientError(
                    f"{self._name()}: block {location.block_name} is not on an EC pipeline "
                    f"({location.pipeline.id})"
                )
            self._group = _Group(location, self._config, self._pool, self._datastream)
            self._group.open()
        return self._group

    async def _end(self, group: _Group) -> None:
        """Waits until every index acknowledged the whole group, then lists it for commitKey."""
        if not group.eof:
            group.finish()
        while group.inflight:
            await group.ack_oldest()
        self._group = None
        await group.close()
        if group.acked:
            self._blocks.append(group.committed(self._offset))
            self._offset += group.acked
            self._retry_run = None  # progress

    async def _fail(self, failure: BlockFailure) -> None:
        """Ozone's ECKeyOutputStream on a failed stripe: the group ends at its acknowledged stripes, what
        failed is excluded, and the stripes not acknowledged go back in front of the pending bytes."""
        group, self._group = self._group, None
        assert group is not None
        failures = list({id(f): f for f in (failure, *await group.settle())}.values())
        retained = group.unacknowledged()
        await group.close()
        loc = group.location
        for each in failures:
            self._exclude_failed(each, loc)
        if group.acked:
            self._blocks.append(group.committed(self._offset))
            self._offset += group.acked
        pending, self._pending = self._pending, PendingBytes()
        self._pending.add(retained)
        for piece in pending.views:
            self._pending.add(piece)
        what = f"block group {loc.block_name} on EC pipeline {loc.pipeline.id}: " + "; ".join(
            map(str, failures)
        )
        await self._next_try(what, failures[0], bool(group.acked), len(self._pending))


def _as_bytes(data: bytes | memoryview) -> bytes:
    """The stripe as one bytes object (pyeclib's input): the caller's own when the view is all of it."""
    if isinstance(data, bytes):
        return data
    if isinstance(data.obj, bytes) and len(data) == len(data.obj):
        return data.obj
    return bytes(data)  # the stripe's one copy
