"""Where a key's time goes, step by step (benchmarks/small_keys.py).

A caller opens `recording()` around a key's calls; the client then adds the time of each step it takes
in that context: every OM call under its RPC name ("openKey", "commitKey", "allocateBlock"), a block's
data requests from their sending to their answer ("write") and its watches ("watchForCommit"). What
the steps leave of the key's time is the client's own work. Tasks the client starts inherit the
recording (asyncio copies the context), so a block's answer task counts for its key. With no recording
open a step point costs one ContextVar lookup.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from time import perf_counter


@dataclass(slots=True)
class StepTimes:
    """Seconds per step of one key (filled while the key is written, so not frozen)."""

    seconds: dict[str, float] = field(default_factory=dict)

    def add(self, step: str, started: float) -> None:
        """Adds the time since `started` (a perf_counter reading) to `step`."""
        self.seconds[step] = self.seconds.get(step, 0.0) + perf_counter() - started


_RECORDING: ContextVar[StepTimes | None] = ContextVar("pyozone_key_steps", default=None)


def current() -> StepTimes | None:
    """The recording open in this context, if any."""
    return _RECORDING.get()


@contextmanager
def recording() -> Iterator[StepTimes]:
    """Records the steps of the client calls made in this context (this task and those it starts)."""
    times = StepTimes()
    token = _RECORDING.set(times)
    try:
        yield times
    finally:
        _RECORDING.reset(token)
