"""Periodic SCM services on the injected clock: the daemon and the simulator tick the same schedule."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

MORE: Final = object()
"""What an action returns when its run is not over: it is called again on the next tick."""


@dataclass(slots=True)
class PeriodicTask:
    """Runs `action` every `interval_ms` while `enabled()`; interval 0 disables the task.

    A run may span ticks: an action that returns MORE is called again on every following `run_if_due`
    until it returns anything else. Meanwhile no new run starts and `enabled()` is not asked (the action
    decides whether its run goes on); the interval counts from the run's start; `runs` counts finished
    runs. A run whose action raises is over."""

    name: str
    interval_ms: int
    action: Callable[[], object]
    enabled: Callable[[], bool] = lambda: True
    next_due_ms: int = 0
    runs: int = 0
    in_progress: bool = False

    def run_if_due(self, now_ms: int) -> bool:
        if not self.in_progress:
            if self.interval_ms <= 0 or now_ms < self.next_due_ms:
                return False
            self.next_due_ms = now_ms + self.interval_ms
            if not self.enabled():
                return False
        self.in_progress = False  # a run that raises is over
        if self.action() is MORE:
            self.in_progress = True
        else:
            self.runs += 1
        return True
