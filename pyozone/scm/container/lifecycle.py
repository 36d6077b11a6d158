"""The container lifecycle state machine (Ozone's ContainerStateManagerImpl), as one table.

Self-loops make replayed events harmless (reports repeat, handlers race); every pair not in the
table is a bug in the caller and raises. Callers apply a target only when its number is larger
than the current state's, so the stored state never moves backwards through this table.
"""

from __future__ import annotations

from pyozone.hdds.exceptions import ResultCode, SCMException
from pyozone.hdds.states import LifeCycleEvent as E
from pyozone.hdds.states import LifeCycleState as S

TRANSITIONS: dict[tuple[S, E], S] = {
    # forward transitions
    (S.OPEN, E.FINALIZE): S.CLOSING,
    (S.CLOSING, E.QUASI_CLOSE): S.QUASI_CLOSED,
    (S.CLOSING, E.CLOSE): S.CLOSED,
    (S.QUASI_CLOSED, E.FORCE_CLOSE): S.CLOSED,
    (S.QUASI_CLOSED, E.DELETE): S.DELETING,
    (S.CLOSED, E.DELETE): S.DELETING,
    (S.DELETING, E.CLEANUP): S.DELETED,
    # idempotent self-loops
    (S.CLOSING, E.FINALIZE): S.CLOSING,
    (S.QUASI_CLOSED, E.FINALIZE): S.QUASI_CLOSED,
    (S.CLOSED, E.FINALIZE): S.CLOSED,
    (S.DELETING, E.FINALIZE): S.DELETING,
    (S.DELETED, E.FINALIZE): S.DELETED,
    (S.QUASI_CLOSED, E.QUASI_CLOSE): S.QUASI_CLOSED,
    (S.CLOSED, E.QUASI_CLOSE): S.CLOSED,
    (S.DELETING, E.QUASI_CLOSE): S.DELETING,
    (S.DELETED, E.QUASI_CLOSE): S.DELETED,
    (S.CLOSED, E.CLOSE): S.CLOSED,
    (S.DELETING, E.CLOSE): S.DELETING,
    (S.DELETED, E.CLOSE): S.DELETED,
    (S.CLOSED, E.FORCE_CLOSE): S.CLOSED,
    (S.DELETING, E.FORCE_CLOSE): S.DELETING,
    (S.DELETED, E.FORCE_CLOSE): S.DELETED,
    (S.DELETING, E.DELETE): S.DELETING,
    (S.DELETED, E.DELETE): S.DELETED,
    (S.DELETED, E.CLEANUP): S.DELETED,
}

REVERSE_SOURCES = frozenset({S.DELETING, S.DELETED})
REVERSE_TARGETS = frozenset({S.CLOSED, S.QUASI_CLOSED})


def next_state(state: S, event: E) -> S:
    """The state `event` leads to from `state`; INVALID_CONTAINER_STATE if the pair is not in the table."""
    target = TRANSITIONS.get((state, event))
    if target is None:
        raise SCMException(
            f"Invalid event {event.name} for container in state {state.name}",
            ResultCode.INVALID_CONTAINER_STATE,
        )
    return target


def check_reverse(state: S, target: S) -> None:
    """Resurrection (report handling) may only bring a DELETING/DELETED container back to CLOSED or
    QUASI_CLOSED."""
    if state not in REVERSE_SOURCES or target not in REVERSE_TARGETS:
        raise SCMException(
            f"Cannot move container from {state.name} back to {target.name}: only DELETING or DELETED "
            "containers go back, to CLOSED or QUASI_CLOSED",
            ResultCode.INVALID_CONTAINER_STATE,
        )
