"""`analytics affected-keys` on Spark (local[2]) over 100M synthetic keys.

The snapshot comes from `pyozone analytics generate` (a Spark job, timed apart and kept under --data, so a
rerun times only the job): --containers RATIS/THREE containers on 100 datanodes over 5 racks, a share of
them with no replica left (MISSING) and a share of replicas UNHEALTHY, and --keys keys of 1 KB to 1 GB
(one block per 256 MB) in 4 volumes x 8 buckets. The job runs as `pyozone analytics affected-keys
--snapshot DIR --out DIR` does: the Replication Manager check of every container, then the keys scan,
join and roll-up, Parquet written.

    python -m benchmarks.analytics_affected_keys [--keys 100000000]
"""

from __future__ import annotations

import argparse
import shutil
import time
from pathlib import Path

from benchmarks.common import print_table
from pyozone.analytics.generate import GenerateSpec, generate, parse_failures
from pyozone.analytics.jobs import affected_keys
from pyozone.analytics.reader import Snapshot
from pyozone.analytics.schema import MANIFEST
from pyozone.analytics.spark import build_session
from pyozone.config import OzoneConfiguration

FAILURES = "missing=0.002,unhealthy=0.05"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--keys", type=int, default=100_000_000)
    parser.add_argument("--containers", type=int, default=1_000_000)
    parser.add_argument("--data", type=Path, default=Path("/tmp/pyozone-bench/analytics"))
    args = parser.parse_args()

    spark = build_session("local[2]", app="pyozone-bench-affected-keys")
    snapshot = args.data / f"keys-{args.keys}-{args.containers}"
    generated = None
    if not (snapshot / MANIFEST).exists():
        spec = GenerateSpec(
            args.containers, 100, args.keys, racks=5, failures=parse_failures(FAILURES), open_fraction=0.0
        )
        start = time.perf_counter()
        generate(spark, spec, snapshot)
        generated = time.perf_counter() - start
    out = args.data / "affected-keys-out"
    shutil.rmtree(out, ignore_errors=True)
    job = argparse.Namespace(conf=OzoneConfiguration(), states=affected_keys.DEFAULT_STATES, csv=False, top=5)
    start = time.perf_counter()
    affected_keys.run(spark, Snapshot(spark, snapshot), job, out)
    seconds = time.perf_counter() - start
    spark.stop()

    summary = (out / "affected-keys.json").read_text()
    size = sum(p.stat().st_size for p in (snapshot / "keys").glob("*.parquet"))
    print()
    print_table(
        f"affected-keys on local[2]: {args.keys:,} keys, {args.containers:,} containers ({FAILURES})",
        [
            (
                "generate (Spark, once)",
                f"{generated:.0f} s" if generated is not None else "generated earlier",
            ),
            ("keys table", f"{size / 2**30:.1f} GiB Parquet"),
            ("affected-keys job", f"{seconds:.0f} s ({args.keys / seconds:,.0f} keys/s)"),
            ("summary", summary.replace("\n", " ")),
        ],
    )


if __name__ == "__main__":
    main()
