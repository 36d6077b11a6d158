"""FailoverWatch: what an operator reads of an SCM HA run (issue 31, `pyozone sim --scm-ha`).

It watches `SimHaCluster` as its observer: each new ready leader (which SCM, which term, how long after the
fault the service had one again), the commands each leader sent (replication among them: a storm shows as
a new leader's burst), and the commands of a deposed leader's term the datanodes dropped.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from pyozone.hdds.commands import ReconstructECContainersCommand, ReplicateContainerCommand
from pyozone.sim.datanode import SimDatanode
from pyozone.sim.scm_ha import ScmHaObserver, SimHaCluster, SimScm

_REPLICATION = (ReplicateContainerCommand, ReconstructECContainersCommand)


@dataclass(frozen=True, slots=True)
class Takeover:
    """A ready leader other than the last one: `after_ms` since the fault before it (None: no fault)."""

    at_ms: int
    scm: str
    term: int
    after_ms: int | None

    def to_dict(self) -> dict:
        return {
            "event": "leader",
            "minute": round(self.at_ms / 60_000, 3),
            "scm": self.scm,
            "term": self.term,
            "secondsAfterFault": None if self.after_ms is None else round(self.after_ms / 1000, 3),
        }

    def text(self) -> str:
        after = "" if self.after_ms is None else f", {self.after_ms / 1000:.2f} s after the fault"
        minute = self.at_ms / 60_000
        return f"-- {self.scm} is the ready leader of term {self.term} at minute {minute:.3f}{after}"


class FailoverWatch(ScmHaObserver):
    def __init__(self) -> None:
        self.takeovers: list[Takeover] = []
        self.commands_sent: Counter[tuple[str, int]] = Counter()  # (SCM, term) -> commands
        self.replication_sent: Counter[tuple[str, int]] = Counter()
        self.stale_dropped = 0
        self._led: tuple[str, int] | None = None
        self._fault_ms: int | None = None
        self._told = 0

    def fault(self, now_ms: int) -> None:
        """An SCM fault now: the next takeover is timed from here."""
        self._fault_ms = now_ms

    def after_event(self, cluster: SimHaCluster) -> None:
        leader = cluster.leader()
        if leader is None:
            return
        led = (leader.name, leader.core.context.known_term)
        if led == self._led:
            return
        now = cluster.clock.now_ms()
        if self._led is not None:
            after = None if self._fault_ms is None else now - self._fault_ms
            self.takeovers.append(Takeover(now, led[0], led[1], after))
        self._led, self._fault_ms = led, None

    def commands(self, cluster: SimHaCluster, scm: SimScm, node: SimDatanode, commands: list) -> None:
        if not commands:
            return
        key = (scm.name, scm.core.context.known_term)
        self.commands_sent[key] += len(commands)
        self.replication_sent[key] += sum(1 for c in commands if isinstance(c, _REPLICATION))

    def received(self, cluster: SimHaCluster, node: SimDatanode, stale: int, dropped: int) -> None:
        self.stale_dropped += stale

    def news(self) -> list[Takeover]:
        """The takeovers not told yet."""
        fresh = self.takeovers[self._told :]
        self._told = len(self.takeovers)
        return fresh

    def summary(self) -> dict:
        timed = [t.after_ms for t in self.takeovers if t.after_ms is not None]
        return {
            "event": "scm-ha",
            "failovers": len(self.takeovers),
            "longestSecondsToANewLeader": round(max(timed) / 1000, 3) if timed else None,
            "commandsSent": {
                f"{scm} term {term}": n for (scm, term), n in sorted(self.commands_sent.items())
            },
            "replicationCommandsSent": sum(self.replication_sent.values()),
            "staleCommandsDropped": self.stale_dropped,
        }

    def summary_text(self) -> str:
        s = self.summary()
        longest = s["longestSecondsToANewLeader"]
        by_leader = ", ".join(
            f"{scm} term {term}: {n} ({self.replication_sent[(scm, term)]} replication)"
            for (scm, term), n in sorted(self.commands_sent.items())
        )
        return (
            f"-- SCM HA: {s['failovers']} failovers"
            + ("" if longest is None else f", at most {longest:.2f} s from a fault to a new ready leader")
            + f"; commands sent by {by_leader or 'no leader'}; "
            f"{s['staleCommandsDropped']} commands of a deposed leader dropped by the datanodes"
        )
