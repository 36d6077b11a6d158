"""Crash tests: read what a child process acknowledges on stdout, then kill -9 it mid-flight; leave a
RocksDB's writes only in its write-ahead log, then damage that log."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyozone

WAL_WRITER = Path(__file__).with_name("wal_writer.py")


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
