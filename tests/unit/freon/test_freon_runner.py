"""The one runner of every freon tool: a count, a duration or a stop event ends a run; an operation's
expected errors are failed operations, named and in index order; anything else ends the run and is raised."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Coroutine, Iterator
from concurrent.futures import Future
from typing import Any

import pytest

from pyozone.freon.runner import Load, Run, RunEnd, RunOver, run, run_tasks

RUN = Run("tool", "ops", (ValueError,), lambda index: f"op {index}")


def test_a_count_runs_each_index_once_from_every_thread() -> None:
    seen: list[int] = []
    threads: set[str] = set()
    lock = threading.Lock()

    def one(index: int) -> int:
        with lock:
            seen.append(index)
            threads.add(threading.current_thread().name)
        return 3

    report = run(RUN, Load(200, 4), one)
    assert sorted(seen) == list(range(200)) and len(threads) <= 4
    assert (report.operation, report.keys, report.bytes, report.unit) == ("tool", 200, 600, "ops")
    assert len(report.latencies_ms) == 200 and report.ok


def test_a_duration_ends_a_run_without_a_count() -> None:
    report = run(RUN, Load(None, 2, duration_s=0.05), lambda index: 0)
    assert report.keys > 0 and 0.05 <= report.seconds < 5


def test_the_count_caps_a_run_with_a_duration() -> None:
    assert run(RUN, Load(7, 3, duration_s=60), lambda index: 0).keys == 7


def test_a_stop_event_ends_a_run() -> None:
    stop = threading.Event()

    def one(index: int) -> int:
        if index == 10:
            stop.set()
        return 0

    report = run(RUN, Load(None, 3), one, stop=stop)
    assert 11 <= report.keys <= 13  # the threads finish the operation they took


def test_expected_errors_are_failures_in_index_order() -> None:
    def one(index: int) -> int:
        if index % 5 == 0:
            raise ValueError(f"bad {index}")
        return 1

    finished: list[int] = []
    report = run(RUN, Load(20, 4), one, finished.append)
    assert report.failures == tuple(f"op {i}: bad {i}" for i in (0, 5, 10, 15))
    assert (report.keys, report.bytes, len(finished), report.ok) == (16, 16, 20, False)


def test_an_unexpected_error_ends_the_run_and_is_raised() -> None:
    def one(index: int) -> int:
        if index == 3:
            raise KeyError("a bug")
        return 0

    with pytest.raises(KeyError, match="a bug"):
        run(RUN, Load(None, 2, duration_s=60), one)


def test_a_run_needs_an_end() -> None:
    with pytest.raises(ValueError, match="needs a number of operations, a duration or a stop event"):
        run(RUN, Load(None, 1), lambda index: 0)


def test_latencies_are_per_operation() -> None:
    def one(index: int) -> int:
        started = time.perf_counter()
        while time.perf_counter() - started < 0.002:  # busy: no sleeping in unit tests
            pass
        return 0

    report = run(RUN, Load(5, 1), one)
    assert all(ms >= 2 for ms in report.latencies_ms)


def test_an_operation_the_end_cuts_short_is_interrupted_not_failed() -> None:
    stop = threading.Event()
    load = Load(None, 1)
    end = RunEnd(load, stop)

    def one(index: int) -> int:  # a key of many gigabytes, checking its run's end between pieces
        stop.set()  # the run ends while it is in progress
        if end.over():
            raise RunOver(f"op {index}")
        return 1

    report = run(RUN, load, one, stop=stop, end=end)
    assert (report.keys, report.failures, report.interrupted) == (0, (), 1)
    assert dict(report.rows())["interrupted"] == "1"


@pytest.fixture
def loop_thread() -> Iterator[asyncio.AbstractEventLoop]:
    """An event loop on its own thread, as OzoneClient's."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever)
    thread.start()
    yield loop
    loop.call_soon_threadsafe(loop.stop)
    thread.join()
    loop.close()


def test_tasks_run_each_index_once_concurrently_on_the_loop(loop_thread: asyncio.AbstractEventLoop) -> None:
    """run_tasks: T workers in flight at once on the loop's thread, no worker threads (issue 29)."""
    seen: list[int] = []
    in_flight = [0, 0]  # now, most

    async def one(index: int) -> int:
        assert threading.current_thread().name != threading.main_thread().name
        seen.append(index)
        in_flight[0] += 1
        in_flight[1] = max(in_flight)
        await asyncio.sleep(0)
        in_flight[0] -= 1
        if index % 5 == 0:
            raise ValueError(f"bad {index}")
        return 2

    def submit(coro: Coroutine[Any, Any, None]) -> Future[None]:
        return asyncio.run_coroutine_threadsafe(coro, loop_thread)

    finished: list[int] = []
    report = run_tasks(RUN, Load(100, 8), one, submit, finished.append)
    assert sorted(seen) == list(range(100)) and in_flight[1] == 8
    assert report.failures == tuple(f"op {i}: bad {i}" for i in range(0, 100, 5))
    assert (report.keys, report.bytes, len(finished), len(report.latencies_ms)) == (80, 160, 100, 80)


def test_tasks_end_the_run_on_an_unexpected_error(loop_thread: asyncio.AbstractEventLoop) -> None:
    async def one(index: int) -> int:
        if index == 3:
            raise KeyError("a bug")
        await asyncio.sleep(0)
        return 0

    def submit(coro: Coroutine[Any, Any, None]) -> Future[None]:
        return asyncio.run_coroutine_threadsafe(coro, loop_thread)

    with pytest.raises(KeyError, match="a bug"):
        run_tasks(RUN, Load(None, 2, duration_s=60), one, submit)
