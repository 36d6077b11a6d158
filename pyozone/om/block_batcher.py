"""OM's block requests to SCM, batched: concurrent openKey and allocateBlock requests that want blocks of
the same size, replication and exclusions share one allocateScmBlock call (SCM hands out blocks in
batches already: `numBlocks`).

Group commit, one lane per kind of request: the first request of a lane calls SCM at once, so a lone
request waits for nothing. Requests arriving while that call is out join the lane's next batch, and the
first of them calls SCM for all of them as soon as the lane is free. Under load each SCM round trip
serves every request that arrived during the previous one.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Hashable
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

    def stats(self) -> BatchStats:
        with self._lock:
            return BatchStats(self._calls, self._requests)
