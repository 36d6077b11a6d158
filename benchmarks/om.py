"""OM's metadata path against its RPC floor (issue 17's targets), on a 3-datanode cluster on this machine.

Starts `pyozone cluster up --background --datanodes 3` in a fresh directory and, in one run, with the
freon tools' own functions (a fresh client per step, after a warm-up of every tool):
- ome (OM echoRPC: the RPC floor) with 1, 8 and 32 threads;
- omkg (openKey + commitKey of an empty key: OM's metadata path, no datanode) with 1, 8 and 32 threads;
- ockg of 1 KB keys (the bucket's default replication, RATIS/THREE) with 8 and 32 threads;
- dne (Echo to one datanode of a RATIS/THREE pipeline: the data port's floor) with 8 threads.
- a grpc.aio echo (100 bytes, 32 in flight, separate processes: benchmarks/rpc.py's case), the baseline
  issue 29 measures OM against, in the same run.
Each step runs -n operations or --duration, whichever ends first. The table gives each step's ops/s, p50,
p99 and OM's CPU per operation (its process's user + system time over the step, /proc: what a shared, loaded
machine blurs far less than a rate; the load average is printed beside it), then the targets, each PASS or
MISS (issue 29): ome at 32 threads >= 5x the grpc.aio echo, omkg >= 0.4 of ome and ockg of 1 KB >= 0.4 of
the grpc.aio echo at 32 threads, and OM's p99 (omkg's, a key created) under 50 ms at 32 threads. --secure
runs the cluster with mutual TLS everywhere (`cluster up --secure`), for the secure rates (issue 29: at
least 0.7 of the plaintext ones).

    python -m benchmarks.om [-n 2000] [--duration 10s] [--warmup 200] [--secure] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from benchmarks.common import CpuMeter, print_table
from benchmarks.key_io import _pyozone, start_cluster
from pyozone.client import OzoneClient
from pyozone.cluster.layout import ClusterState
from pyozone.common.net import scm_client_address
from pyozone.common.tls import TlsPaths, TlsStore
from pyozone.config import OzoneConfiguration
from pyozone.config.site import load_configuration
from pyozone.config.units import parse_duration_ms
from pyozone.framework.scm_admin import ScmAdminClient
from pyozone.freon import (
    EchoOptions,
    FreonOptions,
    FreonReport,
    Load,
    datanode_echo,
    generate_keys,
    generate_om_keys,
    om_echo,
    pipeline_datanode,
)

VOLUME, BUCKET = "bench", "omkeys"
OM_THREADS = (1, 8, 32)
OCKG_THREADS = (8, 32)
DNE_THREADS = 8
OME_TARGET, OMKG_TARGET, OCKG_TARGET, P99_TARGET_MS = 5.0, 0.40, 0.40, 50.0
"""Issue 29: ome / grpc.aio echo, omkg / ome, ockg 1 KB / grpc.aio echo (32 threads), OM's p99."""

Step = Callable[[OzoneClient, Load, str], FreonReport]
"""(client, load, tag) -> report: one freon tool, run once (`tag` keeps each run's keys apart)."""


def ome(client: OzoneClient, load: Load, tag: str) -> FreonReport:
    return om_echo(client, EchoOptions(0, 0, load.number, load.threads, load.duration_s))


def omkg(client: OzoneClient, load: Load, tag: str) -> FreonReport:
    options = FreonOptions(VOLUME, BUCKET, f"omkg-{tag}", load.number, 0, load.threads, None, load.duration_s)
    return generate_om_keys(client, options)


def ockg(client: OzoneClient, load: Load, tag: str) -> FreonReport:
    options = FreonOptions(
        VOLUME, BUCKET, f"ockg-{tag}", load.number, 1024, load.threads, None, load.duration_s
    )
    return generate_keys(client, options)


def dne_step(conf: OzoneConfiguration) -> Step:
    """dne through the first OPEN RATIS/THREE pipeline (the warm-up's ockg keys made sure there is one)."""
    paths = TlsPaths.for_client(conf)  # a secure cluster's site file names the administrator's certificate
    tls = TlsStore(paths) if paths is not None else None
    with ScmAdminClient(scm_client_address(conf), tls=tls) as scm:
        pipeline_id, datanode = pipeline_datanode(scm.pipelines())

    def dne(client: OzoneClient, load: Load, tag: str) -> FreonReport:
        options = EchoOptions(0, 0, load.number, load.threads, load.duration_s)
        return datanode_echo(client, datanode, options, pipeline_id)

    return dne


def measure(conf: OzoneConfiguration, step: Step, load: Load, tag: str) -> FreonReport:
    """One step on a fresh client; fails the benchmark when an operation failed."""
    with OzoneClient(conf) as client:
        report = step(client, load, tag)
    if not report.ok:
        first = report.failures[0]
        raise SystemExit(f"{report.operation} {tag}: {len(report.failures)} failed, the first: {first}")
    return report


def measure_om_cpu(
    conf: OzoneConfiguration, step: Step, load: Load, tag: str, meter: CpuMeter
) -> tuple[FreonReport, float]:
    """`measure`, with OM's CPU milliseconds per operation over the step."""
    before = meter.read()
    report = measure(conf, step, load, tag)
    return report, CpuMeter.per_op_ms(before, meter.read(), max(report.keys, 1))["om"]


def _threads(n: int) -> str:
    return f"{n} thread{'s' if n > 1 else ''}"


def row(report: FreonReport, threads: int, om_ms: float) -> tuple[str, str]:
    return (
        f"{report.operation}, {_threads(threads)}",
        f"{report.rate:8.1f} {report.unit}/s   p50 {report.latency_ms(50):6.1f} ms   "
        f"p99 {report.latency_ms(99):6.1f} ms   OM {om_ms:6.3f} ms CPU/op   "
        f"({report.keys} in {report.seconds:.1f} s)",
    )


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def targets(runs: dict[tuple[str, int], FreonReport], grpc_echo: float) -> list[tuple[str, str]]:
    def shown(ratio: float, target: float) -> str:
        return f"{ratio:8.2f}      target >= {target:.2f}   {verdict(ratio >= target)}"

    ome, omkg, ockg = runs["ome", 32].rate, runs["omkg", 32].rate, runs["ockg", 32].rate
    rows = [
        ("grpc.aio echo, 32 in flight", f"{grpc_echo:8.1f} calls/s (benchmarks/rpc.py, the same run)"),
        ("ome / grpc.aio echo, 32 threads", shown(ome / max(grpc_echo, 1e-9), OME_TARGET)),
        ("omkg / ome, 32 threads", shown(omkg / max(ome, 1e-9), OMKG_TARGET)),
        ("ockg 1 KB / grpc.aio echo, 32 threads", shown(ockg / max(grpc_echo, 1e-9), OCKG_TARGET)),
    ]
    p99 = runs["omkg", 32].latency_ms(99)
    verdict_p99 = f"{p99:8.1f} ms   target < {P99_TARGET_MS:.0f} ms  {verdict(p99 < P99_TARGET_MS)}"
    rows.append(("OM p99 (omkg), 32 threads", verdict_p99))
    return rows


def grpc_echo_rate(seconds: float) -> float:
    """The grpc.aio echo of benchmarks/rpc.py (100 bytes, 32 in flight, its own server process)."""
    from benchmarks import rpc as rpc_bench

    case = next(c for c in rpc_bench.cases() if c.name == rpc_bench.GRPC_AIO)
    args = argparse.Namespace(seconds=seconds, warmup=0.5, inflight=32, size=100)
    return rpc_bench.measure(case, None, args).rate


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("-n", "--number", type=int, default=2000, help="operations per step (default 2000)")
    parser.add_argument("--duration", default="10s", help="at most this long per step (default 10s)")
    parser.add_argument("--warmup", type=int, default=200, help="operations of each tool first (default 200)")
    parser.add_argument("--keep", metavar="DIR", help="use and keep this data dir instead of a temp one")
    parser.add_argument("--secure", action="store_true", help="a secure cluster (mutual TLS on every port)")
    args = parser.parse_args()
    duration_s = parse_duration_ms(args.duration, "s") / 1000

    data_dir = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="pyozone-om-"))
    conf = load_configuration(start_cluster(data_dir, secure=args.secure), {})
    try:
        warmup = Load(args.warmup, 8)
        for step in (ome, omkg, ockg):
            measure(conf, step, warmup, "warmup")
        dne = dne_step(conf)
        measure(conf, dne, warmup, "warmup")
        plan = [(ome, t) for t in OM_THREADS] + [(omkg, t) for t in OM_THREADS]
        plan += [(ockg, t) for t in OCKG_THREADS] + [(dne, DNE_THREADS)]
        meter = CpuMeter({"om": ClusterState.load(data_dir).pids["om"]})
        runs: dict[tuple[str, int], FreonReport] = {}
        om_cpu: dict[tuple[str, int], float] = {}
        for step, threads in plan:
            load = Load(args.number, threads, duration_s)
            report, om_ms = measure_om_cpu(conf, step, load, f"t{threads}", meter)
            runs[report.operation, threads] = report
            om_cpu[report.operation, threads] = om_ms
        grpc_echo = grpc_echo_rate(min(duration_s, 5.0))
        rows = [row(report, run[1], om_cpu[run]) for run, report in runs.items()]
        mode = "secure: mutual TLS" if args.secure else "plaintext"
        load_average = os.getloadavg()[0]
        title = (
            f"OM against its RPC floor on a 3-datanode cluster (127.0.0.1, {mode}, this machine, "
            f"load average {load_average:.1f})"
        )
        print_table(title, rows + targets(runs, grpc_echo))
    finally:
        _pyozone("cluster", "down", "--data-dir", str(data_dir))
        if not args.keep:
            shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
