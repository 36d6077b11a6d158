"""Answering a client once its transaction is durable, on the event loop.

The double buffer's flusher tells the loop once per flush (one thread wake-up per batch, not per
request); the requests whose epochs that flush covered resume then.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools

from pyozone.om.metadata import OMMetadataStore, OMStoreError


class DurableGate:
    """Create on the event loop that serves the requests."""

    def __init__(self, store: OMMetadataStore) -> None:
        self.store = store
        self._loop = asyncio.get_running_loop()
        self._waiting: list[tuple[int, int, asyncio.Future[None]]] = []
        self._order = itertools.count()
        store.on_flush(self._flushed)

    async def wait(self, epoch: int) -> None:
        """Returns once `epoch` is in om.db; OMStoreError if its flush failed."""
        if self.store.flushed_epoch >= epoch:
            return
        future = self._loop.create_future()
        heapq.heappush(self._waiting, (epoch, next(self._order), future))
        self._release(self.store.flushed_epoch)  # a flush may have ended between the check and the push
        await future

    def _flushed(self, upto: int) -> None:
        """From the flusher thread; nothing to wake once the loop has closed (OM stopping)."""
        if not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._release, upto)

    def _release(self, upto: int) -> None:
        failure = self.store.flush_failure()
        while self._waiting and (failure is not None or self._waiting[0][0] <= upto):
            epoch, _, future = heapq.heappop(self._waiting)
            if future.done():
                continue
            if epoch <= self.store.flushed_epoch:
                future.set_result(None)
            else:
                future.set_exception(OMStoreError(f"{self.store.path}: write failed: {failure}"))
