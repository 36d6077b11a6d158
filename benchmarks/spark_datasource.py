"""Spark local[2] writing and reading a table through the "pyozone" data source, beside Parquet on local
disk in the same run (the same DataFrame, the same session).

Starts `pyozone cluster up` (SCM, OM and 3 datanodes on 127.0.0.1) in a fresh directory unless --om names
a running OM. A warm-up round (Python workers start on first use) is not counted; each figure is the best
of --repeat rounds. Reads scan every column (the "noop" sink).

    python -m benchmarks.spark_datasource [--rows 1000000] [--repeat 3] [--om HOST:PORT]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from benchmarks.common import print_table
from benchmarks.key_io import _pyozone, start_cluster
from pyozone.analytics.spark import build_session
from pyozone.client import OzoneClient
from pyozone.config.site import load_configuration

VOLUME, BUCKET = "bench", "spark"


def best_s(action: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return min(times)


def measure(om: str, rows: int, repeat: int, scratch: Path) -> list[tuple[str, str]]:
    with OzoneClient(om) as client:
        if VOLUME not in {v.name for v in client.list_volumes()}:
            client.create_volume(VOLUME)
        if BUCKET not in {b.name for b in client.list_buckets(VOLUME)}:
            client.create_bucket(VOLUME, BUCKET)
    spark = build_session("local[2]", app="spark-datasource-bench", shuffle_partitions=2)
    try:
        df = spark.range(rows, numPartitions=2).selectExpr(
            "id", "id * 0.5 AS value", "concat('row-', id) AS name", "CAST(id % 7 AS INT) AS bucket"
        )
        url, local = f"ofs://{om}/{VOLUME}/{BUCKET}/bench", str(scratch / "bench")

        def ozone_write() -> None:
            df.write.format("pyozone").mode("overwrite").save(url)

        def local_write() -> None:
            df.write.mode("overwrite").parquet(local)

        def ozone_read() -> None:
            spark.read.format("pyozone").load(url).write.format("noop").mode("overwrite").save()

        def local_read() -> None:
            spark.read.parquet(local).write.format("noop").mode("overwrite").save()

        for warm_up in (ozone_write, local_write, ozone_read, local_read):
            warm_up()
        figures = {
            "write": (best_s(ozone_write, repeat), best_s(local_write, repeat)),
            "read": (best_s(ozone_read, repeat), best_s(local_read, repeat)),
        }
        assert spark.read.format("pyozone").load(url).count() == rows
    finally:
        spark.stop()
    return [
        (
            f"{phase} {rows:,} rows",
            f"pyozone {ozone:6.2f} s   local Parquet {disk:6.2f} s   ratio {ozone / disk:5.2f}x",
        )
        for phase, (ozone, disk) in figures.items()
    ]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--om", help="HOST:PORT of a running cluster's OM (default: start a cluster)")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="pyozone-spark-bench-"))
    try:
        if args.om:
            rows = measure(args.om, args.rows, args.repeat, scratch)
        else:
            conf = load_configuration(start_cluster(scratch / "cluster"), {})
            try:
                rows = measure(str(conf.get("ozone.om.address")), args.rows, args.repeat, scratch)
            finally:
                _pyozone("cluster", "down", "--data-dir", str(scratch / "cluster"))
        print_table('Spark local[2]: format("pyozone") beside Parquet on local disk', rows)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
