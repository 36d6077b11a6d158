"""Small S3 objects from many threads: the gateway's request rate, the figure issue 29 sets targets on.

Starts a fresh 3-datanode cluster with its S3 gateway (`pyozone cluster up`, as benchmarks/s3.py) and, with
boto3 as users have it (SigV4 over http, path-style, one client shared by --threads threads), PUTs --count
objects of --size, then GETs each back (checked against what was put). Prints PUT/s and GET/s beside the
targets (PUT >= 400/s: twice what OpenStack Swift's S3 API did on this machine; GET >= 600/s) and, as the
same run's baseline, the native client's put_key/get_key of the same objects from the same threads; then
the CPU each operation cost each process (the daemons from /proc, this process's boto3 or native client),
which says where a rate's time goes even on a loaded machine.

    python -m benchmarks.s3_small [--count 2000] [--size 4KB] [--threads 8] [--keep DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from benchmarks.common import CpuMeter, print_table
from benchmarks.s3 import BUCKET, VOLUME, _cluster, boto3_client
from pyozone.client import OzoneClient
from pyozone.cluster.layout import ClusterState
from pyozone.config.site import load_configuration
from pyozone.config.units import parse_size_bytes

PUT_TARGET, GET_TARGET = 400.0, 600.0


def timed(
    meter: CpuMeter, threads: int, keys: list[str], one: Callable[[int, str], None]
) -> tuple[float, dict[str, float]]:
    """Rate of `one(i, key)` over every key from `threads` threads, and each process's CPU ms per key."""
    before, t0 = meter.read(), time.perf_counter()
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(one, range(len(keys)), keys))
    rate = len(keys) / (time.perf_counter() - t0)
    return rate, CpuMeter.per_op_ms(before, meter.read(), len(keys))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--count", type=int, default=2000, help="objects each way (default 2000)")
    parser.add_argument("--size", default="4KB", help="bytes per object (default 4KB)")
    parser.add_argument("--threads", type=int, default=8, help="threads (default 8)")
    parser.add_argument("--keep", metavar="DIR", help="use and keep this data dir instead of a temp one")
    args = parser.parse_args()
    size = parse_size_bytes(args.size)
    bodies = [os.urandom(size) for _ in range(16)]
    digests = [hashlib.sha256(b).digest() for b in bodies]

    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="pyozone-s3s-"))
    try:
        with _cluster(root / "cluster", args.keep is None) as (conf_dir, gateway):
            meter = CpuMeter(ClusterState.load(root / "cluster").pids)
            s3 = boto3_client(gateway, unsigned_payload=False)
            s3.create_bucket(Bucket=BUCKET)
            s3.put_object(Bucket=BUCKET, Key="warm-up", Body=bodies[0])
            keys = [f"s3/{i}" for i in range(args.count)]

            def put(i: int, key: str) -> None:
                s3.put_object(Bucket=BUCKET, Key=key, Body=bodies[i % len(bodies)])

            def get(i: int, key: str) -> None:
                data = s3.get_object(Bucket=BUCKET, Key=key)["Body"].read()
                if hashlib.sha256(data).digest() != digests[i % len(bodies)]:
                    raise SystemExit(f"{key} read back differs from what was put")

            s3_put, cpu_put = timed(meter, args.threads, keys, put)
            s3_get, cpu_get = timed(meter, args.threads, keys, get)

            native_keys = [f"native/{i}" for i in range(args.count)]
            with OzoneClient(load_configuration(conf_dir, {})) as client:

                def native_put(i: int, key: str) -> None:
                    client.put_key(VOLUME, BUCKET, key, bodies[i % len(bodies)])

                def native_get(i: int, key: str) -> None:
                    data = client.read_key(VOLUME, BUCKET, key).readall()
                    if hashlib.sha256(data).digest() != digests[i % len(bodies)]:
                        raise SystemExit(f"{key} read back differs from what was put")

                native_put_rate, cpu_native_put = timed(meter, args.threads, native_keys, native_put)
                native_get_rate, cpu_native_get = timed(meter, args.threads, native_keys, native_get)
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)

    def verdict(rate: float, target: float) -> str:
        return f"{rate:8.1f} op/s   target >= {target:.0f}   {'PASS' if rate >= target else 'MISS'}"

    rows = [
        (f"boto3 PUT, {args.threads} threads", verdict(s3_put, PUT_TARGET)),
        (f"boto3 GET, {args.threads} threads", verdict(s3_get, GET_TARGET)),
        (f"native put_key, {args.threads} threads", f"{native_put_rate:8.1f} op/s   (same run)"),
        (f"native read_key, {args.threads} threads", f"{native_get_rate:8.1f} op/s   (same run)"),
    ]
    print_table(f"{args.count} objects of {args.size} through the S3 gateway, 3 datanodes on 127.0.0.1", rows)
    print()
    phases = {"boto3 PUT": cpu_put, "boto3 GET": cpu_get, "native put": cpu_native_put,
              "native get": cpu_native_get}  # fmt: skip
    names = list(cpu_put)
    print(f"{'CPU ms per object':<18}" + "".join(f"{n:>14}" for n in names))
    for phase, spent in phases.items():
        print(f"{phase:<18}" + "".join(f"{spent[n]:>14.2f}" for n in names))


if __name__ == "__main__":
    main()
