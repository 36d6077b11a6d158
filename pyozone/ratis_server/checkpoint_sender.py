"""How a leader's web server sends `/dbCheckpoint` (Ozone's OMDBCheckpointServlet), bounded so that GETs
cannot fill the daemon's disk or hold its database (OM's om.db, SCM's scm.db).

- One checkpoint at a time: a RocksDB checkpoint of the database (hard links to its table files: no copy
  of it) streamed as a tar (ratis_server/db_checkpoint.py `PackedCheckpoint`). GETs that come while it is
  sent share it if it is younger than `share_s`; otherwise they wait (at most `wait_s`) until its last send
  ended, and the next GET packs a new one. It is deleted as its last send ends.
- At most `max_sends` sends at once; a GET past that is answered 503 (the follower fetches again at the
  leader's next notification).
- A send that cannot hand a chunk to the socket for `stall_s` (its fetcher stopped reading) is cut, so an
  idle fetcher holds neither a send nor the checkpoint past that.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable

from aiohttp import web

from pyozone.common.http_server import json_refusal
from pyozone.ratis_server.db_checkpoint import PackedCheckpoint

log = logging.getLogger(__name__)

MAX_SENDS = 4
"""Sends of the checkpoint at once (a service has two followers; the rest are administrators)."""
SHARE_S = 10.0
"""A checkpoint this young is shared with a GET that comes while it is sent: nearly as fresh as a new one."""
WAIT_S = 30.0
"""How long a GET waits for the sends of an older checkpoint to end before it is answered 503."""
STALL_S = 30.0
"""A send that cannot write a chunk for this long is cut."""


class Busy(Exception):
    """No send can start now (`max_sends` under way, or an older checkpoint still sent past `wait_s`)."""


class CheckpointSender:
    """`pack()` makes a new checkpoint (off the event loop: the daemon runs the database's pack on its
    executor)."""

    def __init__(
        self,
        pack: Callable[[], Awaitable[PackedCheckpoint]],
        max_sends: int = MAX_SENDS,
        share_s: float = SHARE_S,
        wait_s: float = WAIT_S,
        stall_s: float = STALL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._pack = pack
        self._max_sends = max_sends
        self._share_s = share_s
        self._wait_s = wait_s
        self._stall_s = stall_s
        self._clock = clock
        self._changed = asyncio.Condition()
        self._current: PackedCheckpoint | None = None
        self._made_at = 0.0
        self._sends = 0
        self.packs = 0
        """Checkpoints made so far."""

    @property
    def sends(self) -> int:
        return self._sends

    async def _acquire(self) -> PackedCheckpoint:
        async with self._changed:
            if self._sends >= self._max_sends:
                raise Busy(f"{self._sends} sends of the checkpoint are under way")

            def may_start() -> bool:
                return self._current is None or self._clock() - self._made_at < self._share_s

            try:
                async with asyncio.timeout(self._wait_s):
                    await self._changed.wait_for(may_start)
            except TimeoutError:
                raise Busy("an older checkpoint is still being sent") from None
            if self._sends >= self._max_sends:
                raise Busy(f"{self._sends} sends of the checkpoint are under way")
            if self._current is None:  # packed under the lock: one at a time, the GETs meanwhile share it
                self._current = await self._pack()
                self._made_at = self._clock()
                self.packs += 1
            self._sends += 1
            return self._current

    async def _release(self) -> None:
        async with self._changed:
            try:
                if self._sends == 1 and self._current is not None:  # gone before `sends` says none are left
                    done, self._current = self._current, None
                    await asyncio.to_thread(done.remove)
            finally:
                self._sends -= 1
                self._changed.notify_all()

    async def send(self, request: web.Request) -> web.StreamResponse:
        """Answers one GET: the checkpoint's tar, or 503 when busy."""
        try:
            packed = await self._acquire()
        except Busy as e:
            return json_refusal(503, f"{e}: fetch it again later")
        try:
            response = web.StreamResponse(headers=packed.headers())
            await response.prepare(request)
            chunks = packed.chunks()
            while (chunk := await asyncio.to_thread(next, chunks, None)) is not None:
                try:
                    async with asyncio.timeout(self._stall_s):
                        await response.write(chunk)
                except TimeoutError:
                    log.warning(
                        "/dbCheckpoint to %s: nothing read for %.0f s; the send is cut",
                        request.remote,
                        self._stall_s,
                    )
                    if request.transport is not None:
                        request.transport.abort()
                    return response
                except ConnectionError as e:
                    log.info("/dbCheckpoint to %s: the fetcher left (%s)", request.remote, e)
                    return response
            await response.write_eof()
            return response
        finally:
            await self._release()
