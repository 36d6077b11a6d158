"""When a datanode asks SCM to close a container: one rule for the datanode's dispatcher and the simulator.

A write that takes an open container to hdds.container.close.threshold of its size (0.9 by default) makes
the datanode send SCM a CLOSE container action (reason CONTAINER_FULL), once per container, so the
container closes before it overflows while the writes already allocated to it still fit. A container
whose volume is full (down to its free-space floor, HddsVolume.is_full) asks the same (Ozone's
isVolumeFull): it cannot grow there, and SCM would go on allocating blocks to it.
"""

from __future__ import annotations

CLOSE_THRESHOLD_KEY = "hdds.container.close.threshold"


def check_close_threshold(threshold: float) -> float:
    if not 0 < threshold <= 1:
        raise ValueError(f"close threshold must be in (0, 1], got {threshold}")
    return threshold


def is_full(used_bytes: int, max_size: int, threshold: float) -> bool:
    return used_bytes >= threshold * max_size


def fills_up(used_before: int, used_after: int, max_size: int, threshold: float) -> bool:
    """Whether this write is the one that makes the container full (so the action is sent once)."""
    return is_full(used_after, max_size, threshold) and not is_full(used_before, max_size, threshold)
