"""Drives the core's periodic work (health checks, pipeline creation, scrubber, safe-mode refresh, block
deletion, close-container leases) on real time: `core.tick()` runs whatever is due."""

from __future__ import annotations

import asyncio
import logging

from pyozone.scm.scm import StorageContainerManager

log = logging.getLogger(__name__)

MAX_TICK_MS = 250
MIN_TICK_MS = 10


def tick_interval_ms(core: StorageContainerManager) -> int:
    """Often enough that no task or timer waits much past its due time: min(250 ms, the shortest task
    interval), but not below 10 ms, so a tiny configured interval cannot turn the loop into a busy wait."""
    intervals = [task.interval_ms for task in core.tasks if task.interval_ms > 0]
    return max(MIN_TICK_MS, min([MAX_TICK_MS, *intervals]))


async def run_ticks(core: StorageContainerManager, interval_ms: int) -> None:
    """Ticks until cancelled; a failing tick is logged and the next one runs as usual."""
    while True:
        try:
            core.tick()
        except Exception:
            log.exception("SCM periodic work failed; continuing")
        await asyncio.sleep(interval_ms / 1000)
