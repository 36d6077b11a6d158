"""Small keys step by step: where a small key's time goes on a 3-datanode cluster on this machine.

Starts `pyozone cluster up --background --datanodes 3` in a fresh directory and, with one client:
- runs freon ockg: N keys of SIZE from T threads (its keys/s, p50 and p99);
- writes N more keys the same way, each inside a steps recording (pyozone/client/steps.py), and prints
  each step's mean, p50 and share of the key's time: openKey, the data request (one putSmallFile for a
  key of one chunk), watchForCommit (only when the answer did not show every replica
  at the entry yet: its row says for how many keys), commitKey, and the client's own work, which is the
  rest (the hop to the client's loop thread, building requests, streams, checksums);
- writes N more keys from ONE thread with put_keys, T in flight (one caller's keys pipelined).

    python -m benchmarks.small_keys [-n 500] [-t 8] [--size 1KB] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from statistics import fmean

from benchmarks.common import print_table
from benchmarks.key_io import start_cluster
from pyozone.client import AsyncOzoneClient, OzoneClient
from pyozone.client.steps import StepTimes, recording
from pyozone.config.site import load_configuration
from pyozone.config.units import parse_size_bytes
from pyozone.freon.keys import FreonOptions, generate_keys
from pyozone.freon.report import percentile

VOLUME, BUCKET = "bench", "smallkeys"
STEPS = ("openKey", "write", "watchForCommit", "commitKey")
CLIENT = "client's own work"


async def _timed_put(client: AsyncOzoneClient, key: str, data: bytes) -> StepTimes:
    with recording() as times:
        await client.put_key(VOLUME, BUCKET, key, data)
    return times


def measure_steps(client: OzoneClient, number: int, threads: int, size: int) -> tuple[float, list[dict]]:
    """Writes `number` keys from `threads` threads; (keys/s, one {step: seconds} per key, "total" too)."""
    data = os.urandom(size)

    def one(index: int) -> dict[str, float]:
        started = time.perf_counter()
        times = client.run(_timed_put(client.async_client, f"steps/{index}", data))
        total = time.perf_counter() - started
        return {**times.seconds, "total": total, CLIENT: total - sum(times.seconds.values())}

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=threads) as pool:
        keys = list(pool.map(one, range(number)))
    return number / (time.perf_counter() - started), keys


def step_rows(keys: list[dict]) -> list[tuple[str, str]]:
    """Mean (over every key), p50 (over the keys that took the step) and share of the mean key time."""
    total = fmean(k["total"] for k in keys)
    rows = []
    for step in (*STEPS, CLIENT):
        took = sorted(k[step] for k in keys if step in k)
        if not took:
            continue
        mean = sum(took) / len(keys)
        some = "" if len(took) == len(keys) else f"   ({len(took)} of {len(keys)} keys)"
        rows.append(
            (
                step,
                f"mean {mean * 1e3:6.2f} ms   p50 {percentile(took, 50) * 1e3:6.2f} ms   "
                f"share {mean / total:6.1%}{some}",
            )
        )
    lat = sorted(k["total"] for k in keys)
    rows.append(("key", f"mean {total * 1e3:6.2f} ms   p50 {percentile(lat, 50) * 1e3:6.2f} ms"))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("-n", "--keys", type=int, default=500, help="keys per run (default 500)")
    parser.add_argument("-t", "--threads", type=int, default=8)
    parser.add_argument("--size", default="1KB", help="bytes per key (default 1KB)")
    parser.add_argument("--keep", metavar="DIR", help="use and keep this data dir instead of a temp one")
    args = parser.parse_args()
    if args.keys < 1 or args.threads < 1:
        raise SystemExit("small_keys: -n and -t must be at least 1")
    size = parse_size_bytes(args.size)

    data_dir = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="pyozone-smallkeys-"))
    conf_dir = start_cluster(data_dir)
    try:
        with OzoneClient(load_configuration(conf_dir, {})) as client:
            client.create_volume(VOLUME)
            client.create_bucket(VOLUME, BUCKET)
            warm = max(1, min(50, args.keys // 10))
            for prefix, number in (("warm-up", warm), ("ockg", args.keys)):
                options = FreonOptions(VOLUME, BUCKET, prefix, number, size, threads=args.threads)
                report = generate_keys(client, options)
            if not report.ok:
                raise SystemExit(f"ockg failed: {report.failures[:3]}")
            rate, keys = measure_steps(client, args.keys, args.threads, size)
            data = os.urandom(size)
            started = time.perf_counter()
            client.put_keys(VOLUME, BUCKET, ((f"batch/{i}", data) for i in range(args.keys)), args.threads)
            batch_rate = args.keys / (time.perf_counter() - started)
        lat = sorted(report.latencies_ms)
        rows = [
            (
                f"ockg ({args.size}, {args.threads} threads)",
                f"{report.rate:7.1f} keys/s   p50 {percentile(lat, 50):.1f} ms   "
                f"p99 {percentile(lat, 99):.1f} ms   ({report.keys} keys)",
            ),
            ("recorded run", f"{rate:7.1f} keys/s   ({len(keys)} keys, same threads)"),
            ("put_keys, 1 thread", f"{batch_rate:7.1f} keys/s   ({args.threads} keys in flight)"),
            *step_rows(keys),
        ]
        print_table(f"Small keys step by step ({args.size}, 3 datanodes, 127.0.0.1, this machine)", rows)
    finally:
        env = {k: v for k, v in os.environ.items() if k not in ("OZONE_CONF_DIR", "PYOZONE_LOG_LEVEL")}
        subprocess.run(
            [sys.executable, "-m", "pyozone", "cluster", "down", "--data-dir", str(data_dir)],
            env=env, capture_output=True, check=False,
        )  # fmt: skip
        if not args.keep:
            shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
