"""FreonReport: what a freon run did, and its summary table (throughput and latency percentiles)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field


def percentile(sorted_values: list[float], p: float) -> float:
    """Nearest-rank percentile of an ascending list (0 for an empty one)."""
    if not sorted_values:
        return 0.0
    rank = max(1, math.ceil(p / 100 * len(sorted_values)))
    return sorted_values[rank - 1]


@dataclass(frozen=True, slots=True)
class FreonReport:
    operation: str  # the tool: "ockg", "ockv", "omkg", "ome" or "dne"
    keys: int  # operations that succeeded (keys, for the key tools)
    bytes: int  # payload moved: key bytes, or an echo's bytes both ways
    seconds: float
    latencies_ms: tuple[float, ...] = ()
    failures: tuple[str, ...] = field(default=())  # one line per failed operation
    unit: str = "keys"  # what the count and rate rows count: "keys", or "ops" for the echoes
    interrupted: int = 0  # operations the end of the run cut short (a key aborted, or its commit's wait)

    @property
    def ok(self) -> bool:
        return not self.failures

    @property
    def rate(self) -> float:
        """Successful operations per second."""
        return self.keys / max(self.seconds, 1e-9)

    def latency_ms(self, p: float) -> float:
        """The p-th percentile of the successful operations' latency."""
        return percentile(sorted(self.latencies_ms), p)

    def rows(self) -> list[tuple[str, str]]:
        lat = sorted(self.latencies_ms)
        seconds = max(self.seconds, 1e-9)
        return [
            ("operation", self.operation),
            (self.unit, str(self.keys)),
            ("failed", str(len(self.failures))),
            ("bytes", str(self.bytes)),
            ("seconds", f"{self.seconds:.3f}"),
            (f"{self.unit}/s", f"{self.rate:.1f}"),
            ("MB/s", f"{self.bytes / seconds / (1 << 20):.2f}"),
            ("latency p50 ms", f"{percentile(lat, 50):.1f}"),
            ("latency p90 ms", f"{percentile(lat, 90):.1f}"),
            ("latency p99 ms", f"{percentile(lat, 99):.1f}"),
            ("latency max ms", f"{(lat[-1] if lat else 0.0):.1f}"),
            *([("interrupted", str(self.interrupted))] if self.interrupted else []),
        ]

    def table(self) -> str:
        rows = self.rows()
        width = max(len(name) for name, _ in rows)
        return "\n".join(f"{name.ljust(width)}  {value}" for name, value in rows)
