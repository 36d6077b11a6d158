"""Write pipeline V1 beside V2 (datastream) on a 3-datanode cluster on this machine: the tables of the
"Ozone Write Pipeline V2 with Ratis Streaming" blog post.

Starts `pyozone cluster up` (SCM, OM and 3 datanodes, each its own OS process on 127.0.0.1) afresh for
each measurement (on /dev/shm by default: --on) and measures, V1 (put_key(datastream=False)) beside V2
(datastream=True), each client its own OS process timed from one start event (every client has its data
in memory and its OM connection open first):
- Table 1: one client writing N keys of --size one after another, for N in --counts;
- Table 2: three clients writing concurrently, one key each; Table 3: the same with N keys each (N > 1);
- reads of the V2-written keys by 1 and 3 clients, every byte checked by sha256;
- the raw baselines of benchmarks/loopback.py, taken in the same run before the cluster starts: the
  3-hop relay for writes (a write moves each byte client -> 1st -> 2nd -> 3rd datanode, in V1 through the
  leader and in V2 along the chain) and the 1-hop stream for reads (datanode -> client), 1 and 3 streams.
MB/s is bytes over wall time: per client from the start event to its last commit, the total for all
clients from the start event until the last one finished (time.monotonic: one clock for every process).
Ratios: V2/V1, and each path as a fraction of its raw baseline. CPU ms per MiB is the CPU every process
spent (the daemons from /proc, each client its own) per MiB of key data written or read: what a loaded,
shared machine blurs far less than a rate.

    python -m benchmarks.write_pipeline [--size 128MB] [--counts 1 2] [--keep DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import multiprocessing as mp
import os
import queue
import shutil
import tempfile
import time
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from benchmarks import loopback
from benchmarks.common import CpuMeter
from benchmarks.key_io import _pyozone, start_cluster
from pyozone.client import OzoneClient
from pyozone.cluster.layout import ClusterState
from pyozone.config.site import load_configuration
from pyozone.config.units import parse_size_bytes

VOLUME, BUCKET = "bench", "pipeline"
READY_TIMEOUT_S = 300.0  # spawn, imports and os.urandom of every key
RUN_TIMEOUT_S = 1800.0


# ------------------------------------------------------------------ one client process
class _Result(NamedTuple):
    index: int
    start: float  # time.monotonic()
    end: float
    digests: dict[str, str]
    paths: list[str]  # the write paths put_key reported
    error: str
    cpu_s: float = 0.0  # this client's CPU from the start event to its last commit


def _client(
    conf_dir: str,
    index: int,
    keys: list[str],
    size: int,
    phase: str,
    datastream: bool,
    ready: mp.Queue,
    start: mp.Event,
    out: mp.Queue,
) -> None:
    """Writes its keys one after another (or reads them back) and reports a _Result. Hashing is left out
    of the timed part, so data is kept until the clock stops."""
    try:
        client = OzoneClient(load_configuration(Path(conf_dir), {}))
        try:
            client.bucket_info(VOLUME, BUCKET)  # the OM connection is open before the clock starts
            data = [os.urandom(size) for _ in keys] if phase == "write" else []
            paths: set[str] = set()
            ready.put(index)
            start.wait()
            t0, cpu0 = time.monotonic(), time.process_time()
            if phase == "write":
                for key, body in zip(keys, data, strict=True):
                    paths.add(client.put_key(VOLUME, BUCKET, key, body, datastream=datastream).write_path)
            else:
                for key in keys:
                    with client.read_key(VOLUME, BUCKET, key) as reader:
                        data.append(reader.readall())
            t1, cpu1 = time.monotonic(), time.process_time()
        finally:
            client.close()
        digests = {
            k: hashlib.sha256(d).hexdigest() if len(d) == size else f"short: {len(d)} bytes"
            for k, d in zip(keys, data, strict=True)
        }
        out.put(_Result(index, t0, t1, digests, sorted(paths), "", cpu1 - cpu0))
    except Exception:  # the parent reports it instead of waiting for a result
        ready.put(index)
        out.put(_Result(index, 0.0, 0.0, {}, [], traceback.format_exc()))


@dataclass(frozen=True)
class Run:
    total_mb_s: float
    per_client_mb_s: list[float]
    slowest_s: float
    digests: dict[str, str]
    cpu_ms_per_mib: float


def run_clients(
    cluster: Cluster, clients: int, count: int, size: int, phase: str, datastream: bool, tag: str
) -> Run:
    """`clients` processes, each writing (or reading) `count` keys of `size`; keys are named by `tag`."""
    conf_dir = cluster.conf_dir
    ctx = mp.get_context("spawn")
    ready, start, out = ctx.Queue(), ctx.Event(), ctx.Queue()
    keys = [[f"{tag}-c{i}-k{j}" for j in range(count)] for i in range(clients)]
    procs = [
        ctx.Process(
            target=_client,
            args=(str(conf_dir), i, keys[i], size, phase, datastream, ready, start, out),
        )
        for i in range(clients)
    ]
    for p in procs:
        p.start()
    try:
        waiting = set(range(clients))
        while waiting:
            waiting.discard(ready.get(timeout=READY_TIMEOUT_S))
        before = cluster.meter.read()
        t0 = time.monotonic()
        start.set()
        results: list[_Result] = [out.get(timeout=RUN_TIMEOUT_S) for _ in procs]
        after = cluster.meter.read()
    except queue.Empty:
        raise SystemExit(f"{tag}: a client did not answer in time") from None
    finally:
        for p in procs:
            p.join(30)
            if p.is_alive():
                p.terminate()
    errors = [r.error for r in results if r.error]
    if errors:
        raise SystemExit(f"{tag}: a client failed:\n{errors[0]}")
    want = "V2" if datastream else "V1"
    if phase == "write" and any(r.paths != [want] for r in results):
        raise SystemExit(f"{tag}: keys were written by {[r.paths for r in results]}, not {want}")
    results.sort(key=lambda r: r.index)
    daemons = sum(after[n] - before[n] for n in cluster.meter.pids)
    mib = clients * count * size / (1 << 20)
    return Run(
        clients * count * size / (max(r.end for r in results) - t0) / 1e6,
        [count * size / (r.end - r.start) / 1e6 for r in results],
        max(r.end - r.start for r in results),
        {k: v for r in results for k, v in r.digests.items()},
        (daemons + sum(r.cpu_s for r in results)) * 1000 / mib,
    )


# ------------------------------------------------------------------ printing
def _row(label: str, run: Run, base_name: str, base: float) -> str:
    per_client = " / ".join(f"{m:.1f}" for m in run.per_client_mb_s)
    return (
        f"{label}  {run.total_mb_s:.1f} MB/s total   per client {per_client} MB/s   "
        f"{base_name} {base:.0f} MB/s   fraction {run.total_mb_s / base:.3f}   "
        f"slowest client {run.slowest_s:.2f} s   CPU {run.cpu_ms_per_mib:.2f} ms/MiB"
    )


def _print_table(title: str, lines: list[str]) -> None:
    print()
    print(title)
    print("-" * len(title))
    for line in lines:
        print(line)


def _label(path: str, clients: int, count: int, size: str) -> str:
    """`V2 write, 3 client(s) x 128MB` for one key per client, `... x 2 x 128MB` for two."""
    keys = f"{count} x {size}" if count > 1 else size
    return f"{path}, {clients} client(s) x {keys}"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size", default="128MB", help="bytes per key (default 128MB)")
    parser.add_argument(
        "--counts", type=int, nargs="+", default=[1, 2], help="keys per client (default 1 2; 1 always runs)"
    )
    parser.add_argument("--keep", metavar="DIR", help="use and keep this data dir instead of a temp one")
    parser.add_argument(
        "--on",
        default="/dev/shm" if Path("/dev/shm").is_dir() else None,
        help="where the temp data dir goes (default /dev/shm: memory, as the raw relay has no disk; "
        "this machine's one disk, ~280 MB/s fsynced, shared by three replicas, caps any path at ~90 MB/s)",
    )
    args = parser.parse_args()
    size = parse_size_bytes(args.size)
    counts = sorted({1, *args.counts})

    chain3, chain1 = loopback.start_chain(3), loopback.start_chain(1)
    try:
        loopback.measure(chain3, 8 << 20, 1)
        loopback.measure(chain1, 8 << 20, 1)
        relay = {n: loopback.measure(chain3, size, n) for n in (1, 3)}
        stream = {n: loopback.measure(chain1, size, n) for n in (1, 3)}
    finally:
        chain3.close()
        chain1.close()

    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="pyozone-pipeline-", dir=args.on))
    print(f"datanode volumes under {root}")
    writes: dict[tuple[str, int, int], Run] = {}
    reads: dict[tuple[int, int], Run] = {}
    try:
        for clients in (1, 3):
            for count in counts:
                for path, datastream in (("V1", False), ("V2", True)):
                    tag = f"{path}-{clients}x{count}"
                    with _cluster(root / tag, args.keep is None) as cluster:
                        writes[path, clients, count] = run_clients(
                            cluster, clients, count, size, "write", datastream, tag
                        )
                        if datastream:
                            read = run_clients(cluster, clients, count, size, "read", True, tag)
                            if read.digests != writes["V2", clients, count].digests:
                                raise SystemExit(f"{tag}: read back differs from what was written")
                            reads[clients, count] = read

        def write_rows(clients: int, shape: list[int]) -> list[str]:
            return [
                _row(
                    _label(f"{path} write", clients, count, args.size),
                    writes[path, clients, count],
                    f"raw 3-hop relay {clients} stream(s)",
                    relay[clients],
                )
                for count in shape
                for path in ("V1", "V2")
            ]

        print(f"Write pipeline V1 and V2 on a 3-datanode cluster (127.0.0.1, {os.cpu_count()} cores)")
        print(
            f"raw 3-hop relay: {relay[1]:.0f} MB/s (1 stream), {relay[3]:.0f} MB/s (3 streams); "
            f"raw 1-hop stream: {stream[1]:.0f} MB/s (1 stream), {stream[3]:.0f} MB/s (3 streams)"
        )
        _print_table(f"Table 1: one client, N x {args.size} keys one after another", write_rows(1, counts))
        _print_table(f"Table 2: three clients concurrently, 1 x {args.size} each", write_rows(3, [1]))
        if len(counts) > 1:
            _print_table(
                f"Table 3: three clients concurrently, N x {args.size} each", write_rows(3, counts[1:])
            )
        _print_table(
            "Reads of the V2-written keys (every byte checked by sha256)",
            [
                _row(
                    _label("V2 read", clients, count, args.size),
                    reads[clients, count],
                    f"raw 1-hop stream {clients} stream(s)",
                    stream[clients],
                )
                for clients in (1, 3)
                for count in counts
            ],
        )
        summary = []
        for count in counts:
            each = "" if count == 1 else f", {count} keys each"
            for clients, who in ((1, "1 client"), (3, "3 clients")):
                v1, v2 = writes["V1", clients, count], writes["V2", clients, count]
                summary.append(f"V2/V1 write, {who}{each}: {v2.total_mb_s / v1.total_mb_s:.2f}x")
            for clients, who in ((1, "1 client"), (3, "3 clients")):
                summary.append(
                    f"V2 write / raw 3-hop relay, {who}{each}: "
                    f"{writes['V2', clients, count].total_mb_s / relay[clients]:.3f}"
                )
            for clients, who in ((1, "1 client"), (3, "3 clients")):
                summary.append(
                    f"V2 read / raw 1-hop stream, {who}{each}: "
                    f"{reads[clients, count].total_mb_s / stream[clients]:.3f}"
                )
        for count in counts:
            each = "" if count == 1 else f", {count} keys each"
            for clients, who in ((1, "1 client"), (3, "3 clients")):
                v1, v2 = writes["V1", clients, count], writes["V2", clients, count]
                summary.append(
                    f"CPU per MiB, {who}{each}: V1 write {v1.cpu_ms_per_mib:.2f} ms, V2 write "
                    f"{v2.cpu_ms_per_mib:.2f} ms, V2 read {reads[clients, count].cpu_ms_per_mib:.2f} ms"
                )
        _print_table("Summary", summary)
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


class Cluster(NamedTuple):
    conf_dir: Path
    meter: CpuMeter
    """Its daemons' CPU."""


@contextlib.contextmanager
def _cluster(data_dir: Path, remove: bool) -> Iterator[Cluster]:
    """A fresh cluster for one measurement, warmed up (pipelines, containers and both datanode ports in
    use), stopped and removed after it: each path starts from empty volumes. (On tmpfs here, allocating
    pages grows ~3x slower once several GB are held, which would tax whichever path runs later.)"""
    data_dir.mkdir(parents=True)
    conf_dir = start_cluster(data_dir)
    try:
        with OzoneClient(load_configuration(conf_dir, {})) as client:
            client.create_volume(VOLUME)
            client.create_bucket(VOLUME, BUCKET)
            for datastream in (False, True):
                client.put_key(
                    VOLUME, BUCKET, f"warm-up-{datastream}", os.urandom(8 << 20), datastream=datastream
                )
        yield Cluster(conf_dir, CpuMeter(ClusterState.load(data_dir).pids))
    finally:
        _pyozone("cluster", "down", "--data-dir", str(data_dir))
        if remove:
            shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
