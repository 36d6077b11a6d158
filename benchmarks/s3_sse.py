"""The S3 gateway's PUT and GET of large objects with and without SSE-S3, in one run on one cluster.

Starts `pyozone cluster up` (3 datanodes and the gateway on 127.0.0.1, on /dev/shm by default), then
puts --count objects of --size (64MB) through boto3 plain and with `x-amz-server-side-encryption: AES256`,
taking turns (plain, SSE, SSE, plain, ...) so neither always goes first, and reads each back (checked). It
prints MB/s each way and the CPU all processes spent per MiB (the daemons from /proc and this process):
the difference is what AES-256-CTR in the gateway's key streams costs per byte.

    python -m benchmarks.s3_sse [--size 64MB] [--count 4]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.common import CpuMeter
from benchmarks.s3 import BUCKET, READ_PIECE, MiB, _cluster, _load, boto3_client
from pyozone.cluster.layout import ClusterState
from pyozone.config.units import parse_size_bytes

WAYS = {"plain": {}, "SSE-S3": {"ServerSideEncryption": "AES256"}}


def _round(
    s3: Any, key: str, body: bytes, digest: str, extra: dict[str, str], meter: CpuMeter
) -> list[float]:
    """[put seconds, put CPU seconds, get seconds, get CPU seconds] of one object."""
    c0, t0 = meter.read(), time.perf_counter()
    s3.put_object(Bucket=BUCKET, Key=key, Body=body, **extra)
    c1, t1 = meter.read(), time.perf_counter()
    got = hashlib.sha256()
    for piece in s3.get_object(Bucket=BUCKET, Key=key)["Body"].iter_chunks(READ_PIECE):
        got.update(piece)
    c2, t2 = meter.read(), time.perf_counter()
    if got.hexdigest() != digest:
        raise SystemExit(f"{key} read back differs from what was put")
    return [t1 - t0, CpuMeter.spent_s(c0, c1), t2 - t1, CpuMeter.spent_s(c1, c2)]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size", default="64MB", help="bytes per object (default 64MB)")
    parser.add_argument("--count", type=int, default=4, help="objects each way (default 4)")
    parser.add_argument("--on", default="/dev/shm" if Path("/dev/shm").is_dir() else None)
    args = parser.parse_args()
    size = parse_size_bytes(args.size)
    root = Path(tempfile.mkdtemp(prefix="pyozone-s3-sse-", dir=args.on))
    print(f"datanode volumes under {root}; {_load()} at the start")
    body = os.urandom(size)
    digest = hashlib.sha256(body).hexdigest()
    runs: dict[str, list[list[float]]] = {name: [] for name in WAYS}
    try:
        with _cluster(root / "cluster", remove=True) as (_, gateway):
            s3 = boto3_client(gateway, unsigned_payload=False)
            s3.create_bucket(Bucket=BUCKET)
            meter = CpuMeter(ClusterState.load(root / "cluster").pids)
            for name, extra in WAYS.items():  # warm-up: pipelines, containers, both paths once
                _round(s3, f"warm-up/{name}", body[: 8 * MiB], hashlib.sha256(body[: 8 * MiB]).hexdigest(),
                       extra, meter)  # fmt: skip
            for i in range(args.count):
                order = list(WAYS) if i % 2 == 0 else list(reversed(WAYS))
                for name in order:
                    runs[name].append(_round(s3, f"{name}/{i}", body, digest, WAYS[name], meter))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    title = f"S3 gateway, {args.count} x {args.size} per way, boto3 SigV4 over http, 3 datanodes (median)"
    print(f"\n{title}\n{'-' * len(title)}")
    mib = size / MiB
    cpu: dict[str, tuple[float, float]] = {}
    for name in WAYS:
        put_s, put_cpu, get_s, get_cpu = (statistics.median(r[i] for r in runs[name]) for i in range(4))
        cpu[name] = (put_cpu * 1000 / mib, get_cpu * 1000 / mib)
        print(f"{name:7} PUT {size / 1e6 / put_s:7.1f} MB/s  GET {size / 1e6 / get_s:7.1f} MB/s  "
              f"CPU per MiB: PUT {cpu[name][0]:.2f} ms, GET {cpu[name][1]:.2f} ms")  # fmt: skip
    extra_put = cpu["SSE-S3"][0] - cpu["plain"][0]
    extra_get = cpu["SSE-S3"][1] - cpu["plain"][1]
    print(f"SSE-S3's CPU per MiB beyond plain: PUT {extra_put:+.2f} ms, GET {extra_get:+.2f} ms")
    print(f"\n{_load()} at the end")


if __name__ == "__main__":
    main()
