"""The event loop every daemon and the process's client thread run on: uvloop where it is installed (about
twice the stdlib loop's rate for small frames: docs/architecture.md "The RPC layer"), else asyncio's."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

try:
    import uvloop
except ImportError:  # pragma: no cover - uvloop is a dependency on Linux
    uvloop = None  # type: ignore[assignment]


def new_event_loop() -> asyncio.AbstractEventLoop:
    return uvloop.new_event_loop() if uvloop is not None else asyncio.new_event_loop()


def run(main: Coroutine[Any, Any, T]) -> T:
    """asyncio.run on the fastest loop available."""
    with asyncio.Runner(loop_factory=new_event_loop) as runner:
        return runner.run(main)
