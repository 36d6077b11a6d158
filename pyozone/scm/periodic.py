"""Periodic SCM services on the injected clock: the daemon and the simulator tick the same schedule."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(slots=True)
class PeriodicTask:
    """Runs `action` every `interval_ms` while `enabled()`; interval 0 disables the task."""

    name: str
    interval_ms: int
    action: Callable[[], None]
    enabled: Callable[[], bool] = lambda: True
    next_due_ms: int = 0
    runs: int = 0

    def run_if_due(self, now_ms: int) -> bool:
        if self.interval_ms <= 0 or now_ms < self.next_due_ms:
            return False
        self.next_due_ms = now_ms + self.interval_ms
        if not self.enabled():
            return False
        self.action()
        self.runs += 1
        return True
