"""SCM's container model (models.ContainerStateModel) and the rewriting of the SCM Jepsen test's history
(containers.py): what fits, what does not, and the ids handed out twice."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.jepsen.checker import Verdict, check, main
from tests.jepsen.containers import checkable, reused_ids
from tests.jepsen.history import EventType, History
from tests.jepsen.models import ContainerStateModel, KeyMap, Op, Refusal

MODEL = ContainerStateModel()


def run(*steps: tuple[Op, tuple[Any, ...]]) -> tuple[KeyMap, list[Any]]:
    state, results = MODEL.initial(frozenset()), []
    for f, args in steps:
        state, result = MODEL.step(state, f, args)
        results.append(result)
    return state, results


def test_a_container_moves_forward_only_and_reads_see_no_older_state() -> None:
    _, results = run(
        (Op.STATE, (7, "CONTAINER_NOT_FOUND")),
        (Op.ALLOCATE, (7,)),
        (Op.CLOSE, (7,)),
        (Op.STATE, (7, "OPEN")),  # older than CLOSING: the model answers what it must be
        (Op.STATE, (7, "CLOSED")),  # SCM moved it on by itself: fits
        (Op.ALLOCATE, (7,)),  # an allocation in a closed container
        (Op.CLOSE, (7,)),  # a close of a closed one leaves it closed
        (Op.STATE, (7, "CLOSED")),
    )
    assert results == ["CONTAINER_NOT_FOUND", "OPEN", None, "CLOSING", "CLOSED", "CLOSED", None, "CLOSED"]


def test_a_container_unknown_after_an_allocation_in_it_does_not_fit() -> None:
    _, results = run((Op.ALLOCATE, (3,)), (Op.STATE, (3, "CONTAINER_NOT_FOUND")))
    assert results == ["OPEN", "OPEN"]


def test_containers_are_checked_apart() -> None:
    assert MODEL.keys(Op.STATE, (3, "OPEN")) == ("3",)
    assert MODEL.read_only(Op.STATE) and MODEL.read_only(Op.ALLOCATE) and not MODEL.read_only(Op.CLOSE)


def recorded() -> History:
    """A close acknowledged, then a read that began after it and saw the container OPEN (a deposed leader's
    stale answer), beside an allocation, a listing and operations that changed nothing."""
    h = History()
    h.ok(h.invoke("a", Op.ALLOCATE), (5, 101))
    h.ok(h.invoke("a", Op.CLOSE, 5), None)
    h.ok(h.invoke("b", Op.LIST), [(5, "CLOSING"), (6, "OPEN")])
    h.fail(h.invoke("r1", Op.STATE, 5), "not the leader")
    h.info(h.invoke("c", Op.ALLOCATE), "timed out")
    h.ok(h.invoke("c", Op.CLOSE, 6), Refusal.INVALID_CONTAINER_STATE)
    h.ok(h.invoke("r2", Op.STATE, 5), "OPEN")
    return h


def test_the_recorded_history_becomes_one_of_observations_per_container() -> None:
    ops = [(op.process, op.f, op.args, op.type, op.result) for op in checkable(recorded()).operations()]
    assert ops == [
        ("a", Op.ALLOCATE, (5,), EventType.OK, "OPEN"),
        ("a", Op.CLOSE, (5,), EventType.OK, None),
        ("b/5", Op.STATE, (5, "CLOSING"), EventType.OK, "CLOSING"),
        ("b/6", Op.STATE, (6, "OPEN"), EventType.OK, "OPEN"),
        ("c", Op.CLOSE, (6,), EventType.OK, None),  # refused as not OPEN: closed, by it or before
        ("r2", Op.STATE, (5, "OPEN"), EventType.OK, "OPEN"),
    ]


def test_a_stale_read_after_an_acknowledged_close_is_not_linearizable() -> None:
    result = check(checkable(recorded()), MODEL)
    assert result.verdict is Verdict.NOT_LINEARIZABLE
    assert "the model answers 'CLOSING'" in result.report()


def test_a_read_concurrent_with_the_close_may_see_it_open() -> None:
    h = History()
    h.ok(h.invoke("a", Op.ALLOCATE), (5, 101))
    close = h.invoke("a", Op.CLOSE, 5)
    h.ok(h.invoke("r", Op.STATE, 5), "OPEN")
    h.ok(close, None)
    assert check(checkable(h), MODEL).verdict is Verdict.LINEARIZABLE


def test_ids_handed_out_twice_are_named() -> None:
    h = History()
    for process, block in (("a", (5, 101)), ("b", (5, 101)), ("c", (6, 102)), ("d", (7, 102))):
        h.ok(h.invoke(process, Op.ALLOCATE), block)
    assert reused_ids(h, {5: {"p1"}, 6: {"p1", "p2"}}) == [
        "block 5:101 acknowledged 2 times",
        "local id 102 in containers [6, 7]",
        "container 6 on pipelines ['p1', 'p2']",
    ]
    assert reused_ids(History(), {}) == []


def test_a_saved_history_is_replayed_against_the_container_model(tmp_path: Path) -> None:
    saved = tmp_path / "history.jsonl"
    checkable(recorded()).dump(saved)
    assert main([str(saved), "--model", "containers"]) == 1
