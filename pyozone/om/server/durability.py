"""When a client of OM is answered: a core call runs in the daemon's pool (or inline on the event loop),
its ACL check in the same job, and its client is answered once everything it wrote or saw is durable
(Ozone's OzoneManagerDoubleBuffer) or, with OM HA, once its wrapper replicated the call's answer
(om/server/ha.py `CALL`).

The double buffer's flusher tells the loop once per flush (one thread wake-up per batch, not per
request); the requests whose epochs that flush covered resume then (`DurableGate`).
"""

from __future__ import annotations

import asyncio
import contextvars
import heapq
import itertools
from collections.abc import Awaitable, Callable
from concurrent.futures import Executor
from typing import TYPE_CHECKING, TypeVar

from pyozone.om.metadata import OMMetadataStore, OMStoreError
from pyozone.om.server.ha import CALL

if TYPE_CHECKING:
    from pyozone.om.core import OzoneManager

T = TypeVar("T")
Check = Callable[[], None]


class CoreCalls:
    """The core calls of one OM service (OzoneManagerService), on the loop that serves its requests."""

    def __init__(self, core: OzoneManager, executor: Executor) -> None:
        self.core = core
        self.executor = executor
        self._gate: DurableGate | None = None
        """Created on the serving loop by the first write."""

    async def run(
        self,
        call: Callable[..., T],
        *args: object,
        check: Check | None = None,
        inline: bool = False,
        background: bool = False,
    ) -> T:
        """The core call in the pool, after `check` (an ACL check reading om.db) in the same job.
        Everything it could have seen, its own writes and the table cache's, is durable before this
        returns or raises: a client is answered only then (Ozone's OzoneManagerDoubleBuffer), and never with
        what a crash could take back (a read waits for the writes it saw, at most a flush in flight),
        while the pool thread is already free for the next request. With OM HA the call's wrapper waits
        instead (what it saw is recorded in its `CALL`), once it replicated the call's answer.
        `inline`: on the event loop, no pool job (commitKey, which never waits for SCM).
        `background`: the call runs as OM's own services do (no `CALL`: each of its transactions goes to
        the log as soon as it is written, not held unsealed until the call returns, which would stall every
        write staged after its first one); it is answered once all it wrote committed all the same."""
        store = self.core.store
        epoch = 0
        ha_call = CALL.get()

        def job() -> T:
            nonlocal epoch
            try:
                if check is not None:
                    check()
                return call(*args)
            finally:
                epoch = store.epoch

        try:
            if inline:
                return job()
            if ha_call is not None:
                context = contextvars.copy_context()
                if background:
                    context.run(CALL.set, None)
                return await asyncio.get_running_loop().run_in_executor(self.executor, context.run, job)
            return await asyncio.get_running_loop().run_in_executor(self.executor, job)
        finally:
            if ha_call is not None:
                ha_call.seen = max(ha_call.seen, epoch)
            elif epoch:
                await self._durable().wait(epoch)

    async def on_loop(self, call: Callable[[], Awaitable[T]]) -> T:
        """`run` for a call that runs on the event loop and awaits (openKey: its checks and its record
        inline, as commitKey's, SCM awaited through LoopBlockBatcher between them): answered once what it
        wrote or saw is durable."""
        try:
            return await call()
        finally:
            epoch = self.core.store.epoch
            ha_call = CALL.get()
            if ha_call is not None:
                ha_call.seen = max(ha_call.seen, epoch)
            elif epoch:
                await self._durable().wait(epoch)

    def _durable(self) -> DurableGate:
        if self._gate is None:
            self._gate = DurableGate(self.core.store)
        return self._gate


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
