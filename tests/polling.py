"""The one way tests wait for state that changes on its own time: poll a condition until it holds.

`wait_for` (plain code) and `wait_for_async` (inside an event loop, so the loop keeps running the code
under test) share the deadline and the failure message. Both return the condition's first truthy value,
so a condition can hand back what it found. On timeout they raise AssertionError naming `what` (a string,
or a callable that builds one at failure time, e.g. to include a log) and the condition's last value.

A test that must show that something does NOT happen lets time pass with a plain sleep instead, and says
so in a comment; the simulator's tests never sleep (they advance the virtual clock).
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

T = TypeVar("T")

Description = str | Callable[[], str]

# Plain waits mostly poll processes and live clusters (a condition may run a CLI); async ones poll state
# in the same process.
SYNC_INTERVAL_S = 0.2
ASYNC_INTERVAL_S = 0.01
ASYNC_TIMEOUT_S = 10.0


class _Deadline:
    def __init__(self, timeout_s: float, what: Description) -> None:
        self.timeout_s = timeout_s
        self.what = what
        self.at = time.monotonic() + timeout_s

    def check(self, last: object) -> None:
        """Raises once the deadline has passed; `last` is what the condition returned last."""
        if time.monotonic() >= self.at:
            what = self.what() if callable(self.what) else self.what
            raise AssertionError(f"{what}: not reached in {self.timeout_s} s (last: {last!r})")


def wait_for(
    condition: Callable[[], T], timeout_s: float, what: Description, interval_s: float = SYNC_INTERVAL_S
) -> T:
    """Polls `condition` every `interval_s` until it returns something truthy, and returns that."""
    deadline = _Deadline(timeout_s, what)
    while True:
        last = condition()
        if last:
            return last
        deadline.check(last)
        time.sleep(interval_s)


async def wait_for_async(
    condition: Callable[[], T | Awaitable[T]],
    timeout_s: float = ASYNC_TIMEOUT_S,
    what: Description = "condition",
    interval_s: float = ASYNC_INTERVAL_S,
) -> T:
    """`wait_for` without blocking the event loop; `condition` may be a coroutine function."""
    deadline = _Deadline(timeout_s, what)
    while True:
        last: Any = condition()
        if inspect.isawaitable(last):
            last = await last
        if last:
            return last
        deadline.check(last)
        await asyncio.sleep(interval_s)
