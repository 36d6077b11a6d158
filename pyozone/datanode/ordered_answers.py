"""The answering side of a datanode's bidirectional streams (client requests, a leader's log entries).

Each request is started as it arrives, so the work of many requests overlaps, while the answers go back
in request order. At most `max_in_flight` requests are taken ahead of their answers: past that the stream
stops reading and the RPC stream's window pushes back on the sender, so a fast sender cannot queue unbounded
data in the datanode's memory.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import TypeVar

Request = TypeVar("Request")
Answer = TypeVar("Answer")


async def answer_in_order(
    requests: AsyncIterator[Request],
    start: Callable[[Request], asyncio.Future[Answer]],
    max_in_flight: int,
    last: Callable[[Answer], bool] = lambda answer: False,
) -> AsyncIterator[Answer]:
    """Yields the answer of every request in order; ends after an answer for which `last` holds. A failed
    receive (e.g. the sender went away) fails the stream; answers not yet sent are cancelled (work already
    in a worker thread still completes there)."""
    answers: asyncio.Queue[asyncio.Future[Answer] | None] = asyncio.Queue()
    slots = asyncio.Semaphore(max_in_flight)

    async def receive() -> None:
        try:
            async for request in requests:
                await slots.acquire()
                answers.put_nowait(start(request))
        finally:
            answers.put_nowait(None)

    receiver = asyncio.create_task(receive())
    try:
        while (pending := await answers.get()) is not None:
            answer = await pending
            slots.release()
            yield answer
            if last(answer):
                return
        await receiver
    finally:
        receiver.cancel()
        while not answers.empty():
            if (unsent := answers.get_nowait()) is not None:
                unsent.cancel()
