"""kill -9 of a writing SCM loses no acknowledged write and tears no batch apart."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pyozone
from pyozone.scm.store import JsonCodec
from pyozone.scm.store.scm_db import open_scm_db
from tests.crash_support import acks, read_lines_then_kill

WRITER = Path(__file__).with_name("crash_writer.py")
ACKS_BEFORE_KILL = 300


def read_acks_then_kill(proc: subprocess.Popen[bytes], wanted: int, timeout: float) -> list[int]:
    return acks(read_lines_then_kill(proc, wanted, timeout))


def test_acknowledged_writes_survive_sigkill(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(pyozone.__file__).parents[1])}
    with open(tmp_path / "stderr", "wb") as stderr:
        argv = [sys.executable, str(WRITER), str(tmp_path)]
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=stderr, env=env)
        acks = read_acks_then_kill(proc, ACKS_BEFORE_KILL, timeout=8.0)
    assert proc.returncode == -signal.SIGKILL, (tmp_path / "stderr").read_text()
    assert len(acks) >= ACKS_BEFORE_KILL and acks == list(range(1, len(acks) + 1))

    store = open_scm_db(tmp_path)
    containers = [k for k, _ in store.int_table("containers", JsonCodec()).items()]
    deleted = [k for k, _ in store.int_table("deletedBlocks", JsonCodec()).items()]
    last = store.meta.get("last")
    store.close()
    assert containers[: len(acks)] == acks  # every acknowledged write is there
    # A batch that was written but not yet acknowledged may be there too, but only whole.
    assert containers == deleted == list(range(1, last + 1))
