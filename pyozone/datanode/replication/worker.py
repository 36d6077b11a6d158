"""Blocking steps of one replication stream, run in the executor one at a time, and exports read that way.

A cancelled await does not stop a step already running in a worker thread, so the stream's cleanup
(abort an import, say) must wait for that step: cleaning up beside it would race with its file writes.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import AsyncIterator, Callable
from concurrent.futures import Executor
from typing import Any, TypeVar

from pyozone.datanode.storage import ExportStream

T = TypeVar("T")


class SerialWorker:
    def __init__(self, executor: Executor) -> None:
        self.executor = executor
        self._last: concurrent.futures.Future[Any] | None = None

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        self._last = self.executor.submit(fn, *args)
        return await asyncio.wrap_future(self._last)

    async def cleanup(self, fn: Callable[[], object]) -> None:
        """Runs `fn` in the executor once the last step has finished, even if this await is cancelled."""
        last = self._last

        def after_last() -> None:
            if last is not None:
                concurrent.futures.wait([last])
            fn()

        await asyncio.wrap_future(self.executor.submit(after_last))


async def export_pieces(stream: ExportStream, worker: SerialWorker) -> AsyncIterator[tuple[bytes, int, bool]]:
    """(piece, offset, is_last) of an export, each piece read in the executor; one piece is read ahead
    to know which is last, so at most two are in memory. `stream.sha256` is set when is_last is True."""
    pieces, offset = iter(stream), 0
    piece = await worker.run(next, pieces, None)
    while piece is not None:
        following = await worker.run(next, pieces, None)
        yield piece, offset, following is None
        offset += len(piece)
        piece = following
