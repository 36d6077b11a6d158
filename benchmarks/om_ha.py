"""`freon omkg` on one OM and on a 3-OM HA service (ozone.om.service.ids; --oms 1: a Raft group of one) of
the same cluster, in one run (issue 30: the service at least 0.5 of one OM), and what a linearizable
read costs (lookupKey: a lone OM against the HA leader, whose every read waits for a ReadIndex round).

Starts `pyozone cluster up --background --datanodes 3` (its OM is the lone one), then three `pyozone om`
processes of one service beside it (`HaOms`, which tests/e2e/test_om_ha.py uses too), on the same SCM,
each with its own om.db and Raft log. Steps alternate lone / HA (`--rounds`), so the machine's load moves
both alike; each row gives the rate, p50, p99 and the CPU per key of each OM process (/proc).

    python -m benchmarks.om_ha [-n 2000] [-t 32] [--rounds 2] [--keep DIR]

`--failover` (issue 30: a leader killed under load, writes resume within 2x the election timeout, no client
sees an error): `cluster up --om-ha`, writers (`-w`, one OzoneClient each) create omkg keys (openKey,
commitKey) one after another; the leader gets SIGKILL (`--kills` times, restarted and caught up between);
it prints each client's gap (its longest wait between two acknowledged writes, from its last before the
kill to its fifth after), the max, beside `ozone.om.ratis.minimum.timeout` and twice it, when the successor
was elected, had its log applied and took calls, the errors any client saw, and checks that every
acknowledged key is listed afterwards.

    python -m benchmarks.om_ha --failover [-w 4] [--kills 3] [--keep DIR]
"""

from __future__ import annotations

import argparse
import bisect
import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.common import SHARED_DISK_DEFINES, CpuMeter, print_table
from benchmarks.key_io import _pyozone, start_cluster
from pyozone.client import OzoneClient
from pyozone.cluster import supervisor
from pyozone.cluster.layout import (
    OM_HA_NODES,
    OM_SERVICE_ID,
    ClusterState,
    OmHaPorts,
    free_ports,
    om_daemon_defines,
    om_service_site,
)
from pyozone.cluster.status import raft_leader, raft_view
from pyozone.config import OzoneConfiguration
from pyozone.config.site import load_configuration
from pyozone.freon import FreonOptions, FreonReport, generate_om_keys
from pyozone.om.server.daemon import om_raft_settings

VOLUME, BUCKET = "bench", "omkeys"
SERVICE = OM_SERVICE_ID
NODES = OM_HA_NODES


@dataclass
class HaOms:
    """Three `pyozone om` processes of one HA service beside a running cluster (its SCM; its conf dir),
    each with its own ozone.metadata.dirs under `data_dir` and its log in `data_dir`/logs/NODE.log: the
    service `cluster up --om-ha` plans (pyozone/cluster/layout.py), beside the cluster's lone OM."""

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
        values = om_service_site({node: OmHaPorts(next(ports), next(ports), next(ports)) for node in nodes})
        values["ozone.om.ratis.minimum.timeout"] = election_timeout
        return cls(data_dir, conf_dir, values, nodes)

    def redraw_ports(self) -> None:
        """New ports for every OM planned, drawn now: those `plan` drew before the cluster beside the
        service was up may since be held by one of its daemons, which drew theirs from the same range."""
        prefix = f"ozone.om.address.{SERVICE}."
        planned = [key.removeprefix(prefix) for key in self.values if key.startswith(prefix)]
        ports = iter(free_ports(3 * len(planned)))
        site = om_service_site({node: OmHaPorts(next(ports), next(ports), next(ports)) for node in planned})
        ends = tuple(f".{SERVICE}.{node}" for node in planned)
        self.values.update({key: value for key, value in site.items() if key.endswith(ends)})

    def start(self, node: str, *options: str) -> None:
        """`pyozone om` for `node`, with `options` (--bootstrap) after its configuration."""
        (self.data_dir / "logs").mkdir(parents=True, exist_ok=True)
        defines = {
            **self.values,
            **om_daemon_defines(node, self.data_dir / node),
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


@dataclass
class Writer:
    """One client writing omkg keys one after another: the times its writes were acknowledged (this
    thread's monotonic clock, ascending) and every error it saw."""

    index: int
    acks: list[float] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def run(self, conf: OzoneConfiguration, stop: threading.Event, pause_s: float) -> None:
        with OzoneClient(conf) as client:
            om = client.async_client.om

            async def write(name: str) -> None:  # as `freon omkg`: openKey (no data), commitKey
                session, _ = await om.open_key(VOLUME, BUCKET, name, 0, None)
                await om.commit_key(VOLUME, BUCKET, name, session, 0, [])

            i = 0
            while not stop.is_set():
                name = f"failover/w{self.index}/{i}"
                i += 1
                try:
                    client.run(write(name))
                except Exception as e:  # what the benchmark counts: none may reach a client
                    self.errors.append(f"{name}: {type(e).__name__}: {e}")
                else:
                    self.acks.append(time.monotonic())
                    self.keys.append(name)
                stop.wait(pause_s)

    def gap(self, killed_at: float, after: int = 5) -> float | None:
        """The longest wait between two acknowledged writes from the last before `killed_at` to the
        `after`th after it (a write the dying leader answered just after the kill does not hide the next
        one's wait); None until this writer has that many after the kill."""
        at = bisect.bisect_right(self.acks, killed_at)
        if at == 0 or at + after > len(self.acks):
            return None
        window = self.acks[at - 1 : at + after]
        return max(b - a for a, b in itertools.pairwise(window))


def _oms(state: ClusterState) -> dict[str, int]:
    return {d.name: d.ports["http"] for d in state.oms()}


def _wait(what: str, timeout_s: float, probe: Any, interval_s: float = 0.1) -> Any:
    deadline = time.monotonic() + timeout_s
    while (found := probe()) in (None, False):
        if time.monotonic() > deadline:
            raise SystemExit(f"failover: {what} not reached in {timeout_s:g} s")
        time.sleep(interval_s)
    return found


@dataclass(frozen=True)
class Kill:
    """One leader SIGKILLed: who, who took over, when it was elected and when ready (seconds after the
    kill, each OM's /api/v1/ratis polled every 20 ms: the election, then the new term's first entry
    applied), each writer's gap."""

    killed: str
    successor: str
    elected_s: float
    applied_s: float
    ready_s: float
    gaps: list[float]


def kill_leader(state: ClusterState, writers: list[Writer], settle_s: float) -> Kill:
    """SIGKILLs the leader once every writer is under way."""
    leader = _wait("a leader", 60, lambda: raft_leader(_oms(state)))
    started = [len(w.acks) for w in writers]
    _wait(
        "writes under way",
        30,
        lambda: all(len(w.acks) > n + 20 for w, n in zip(writers, started, strict=True)),
    )
    time.sleep(settle_s)
    killed_at = time.monotonic()
    supervisor.kill(state, leader)
    others = {node: port for node, port in _oms(state).items() if node != leader}
    elected_s: float | None = None
    applied_s: float | None = None

    def leads() -> str | None:
        nonlocal elected_s, applied_s
        for node, port in others.items():
            view = raft_view(port) or {}
            if view.get("role") == "LEADER":
                elected_s = elected_s or time.monotonic() - killed_at
                if view["appliedIndex"] >= view["lastIndex"]:
                    applied_s = applied_s or time.monotonic() - killed_at
                if view.get("ready"):
                    return node
        return None

    successor = _wait("a new leader", 60, leads, interval_s=0.02)
    ready_s = time.monotonic() - killed_at

    def resumed() -> list[float] | None:
        gaps = [w.gap(killed_at) for w in writers]
        return None if None in gaps else [g for g in gaps if g is not None]

    gaps = _wait("every client's writes after the kill", 120, resumed)
    return Kill(leader, successor, elected_s or ready_s, applied_s or ready_s, ready_s, gaps)


def restart(
    state: ClusterState,
    node: str,
    commit_index: int,
    members: Callable[[ClusterState], dict[str, int]] = _oms,
) -> None:
    """Starts a killed OM (or, with `members` the SCMs', an SCM) again and waits until it applied what the
    service had committed by then."""
    supervisor.start(state, node)

    def caught_up() -> bool:
        view = raft_view(members(state)[node])
        return bool(view and view.get("appliedIndex", -1) >= commit_index)

    _wait(f"{node} caught up", 120, caught_up)


def failover(args: argparse.Namespace) -> None:
    """A leader SIGKILLed under load, `args.kills` times: each client's gap, the errors, the keys."""
    data_dir = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="pyozone-omfailover-"))
    up = _pyozone(
        "cluster", "up", "--om-ha", "--background", "--datanodes", "3", "--data-dir", str(data_dir),
        *SHARED_DISK_DEFINES,
    )  # fmt: skip
    if up.returncode != 0:
        raise SystemExit(f"cluster up --om-ha failed:\n{up.stdout}\n{up.stderr}")
    state = ClusterState.load(data_dir)
    conf = load_configuration(Path(state.conf_dir), {})
    settings = om_raft_settings(conf)
    election_s = settings.rpc_timeout_min_ms / 1000
    wait_s = int(conf.get("ozone.client.wait.between.retries.millis")) / 1000
    stop = threading.Event()
    writers = [Writer(i) for i in range(args.writers)]
    threads = [threading.Thread(target=w.run, args=(conf, stop, args.pause_ms / 1000)) for w in writers]
    rows: list[tuple[str, str]] = [
        (
            "election timeout",
            f"ozone.om.ratis.minimum.timeout {election_s:.2f} s (each timer drawn in {election_s:.2f}-"
            f"{settings.rpc_timeout_max_ms / 1000:.2f} s); target: 2x = {2 * election_s:.2f} s",
        ),
        ("client", f"{args.writers} writers, ozone.client.wait.between.retries.millis {wait_s * 1000:g}"),
    ]
    worst = 0.0
    try:
        with OzoneClient(conf) as client:
            client.create_volume(VOLUME)
            client.create_bucket(VOLUME, BUCKET)
        for thread in threads:
            thread.start()
        for kill in range(1, args.kills + 1):
            done = kill_leader(state, writers, args.settle)
            view = raft_view(_oms(state)[done.successor]) or {}
            largest = max(done.gaps)
            worst = max(worst, largest)
            rows.append(
                (
                    f"kill {kill}: {done.killed} SIGKILLed, {done.successor} leads, term {view.get('term')}",
                    f"gap per client {' '.join(f'{g:.2f}' for g in done.gaps)} s; max {largest:.2f} s "
                    f"({'within' if largest <= 2 * election_s else 'MISSES'} 2x); after the kill: "
                    f"elected {done.elected_s:.2f} s, its log applied {done.applied_s:.2f} s, ready "
                    f"{done.ready_s:.2f} s",
                )
            )
            restart(state, done.killed, int(view.get("commitIndex", 0)))
        stop.set()
        for thread in threads:
            thread.join(60)
        with OzoneClient(conf) as client:
            listed = {k.name for k in client.list_keys(VOLUME, BUCKET, prefix="failover/")}
        acknowledged = [key for w in writers for key in w.keys]
        missing = [key for key in acknowledged if key not in listed]
        errors = [e for w in writers for e in w.errors]
        rows.append(
            ("max gap over every kill", f"{worst:.2f} s (2x the election timeout: {2 * election_s:.2f} s)")
        )
        rows.append(
            ("errors any client saw", f"{len(errors)}" + (f" (the first: {errors[0]})" if errors else ""))
        )
        rows.append(
            (
                "acknowledged keys listed after",
                f"{len(acknowledged) - len(missing)} of {len(acknowledged)}"
                + (f" (missing, e.g. {missing[0]})" if missing else ""),
            )
        )
        load = os.getloadavg()[0]
        print_table(
            f"OM leader SIGKILLed under load: 3-OM service, cluster up --om-ha (load {load:.1f})", rows
        )
        if errors or missing:
            raise SystemExit(1)
    finally:
        stop.set()
        for thread in threads:
            if thread.is_alive():
                thread.join(60)
        _pyozone("cluster", "down", "--data-dir", str(data_dir))
        if not args.keep:
            shutil.rmtree(data_dir, ignore_errors=True)


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
    parser.add_argument("--failover", action="store_true", help="the leader SIGKILLed under load (above)")
    parser.add_argument(
        "-w", "--writers", type=int, default=4, help="--failover: writing clients (default 4)"
    )
    parser.add_argument("--kills", type=int, default=3, help="--failover: leaders killed (default 3)")
    parser.add_argument(
        "--pause-ms", type=float, default=5, help="--failover: each writer's pause between writes (default 5)"
    )
    parser.add_argument(
        "--settle", type=float, default=2, help="--failover: seconds of writing before each kill (default 2)"
    )
    args = parser.parse_args()
    if args.failover:
        failover(args)
        return

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
