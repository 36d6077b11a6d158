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

from pyozone.cluster import supervisor
from tests.e2e.cluster.cluster_helpers import FAST, LiveCluster, environment


class Foreground:
    """`pyozone cluster up` in the foreground, its output read line by line."""

    def __init__(self, cluster: LiveCluster) -> None:
        self.cluster = cluster
        defines = [arg for k, v in FAST.items() for arg in ("-D", f"{k}={v}")]
        command = [sys.executable, "-m", "pyozone", "cluster", "up", "--data-dir", str(cluster.data_dir)]
        self.process = subprocess.Popen(
            [*command, "--datanodes", "3", "--timeout", "90", *defines],
            env=environment(),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            text=True,
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def read_until(self, text: str, timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                break
            if line is None:
                break
            self.seen.append(line)
            if text in line:
                return True
        return False

    def expect(self, text: str, timeout_s: float) -> None:
        if not self.read_until(text, timeout_s):
            raise AssertionError(
                f"{text!r} not printed in {timeout_s} s:\n" + "\n".join(self.seen) + self.cluster.logs()
            )

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(30)


def _start(cluster: LiveCluster) -> Foreground:
    """Started and ready; a failed start is retried once, as LiveCluster.up does, with its logs kept."""
    foreground = Foreground(cluster)
    if foreground.read_until("Cluster is ready.", 120):
        return foreground
    foreground.kill()
    cluster.start_over(f"foreground: {' / '.join(foreground.seen[-3:])}")
    foreground = Foreground(cluster)
    foreground.expect("Cluster is ready.", 120)
    return foreground


def test_foreground_cluster_stops_cleanly_on_sigint(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> None:
    cluster = LiveCluster(tmp_path_factory.mktemp("foreground"))
    request.addfinalizer(cluster.stop)
    started = time.monotonic()
    foreground = _start(cluster)
    request.addfinalizer(foreground.kill)
    ready_s = time.monotonic() - started
    seen, process = foreground.seen, foreground.process
    foreground.expect("Ctrl-C stops the cluster.", 30)  # the live status table is up
    assert any(line.startswith("SCM: out of safe mode") for line in seen), seen
    assert any("SCM block (OM):" in line for line in seen), seen
    assert any(line.strip().startswith("S3 credentials:") for line in seen), seen
    pids = dict(cluster.state.pids)
    assert sorted(pids) == ["dn1", "dn2", "dn3", "om", "s3g", "scm"]
    assert all(supervisor.is_running(pid) for pid in pids.values())

    process.send_signal(signal.SIGINT)
    stopping = time.monotonic()
    code = process.wait(60)
    stop_s = time.monotonic() - stopping
    foreground.expect("Stopped.", 5)
    print(
        f"\nforeground cluster: ready after {ready_s:.1f} s; stopped {stop_s:.1f} s after SIGINT, exit {code}"
    )
    assert code == 0, seen
    assert "Stopping the cluster ..." in seen
    assert not [name for name, pid in pids.items() if supervisor.is_running(pid)]
    for name in pids:
        assert "Traceback" not in cluster.log(name), cluster.log(name)
