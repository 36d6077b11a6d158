"""Shared helpers for benchmark commands: timing and a printed table."""

from __future__ import annotations

import os
import resource
import time
from collections.abc import Callable, Mapping
from pathlib import Path

SHARED_DISK_DEFINES = (
    "-D", "hdds.datanode.volume.min.free.space=1GB",
    "-D", "hdds.datanode.volume.min.free.space.percent=0",
)  # fmt: skip
"""`cluster up` flags for a benchmark's datanodes, which share one disk (/dev/shm by default): the 20 GB
floor of hdds.datanode.volume.min.free.space is for a dedicated disk, and three volumes on a 24 GB memory disk
would leave no room for a container above it (cluster up refuses to start)."""


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


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class CpuMeter:
    """CPU seconds spent by named processes (a cluster's daemons by pid) and by this one, between two
    readings: what an operation costs each process, which a loaded, shared machine blurs far less than
    a rate."""

    def __init__(self, pids: Mapping[str, int]) -> None:
        self.pids = dict(pids)

    def read(self) -> dict[str, float]:
        seen = {name: cpu_seconds(pid) for name, pid in self.pids.items()}
        seen["this process"] = time.process_time()
        return seen

    @staticmethod
    def per_op_ms(before: Mapping[str, float], after: Mapping[str, float], ops: int) -> dict[str, float]:
        spent = {name: (after[name] - before[name]) * 1000 / ops for name in before}
        spent["total"] = sum(spent.values())
        return spent
