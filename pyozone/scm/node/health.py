"""The datanode health state machine and interval sanitisation (Ozone's NodeStateManager, HddsServerUtil).

Recovery never jumps to HEALTHY: STALE and DEAD nodes come back through HEALTHY_READONLY, and only a
later check pass (with a matching layout) makes them HEALTHY.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from enum import Enum, auto
from typing import TYPE_CHECKING, ClassVar

from pyozone.hdds.states import NodeState

if TYPE_CHECKING:
    from pyozone.config.validate import Rule

log = logging.getLogger(__name__)


class NodeLifeCycleEvent(Enum):
    TIMEOUT = auto()
    RESTORE = auto()
    RESURRECT = auto()
    LAYOUT_MISMATCH = auto()
    LAYOUT_MATCH = auto()


_E = NodeLifeCycleEvent
TRANSITIONS: dict[tuple[NodeState, NodeLifeCycleEvent], NodeState] = {
    (NodeState.HEALTHY, _E.TIMEOUT): NodeState.STALE,
    (NodeState.HEALTHY, _E.LAYOUT_MISMATCH): NodeState.HEALTHY_READONLY,
    (NodeState.HEALTHY_READONLY, _E.LAYOUT_MATCH): NodeState.HEALTHY,
    (NodeState.HEALTHY_READONLY, _E.TIMEOUT): NodeState.STALE,
    (NodeState.STALE, _E.TIMEOUT): NodeState.DEAD,
    (NodeState.STALE, _E.RESTORE): NodeState.HEALTHY_READONLY,
    (NodeState.DEAD, _E.RESURRECT): NodeState.HEALTHY_READONLY,
}


def next_state(state: NodeState, event: NodeLifeCycleEvent) -> NodeState | None:
    """The target state, or None for a transition the machine does not have (ignored, as Ozone logs it)."""
    return TRANSITIONS.get((state, event))


def sanitize(
    value: int, base: int, min_factor: int, max_factor: int, key: str = "", base_key: str = ""
) -> int:
    """Clamps value into [base * min_factor, base * max_factor] (Ozone's ServerUtils.sanitizeUserArgs),
    with Ozone's warning when it does, so an operator sees the interval actually in force."""
    low, high = base * min_factor, base * max_factor
    if value < low or value > high:
        bound, word = (low, "smaller than min") if value < low else (high, "larger than max")
        log.warning(
            "%s value = %d ms is %s = %d ms based on the key value of %s, reset to %d ms",
            key or "value", value, word, bound, base_key or "its base", bound,
        )  # fmt: skip
        return bound
    return value


CHECK = "ozone.scm.heartbeat.thread.interval"
HEARTBEAT = "hdds.heartbeat.interval"
STALE = "ozone.scm.stale.node.interval"
DEAD = "ozone.scm.dead.node.interval"


@dataclass(frozen=True, slots=True)
class HealthIntervals:
    """When a silent datanode goes STALE and DEAD, after sanitisation (pyozone/scm/settings.py builds it)."""

    check_interval_ms: int = 3_000  # ozone.scm.heartbeat.thread.interval
    stale_ms: int = 300_000  # ozone.scm.stale.node.interval
    dead_ms: int = 600_000  # ozone.scm.dead.node.interval

    RULES: ClassVar[tuple[Rule, ...]] = (
        ((CHECK,), lambda v: v > 0, "must be > 0"),
        ((STALE, DEAD), lambda s, d: s < d, "the stale interval must be less than the dead interval"),
    )

    @classmethod
    def sanitized(cls, check_ms: int, heartbeat_ms: int, stale_ms: int, dead_ms: int) -> HealthIntervals:
        """Ozone's HddsServerUtil clamping: stale within [5, 1000] checks and [3, 1000] heartbeats, dead
        within [2, 1000] stales. Raises ValueError when the clamped stale interval is not below the dead."""
        stale = sanitize(stale_ms, check_ms, 5, 1000, STALE, CHECK)
        stale = sanitize(stale, heartbeat_ms, 3, 1000, STALE, HEARTBEAT)
        dead = sanitize(dead_ms, stale, 2, 1000, DEAD, STALE)
        if stale >= dead:
            raise ValueError(
                f"ozone.scm.stale.node.interval ({stale} ms after sanitisation) must be less than "
                f"ozone.scm.dead.node.interval ({dead} ms)"
            )
        return cls(check_ms, stale, dead)


def health_transitions(
    state: NodeState, last_heartbeat_ms: int, now_ms: int, layout_matches: bool, intervals: HealthIntervals
) -> list[NodeLifeCycleEvent]:
    """The events one check pass applies to a node, in order, each judged against the pass-start state.

    One transition per event per pass: a HEALTHY node goes STALE in one pass and DEAD in a later one.
    """
    healthy_deadline = now_ms - intervals.stale_ms
    stale_deadline = now_ms - intervals.dead_ms
    events: list[NodeLifeCycleEvent] = []
    if state is NodeState.HEALTHY:
        if not layout_matches:
            events.append(_E.LAYOUT_MISMATCH)
        if last_heartbeat_ms < healthy_deadline:
            events.append(_E.TIMEOUT)
    elif state is NodeState.HEALTHY_READONLY:
        if layout_matches:
            events.append(_E.LAYOUT_MATCH)
        if last_heartbeat_ms < healthy_deadline:
            events.append(_E.TIMEOUT)
    elif state is NodeState.STALE:
        if last_heartbeat_ms < stale_deadline:
            events.append(_E.TIMEOUT)
        elif last_heartbeat_ms >= healthy_deadline:
            events.append(_E.RESTORE)
    elif state is NodeState.DEAD and last_heartbeat_ms >= healthy_deadline:
        events.append(_E.RESURRECT)
    return events
