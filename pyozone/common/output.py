"""Terminal output shared by commands: aligned tables, JSON, sizes, ages and durations as people read them."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any

_UNITS = ("B", "KB", "MB", "GB", "TB", "PB")


def human_size(n: int) -> str:
    value = float(n)
    for unit in _UNITS:
        if abs(value) < 1024 or unit == _UNITS[-1]:
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def age(epoch_ms: int, now_ms: int | None = None) -> str:
    if epoch_ms <= 0:
        return "never"
    seconds = max(0, ((now_ms if now_ms is not None else time.time_ns() // 1_000_000) - epoch_ms) // 1000)
    if seconds < 120:
        return f"{seconds}s ago"
    if seconds < 7200:
        return f"{seconds // 60}m ago"
    return f"{seconds // 3600}h ago"


def duration(seconds: float) -> str:
    """An estimate's length: 1h02m03s, or 2m03s under an hour."""
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m{secs:02d}s" if hours else f"{minutes}m{secs:02d}s"


def print_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    cells = [[str(h) for h in headers], *[[str(c) for c in row] for row in rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    for row in cells:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())


def print_json(data: Any) -> None:
    print(json.dumps(data, indent=2, sort_keys=False, default=str))
