"""`analytics rm-report` on a real Spark standalone cluster: a master and a worker started from the PySpark
installation on 127.0.0.1 (spark-class runs Spark's Master and Worker; the wheel ships no start-master.sh).
The executors read only the snapshot files; the report equals SCM's own process_all() on the same state."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from pyozone.analytics.snapshot_from_core import write_core_snapshot
from pyozone.hdds.replication_report import ReplicationManagerReport
from tests.analytics.rm_cores import SAMPLE_LIMIT, failing_core
from tests.analytics.test_rm_parity import comparable
from tests.polling import wait_for

pytestmark = pytest.mark.slow

SPARK_CLASS = Path(sys.executable).parent / "spark-class"
HOST = "127.0.0.1"
ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def _wait_for_port(port: int, process: subprocess.Popen, timeout_s: float = 90) -> None:
    def listening() -> bool:
        if process.poll() is not None:
            raise AssertionError(f"{process.args[1]} exited with {process.returncode}")
        try:
            with socket.create_connection((HOST, port), timeout=1):
                return True
        except OSError:
            return False

    wait_for(listening, timeout_s, f"something listening on {HOST}:{port}", interval_s=0.5)


def _spark_env(tmp: Path) -> dict[str, str]:
    """Loopback only; Python workers run this interpreter with this checkout importable."""
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    return {
        **os.environ,
        "PYTHONPATH": path,
        "SPARK_LOCAL_IP": HOST,
        "PYSPARK_PYTHON": sys.executable,
        "SPARK_LOG_DIR": str(tmp / "logs"),
        "SPARK_WORKER_DIR": str(tmp / "work"),
    }


@pytest.fixture
def standalone(tmp_path: Path) -> Iterator[str]:
    """A master and one worker (1 core, 1 GB) on loopback; both stopped however the test ends."""
    port, master_ui, worker_ui = _free_port(), _free_port(), _free_port()
    env, url = _spark_env(tmp_path), f"spark://{HOST}:{port}"
    processes: list[subprocess.Popen] = []
    try:
        master = subprocess.Popen(
            [
                str(SPARK_CLASS),
                "org.apache.spark.deploy.master.Master",
                "--host",
                HOST,
                "--port",
                str(port),
                "--webui-port",
                str(master_ui),
            ],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        processes.append(master)
        _wait_for_port(port, master)
        worker = subprocess.Popen(
            [
                str(SPARK_CLASS),
                "org.apache.spark.deploy.worker.Worker",
                url,
                "--host",
                HOST,
                "--cores",
                "1",
                "--memory",
                "1g",
                "--webui-port",
                str(worker_ui),
                "--work-dir",
                str(tmp_path / "work"),
            ],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        processes.append(worker)
        yield url
    finally:
        for process in reversed(processes):
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)


def test_rm_report_on_a_standalone_cluster_equals_process_all(standalone: str, tmp_path: Path) -> None:
    h = failing_core(seed=3, dead=[0, 5, 10], containers=600)
    snapshot, out = tmp_path / "snapshot", tmp_path / "out"
    write_core_snapshot(h.scm, snapshot)
    expected = h.rm.process_all()

    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pyozone",
            "analytics",
            "rm-report",
            "--snapshot",
            str(snapshot),
            "--master",
            standalone,
            "--out",
            str(out),
            "-D",
            f"hdds.scm.replication.container.sample.limit={SAMPLE_LIMIT}",
        ],
        env=_spark_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )

    assert result.returncode == 0, result.stderr[-3000:]
    got = ReplicationManagerReport.from_dict(json.loads((out / "rm-report.json").read_text()))
    assert comparable(got) == comparable(expected)
