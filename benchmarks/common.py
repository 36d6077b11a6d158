"""Shared helpers for benchmark commands: timing and a printed table."""

from __future__ import annotations

import resource
import time
from collections.abc import Callable


def rate(fn: Callable[[], int], min_seconds: float = 1.0) -> tuple[float, int, float]:
    """Runs fn (which returns how many operations it did) until min_seconds passed; ops/s, ops, seconds."""
    ops, start = 0, time.perf_counter()
    while True:
        ops += fn()
        elapsed = time.perf_counter() - start
        if elapsed >= min_seconds:
            return ops / elapsed, ops, elapsed


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def print_table(title: str, rows: list[tuple[str, str]]) -> None:
    width = max(len(k) for k, _ in rows)
    print(title)
    print("-" * len(title))
    for key, value in rows:
        print(f"{key:<{width}}  {value}")
