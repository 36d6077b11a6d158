"""The history recorder: events in a real-time-consistent order from many threads, operations paired, how
an error completes an operation, and the JSON lines a failing history is saved and replayed from."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from pyozone.client.errors import CommitOutcomeUnknown, OMException, OMUnavailableError, SafeModeException
from pyozone.framework.om_errors import OMLeaderNotReadyException, OMNotLeaderException
from tests.jepsen.history import EventType, History, outcome_of
from tests.jepsen.models import Op, Refusal


def test_operations_pair_invocations_with_their_completions() -> None:
    h = History()
    put = h.invoke(1, Op.PUT, "a", "v1")
    get = h.invoke(2, Op.GET, "a")
    h.ok(get, "v1")
    h.info(put, "timed out")
    delete = h.invoke(2, Op.DELETE, "a")
    h.fail(delete, "PERMISSION_DENIED")
    h.invoke(3, Op.GET, "b")  # never completes: the history ended with it in flight
    ops = {op.id: op for op in h.operations()}
    assert [(op.f, op.type, op.call, op.ret, op.result) for op in ops.values()] == [
        (Op.PUT, EventType.INFO, 0, None, None),  # open to the end
        (Op.GET, EventType.OK, 1, 2, "v1"),
        (Op.DELETE, EventType.FAIL, 4, 5, None),
        (Op.GET, EventType.INFO, 6, None, None),
    ]


def test_a_process_has_one_operation_in_flight() -> None:
    h = History()
    first = h.invoke(1, Op.PUT, "a", "v1")
    with pytest.raises(ValueError, match="open"):
        h.invoke(1, Op.GET, "a")
    h.ok(first)
    with pytest.raises(ValueError, match="not the open operation"):
        h.ok(first)


def test_threads_record_a_total_order() -> None:
    h = History()

    def client(process: int) -> None:
        for i in range(200):
            h.record(process, Op.PUT, ("k", f"{process}-{i}"), lambda: None)

    threads = [threading.Thread(target=client, args=(p,)) for p in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    events = h.events
    assert [e.index for e in events] == list(range(8 * 200 * 2))
    assert [e.time_ns for e in events] == sorted(e.time_ns for e in events)
    assert len(h.operations()) == 1600 and all(
        op.ret is not None and op.ret > op.call for op in h.operations()
    )


@pytest.mark.parametrize(
    ("f", "error", "outcome"),
    [
        (Op.GET, OMException("KEY_NOT_FOUND", "k"), (EventType.OK, Refusal.KEY_NOT_FOUND)),
        (Op.DELETE, OMException("KEY_NOT_FOUND", "k"), (EventType.OK, Refusal.KEY_NOT_FOUND)),
        (Op.RENAME, OMException("KEY_NOT_FOUND", "k"), (EventType.OK, Refusal.KEY_NOT_FOUND)),
        (Op.RENAME, OMException("KEY_ALREADY_EXISTS", "k"), (EventType.OK, Refusal.KEY_ALREADY_EXISTS)),
        # a put's commit finding its open key gone: the key was not written
        (Op.PUT, OMException("KEY_NOT_FOUND", "k"), (EventType.FAIL, None)),
        (Op.CREATE, OMException("INVALID_KEY_NAME", "k"), (EventType.FAIL, None)),
        (Op.RENAME, OMException("PERMISSION_DENIED", "k"), (EventType.FAIL, None)),
        (Op.PUT, SafeModeException("SCM_IN_SAFE_MODE", ""), (EventType.FAIL, None)),
        # a read refused by an OM that does not lead (a client pinned to a follower): it changed nothing
        (Op.GET, OMNotLeaderException("om2", "om1", "h:1"), (EventType.FAIL, None)),
        (Op.GET, OMLeaderNotReadyException("om1"), (EventType.FAIL, None)),
        # may or may not have happened
        (Op.PUT, CommitOutcomeUnknown("lost answer"), (EventType.INFO, None)),
        (Op.DELETE, OMUnavailableError("no answer", timed_out=True), (EventType.INFO, None)),
        (Op.RENAME, OMException("INTERNAL_ERROR", "k"), (EventType.INFO, None)),
        (Op.GET, TimeoutError(), (EventType.INFO, None)),
        (Op.PUT, ConnectionResetError(), (EventType.INFO, None)),
        # a write refused so may have run on an earlier attempt (the client's failover retries it)
        (Op.PUT, OMNotLeaderException("om2"), (EventType.INFO, None)),
    ],
)
def test_how_an_error_completes_an_operation(
    f: Op, error: Exception, outcome: tuple[EventType, object]
) -> None:
    assert outcome_of(f, error) == outcome


def test_record_runs_the_call_and_classifies_its_error() -> None:
    h = History()
    assert h.record(1, Op.GET, ("a",), lambda: "v1").value == "v1"

    def refused() -> None:
        raise OMException("KEY_NOT_FOUND", "vol1/bkt1/a")

    def timed_out() -> None:
        raise TimeoutError("deadline")

    done = h.record(1, Op.DELETE, ("a",), refused)
    assert (done.type, done.value, done.error) == (EventType.OK, Refusal.KEY_NOT_FOUND, "")
    done = h.record(1, Op.PUT, ("a", "v2"), timed_out)
    assert done.type is EventType.INFO and "deadline" in done.error


def test_json_lines_round_trip(tmp_path: Path) -> None:
    h = History()
    h.ok(h.invoke(1, Op.PUT, "a", 7))
    h.ok(h.invoke("client-2", Op.RENAME, "a", "b"), Refusal.KEY_ALREADY_EXISTS)
    h.ok(h.invoke(1, Op.GET, "b"), "v1")
    h.info(h.invoke(1, Op.DELETE, "b"), "TimeoutError()")
    path = tmp_path / "history.jsonl"
    h.dump(path)
    loaded = History.load(path)
    assert loaded.events == h.events
    assert loaded.operations() == h.operations()
    assert '"value": {"refused": "KEY_ALREADY_EXISTS"}' in path.read_text()
