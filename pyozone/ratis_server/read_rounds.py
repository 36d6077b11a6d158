"""Linearizable reads on a Raft leader (Ratis's raft.server.read.option LINEARIZABLE), shared by OM and SCM.

A caller waits for a ReadIndex round begun after it asked (the leader confirmed with a majority that it still
led, and applied every entry committed before): its answer then holds every write any leader acknowledged
before the call arrived, even on a leader deposed by a partition that does not know it yet. Callers that ask
while a round runs share the next one, so a burst of calls costs at most two rounds, not one each.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

log = logging.getLogger(__name__)


class ReadRounds:
    def __init__(
        self,
        read_index: Callable[[], Awaitable[object]],
        refusal: Callable[[Exception], BaseException],
        name: str,
    ) -> None:
        """`read_index`: one round of the member (RaftMember.read_index); `refusal`: what a caller gets when
        its round failed (the member no longer leads, or stopped); `name`: the server, in the log."""
        self._read_index = read_index
        self._refusal = refusal
        self._name = name
        self._next: asyncio.Future[None] | None = None
        self._running: asyncio.Task[None] | None = None
        self.rounds = 0
        """Rounds run so far (/api/v1/ratis `readIndexRounds`)."""

    async def barrier(self) -> None:
        """Returns after a round begun after this call; the round's refusal when it failed."""
        round_ = self._next
        if round_ is None:
            loop = asyncio.get_running_loop()
            round_ = self._next = loop.create_future()
            if self._running is None:
                self._running = loop.create_task(self._run())
        await asyncio.shield(round_)

    async def _run(self) -> None:
        try:
            while self._next is not None:
                round_, self._next = self._next, None
                self.rounds += 1
                try:
                    await self._read_index()
                    round_.set_result(None)
                except Exception as error:  # NotLeaderError, or the member stopped
                    log.debug("%s: a ReadIndex round failed: %s", self._name, error)
                    round_.set_exception(self._refusal(error))
        finally:
            self._running = None
