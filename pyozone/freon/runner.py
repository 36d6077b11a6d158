"""The one runner of every freon tool: T threads take operation indexes 0, 1, 2, ... until the count, the
duration or a stop event ends the run, and each operation is timed (Ozone's BaseFreonGenerator). A tool
whose operation is one coroutine of the async client (ome, omkg) runs its T workers as tasks on the
client's loop instead (run_tasks), with the same counting.

An operation is a function of its index that returns the bytes it moved. The errors a tool expects of a
single operation (`failures`) are counted as failed operations and the run goes on; anything else is a
bug: the run stops and the error is raised to the caller once every thread has ended.

The end of a run bounds an operation in progress too: one that lasts (a key of many gigabytes) checks its
RunEnd between pieces and raises RunOver once the run is over (its duration passed, its stop event set,
Ctrl-C); it is counted as interrupted, neither done nor failed.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from pyozone.freon.report import FreonReport

Progress = Callable[[int], None]
"""Called with 1 per finished operation."""

Operation = Callable[[int], int]
"""One operation by its index; returns the bytes it moved."""

AsyncOperation = Callable[[int], Awaitable[int]]
"""An operation that is a coroutine (run_tasks)."""

Submit = Callable[[Coroutine[Any, Any, None]], Future[None]]
"""Starts a coroutine on an event loop of another thread (OzoneClient.submit)."""


@dataclass(frozen=True, slots=True)
class Load:
    """How long a run lasts: `number` operations (None: no cap), at most `duration_s` seconds (None: no
    limit), from `threads` threads. Without a number or a duration only a stop event ends it."""

    number: int | None = 1000
    threads: int = 10
    duration_s: float | None = None


class RunOver(Exception):
    """Raised by an operation that saw its run end (RunEnd.over) before it finished."""


class RunEnd:
    """When a run is over: its duration's deadline (counted from here), its stop event, or a halt (a bug in
    an operation, Ctrl-C). Shared by the runner, which takes no operation after it, and the operations."""

    def __init__(self, load: Load, stop: threading.Event | None = None) -> None:
        if load.number is None and load.duration_s is None and stop is None:
            raise ValueError("a run needs a number of operations, a duration or a stop event")
        self.halt = threading.Event()
        self._stop = stop
        self._deadline = None if load.duration_s is None else time.perf_counter() + load.duration_s

    def remaining_s(self) -> float | None:
        """What is left of the duration (None without one): how long an operation may still wait."""
        return None if self._deadline is None else max(0.0, self._deadline - time.perf_counter())

    def over(self) -> bool:
        if self.halt.is_set() or (self._stop is not None and self._stop.is_set()):
            return True
        return self._deadline is not None and time.perf_counter() >= self._deadline


@dataclass(frozen=True, slots=True)
class Run:
    """What one run counts in its report: its tool, its unit ("keys" or "ops"), the errors an operation may
    fail with, and how a failed operation is named (a key name, "echo 7")."""

    operation: str
    unit: str
    failures: tuple[type[Exception], ...]
    label: Callable[[int], str]


class _Tally:
    """What the workers of one run share: the next index, and what each operation did."""

    def __init__(self, what: Run, load: Load, end: RunEnd, progress: Progress | None) -> None:
        self.what = what
        self.load = load
        self.end = end
        self.progress = progress
        self._indexes = itertools.count()
        self._lock = threading.Lock()
        self._latencies: list[float] = []
        self._failures: list[tuple[int, str]] = []
        self._moved = 0
        self._interrupted = 0
        self._crash: list[BaseException] = []
        self._started = time.perf_counter()

    def take(self) -> int | None:
        if self.end.over():
            return None
        with self._lock:
            index = next(self._indexes)
        return None if self.load.number is not None and index >= self.load.number else index

    def ended(self, index: int, begin: float, moved: int, error: BaseException | None) -> bool:
        """Counts one operation (`error`: what it raised); False when it was a bug: the run halts and the
        worker stops."""
        if isinstance(error, RunOver):
            with self._lock:
                self._interrupted += 1
            return True
        if error is None:
            latency = (time.perf_counter() - begin) * 1000
            with self._lock:
                self._latencies.append(latency)
                self._moved += moved
        elif isinstance(error, self.what.failures):
            with self._lock:
                self._failures.append((index, f"{self.what.label(index)}: {error}"))
        else:
            self._crash.append(error)
            self.end.halt.set()
            return False
        if self.progress:
            self.progress(1)
        return True

    def report(self) -> FreonReport:
        """The run's report; the first bug an operation raised, if any."""
        seconds = time.perf_counter() - self._started
        if self._crash:
            raise self._crash[0]
        failed = tuple(line for _, line in sorted(self._failures))
        return FreonReport(
            self.what.operation, len(self._latencies), self._moved, seconds, tuple(self._latencies), failed,
            self.what.unit, self._interrupted,
        )  # fmt: skip


def run(
    what: Run,
    load: Load,
    one: Operation,
    progress: Progress | None = None,
    stop: threading.Event | None = None,
    end: RunEnd | None = None,
) -> FreonReport:
    """Runs `one` over indexes 0, 1, ... from `load.threads` threads; stops early when `stop` is set.
    `end`: the RunEnd of `load` (and `stop`) that `one` checks, if it lasts."""
    tally = _Tally(what, load, end if end is not None else RunEnd(load, stop), progress)

    def worker() -> None:
        while (index := tally.take()) is not None:
            begin = time.perf_counter()
            try:
                n = one(index)
            except BaseException as e:
                if not tally.ended(index, begin, 0, e):
                    return
            else:
                tally.ended(index, begin, n, None)

    threads = [threading.Thread(target=worker, name=f"freon-{i}") for i in range(max(1, load.threads))]
    for thread in threads:
        thread.start()
    try:
        for thread in threads:
            thread.join()
    except BaseException:
        tally.end.halt.set()
        for thread in threads:
            thread.join()
        raise
    return tally.report()


def run_tasks(
    what: Run,
    load: Load,
    one: AsyncOperation,
    submit: Submit,
    progress: Progress | None = None,
    stop: threading.Event | None = None,
) -> FreonReport:
    """`run` for an operation that is a coroutine of the async client: the `load.threads` workers are
    tasks on the client's event loop (`submit`: OzoneClient.submit), so an operation costs no hop from a
    worker thread to that loop and back, and the workers contend for no GIL among themselves: what the
    tool measures is then OM (issue 29: the sync client's hop cost more than OM's echo). `progress` and
    the operation's own hooks are called on that loop and must not block."""
    tally = _Tally(what, load, RunEnd(load, stop), progress)

    async def worker() -> None:
        while (index := tally.take()) is not None:
            begin = time.perf_counter()
            try:
                n = await one(index)
            except BaseException as e:
                if not tally.ended(index, begin, 0, e):
                    return
            else:
                tally.ended(index, begin, n, None)

    async def workers() -> None:
        await asyncio.gather(*(worker() for _ in range(max(1, load.threads))))

    running = submit(workers())
    try:
        running.result()
    except BaseException:
        tally.end.halt.set()  # Ctrl-C: the workers take no more operations
        running.result()
        raise
    return tally.report()
