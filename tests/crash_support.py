"""Crash tests: read what a child process acknowledges on stdout, then kill -9 it mid-flight; leave a
RocksDB's writes only in its write-ahead log, then damage that log. The repeated crash suites take their
run count from $PYOZONE_CRASH_RUNS and their seed from $PYOZONE_CRASH_SEED (printed, to replay a failure)."""

from __future__ import annotations

import os
import random
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import IO

import pyozone

WAL_WRITER = Path(__file__).with_name("wal_writer.py")
RUNS_VARIABLE = "PYOZONE_CRASH_RUNS"
SEED_VARIABLE = "PYOZONE_CRASH_SEED"


def crash_runs(default: int) -> int:
    """How many crashes a repeated suite runs: $PYOZONE_CRASH_RUNS, else `default`."""
    return int(os.environ.get(RUNS_VARIABLE) or default)


def crash_seed() -> int:
    """$PYOZONE_CRASH_SEED, else a fresh one; printed (pytest shows it with a failure) so that the same
    kill points can be drawn again."""
    raw = os.environ.get(SEED_VARIABLE)
    seed = int(raw) if raw else random.SystemRandom().randrange(1 << 32)
    print(f"crash seed {seed} (replay: {SEED_VARIABLE}={seed})")
    return seed


class LineReader:
    """A child's stdout read without blocking: the complete lines so far (a line cut by a kill never
    counts)."""

    def __init__(self, stream: IO[bytes]) -> None:
        self._stream = stream
        self._pending = b""
        self.lines: list[str] = []

    def read_for(self, seconds: float, until: str | None = None) -> bool:
        """Reads for `seconds`, or until a line starting with `until` is in (or the child closed its
        stdout); whether such a line is in."""
        fd = self._stream.fileno()
        deadline = time.monotonic() + seconds
        found = until is not None and any(line.startswith(until) for line in self.lines)
        while not found and (left := deadline - time.monotonic()) > 0:
            if select.select([fd], [], [], min(left, 0.2))[0]:
                data = os.read(fd, 1 << 16)
                if not data:
                    break
                new = self._take(data)
                found = until is not None and any(line.startswith(until) for line in new)
        return found

    def drain(self) -> list[str]:
        """After the child died: the rest of what it printed; every complete line."""
        self._take(self._stream.read())
        return self.lines

    def _take(self, data: bytes) -> list[str]:
        complete, _, self._pending = (self._pending + data).rpartition(b"\n")
        new = complete.decode().split("\n") if complete else []
        self.lines.extend(new)
        return new


def read_lines_then_kill(proc: subprocess.Popen[bytes], wanted: int, timeout: float) -> list[str]:
    """Every line the child printed before SIGKILL, including those printed after our last read."""
    assert proc.stdout is not None
    fd, out = proc.stdout.fileno(), b""
    deadline = time.monotonic() + timeout
    while out.count(b"\n") < wanted and time.monotonic() < deadline and proc.poll() is None:
        if select.select([fd], [], [], 0.2)[0]:
            out += os.read(fd, 1 << 16)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    out += proc.stdout.read()
    return out.decode().splitlines()


def acks(lines: list[str]) -> list[int]:
    """The numbers of the `ack N` lines."""
    return [int(line.split()[1]) for line in lines if line.startswith("ack ")]


def crash_after_writes(path: Path, table: str, count: int) -> Path:
    """A RocksDB after `count` acknowledged writes to `table` and a crash: its non-empty write-ahead log."""
    env = {**os.environ, "PYTHONPATH": str(Path(pyozone.__file__).parents[1])}
    argv = [sys.executable, str(WAL_WRITER), str(path), table, str(count)]
    done = subprocess.run(argv, env=env, capture_output=True, text=True)
    assert done.stdout.strip() == "done", done.stderr
    (log,) = [p for p in path.glob("*.log") if p.stat().st_size > 0]
    return log


def damage_middle(log: Path) -> None:
    """Corruption, not a crash: random bytes in the middle of a write-ahead log."""
    with open(log, "r+b") as f:
        f.seek(log.stat().st_size // 2)
        f.write(os.urandom(4096))


def tear_tail(log: Path) -> None:
    """What a crash mid-append leaves: the last record cut short."""
    os.truncate(log, log.stat().st_size - 100)
