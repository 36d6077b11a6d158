"""Crash tests: read what a child process acknowledges on stdout, then kill -9 it mid-flight."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import time


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
