"""Block allocations per second through the SCM core, in-process.

A simulated cluster brings SCM out of safe mode with open pipelines; then BlockManager.allocate_block
runs back to back (RATIS/THREE, 256 MB blocks, 5 GB containers: containers fill and close as they
would). Baseline, same run: a bare Python allocator (pick a pipeline at random, bump a counter, build a
BlockID), the floor any Python implementation pays.
"""

from __future__ import annotations

import argparse
import random
import tempfile
from pathlib import Path

from benchmarks.common import peak_rss_mb, print_table, rate
from pyozone.config import OzoneConfiguration
from pyozone.hdds.block import ExcludeList
from pyozone.hdds.ids import RATIS_THREE, BlockID
from pyozone.scm.store import SCMMetadataStore
from pyozone.scm.store.scm_db import open_scm_db
from pyozone.sim.cluster import SimCluster


def ready_cluster(datanodes: int, store: SCMMetadataStore) -> SimCluster:
    conf = OzoneConfiguration({"hdds.scm.safemode.min.datanode": "3"})
    cluster = SimCluster(datanodes, racks=3, conf=conf, seed=1, store=store)
    if not cluster.run_until(
        lambda: (
            not cluster.scm.safe_mode.in_safe_mode() and cluster.scm.pipelines.open_pipelines(RATIS_THREE)
        ),
        timeout_ms=600_000,
    ):
        raise SystemExit("the simulated cluster did not leave safe mode")
    return cluster


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--datanodes", type=int, default=30)
    parser.add_argument("--seconds", type=float, default=2.0)
    args = parser.parse_args()
    block_size = 256 << 20
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for label, store in (
            ("in-memory store", SCMMetadataStore.in_memory()),
            ("RocksDB store", open_scm_db(Path(tmp) / "scm.db")),
        ):
            cluster = ready_cluster(args.datanodes, store)
            blocks, none = cluster.scm.blocks, ExcludeList()

            def batch(blocks=blocks, none=none) -> int:
                for _ in range(1000):
                    blocks.allocate_block(block_size, RATIS_THREE, "bench", none)
                return 1000

            per_s, ops, _ = rate(batch, args.seconds)
            rows.append(
                (
                    f"allocate_block, {label}",
                    f"{per_s:>10,.0f} /s  ({ops:,} blocks, "
                    f"{len(cluster.scm.containers.containers()):,} containers)",
                )
            )
            store.close()

    pipelines = [f"p{i}" for i in range(20)]
    rng, counter = random.Random(1), [0]

    def bare() -> int:
        for _ in range(1000):
            rng.choice(pipelines)
            counter[0] += 1
            BlockID(counter[0] // 20, counter[0])
        return 1000

    base, _, _ = rate(bare, args.seconds)
    rows.append(("baseline: bare Python allocator", f"{base:>10,.0f} /s"))
    rows.append(("SCM core / baseline", f"{float(rows[0][1].split()[0].replace(',', '')) / base:.3f}"))
    rows.append(("peak RSS", f"{peak_rss_mb():.0f} MB"))
    print_table(f"Block allocation, {args.datanodes} simulated datanodes", rows)


if __name__ == "__main__":
    main()
