"""ReplicationManagerReport: what one full check pass found (Ozone's "Replication Manager" doc,
"ReplicationManager Report").

Counts per container lifecycle state (every container once) and per health state (a container may be
counted in more than one health bucket, e.g. QUASI_CLOSED_STUCK and QUASI_CLOSED_STUCK_UNDER_REPLICATED),
plus a sample of the first `sample_limit` container ids of each health state.

JSON shape (`to_dict`), the one Ozone's `ozone admin container report --json` prints:

    {"reportTimeStamp": <epoch ms>, "sampleLimit": 100,
     "stats": {"OPEN": n, ..., "RECOVERING": n, "HEALTHY": n, "UNDER_REPLICATED": n, ...},
     "samples": {"UNDER_REPLICATED": [id, ...], ...}}

`stats` always lists every lifecycle state and every health state (names as in the enums); `samples`
lists only states with at least one sampled id. `from_dict` ignores unknown names, so a report written
by a newer version still loads.

Samples are the first ids *in scan order*, and the full scan visits containers in ascending id order,
so a sample is the smallest ids of its bucket. `merge` keeps that property: the merged sample is the
smallest `sample_limit` ids of both, exactly what one scan over both parts would have sampled. This
makes partial reports (id ranges scanned separately) combine associatively and commutatively.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pyozone.hdds.container_health import ContainerHealthState
from pyozone.hdds.ids import ContainerID
from pyozone.hdds.states import LifeCycleState

DEFAULT_SAMPLE_LIMIT = 100
Stat = LifeCycleState | ContainerHealthState


class ReplicationManagerReport:
    def __init__(self, sample_limit: int = DEFAULT_SAMPLE_LIMIT, timestamp_ms: int = 0) -> None:
        if sample_limit < 0:
            raise ValueError(f"sample limit must be >= 0, got {sample_limit}")
        self.sample_limit = sample_limit
        self.timestamp_ms = timestamp_ms
        self._lifecycle = dict.fromkeys(LifeCycleState, 0)
        self._health = dict.fromkeys(ContainerHealthState, 0)
        self._samples: dict[ContainerHealthState, list[ContainerID]] = {}
        self.current_health = ContainerHealthState.HEALTHY

    def increment(self, state: Stat) -> None:
        """Count without sampling: lifecycle states (one per container scanned)."""
        if isinstance(state, ContainerHealthState):
            self._health[state] += 1
        else:
            self._lifecycle[state] += 1

    def increment_and_sample(self, state: ContainerHealthState, container_id: ContainerID) -> None:
        """Count, sample while under the limit, and make `state` the container's current health
        (the last call during one container's check wins, as Ozone's processContainer)."""
        self._health[state] += 1
        sample = self._samples.setdefault(state, [])
        if len(sample) < self.sample_limit:
            sample.append(container_id)
        self.current_health = state

    def reset_current(self) -> None:
        """Called before each container's check (as Ozone's processContainer)."""
        self.current_health = ContainerHealthState.HEALTHY

    def set_complete(self, timestamp_ms: int) -> None:
        self.timestamp_ms = timestamp_ms

    def stat(self, state: Stat | str) -> int:
        """The count for a state given as enum or name; -1 for a name no enum knows (Ozone's getStat)."""
        if isinstance(state, ContainerHealthState):
            return self._health[state]
        if isinstance(state, LifeCycleState):
            return self._lifecycle[state]
        if state in LifeCycleState.__members__:
            return self._lifecycle[LifeCycleState[state]]
        if state in ContainerHealthState.__members__:
            return self._health[ContainerHealthState[state]]
        return -1

    def samples(self, state: ContainerHealthState) -> list[ContainerID]:
        return list(self._samples.get(state, ()))

    def merge(self, other: ReplicationManagerReport) -> ReplicationManagerReport:
        """A new report: counts added, samples = smallest ids of both (see module doc), the later
        timestamp, this report's sample limit."""
        merged = ReplicationManagerReport(self.sample_limit, max(self.timestamp_ms, other.timestamp_ms))
        for state in LifeCycleState:
            merged._lifecycle[state] = self._lifecycle[state] + other._lifecycle[state]
        for state in ContainerHealthState:
            merged._health[state] = self._health[state] + other._health[state]
            ids = sorted(set(self._samples.get(state, ())) | set(other._samples.get(state, ())))
            if ids[: self.sample_limit]:
                merged._samples[state] = ids[: self.sample_limit]
        return merged

    def to_dict(self) -> dict[str, Any]:
        stats = {s.name: n for s, n in self._lifecycle.items()}
        stats.update({s.name: n for s, n in self._health.items()})
        return {
            "reportTimeStamp": self.timestamp_ms,
            "sampleLimit": self.sample_limit,
            "stats": stats,
            "samples": {s.name: list(ids) for s, ids in sorted(self._samples.items()) if ids},
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ReplicationManagerReport:
        report = cls(int(data.get("sampleLimit", DEFAULT_SAMPLE_LIMIT)), int(data.get("reportTimeStamp", 0)))
        for name, count in data.get("stats", {}).items():
            if name in LifeCycleState.__members__:
                report._lifecycle[LifeCycleState[name]] = int(count)
            elif name in ContainerHealthState.__members__:
                report._health[ContainerHealthState[name]] = int(count)
        for name, ids in data.get("samples", {}).items():
            if name in ContainerHealthState.__members__:
                report._samples[ContainerHealthState[name]] = [int(i) for i in ids][: report.sample_limit]
        return report

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ReplicationManagerReport) and self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]


REPORT_HEALTH_STATES = tuple(s for s in ContainerHealthState if s is not ContainerHealthState.HEALTHY)
"""The health states a report lists, in Ozone's order."""


def report_lines(report: ReplicationManagerReport) -> list[str]:
    generated = datetime.fromtimestamp(report.timestamp_ms // 1000, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    lines = [*_heading(f"Container Summary Report generated at {generated}"), ""]
    lines += _heading("Container State Summary")
    lines += [f"{state.name}: {report.stat(state)}" for state in LifeCycleState]
    lines += ["", *_heading("Container Health Summary")]
    lines += [f"{state.name}: {report.stat(state)}" for state in REPORT_HEALTH_STATES]
    lines.append("")
    for state in REPORT_HEALTH_STATES:
        sample = report.samples(state)
        if sample:
            lines.append(f"First {report.sample_limit} {state.name} containers:")
            lines += [", ".join(f"#{cid}" for cid in sample), ""]
    return lines


def _heading(text: str) -> list[str]:
    return [text, "=" * len(text)]
