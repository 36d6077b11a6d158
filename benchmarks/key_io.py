"""Write pipeline V1 on a 3-datanode cluster on this machine: the tables of the
"Ozone Write Pipeline V2 with Ratis Streaming" blog post, scaled down.

Starts `pyozone cluster up` (SCM, OM and 3 datanodes, each its own OS process on 127.0.0.1) in a fresh
directory and measures, each figure beside a baseline taken in the same run:
- V1 write MB/s for 1 and 3 concurrent clients, each writing one object of --size (default 128 MB)
  through the sync client (each client its own OS process; every byte goes client -> leader -> 2
  followers, and a key is committed only after every replica applied it);
- read MB/s of the same objects by the same clients (every byte checked);
- small-key creates per second (freon ockg: --small-keys keys of --small-size bytes, --threads threads);
- the raw loopback baseline: the same bytes pushed through three plain socket hops between processes
  (benchmarks/loopback.py), for 1 and 3 streams, and through one hop for the reads (a read moves each
  byte once, datanode -> client). Throughput is also shown as a fraction of that baseline.

    python -m benchmarks.key_io [--size 128MB] [--small-keys 500] [--keep DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import multiprocessing as mp
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from benchmarks import loopback
from benchmarks.common import SHARED_DISK_DEFINES, print_table
from pyozone.client import OzoneClient
from pyozone.config.site import load_configuration
from pyozone.config.units import parse_size_bytes
from pyozone.freon.keys import FreonOptions, generate_keys
from pyozone.freon.report import percentile

VOLUME, BUCKET = "bench", "keyio"


def _pyozone(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("OZONE_CONF_DIR", "PYOZONE_LOG_LEVEL")}
    return subprocess.run(
        [sys.executable, "-m", "pyozone", *args], env=env, capture_output=True, text=True, check=False
    )


def start_cluster(data_dir: Path, secure: bool = False) -> Path:
    """`secure`: `cluster up --secure` (SCM's CA, mutual TLS on every port, block tokens, ACLs)."""
    flags = ("--secure",) if secure else ()
    up = _pyozone(
        "cluster", "up", "--background", "--datanodes", "3", "--data-dir", str(data_dir), *flags,
        *SHARED_DISK_DEFINES,
    )  # fmt: skip
    if up.returncode != 0:
        raise SystemExit(f"cluster up failed:\n{up.stdout}\n{up.stderr}")
    return data_dir / "conf"


# ------------------------------------------------------------------ one client process
def _client(conf_dir: str, key: str, size: int, start: mp.Event, phase: str, out: mp.Queue) -> None:
    """Writes (or reads back and checks) one object; reports (seconds, sha256)."""
    client = OzoneClient(load_configuration(Path(conf_dir), {}))
    try:
        if phase == "write":
            data = os.urandom(size)
            digest = hashlib.sha256(data).hexdigest()
            start.wait()
            t0 = time.perf_counter()
            client.put_key(VOLUME, BUCKET, key, data, datastream=False)
            out.put((key, time.perf_counter() - t0, digest))
        else:
            start.wait()
            t0 = time.perf_counter()
            with client.read_key(VOLUME, BUCKET, key) as reader:
                data = reader.readall()
            elapsed = time.perf_counter() - t0
            out.put((key, elapsed, hashlib.sha256(data).hexdigest() if len(data) == size else "short"))
    finally:
        client.close()


@dataclass(frozen=True)
class Run:
    mb_per_s: float
    slowest_s: float
    digests: dict[str, str]


def run_clients(conf_dir: Path, clients: int, size: int, phase: str, tag: str) -> Run:
    ctx = mp.get_context("spawn")
    start, out = ctx.Event(), ctx.Queue()
    keys = [f"{tag}-{i}" for i in range(clients)]
    procs = [ctx.Process(target=_client, args=(str(conf_dir), k, size, start, phase, out)) for k in keys]
    for p in procs:
        p.start()
    time.sleep(3 if phase == "write" else 1.5)  # processes import and (for writes) make their data
    t0 = time.perf_counter()
    start.set()
    results = [out.get(timeout=900) for _ in procs]
    wall = time.perf_counter() - t0
    for p in procs:
        p.join(30)
    return Run(clients * size / wall / 1e6, max(r[1] for r in results), {r[0]: r[2] for r in results})


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size", default="128MB", help="bytes per object (default 128MB)")
    parser.add_argument("--small-keys", type=int, default=500)
    parser.add_argument("--small-size", default="1KB")
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--keep", metavar="DIR", help="use and keep this data dir instead of a temp one")
    args = parser.parse_args()
    size, small = parse_size_bytes(args.size), parse_size_bytes(args.small_size)

    chain3, chain1 = loopback.start_chain(3), loopback.start_chain(1)
    try:
        loopback.measure(chain3, 8 << 20, 1)
        base = {n: loopback.measure(chain3, size, n) for n in (1, 3)}
        base_read = {n: loopback.measure(chain1, size, n) for n in (1, 3)}
    finally:
        chain3.close()
        chain1.close()

    data_dir = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="pyozone-keyio-"))
    conf_dir = start_cluster(data_dir)
    try:
        client = OzoneClient(load_configuration(conf_dir, {}))
        client.create_volume(VOLUME)
        client.create_bucket(VOLUME, BUCKET)
        client.put_key(VOLUME, BUCKET, "warm-up", os.urandom(8 << 20), datastream=False)
        rows: list[tuple[str, str]] = []
        for n in (1, 3):
            written = run_clients(conf_dir, n, size, "write", f"c{n}")
            read = run_clients(conf_dir, n, size, "read", f"c{n}")
            if read.digests != written.digests:
                raise SystemExit(
                    f"read back differs from what was written: {read.digests} != {written.digests}"
                )
            rows += [
                (
                    f"V1 write, {n} client(s) x {args.size}",
                    f"{written.mb_per_s:7.1f} MB/s   loopback 3 hops {base[n]:6.0f} MB/s   "
                    f"ratio {written.mb_per_s / base[n]:.3f}   slowest client {written.slowest_s:.2f} s",
                ),
                (
                    f"read, {n} client(s) x {args.size}",
                    f"{read.mb_per_s:7.1f} MB/s   loopback 1 hop  {base_read[n]:6.0f} MB/s   "
                    f"ratio {read.mb_per_s / base_read[n]:.3f}   every byte checked",
                ),
            ]
        options = FreonOptions(VOLUME, BUCKET, "small", args.small_keys, small, args.threads)
        report = generate_keys(client, options)
        if not report.ok:
            raise SystemExit(f"small keys failed: {report.failures[:3]}")
        lat = sorted(report.latencies_ms)
        rows.append(
            (
                f"small-key creates ({args.small_size}, {args.threads} threads)",
                f"{report.keys / report.seconds:7.1f} keys/s   p50 {percentile(lat, 50):.1f} ms   "
                f"p99 {percentile(lat, 99):.1f} ms   ({report.keys} keys)",
            )
        )
        client.close()
        print_table("Write pipeline V1 on a 3-datanode cluster (127.0.0.1, this machine)", rows)
    finally:
        _pyozone("cluster", "down", "--data-dir", str(data_dir))
        if not args.keep:
            shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
