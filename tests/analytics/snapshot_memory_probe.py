"""Run by test_snapshot_writer in a fresh process: writes N replica rows with SnapshotWriter in 10k-row
batches and prints the peak-RSS growth and the rate as JSON.

    python -m tests.analytics.snapshot_memory_probe OUT_DIR ROWS
"""

from __future__ import annotations

import json
import resource
import sys
import time

import pyarrow as pa

from pyozone.analytics.schema import TABLES
from pyozone.analytics.snapshot_writer import SnapshotWriter

BATCH = 10_000
DATANODES = [f"{i:08x}-0000-4000-8000-{i:012d}" for i in range(100)]


def replica_batch(start: int) -> pa.RecordBatch:
    """Built per call, as a streaming source would: nothing is kept between batches."""
    ids = pa.array(range(start, start + BATCH), pa.int64())
    nodes = pa.array([DATANODES[i % len(DATANODES)] for i in range(start, start + BATCH)])
    columns = {
        "container_id": ids,
        "datanode": nodes,
        "state": pa.array(["CLOSED"] * BATCH),
        "origin_node_id": nodes,
        "sequence_id": ids,
        "key_count": pa.array([100] * BATCH, pa.int64()),
        "bytes_used": pa.array([5 << 30] * BATCH, pa.int64()),
        "replica_index": pa.array([0] * BATCH, pa.int32()),
        "is_empty": pa.array([False] * BATCH),
    }
    return pa.RecordBatch.from_pydict(columns, schema=TABLES["replicas"])


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main(out_dir: str, rows: int) -> None:
    replica_batch(0)  # warm up: allocator pools and lazily loaded code count towards the baseline
    baseline = peak_rss_mb()
    start = time.perf_counter()
    with SnapshotWriter(out_dir, "CID-probe", "synthetic") as writer:
        for first in range(0, rows, BATCH):
            writer.add_batch("replicas", replica_batch(first))
        writer.finish()
    seconds = time.perf_counter() - start
    print(json.dumps({"rss_growth_mb": peak_rss_mb() - baseline, "rows_per_s": rows / seconds}))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
