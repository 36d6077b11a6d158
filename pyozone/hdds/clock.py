"""Clocks injected into the SCM core, so the same code runs on real time and on virtual time."""

from __future__ import annotations

import time
from typing import Protocol


class Clock(Protocol):
    def now_ms(self) -> int:
        """Milliseconds on a monotonic scale; only differences are meaningful."""
        ...

    def wall_ms(self) -> int:
        """Milliseconds since the epoch, for timestamps shown to people and sent to datanodes."""
        ...


class SystemClock:
    def now_ms(self) -> int:
        return time.monotonic_ns() // 1_000_000

    def wall_ms(self) -> int:
        return time.time_ns() // 1_000_000


class ManualClock:
    """Virtual time for tests and the simulator: it moves only when told to."""

    def __init__(self, start_ms: int = 0, epoch_ms: int = 1_767_225_600_000) -> None:
        self._now = start_ms
        self._epoch = epoch_ms

    def now_ms(self) -> int:
        return self._now

    def wall_ms(self) -> int:
        return self._epoch + self._now

    def advance(self, ms: int) -> None:
        if ms < 0:
            raise ValueError("time only moves forward")
        self._now += ms

    def set(self, now_ms: int) -> None:
        if now_ms < self._now:
            raise ValueError("time only moves forward")
        self._now = now_ms
