"""Acceptance (f): `pyozone cluster up` in the foreground. It prints "Cluster is ready." and a live status
table; SIGINT (Ctrl-C) stops every daemon and the command exits 0."""

from __future__ import annotations

import queue
import signal
import subprocess
import sys
import threading
import time

import pytest
from cluster_helpers import FAST, LiveCluster, environment

from pyozone.cluster import supervisor


def test_foreground_cluster_stops_cleanly_on_sigint(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> None:
    cluster = LiveCluster(tmp_path_factory.mktemp("foreground"))
    request.addfinalizer(cluster.stop)
    defines = [arg for k, v in FAST.items() for arg in ("-D", f"{k}={v}")]
    command = [sys.executable, "-m", "pyozone", "cluster", "up", "--data-dir", str(cluster.data_dir)]
    process = subprocess.Popen(
        [*command, "--datanodes", "3", "--timeout", "90", *defines],
        env=environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    request.addfinalizer(lambda: process.poll() is None and process.kill())
    lines: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.put(line.rstrip("\n"))
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    seen: list[str] = []

    def read_until(text: str, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                break
            if line is None:
                break
            seen.append(line)
            if text in line:
                return
        raise AssertionError(f"{text!r} not printed in {timeout_s} s:\n" + "\n".join(seen) + cluster.logs())

    started = time.monotonic()
    read_until("Cluster is ready.", 120)
    ready_s = time.monotonic() - started
    read_until("Ctrl-C stops the cluster.", 30)  # the live status table is up
    assert any(line.startswith("SCM: out of safe mode") for line in seen), seen
    assert any("SCM block (OM):" in line for line in seen), seen
    pids = dict(cluster.state.pids)
    assert sorted(pids) == ["dn1", "dn2", "dn3", "om", "scm"]
    assert all(supervisor.is_running(pid) for pid in pids.values())

    process.send_signal(signal.SIGINT)
    stopping = time.monotonic()
    code = process.wait(60)
    stop_s = time.monotonic() - stopping
    read_until("Stopped.", 5)
    print(
        f"\nforeground cluster: ready after {ready_s:.1f} s; stopped {stop_s:.1f} s after SIGINT, exit {code}"
    )
    assert code == 0, seen
    assert "Stopping the cluster ..." in seen
    assert not [name for name, pid in pids.items() if supervisor.is_running(pid)]
    for name in pids:
        assert "Traceback" not in cluster.log(name), cluster.log(name)
