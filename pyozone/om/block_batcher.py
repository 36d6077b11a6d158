"""OM's block requests to SCM, batched: concurrent openKey and allocateBlock requests that want blocks of
the same size, replication and exclusions share one allocateScmBlock call (SCM hands out blocks in
batches already: `numBlocks`).

Group commit, one lane per kind of request: the first request of a lane calls SCM at once, so a lone
request waits for nothing. Requests arriving while that call is out join the lane's next batch, and the
first of them calls SCM for all of them as soon as the lane is free. Under load each SCM round trip
serves every request that arrived during the previous one.

BlockBatcher serves callers on pool threads (allocateBlock, multipart parts); LoopBlockBatcher the same
lanes for openKey on OM's event loop, where a request costs a future instead of a pool job and the batch's
one SCM call runs in the pool (the gateway is synchronous): one thread hop per batch, not per key.
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from collections.abc import Hashable
from concurrent.futures import Executor
from dataclasses import dataclass, field

from pyozone.hdds.block import ExcludeList
from pyozone.hdds.ids import ReplicationConfig
from pyozone.om.scm import ScmGateway
from pyozone.protocol.block import MAX_BLOCKS_PER_REQUEST, BlockLocation

MAX_BATCH_BLOCKS = MAX_BLOCKS_PER_REQUEST
"""A batch asks SCM for at most as many blocks as SCM takes in one request; a request that does not fit
starts the next batch."""


@dataclass(eq=False)
class _Batch:
    counts: list[int] = field(default_factory=list)
    turn: threading.Event = field(default_factory=threading.Event)
    done: threading.Event = field(default_factory=threading.Event)
    blocks: list[BlockLocation] = field(default_factory=list)
    error: BaseException | None = None


@dataclass(frozen=True, slots=True)
class BatchStats:
    calls: int
    requests: int


class BlockBatcher:
    def __init__(self, scm: ScmGateway) -> None:
        self.scm = scm
        self._lock = threading.Lock()
        self._lanes: dict[Hashable, deque[_Batch]] = {}
        """A lane exists while its SCM call is out; it queues the batches that wait for it."""
        self._calls = 0
        self._requests = 0

    def allocate_blocks(
        self, size: int, config: ReplicationConfig, num_blocks: int, excluded: ExcludeList, owner: str
    ) -> list[BlockLocation]:
        """`num_blocks` blocks (fewer if SCM answered fewer); ScmClientError as SCM's."""
        lane_key = (size, config, excluded, owner)
        with self._lock:
            self._requests += 1
            waiting = self._lanes.get(lane_key)
            if waiting is None:
                self._lanes[lane_key] = deque()
                batch = _Batch([num_blocks])
                batch.turn.set()
            else:
                if not waiting or sum(waiting[-1].counts) + num_blocks > MAX_BATCH_BLOCKS:
                    waiting.append(_Batch())
                batch = waiting[-1]
                batch.counts.append(num_blocks)
            index = len(batch.counts) - 1
        if index == 0:
            batch.turn.wait()  # the batch left the queue then: its counts are final
            self._call(lane_key, batch, size, config, excluded, owner)
        batch.done.wait()
        if batch.error is not None:
            raise batch.error
        start = sum(batch.counts[:index])
        return batch.blocks[start : start + batch.counts[index]]

    def _call(
        self,
        lane_key: Hashable,
        batch: _Batch,
        size: int,
        config: ReplicationConfig,
        excluded: ExcludeList,
        owner: str,
    ) -> None:
        try:
            with self._lock:
                self._calls += 1
            batch.blocks = self.scm.allocate_blocks(size, config, sum(batch.counts), excluded, owner)
        except BaseException as e:  # every request of the batch raises it
            batch.error = e
        finally:
            with self._lock:
                waiting = self._lanes[lane_key]
                following = waiting.popleft() if waiting else None
                if following is None:
                    del self._lanes[lane_key]
            if following is not None:
                following.turn.set()
            batch.done.set()

    def count(self, calls: int, requests: int) -> None:
        """Counts a LoopBlockBatcher's calls and requests with these (one figure for OM's metrics)."""
        with self._lock:
            self._calls += calls
            self._requests += requests

    def stats(self) -> BatchStats:
        with self._lock:
            return BatchStats(self._calls, self._requests)


@dataclass(eq=False)
class _Waiter:
    count: int
    answer: asyncio.Future[list[BlockLocation]]


class LoopBlockBatcher:
    """BlockBatcher's lanes on one event loop (create it there): a lane's driver task calls SCM for what
    queued while its previous call was out, until the lane is empty."""

    def __init__(self, batcher: BlockBatcher, executor: Executor) -> None:
        """`executor`: OM's pool, where a batch's SCM call runs."""
        self.batcher = batcher
        self.executor = executor
        self._loop = asyncio.get_running_loop()
        self._lanes: dict[Hashable, deque[_Waiter]] = {}
        """A lane exists while its driver runs; it queues the requests for the next call."""
        self._drivers: set[asyncio.Task[None]] = set()

    async def allocate_blocks(
        self, size: int, config: ReplicationConfig, num_blocks: int, excluded: ExcludeList, owner: str
    ) -> list[BlockLocation]:
        """As BlockBatcher.allocate_blocks."""
        lane_key = (size, config, excluded, owner)
        waiter = _Waiter(num_blocks, self._loop.create_future())
        waiting = self._lanes.get(lane_key)
        if waiting is None:
            self._lanes[lane_key] = waiting = deque()
            driver = self._loop.create_task(self._drive(lane_key, size, config, excluded, owner))
            self._drivers.add(driver)
            driver.add_done_callback(self._drivers.discard)
        waiting.append(waiter)
        return await waiter.answer

    async def _drive(
        self, lane_key: Hashable, size: int, config: ReplicationConfig, excluded: ExcludeList, owner: str
    ) -> None:
        waiting = self._lanes[lane_key]
        try:
            while waiting:
                batch = [waiting.popleft()]
                total = batch[0].count
                while waiting and total + waiting[0].count <= MAX_BATCH_BLOCKS:
                    total += waiting[0].count
                    batch.append(waiting.popleft())
                self.batcher.count(1, len(batch))
                try:
                    blocks = await self._loop.run_in_executor(
                        self.executor, self.batcher.scm.allocate_blocks, size, config, total, excluded, owner
                    )
                except Exception as e:  # every request of the batch raises it
                    for w in batch:
                        if not w.answer.done():
                            w.answer.set_exception(e)
                    continue
                start = 0
                for w in batch:
                    if not w.answer.done():  # a request cancelled meanwhile: its blocks stay unused
                        w.answer.set_result(blocks[start : start + w.count])
                    start += w.count
        finally:
            del self._lanes[lane_key]
            for w in waiting:
                w.answer.cancel()
