"""The lifecycle state machine over the whole state x event grid, and monotonic application
(ContainerStateManagerImpl)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pyozone.hdds.exceptions import ResultCode, SCMException
from pyozone.hdds.states import LifeCycleEvent, LifeCycleState
from pyozone.scm.container.lifecycle import check_reverse, next_state
from tests.unit.scm.container.scm_fakes import Harness, make_harness

S, E = LifeCycleState, LifeCycleEvent

# Written from ContainerStateManagerImpl's transitions, independently of the implementation: the next state
# for each event, "=" for an idempotent self-loop, None for an invalid pair.
COLUMNS = (E.FINALIZE, E.QUASI_CLOSE, E.CLOSE, E.FORCE_CLOSE, E.DELETE, E.CLEANUP)
EXPECTED: dict[S, tuple[S | str | None, ...]] = {
    S.OPEN:         (S.CLOSING, None,           None,     None,     None,       None),
    S.CLOSING:      ("=",       S.QUASI_CLOSED, S.CLOSED, None,     None,       None),
    S.QUASI_CLOSED: ("=",       "=",            None,     S.CLOSED, S.DELETING, None),
    S.CLOSED:       ("=",       "=",            "=",      "=",      S.DELETING, None),
    S.DELETING:     ("=",       "=",            "=",      "=",      "=",        S.DELETED),
    S.DELETED:      ("=",       "=",            "=",      "=",      "=",        "="),
    S.RECOVERING:   (None,      None,           None,     None,     None,       None),
}  # fmt: skip
GRID = [(state, event) for state in S for event in E]


def expected_target(state: S, event: E) -> S | None:
    value = EXPECTED[state][COLUMNS.index(event)]
    return state if value == "=" else value  # type: ignore[return-value]


def test_grid_covers_every_pair() -> None:
    assert set(COLUMNS) == set(E) and set(EXPECTED) == set(S) and len(GRID) == 7 * 6


@pytest.mark.parametrize(("state", "event"), GRID, ids=[f"{s.name}-{e.name}" for s, e in GRID])
def test_transition_table(state: S, event: E) -> None:
    target = expected_target(state, event)
    if target is None:
        with pytest.raises(SCMException) as err:
            next_state(state, event)
        assert err.value.code is ResultCode.INVALID_CONTAINER_STATE
        assert state.name in str(err.value) and event.name in str(err.value)
    else:
        assert next_state(state, event) is target


def test_no_transition_decreases_the_state_number() -> None:
    for state, event in GRID:
        if (target := expected_target(state, event)) is not None:
            assert target >= state


@pytest.mark.parametrize("source", list(S))
@pytest.mark.parametrize("target", list(S))
def test_reverse_path_only_from_deleting_or_deleted_to_closed_or_quasi_closed(source: S, target: S) -> None:
    allowed = source in (S.DELETING, S.DELETED) and target in (S.CLOSED, S.QUASI_CLOSED)
    if allowed:
        check_reverse(source, target)
    else:
        with pytest.raises(SCMException) as err:
            check_reverse(source, target)
        assert err.value.code is ResultCode.INVALID_CONTAINER_STATE


def _container_in(h: Harness, state: S) -> int:
    """A container driven to `state` through the manager (RECOVERING is never reached by events)."""
    dns = h.register(3)
    info = h.containers.allocate_container(h.pipelines.add(tuple(dns)), "om")
    path = {
        S.OPEN: [],
        S.CLOSING: [E.FINALIZE],
        S.QUASI_CLOSED: [E.FINALIZE, E.QUASI_CLOSE],
        S.CLOSED: [E.FINALIZE, E.CLOSE],
        S.DELETING: [E.FINALIZE, E.CLOSE, E.DELETE],
        S.DELETED: [E.FINALIZE, E.CLOSE, E.DELETE, E.CLEANUP],
    }[state]
    for event in path:
        h.containers.update_state(info.container_id, event)
    assert h.containers.get(info.container_id).state is state
    return info.container_id


@pytest.mark.parametrize(("state", "event"), [(s, e) for s, e in GRID if s is not S.RECOVERING])
def test_manager_applies_the_table(state: S, event: E) -> None:
    h = make_harness()
    cid = _container_in(h, state)
    before = h.containers.get(cid)
    h.clock.advance(1000)
    target = expected_target(state, event)
    if target is None:
        with pytest.raises(SCMException):
            h.containers.update_state(cid, event)
        assert h.containers.get(cid) == before
        return
    after = h.containers.update_state(cid, event)
    assert after.state is target
    if target is state:  # a self-loop changes nothing, not even the state-enter time
        assert after == before
    else:
        assert after.state_entered_ms == before.state_entered_ms + 1000


@given(st.lists(st.sampled_from(list(E)), max_size=25))
def test_random_event_sequences_never_go_back_and_only_invalid_pairs_raise(events: list[E]) -> None:
    h = make_harness()
    cid = _container_in(h, S.OPEN)
    for event in events:
        state = h.containers.get(cid).state
        target = expected_target(state, event)
        try:
            h.containers.update_state(cid, event)
        except SCMException as e:
            assert target is None, f"{state.name} + {event.name} raised {e}"
            continue
        assert target is not None, f"{state.name} + {event.name} should have raised"
        new = h.containers.get(cid).state
        assert new >= state and new is target
