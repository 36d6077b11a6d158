"""The S3 gateway with boto3 beside the native client, on a 3-datanode cluster on this machine.

Starts `pyozone cluster up` (SCM, OM, 3 datanodes and the S3 gateway, each its own OS process on
127.0.0.1) afresh for each measurement (on /dev/shm by default: --on) and measures, in one process, one
request at a time:
- PUT and GET MB/s of --small-count objects of 1 MiB and --large-count objects of --large (128MB): boto3's
  put_object and get_object against the gateway, beside put_key and get_key of the native client
  (pyozone.client.OzoneClient) into the same bucket (the gateway's volume), every object read back checked;
- PUT/s of --tiny-count objects of 4 KB, the same two ways;
- the gateway's memory during one --rss-size (1GB) PUT and GET through boto3: VmRSS sampled every 20 ms
  and VmHWM (its peak, reset between the two through /proc/PID/clear_refs where allowed).
Each figure is printed beside the native one with the ratio gateway/native (targets for large objects,
issue 33's: PUT at least 0.80, GET at least 0.85; for the gateway's RSS: under 300 MB), and the CPU each
way cost all processes (the daemons from /proc and this process) per MiB, or per object of 4 KB: what a
loaded machine blurs far less than a rate. boto3 is as a user has it: SigV4 over http, so it hashes each
body with SHA-256 (and a CRC32 checksum) before sending; --unsigned-payload sends UNSIGNED-PAYLOAD instead,
to show what that costs.

    python -m benchmarks.s3 [--large 128MB] [--rss-size 1GB] [--repeat 1] [--unsigned-payload] [--keep DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import os
import shutil
import statistics
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from benchmarks.common import CpuMeter
from benchmarks.key_io import _pyozone, start_cluster
from pyozone.client import OzoneClient
from pyozone.cluster.layout import HOST, ClusterState
from pyozone.config.site import load_configuration
from pyozone.config.units import parse_size_bytes

VOLUME, BUCKET, USER = "s3v", "bench", "bench"
MiB = 1 << 20
READ_PIECE = 4 * MiB
RSS_TARGET_MB = 300
LARGE_TARGETS = {"put": 0.80, "get": 0.85}
"""Issue 33 (item 8): the gateway's large PUT at least 0.8 of the native client's rate, its GET 0.85."""


@dataclass(frozen=True, slots=True)
class Workload:
    label: str
    size: int
    count: int


@dataclass(frozen=True, slots=True)
class Timing:
    put_s: float
    get_s: float
    put_cpu_s: float
    """CPU seconds every process spent on the puts (the daemons and this process)."""
    get_cpu_s: float


@dataclass(frozen=True, slots=True)
class Memory:
    put_peak_mb: float
    get_peak_mb: float
    put_hwm_mb: float
    get_hwm_mb: float | None  # None: VmHWM could not be reset after the PUT
    start_mb: float


# ------------------------------------------------------------------ the cluster and its gateway
@dataclass(frozen=True, slots=True)
class Gateway:
    url: str
    pid: int
    access_key: str
    secret_key: str


def _getsecret(conf_dir: Path) -> tuple[str, str]:
    result = _pyozone("s3", "getsecret", "-u", USER, "--conf", str(conf_dir))
    if result.returncode != 0:
        raise SystemExit(f"s3 getsecret failed:\n{result.stdout}\n{result.stderr}")
    fields = dict(line.split("=", 1) for line in result.stdout.split())
    return fields["awsAccessKey"], fields["awsSecret"]


@contextlib.contextmanager
def _cluster(data_dir: Path, remove: bool) -> Iterator[tuple[Path, Gateway]]:
    """A fresh cluster for one measurement, stopped and removed after it (tmpfs slows as it fills, which
    would tax whichever path ran later)."""
    data_dir.mkdir(parents=True)
    conf_dir = start_cluster(data_dir)
    try:
        state = ClusterState.load(data_dir)
        access_key, secret_key = _getsecret(conf_dir)
        url = f"http://{HOST}:{state.daemon('s3g').ports['http']}"
        yield conf_dir, Gateway(url, state.pids["s3g"], access_key, secret_key)
    finally:
        _pyozone("cluster", "down", "--data-dir", str(data_dir))
        if remove:
            shutil.rmtree(data_dir, ignore_errors=True)


def boto3_client(gateway: Gateway, unsigned_payload: bool) -> Any:
    import boto3
    from botocore.config import Config

    s3: dict[str, Any] = {"addressing_style": "path"}
    if unsigned_payload:
        s3["payload_signing_enabled"] = False
    return boto3.client(
        "s3",
        endpoint_url=gateway.url,
        aws_access_key_id=gateway.access_key,
        aws_secret_access_key=gateway.secret_key,
        region_name="us-east-1",
        config=Config(s3=s3, signature_version="s3v4", retries={"max_attempts": 1}),
    )


# ------------------------------------------------------------------ the two paths
class _Sink(io.RawIOBase):
    """Where the native client's reads go: counted and hashed, then dropped."""

    def __init__(self) -> None:
        self.digest = hashlib.sha256()

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        self.digest.update(data)
        return len(data)


class Way(Protocol):
    """One way into the cluster: put a key, then get it back as its sha256."""

    name: str

    def put(self, key: str, data: bytes) -> None: ...

    def get(self, key: str) -> str: ...


class Native:
    name = "native"

    def __init__(self, conf_dir: Path) -> None:
        self.client = OzoneClient(load_configuration(conf_dir, {}))

    def put(self, key: str, data: bytes) -> None:
        self.client.put_key(VOLUME, BUCKET, key, data)

    def get(self, key: str) -> str:
        sink = _Sink()
        self.client.get_key(VOLUME, BUCKET, key, sink)
        return sink.digest.hexdigest()


class Boto3:
    name = "gateway"

    def __init__(self, gateway: Gateway, unsigned_payload: bool) -> None:
        self.client = boto3_client(gateway, unsigned_payload)

    def put(self, key: str, data: bytes) -> None:
        self.client.put_object(Bucket=BUCKET, Key=key, Body=data)

    def get(self, key: str) -> str:
        digest = hashlib.sha256()
        body = self.client.get_object(Bucket=BUCKET, Key=key)["Body"]
        for piece in body.iter_chunks(READ_PIECE):
            digest.update(piece)
        return digest.hexdigest()


def run_workload(path: Way, work: Workload, meter: CpuMeter) -> Timing:
    """Puts `count` objects one after another, then gets them back (each checked against what was put).
    Hashing the sent data is left out of the timing; the received data is hashed as it arrives."""
    bodies = [os.urandom(work.size) for _ in range(min(work.count, 8))]
    digests = [hashlib.sha256(b).hexdigest() for b in bodies]
    keys = [f"{work.label}/{i}" for i in range(work.count)]
    c0, t0 = meter.read(), time.perf_counter()
    for i, key in enumerate(keys):
        path.put(key, bodies[i % len(bodies)])
    c1, t1 = meter.read(), time.perf_counter()
    for i, key in enumerate(keys):
        if path.get(key) != digests[i % len(bodies)]:
            raise SystemExit(f"{path.name}: {key} read back differs from what was put")
    c2, t2 = meter.read(), time.perf_counter()
    return Timing(t1 - t0, t2 - t1, CpuMeter.spent_s(c0, c1), CpuMeter.spent_s(c1, c2))


def _warm_up(conf_dir: Path, gateway: Gateway) -> None:
    """The bucket, pipelines and containers made, both write paths (V1, V2) used once, by both ways."""
    s3 = boto3_client(gateway, unsigned_payload=False)
    s3.create_bucket(Bucket=BUCKET)
    s3.put_object(Bucket=BUCKET, Key="warm-up/s3", Body=os.urandom(8 * MiB))
    with OzoneClient(load_configuration(conf_dir, {})) as client:
        for datastream in (False, True):
            client.put_key(
                VOLUME, BUCKET, f"warm-up/{datastream}", os.urandom(8 * MiB), datastream=datastream
            )


# ------------------------------------------------------------------ the gateway's memory
def _status_kb(pid: int, field: str) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/{pid}/status")


def _reset_hwm(pid: int) -> bool:
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")
    except OSError:
        return False
    return True


class RssSampler:
    """The highest VmRSS of a process seen while the block runs, sampled every `interval_s`."""

    def __init__(self, pid: int, interval_s: float = 0.02) -> None:
        self._pid, self._interval_s = pid, interval_s
        self.peak_kb = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.is_set():
            self.peak_kb = max(self.peak_kb, _status_kb(self._pid, "VmRSS"))
            self._stop.wait(self._interval_s)

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def measure_memory(gateway: Gateway, size: int, unsigned_payload: bool) -> Memory:
    """The gateway's RSS during one PUT and one GET of `size` bytes through boto3."""
    path = Boto3(gateway, unsigned_payload)
    data = os.urandom(size)
    digest = hashlib.sha256(data).hexdigest()
    start_mb = _status_kb(gateway.pid, "VmRSS") / 1024
    _reset_hwm(gateway.pid)
    with RssSampler(gateway.pid) as put:
        path.put("rss/object", data)
    put_hwm = _status_kb(gateway.pid, "VmHWM") / 1024
    del data
    reset = _reset_hwm(gateway.pid)
    with RssSampler(gateway.pid) as get:
        if path.get("rss/object") != digest:
            raise SystemExit("the RSS object read back differs from what was put")
    get_hwm = _status_kb(gateway.pid, "VmHWM") / 1024 if reset else None
    return Memory(put.peak_kb / 1024, get.peak_kb / 1024, put_hwm, get_hwm, start_mb)


# ------------------------------------------------------------------ printing
def _ratio_row(label: str, unit: str, native: float, gateway: float, target: float | None) -> str:
    ratio = gateway / native if native else float("nan")
    verdict = (
        "" if target is None else f"   (target >= {target:.2f}: {'met' if ratio >= target else 'MISSED'})"
    )
    figures = f"gateway {gateway:8.1f} {unit}   native {native:8.1f} {unit}   ratio {ratio:.3f}"
    return f"{label:<20} {figures}{verdict}"


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (1 min), {five:.2f} (5 min) on {os.cpu_count()} cores"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--large", default="128MB", help="bytes per large object (default 128MB)")
    parser.add_argument("--large-count", type=int, default=4)
    parser.add_argument("--small-count", type=int, default=64, help="1 MiB objects (default 64)")
    parser.add_argument("--tiny-count", type=int, default=300, help="4 KB objects (default 300)")
    parser.add_argument(
        "--rss-size", default="1GB", help="the object of the memory measurement (default 1GB)"
    )
    parser.add_argument("--unsigned-payload", action="store_true", help="boto3 sends UNSIGNED-PAYLOAD")
    parser.add_argument(
        "--repeat", type=int, default=1, help="runs of every measurement, the median printed (default 1)"
    )
    parser.add_argument("--keep", metavar="DIR", help="use and keep this data dir instead of a temp one")
    parser.add_argument(
        "--on",
        default="/dev/shm" if Path("/dev/shm").is_dir() else None,
        help="where the temp data dir goes (default /dev/shm: memory; this machine's one disk caps any "
        "path at ~90 MB/s)",
    )
    args = parser.parse_args()
    large = parse_size_bytes(args.large)
    workloads = [
        Workload("1MiB", MiB, args.small_count),
        Workload(args.large, large, args.large_count),
        Workload("4KB", 4096, args.tiny_count),
    ]

    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="pyozone-s3-", dir=args.on))
    print(f"datanode volumes under {root}; {_load()} at the start")
    timings: dict[tuple[str, str], list[Timing]] = {}
    try:
        for run in range(args.repeat):
            for work in workloads:
                ways = (Native.name, Boto3.name) if run % 2 == 0 else (Boto3.name, Native.name)
                for name in ways:
                    tag = f"{work.label}-{name}-{run}"
                    with _cluster(root / tag, args.keep is None) as (conf_dir, gateway):
                        _warm_up(conf_dir, gateway)
                        way: Way = (
                            Native(conf_dir) if name == Native.name else Boto3(gateway, args.unsigned_payload)
                        )
                        meter = CpuMeter(ClusterState.load(root / tag).pids)
                        timings.setdefault((work.label, name), []).append(run_workload(way, work, meter))
                        if isinstance(way, Native):
                            way.client.close()
                    print(f"  {tag} done ({_load()})", flush=True)
        with _cluster(root / "rss", args.keep is None) as (conf_dir, gateway):
            _warm_up(conf_dir, gateway)
            memory = measure_memory(gateway, parse_size_bytes(args.rss_size), args.unsigned_payload)
        print(f"  rss done ({_load()})", flush=True)

        rows = []
        for work in workloads:
            tiny = work.size < MiB  # counted in operations, not bytes
            for op in ("put",) if tiny else ("put", "get"):
                native, gateway = (
                    statistics.median(
                        work.count * (1 if tiny else work.size / 1e6) / getattr(t, f"{op}_s")
                        for t in timings[work.label, name]
                    )
                    for name in (Native.name, Boto3.name)
                )
                target = LARGE_TARGETS[op] if work.size == large else None
                label = f"{op.upper()} {work.count} x {work.label}"
                rows.append(_ratio_row(label, "op/s" if tiny else "MB/s", native, gateway, target))
                per, unit = (work.count, "object") if tiny else (work.count * work.size / MiB, "MiB")
                native_cpu, gateway_cpu = (
                    statistics.median(
                        getattr(t, f"{op}_cpu_s") * 1000 / per for t in timings[work.label, way]
                    )
                    for way in (Native.name, Boto3.name)
                )
                cpu = f"gateway {gateway_cpu:.2f} ms per {unit}, native {native_cpu:.2f} ms"
                rows.append(f"  CPU of every process: {cpu}")
        signing = "UNSIGNED-PAYLOAD" if args.unsigned_payload else "SHA-256 signed payload (boto3 over http)"
        print()
        title = (
            f"S3 gateway (boto3, {signing}) beside the native client, 3 datanodes on 127.0.0.1"
            f" (median of {args.repeat} run(s), native and gateway taking turns to go first)"
        )
        print(title)
        print("-" * len(title))
        for row in rows:
            print(row)
        print()
        print(f"Gateway memory during one {args.rss_size} PUT and GET (target < {RSS_TARGET_MB} MB)")
        get_hwm = (
            f"{memory.get_hwm_mb:.0f} MB" if memory.get_hwm_mb is not None else "n/a (clear_refs refused)"
        )
        for op, peak, hwm in (
            ("PUT", memory.put_peak_mb, f"{memory.put_hwm_mb:.0f} MB"),
            ("GET", memory.get_peak_mb, get_hwm),
        ):
            verdict = "met" if peak < RSS_TARGET_MB else "MISSED"
            print(f"{op}: sampled peak VmRSS {peak:.0f} MB, VmHWM {hwm}: {verdict}")
        print(f"(VmRSS at rest before the PUT: {memory.start_mb:.0f} MB)")
        print(f"\n{_load()} at the end")
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
