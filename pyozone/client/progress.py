"""A small, dependency-free progress bar for stderr (put/get of large files, freon).

Redraws at most every 0.1 s with a carriage return, so it costs nothing per byte; shown only when asked
(the CLI turns it on for a TTY or --progress) so logs and pipes stay clean.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import TextIO

_WIDTH = 30
_UNITS = ("B", "KB", "MB", "GB", "TB", "PB")


def human_size(n: float) -> str:
    """1.5 MB, binary units (as `pyozone admin` prints sizes)."""
    for unit in _UNITS:
        if abs(n) < 1024 or unit == _UNITS[-1]:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


class ProgressBar:
    def __init__(
        self, total: int, label: str = "", unit: str = "bytes", stream: TextIO | None = None,
        enabled: bool = True, interval_s: float = 0.1,
    ) -> None:  # fmt: skip
        self.total = total
        self.label = label
        self.unit = unit
        self.done = 0
        self._stream = stream or sys.stderr
        self._enabled = enabled
        self._interval_s = interval_s
        self._start = time.monotonic()
        self._last_draw = 0.0
        self._lock = threading.Lock()  # freon's worker threads update one bar

    def __call__(self, n: int) -> None:
        self.update(n)

    def update(self, n: int) -> None:
        with self._lock:
            self.done += n
            now = time.monotonic()
            if self._enabled and now - self._last_draw >= self._interval_s:
                self._last_draw = now
                self._draw(now)

    def _format(self, value: float) -> str:
        return human_size(value) if self.unit == "bytes" else f"{value:.0f} {self.unit}"

    def _draw(self, now: float) -> None:
        fraction = min(1.0, self.done / self.total) if self.total > 0 else 1.0
        filled = int(fraction * _WIDTH)
        rate = self.done / max(now - self._start, 1e-9)
        label = f"{self.label} " if self.label else ""
        self._stream.write(
            f"\r{label}[{'#' * filled}{'.' * (_WIDTH - filled)}] {fraction * 100:3.0f}% "
            f"{self._format(self.done)} / {self._format(self.total)} {self._format(rate)}/s "
        )
        self._stream.flush()

    def close(self) -> None:
        if self._enabled:
            with self._lock:
                self._draw(time.monotonic())
                self._stream.write("\n")
                self._stream.flush()

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
