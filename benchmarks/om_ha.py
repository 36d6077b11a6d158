"""`freon omkg` on one OM and on a 3-OM HA service (ozone.om.service.ids; --oms 1: a Raft group of one) of
the same cluster, in one run (issue 30: the service at least 0.5 of one OM), and what a linearizable
read costs (lookupKey: a lone OM against the HA leader, whose every read waits for a ReadIndex round).

Starts `pyozone cluster up --background --datanodes 3` (its OM is the lone one), then three `pyozone om`
processes of one service beside it (`HaOms`, which tests/e2e/test_om_ha.py uses too), on the same SCM,
each with its own om.db and Raft log. Steps alternate lone / HA (`--rounds`), so the machine's load moves
both alike; each row gives the rate, p50, p99 and the CPU per key of each OM process (/proc).

    python -m benchmarks.om_ha [-n 2000] [-t 32] [--rounds 2] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.common import CpuMeter, print_table
from benchmarks.key_io import _pyozone, start_cluster
from pyozone.client import OzoneClient
from pyozone.cluster.layout import ClusterState, free_ports
from pyozone.config import OzoneConfiguration
from pyozone.config.site import load_configuration
from pyozone.freon import FreonOptions, FreonReport, generate_om_keys

VOLUME, BUCKET = "bench", "omkeys"
SERVICE = "omservice"
NODES = ("om1", "om2", "om3")


@dataclass
class HaOms:
    """Three `pyozone om` processes of one HA service beside a running cluster (its SCM; its conf dir),
    each with its own ozone.metadata.dirs under `data_dir` and its log in `data_dir`/logs/NODE.log."""

    data_dir: Path
    conf_dir: Path
    values: dict[str, str]
    nodes: tuple[str, ...] = NODES
    node_values: dict[str, dict[str, str]] = field(default_factory=dict)
    """Keys of one OM only (a secure cluster's ozone.security.join.credentials.file)."""
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    @classmethod
    def plan(
        cls, data_dir: Path, conf_dir: Path, election_timeout: str = "1s", nodes: tuple[str, ...] = NODES
    ) -> HaOms:
        ports = iter(free_ports(3 * len(nodes)))
        values = {
            "ozone.om.service.ids": SERVICE,
            "ozone.om.nodes." + SERVICE: ",".join(nodes),
            "ozone.om.ratis.minimum.timeout": election_timeout,
            "ozone.client.wait.between.retries.millis": "200",
        }
        for node in nodes:
            values[f"ozone.om.address.{SERVICE}.{node}"] = f"127.0.0.1:{next(ports)}"
            values[f"ozone.om.http-address.{SERVICE}.{node}"] = f"127.0.0.1:{next(ports)}"
            values[f"ozone.om.ratis.port.{SERVICE}.{node}"] = str(next(ports))
        return cls(data_dir, conf_dir, values, nodes)

    def start(self, node: str, *options: str) -> None:
        """`pyozone om` for `node`, with `options` (--bootstrap) after its configuration."""
        (self.data_dir / "logs").mkdir(parents=True, exist_ok=True)
        defines = {
            **self.values,
            "ozone.om.node.id": node,
            "ozone.metadata.dirs": str(self.data_dir / node),
            **self.node_values.get(node, {}),
        }
        args = [arg for k, v in defines.items() for arg in ("-D", f"{k}={v}")]
        env = {k: v for k, v in os.environ.items() if k != "OZONE_CONF_DIR"}
        env["PYTHONPATH"] = str(Path(__file__).resolve().parents[1])
        with open(self.data_dir / "logs" / f"{node}.log", "ab") as log:
            self.processes[node] = subprocess.Popen(
                [sys.executable, "-m", "pyozone", "om", "--conf", str(self.conf_dir), *args, *options],
                env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                start_new_session=True,
            )  # fmt: skip

    def start_all(self, timeout_s: float = 60) -> None:
        """Starts every OM and returns once one of them leads with its log applied."""
        for node in self.nodes:
            self.start(node)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for node in self.nodes:
                view = self.raft_view(node)
                if view and view.get("role") == "LEADER" and view["appliedIndex"] >= view["lastIndex"]:
                    return
            time.sleep(0.2)
        raise TimeoutError(f"no OM of {SERVICE} leads after {timeout_s:g}s: see {self.data_dir}/logs")

    def raft_view(self, node: str) -> dict[str, Any] | None:
        """The OM's /api/v1/ratis, None while it does not answer."""
        port = self.values[f"ozone.om.http-address.{SERVICE}.{node}"].rpartition(":")[2]
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/ratis", timeout=2) as answer:
                return json.loads(answer.read())
        except OSError:
            return None

    def kill(self, node: str, sig: int = signal.SIGKILL) -> None:
        process = self.processes.pop(node)
        process.send_signal(sig)
        process.wait(30)

    def stop_all(self) -> None:
        for node in list(self.processes):
            process = self.processes.pop(node)
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(20)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait(10)

    def pids(self) -> dict[str, int]:
        return {node: process.pid for node, process in self.processes.items()}

    def conf(self) -> OzoneConfiguration:
        """The cluster's client configuration with the service's keys: OM calls fail over among the three."""
        return load_configuration(self.conf_dir, self.values)

    def log(self, node: str) -> str:
        return (self.data_dir / "logs" / f"{node}.log").read_text(errors="replace")


def omkg(conf: OzoneConfiguration, number: int, threads: int, tag: str) -> FreonReport:
    with OzoneClient(conf) as client:
        report = generate_om_keys(
            client, FreonOptions(VOLUME, BUCKET, f"omkg-{tag}", number, 0, threads, None)
        )
    if not report.ok:
        raise SystemExit(f"omkg {tag}: {len(report.failures)} failed, the first: {report.failures[0]}")
    return report


def lookups(conf: OzoneConfiguration, keys: list[str], threads: int) -> tuple[float, float]:
    """lookupKey of every key from `threads` threads: reads/s and the p99 in ms."""
    with OzoneClient(conf) as client:
        latencies: list[float] = []

        def read(key: str) -> None:
            started = time.perf_counter()
            client.key_info(VOLUME, BUCKET, key)
            latencies.append((time.perf_counter() - started) * 1000)

        started = time.perf_counter()
        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(read, keys))
        seconds = time.perf_counter() - started
    latencies.sort()
    return len(keys) / seconds, latencies[int(0.99 * (len(latencies) - 1))]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("-n", "--number", type=int, default=2000, help="keys per omkg step (default 2000)")
    parser.add_argument("-t", "--threads", type=int, default=32, help="omkg threads (default 32)")
    parser.add_argument("--rounds", type=int, default=2, help="lone / HA alternations (default 2)")
    parser.add_argument("--keep", metavar="DIR", help="use and keep this data dir instead of a temp one")
    parser.add_argument(
        "--oms", type=int, default=3, help="OMs in the service (default 3; 1: a group of one)"
    )
    args = parser.parse_args()

    data_dir = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="pyozone-omha-"))
    lone_conf = load_configuration(start_cluster(data_dir), {})
    ha = HaOms.plan(data_dir, data_dir / "conf", nodes=tuple(f"om{i + 1}" for i in range(args.oms)))
    try:
        ha.start_all()
        ha_conf = ha.conf()
        for conf in (lone_conf, ha_conf):  # warm-up: the volume and bucket, every connection
            omkg(conf, 200, 8, "warmup")
        lone_meter = CpuMeter({"om": ClusterState.load(data_dir).pids["om"]})
        ha_meter = CpuMeter(ha.pids())
        rows: list[tuple[str, str]] = []
        rates: dict[str, list[float]] = {"lone": [], "ha": []}
        for r in range(args.rounds):
            for name, conf, meter in (("lone", lone_conf, lone_meter), ("ha", ha_conf, ha_meter)):
                before = meter.read()
                report = omkg(conf, args.number, args.threads, f"{name}{r}")
                cpu = CpuMeter.per_op_ms(before, meter.read(), max(report.keys, 1))
                rates[name].append(report.rate)
                per_om = ", ".join(
                    f"{k} {v:.2f}" for k, v in cpu.items() if k not in ("total", "this process")
                )
                rows.append(
                    (
                        f"omkg {name} round {r + 1} ({args.threads} threads)",
                        f"{report.rate:7.0f} keys/s  p50 {report.latency_ms(50):5.1f} ms  "
                        f"p99 {report.latency_ms(99):6.1f} ms  OM CPU ms/key: {per_om}",
                    )
                )
        lone_best, ha_best = max(rates["lone"]), max(rates["ha"])
        rows.append(("omkg HA / lone (best of each)", f"{ha_best / lone_best:.2f} (target >= 0.5)"))
        keys = [f"omkg-lone0/{i}" for i in range(min(args.number, 2000))]
        for name, conf, meter in (("lone", lone_conf, lone_meter), ("ha", ha_conf, ha_meter)):
            if name == "ha":
                keys = [f"omkg-ha0/{i}" for i in range(min(args.number, 2000))]
            before = meter.read()
            reads, p99 = lookups(conf, keys, args.threads)
            cpu = CpuMeter.per_op_ms(before, meter.read(), len(keys))
            per_om = ", ".join(f"{k} {v:.2f}" for k, v in cpu.items() if k not in ("total", "this process"))
            rows.append(
                (
                    f"lookupKey {name} ({args.threads} threads)",
                    f"{reads:7.0f} reads/s  p99 {p99:6.1f} ms  OM CPU ms/read: {per_om}",
                )
            )
        load = os.getloadavg()[0]
        title = f"omkg and lookupKey: one OM vs a {args.oms}-OM service, same cluster (load {load:.1f})"
        print_table(title, rows)
    finally:
        ha.stop_all()
        _pyozone("cluster", "down", "--data-dir", str(data_dir))
        if not args.keep:
            shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
