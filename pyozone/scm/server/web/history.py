"""Containers by state over time, for the charts page: the core's counts sampled every HISTORY_INTERVAL_MS,
kept in a bounded ring.

The sampler is a PeriodicTask on the core's own schedule, so it runs on the core's clock: real time in the
daemon, virtual time in `pyozone sim` (where an hour of cluster life may pass in seconds). A sample is one
O(1) count per lifecycle state (ContainerManager keeps an index by state), so it costs nothing at 1M
containers.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from pyozone.hdds.states import LifeCycleState
from pyozone.scm.periodic import PeriodicTask
from pyozone.scm.scm import StorageContainerManager

HISTORY_INTERVAL_MS = 10_000
HISTORY_SAMPLES = 720
"""Two hours at one sample every 10 s: about 100 KB of JSON for the chart."""


class ContainerHistory:
    def __init__(
        self,
        core: StorageContainerManager,
        interval_ms: int = HISTORY_INTERVAL_MS,
        samples: int = HISTORY_SAMPLES,
    ) -> None:
        self.core = core
        self.interval_ms = interval_ms
        self._samples: deque[tuple[int, tuple[int, ...]]] = deque(maxlen=samples)

    @classmethod
    def attach(
        cls, core: StorageContainerManager, interval_ms: int = HISTORY_INTERVAL_MS
    ) -> ContainerHistory:
        """A history sampled by a task on the core's schedule (its first sample at the next tick)."""
        history = cls(core, interval_ms)
        core.tasks.append(PeriodicTask("WebContainerHistory", interval_ms, history.sample))
        return history

    def sample(self) -> None:
        counts = self.core.containers.count
        self._samples.append((self.core.clock.wall_ms(), tuple(counts(s) for s in LifeCycleState)))

    def to_dict(self) -> dict[str, Any]:
        """`{"intervalMs", "series": {STATE: [[epoch ms, count], ...]}}`, every lifecycle state, oldest first
        (the shape ozone.js's `oz.lines` draws)."""
        return {
            "intervalMs": self.interval_ms,
            "series": {
                state.name: [[at, counts[i]] for at, counts in self._samples]
                for i, state in enumerate(LifeCycleState)
            },
        }
