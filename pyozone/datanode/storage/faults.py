"""Test-only fault hooks: a volume made slow, to show that writes to a datanode's other volumes do not wait.

PYOZONE_FAULT_SLOW_VOLUMES="<volume root>=<seconds per MiB>[,...]" in a datanode's environment (or
`slow_volume` in-process) makes every chunk write under that root sleep in proportion to its size before
it is written. Nothing else uses it; unset (the default) it costs one dictionary lookup per write.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

ENV = "PYOZONE_FAULT_SLOW_VOLUMES"
_MIB = 1 << 20


def _parse(raw: str) -> dict[str, float]:
    slow = {}
    for item in filter(None, (part.strip() for part in raw.split(","))):
        root, _, rate = item.rpartition("=")
        slow[str(Path(root))] = float(rate)
    return slow


_SLOW: dict[str, float] = _parse(os.environ.get(ENV, ""))


def slow_volume(root: Path | str, seconds_per_mib: float) -> None:
    """Slows writes under `root` (0 restores it)."""
    if seconds_per_mib > 0:
        _SLOW[str(Path(root))] = seconds_per_mib
    else:
        _SLOW.pop(str(Path(root)), None)


def before_write(path: Path, length: int) -> None:
    if not _SLOW:
        return
    for root, rate in _SLOW.items():
        if str(path).startswith(root + os.sep):
            time.sleep(rate * length / _MIB)
            return
