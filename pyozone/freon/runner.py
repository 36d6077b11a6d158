"""The one runner of every freon tool: T threads take operation indexes 0, 1, 2, ... until the count, the
duration or a stop event ends the run, and each operation is timed (Ozone's BaseFreonGenerator).

An operation is a function of its index that returns the bytes it moved. The errors a tool expects of a
single operation (`failures`) are counted as failed operations and the run goes on; anything else is a
bug: the run stops and the error is raised to the caller once every thread has ended.

The end of a run bounds an operation in progress too: one that lasts (a key of many gigabytes) checks its
RunEnd between pieces and raises RunOver once the run is over (its duration passed, its stop event set,
Ctrl-C); it is counted as interrupted, neither done nor failed.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from pyozone.freon.report import FreonReport

Progress = Callable[[int], None]
"""Called with 1 per finished operation."""

Operation = Callable[[int], int]
"""One operation by its index; returns the bytes it moved."""


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
    end = end if end is not None else RunEnd(load, stop)
    indexes = itertools.count()
    lock = threading.Lock()
    latencies: list[float] = []
    failures: list[tuple[int, str]] = []
    moved = [0]
    interrupted = [0]
    crash: list[BaseException] = []
    started = time.perf_counter()

    def take() -> int | None:
        if end.over():
            return None
        with lock:
            index = next(indexes)
        return None if load.number is not None and index >= load.number else index

    def worker() -> None:
        while (index := take()) is not None:
            begin = time.perf_counter()
            try:
                n = one(index)
            except RunOver:
                with lock:
                    interrupted[0] += 1
                continue
            except what.failures as e:
                with lock:
                    failures.append((index, f"{what.label(index)}: {e}"))
            except BaseException as e:
                crash.append(e)
                end.halt.set()
                return
            else:
                latency = (time.perf_counter() - begin) * 1000
                with lock:
                    latencies.append(latency)
                    moved[0] += n
            if progress:
                progress(1)

    threads = [threading.Thread(target=worker, name=f"freon-{i}") for i in range(max(1, load.threads))]
    for thread in threads:
        thread.start()
    try:
        for thread in threads:
            thread.join()
    except BaseException:
        end.halt.set()
        for thread in threads:
            thread.join()
        raise
    seconds = time.perf_counter() - started
    if crash:
        raise crash[0]
    failed = tuple(line for _, line in sorted(failures))
    return FreonReport(
        what.operation, len(latencies), moved[0], seconds, tuple(latencies), failed, what.unit, interrupted[0]
    )
