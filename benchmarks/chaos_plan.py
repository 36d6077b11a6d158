"""The chaos suite's kill schedule: which daemon is killed (kill -9) or started again, and when.

A plan is made up front from a seed, so a failing run can be replayed with the same kills, and it is a
plain list that tests check without a cluster. Like Ozone's MiniOzoneChaosCluster it kills datanodes
over and over (never more than `max_down` at once), and OM and SCM once each, at a third and at two
thirds of the run. Some datanode kills come in pairs a few seconds apart: the "two datanodes killed in a
row" case the write path must survive while a replication factor's worth of datanodes remain. With OM HA
(issue 30) "om" is the service's leader at the time of the kill, killed `om_kills` times, spread over the
first two thirds. Every `leader_every`-th datanode outage (issue 30) is a kill of a pipeline's Raft
leader while the writer writes through it: its daemon is a placeholder, `dn-leader1`, `dn-leader2`, ...,
which the run resolves at the kill to the datanode leading the most RATIS/THREE pipelines then (its /prom
`ratis_server_role`), and starts again at the placeholder's start. The plan's times and bounds are those of
the same seed without leader kills. With SCM HA (issue 31) "scm" is the service's leader at the time of
the kill, killed `scm_kills` times, and `scm_partitions` times that leader is cut off from the other SCMs
(the placeholder `scm-partition`: paused with SIGSTOP, resumed with SIGCONT at its start); the SCM outages
are evenly spaced, the last at two thirds (a lone kill there as before), kills and partitions alternating.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from dataclasses import dataclass
from enum import Enum


class Action(Enum):
    KILL = "kill"
    START = "start"


@dataclass(frozen=True, slots=True)
class Event:
    at_s: float  # seconds after the writing phase began
    action: Action
    daemon: str  # "scm", "om", "dn1", ...


KILL_EVERY_S = 60.0  # mean gap between datanode kills (the run this reproduces: 11 in 11.5 minutes)
LEADER_EVERY = 3  # every third datanode outage kills a pipeline's leader
LEADER = "dn-leader"
"""The prefix of a placeholder daemon: the datanode leading the most pipelines at the time of the kill."""
SCM_PARTITION = "scm-partition"
"""The placeholder of an SCM leader cut off from the other SCMs: its kill pauses it, its start resumes it."""


def is_leader_kill(daemon: str) -> bool:
    return daemon.startswith(LEADER)


_ROLE = re.compile(r'^ratis_server_role\{[^}]*group="([^"]+)"[^}]*role="LEADER"[^}]*\} 1(?:\.0)?$')
_PEER = re.compile(r'^ratis_server_peerCommitIndex\{[^}]*group="([^"]+)"')


def groups_led(prom: str) -> list[str]:
    """The Raft groups of more than one member (pipelines, not RATIS/ONE) that a datanode's /prom says it
    leads (`ratis_server_role{...,role="LEADER"} 1`; the leader's `ratis_server_peerCommitIndex` names
    every member), in their order there."""
    lines = prom.splitlines()
    members = Counter(m.group(1) for line in lines if (m := _PEER.match(line)))
    return [m.group(1) for line in lines if (m := _ROLE.match(line)) and members[m.group(1)] > 1]


@dataclass(frozen=True, slots=True)
class KillTiming:
    """How often and for how long. A datanode down longer than the dead-node interval is re-replicated by
    SCM; one back sooner is only stale, so downtimes straddle that interval."""

    kill_every_s: float = KILL_EVERY_S
    down_min_s: float = 8.0
    down_max_s: float = 60.0
    pair_chance: float = 0.3  # a second datanode killed a few seconds after the first
    om_down_s: float = 10.0
    scm_down_s: float = 15.0
    first_kill_s: float = 15.0  # let the writer get going first
    leader_every: int = LEADER_EVERY  # 0: no leader kills


def plan_kills(
    duration_s: float,
    datanodes: list[str],
    max_down: int,
    rng: random.Random,
    timing: KillTiming = KillTiming(),
    om_kills: int = 1,
    scm_kills: int = 1,
    scm_partitions: int = 0,
) -> list[Event]:
    """Kill and start events within [0, duration_s], sorted by time (a start before a kill at the same
    instant). Every daemon killed is started again by duration_s. OM is killed `om_kills` times, at odd
    multiples of duration_s / (3 * om_kills): one kill at a third, several spread before SCM's. SCM's
    outages (`scm_outages`) end at two thirds."""
    events = [
        *(
            e
            for i in range(om_kills)
            for e in _outage("om", (2 * i + 1) * duration_s / (3 * om_kills), timing.om_down_s, duration_s)
        ),
        *(
            e
            for at, name in scm_outages(duration_s, scm_kills, scm_partitions)
            for e in _outage(name, at, timing.scm_down_s, duration_s)
        ),
    ]
    back_at: dict[str, float] = {}  # datanode -> when it is started again
    t = timing.first_kill_s
    while t < duration_s and max_down > 0:
        pair = max_down >= 2 and rng.random() < timing.pair_chance
        for i in range(2 if pair else 1):
            at = t + i * rng.uniform(2, 8)
            down = sorted(n for n, back in back_at.items() if back > at)
            if len(down) >= max_down:  # a while after the first of them is back
                at = min(back_at[n] for n in down) + 5
            up = [n for n in datanodes if back_at.get(n, 0) <= at]
            if at >= duration_s or not up:
                break
            name = rng.choice(up)
            outage = _outage(name, at, rng.uniform(timing.down_min_s, timing.down_max_s), duration_s)
            back_at[name] = outage[1].at_s
            events += outage
            t = at
        t += rng.uniform(0.5, 1.5) * timing.kill_every_s
    return sorted(_leader_kills(events, timing.leader_every), key=lambda e: (e.at_s, e.action is Action.KILL))


def scm_outages(duration_s: float, kills: int, partitions: int) -> list[tuple[float, str]]:
    """(time, "scm" or SCM_PARTITION) of each SCM outage: n of them duration_s / (2 * n) apart, the last at
    two thirds of the run, kills and partitions alternating (the surplus of either last)."""
    n = kills + partitions
    both = min(kills, partitions)
    names = ["scm", SCM_PARTITION] * both + ["scm"] * (kills - both) + [SCM_PARTITION] * (partitions - both)
    return [(duration_s * (1 / 6 + (k + 1) / (2 * n)), name) for k, name in enumerate(names)]


def _leader_kills(events: list[Event], every: int) -> list[Event]:
    """Every `every`-th datanode outage (in plan order) made a pipeline leader's: its kill and start name the
    placeholder `dn-leader<n>` instead of the datanode, at the same times."""
    if every <= 0:
        return events
    renamed: dict[tuple[str, float], str] = {}  # (datanode, kill time) -> placeholder
    outages = [e for e in events if e.daemon.startswith("dn") and e.action is Action.KILL]
    for n, kill in enumerate(outages[every - 1 :: every], start=1):
        renamed[(kill.daemon, kill.at_s)] = f"{LEADER}{n}"
    out: list[Event] = []
    open_kill: dict[str, str] = {}  # datanode -> placeholder of its outage under way
    for e in events:  # each outage's kill comes right before its start (`_outage`)
        if e.action is Action.KILL and (e.daemon, e.at_s) in renamed:
            open_kill[e.daemon] = renamed[(e.daemon, e.at_s)]
            out.append(Event(e.at_s, e.action, open_kill[e.daemon]))
        elif e.action is Action.START and e.daemon in open_kill:
            out.append(Event(e.at_s, e.action, open_kill.pop(e.daemon)))
        else:
            out.append(e)
    return out


def _outage(name: str, at_s: float, down_s: float, end_s: float) -> list[Event]:
    return [Event(at_s, Action.KILL, name), Event(min(at_s + down_s, end_s), Action.START, name)]


def max_datanodes_down(events: list[Event]) -> int:
    """The most datanodes down at once over a plan (or over the events a run actually carried out)."""
    down: set[str] = set()
    most = 0
    for e in events:
        if e.daemon.startswith("dn"):
            (down.add if e.action is Action.KILL else down.discard)(e.daemon)
            most = max(most, len(down))
    return most


@dataclass(frozen=True, slots=True)
class Conditions:
    """What the cluster looked like while one write ran: the fewest datanodes running, and whether OM or
    SCM was down at any point of it (with HA: the leader killed or partitioned, om1 or scm2 as the names
    go)."""

    min_datanodes_up: int
    om_down: bool
    scm_down: bool


def conditions(events: list[Event], datanodes: int, start: float, end: float) -> Conditions:
    """The conditions over [start, end], from the kills and starts carried out (in time order)."""
    down: set[str] = set()
    seen: list[set[str]] = []  # what was down at `start` and after each change within the interval
    for e in events:
        if e.at_s > end:
            break
        if e.at_s > start and not seen:
            seen.append(set(down))
        (down.discard if e.action is Action.START else down.add)(e.daemon)
        if e.at_s > start:
            seen.append(set(down))
    seen = seen or [down]
    datanodes_down = max(sum(1 for n in s if n.startswith("dn")) for s in seen)
    return Conditions(
        datanodes - datanodes_down,
        any(n.startswith("om") for s in seen for n in s),
        any(n.startswith("scm") for s in seen for n in s),
    )
