"""kill -9 of a writing SCM loses no acknowledged write and tears no batch apart."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyozone
from pyozone.scm.store import JsonCodec, SCMMetadataStore

WRITER = Path(__file__).with_name("crash_writer.py")
ACKS_BEFORE_KILL = 300


def read_acks_then_kill(proc: subprocess.Popen[bytes], wanted: int, timeout: float) -> list[int]:
    assert proc.stdout is not None
    fd, out = proc.stdout.fileno(), b""
    deadline = time.monotonic() + timeout
    while out.count(b"\n") < wanted and time.monotonic() < deadline and proc.poll() is None:
        if select.select([fd], [], [], 0.2)[0]:
            out += os.read(fd, 1 << 16)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    out += proc.stdout.read()  # acks printed between our last read and the kill count too
    return [int(line.split()[1]) for line in out.decode().splitlines() if line.startswith("ack ")]


def test_acknowledged_writes_survive_sigkill(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(pyozone.__file__).parents[1])}
    with open(tmp_path / "stderr", "wb") as stderr:
        argv = [sys.executable, str(WRITER), str(tmp_path)]
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=stderr, env=env)
        acks = read_acks_then_kill(proc, ACKS_BEFORE_KILL, timeout=8.0)
    assert proc.returncode == -signal.SIGKILL, (tmp_path / "stderr").read_text()
    assert len(acks) >= ACKS_BEFORE_KILL and acks == list(range(1, len(acks) + 1))

    store = SCMMetadataStore.open(tmp_path)
    containers = [k for k, _ in store.int_table("containers", JsonCodec()).items()]
    deleted = [k for k, _ in store.int_table("deletedBlocks", JsonCodec()).items()]
    last = store.meta.get("last")
    store.close()
    assert containers[: len(acks)] == acks  # every acknowledged write is there
    # A batch that was written but not yet acknowledged may be there too, but only whole.
    assert containers == deleted == list(range(1, last + 1))
