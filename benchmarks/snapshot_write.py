"""Snapshot writing throughput: rows per second from an SCM core to Parquet, in-process and over gRPC.

An SCM core is loaded with CLOSED RATIS/THREE containers (three replicas each) straight into memory, as in
benchmarks/rm_check.py. Then, in the same run:

* writer floor: SnapshotWriter fed ready-made Arrow batches of replica rows (no row building);
* in-process: write_core_snapshot, the view plus row functions plus Parquet (no RPC);
* over gRPC: `pyozone admin snapshot`'s path against a live ScmDaemon on 127.0.0.1 holding the same
  records, with the longest event-loop stall seen while it streams (what a heartbeat could wait).

    python -m benchmarks.snapshot_write --containers 200000
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

import pyarrow as pa

from benchmarks.common import peak_rss_mb, print_table
from benchmarks.rm_check import build_scm, records
from pyozone.admin.snapshot import fetch_snapshot
from pyozone.analytics.schema import TABLES
from pyozone.analytics.scm_snapshot import replica_row, take_view
from pyozone.analytics.snapshot_from_core import write_core_snapshot
from pyozone.analytics.snapshot_stream import snapshot_chunks
from pyozone.analytics.snapshot_writer import SnapshotWriter
from pyozone.common.net import HostPort
from pyozone.config import OzoneConfiguration
from pyozone.framework.scm_admin import ScmAdminClient
from pyozone.scm.node.storage_report import node_report
from pyozone.scm.server import ScmDaemon
from pyozone.scm.store.version import init_scm, open_scm_store

BATCH = 8192


def writer_floor(out: Path, replicas: list) -> float:
    """Rows built once up front; only the writer is timed."""
    batches = [
        pa.RecordBatch.from_pylist(
            [replica_row(r) for r in replicas[i : i + BATCH]], schema=TABLES["replicas"]
        )
        for i in range(0, len(replicas), BATCH)
    ]
    start = time.perf_counter()
    with SnapshotWriter(out, "CID-bench", "synthetic") as writer:
        for batch in batches:
            writer.add_batch("replicas", batch)
        writer.finish()
    return time.perf_counter() - start


async def over_grpc(workdir: Path, containers: int, datanodes: int, out: Path) -> tuple[float, float]:
    """Seconds for the whole `admin snapshot`, and the longest gap between 10 ms ticks of the SCM's loop."""
    conf = OzoneConfiguration(
        {
            "ozone.metadata.dirs": str(workdir),
            "ozone.scm.datanode.address": "127.0.0.1:0",
            "ozone.scm.client.address": "127.0.0.1:0",
            "ozone.scm.block.client.address": "127.0.0.1:0",
            "ozone.scm.http-address": "127.0.0.1:0",
        }
    )
    init_scm(conf)
    daemon = ScmDaemon(conf, *open_scm_store(conf), snapshot_source=snapshot_chunks)
    bench, nodes = build_scm(datanodes, 3)
    for info in bench.nodes.nodes():
        daemon.core.register(info.details, node_report(info.uuid, 1, 1))
    daemon.core.containers.bulk_load(*records(containers, nodes))
    await daemon.start()
    stall = 0.0

    async def watch() -> None:
        nonlocal stall
        loop = asyncio.get_running_loop()
        while True:
            before = loop.time()
            await asyncio.sleep(0.01)
            stall = max(stall, loop.time() - before - 0.01)

    watcher = asyncio.create_task(watch())
    start = time.perf_counter()
    try:
        with ScmAdminClient(HostPort("127.0.0.1", daemon.client_port)) as scm:
            await asyncio.to_thread(fetch_snapshot, scm, out)
        return time.perf_counter() - start, stall
    finally:
        watcher.cancel()
        await daemon.stop(0.5)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--containers", type=int, default=200_000)
    parser.add_argument("--datanodes", type=int, default=30)
    args = parser.parse_args()
    n = args.containers
    scm, nodes = build_scm(args.datanodes, 3)
    scm.containers.bulk_load(*records(n, nodes))
    with tempfile.TemporaryDirectory(prefix="snapshot-bench-") as tmp:
        work = Path(tmp)
        view_start = time.perf_counter()
        view = take_view(scm)
        view_s = time.perf_counter() - view_start
        rows = sum(view.row_counts().values())
        floor_s = writer_floor(work / "floor", view.records["replicas"])
        core_start = time.perf_counter()
        write_core_snapshot(scm, work / "core")
        core_s = time.perf_counter() - core_start
        grpc_s, stall_s = asyncio.run(over_grpc(work / "scm", n, args.datanodes, work / "grpc"))
    print_table(
        f"Snapshot writing: {n:,} containers, {3 * n:,} replicas, {args.datanodes} datanodes ({rows:,} rows)",
        [
            ("take_view (one event-loop turn)", f"{view_s:.2f} s"),
            ("writer floor (Arrow batches)", f"{3 * n / floor_s:,.0f} rows/s"),
            ("in-process: write_core_snapshot", f"{rows / core_s:,.0f} rows/s ({core_s:.1f} s)"),
            ("over gRPC: admin snapshot", f"{rows / grpc_s:,.0f} rows/s ({grpc_s:.1f} s)"),
            ("longest SCM loop stall while streaming", f"{stall_s * 1000:.0f} ms"),
            ("peak RSS", f"{peak_rss_mb():,.0f} MB"),
        ],
    )


if __name__ == "__main__":
    main()
