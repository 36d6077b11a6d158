"""A metadata service's automatic snapshot, as Ratis triggers it (raft.server.snapshot.auto.trigger.enabled
and .threshold; Ozone's ozone.om.ratis.snapshot.auto.trigger.threshold for OM and
ozone.scm.ha.ratis.snapshot.threshold for SCM): once `threshold` entries were applied since the last
snapshot one is taken, one at a time, and a clean stop takes one after the one under way."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable


class AutoSnapshot:
    def __init__(
        self,
        threshold: int,
        take: Callable[[], Awaitable[object]],
        loop: asyncio.AbstractEventLoop,
        name: str,
    ) -> None:
        """`take` snapshots the state machine and tells its member; `loop` runs it (the member's)."""
        self.threshold = threshold
        self._take = take
        self._loop = loop
        self._name = name
        self.running: asyncio.Task[None] | None = None
        """The automatic snapshot under way, if any."""

    def applied(self, index: int, last_snapshot: int) -> None:
        """Entry `index` was applied; `last_snapshot` is the index of the last snapshot taken."""
        if index - last_snapshot >= self.threshold and self.running is None:
            self.running = self._loop.create_task(self._auto(), name=self._name)

    async def _auto(self) -> None:
        try:
            await self._take()
        finally:
            self.running = None

    async def ended(self) -> None:
        """Returns once no automatic snapshot runs (the store must not close or be swapped under it)."""
        while self.running is not None:
            await asyncio.shield(self.running)

    async def at_stop(self) -> None:
        """A clean stop's snapshot (Ratis takes one as its server closes), after the one under way."""
        await self.ended()
        await self._take()
