"""`namespace`: key size distribution (log2 buckets) and usage per volume and bucket, also as a PNG.

Both are aggregations on the executors; the driver sees at most 64 size buckets, the totals and the
`--top` largest buckets. The full per-bucket table goes to Parquet.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from pyozone.analytics.jobs.results import write_frame, write_json
from pyozone.analytics.reader import Snapshot
from pyozone.common.output import human_size, print_table

NAME = "namespace"
HELP = "key size distribution and per-volume/bucket usage, with a PNG chart"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--top", type=int, default=20, help="buckets listed (by bytes) on the terminal and chart"
    )


def size_classes(keys: DataFrame) -> DataFrame:
    """log2 class k holds sizes in [2^k, 2^(k+1)); empty keys are class -1. floor(log2) in floating
    point can round up just below a large power of two, hence the exact integer correction."""
    guess = "CAST(floor(log2(size)) AS INT)"
    log2 = F.expr(
        f"CASE WHEN size <= 0 THEN -1 WHEN shiftleft(1L, {guess}) > size THEN {guess} - 1 ELSE {guess} END"
    )
    return (
        keys.select(log2.alias("log2"), "size")
        .groupBy("log2")
        .agg(F.count("*").alias("keys"), F.sum("size").alias("bytes"))
        .orderBy("log2")
    )


def bucket_usage(keys: DataFrame) -> DataFrame:
    return keys.groupBy("volume", "bucket").agg(F.count("*").alias("keys"), F.sum("size").alias("bytes"))


def class_label(log2: int) -> str:
    if log2 < 0:
        return "0 B"
    return f"{human_size(1 << log2)} - {human_size(1 << (log2 + 1))}"


def run(spark: SparkSession, snapshot: Snapshot, args: argparse.Namespace, out_dir: Path | None) -> int:
    keys = snapshot.table("keys")
    classes = [r.asDict() for r in size_classes(keys).collect()]
    usage = bucket_usage(keys).persist()
    try:
        totals = usage.agg(
            F.count("*").alias("buckets"),
            F.countDistinct("volume").alias("volumes"),
            F.coalesce(F.sum("keys"), F.lit(0)).alias("keys"),
            F.coalesce(F.sum("bytes"), F.lit(0)).alias("bytes"),
        ).first()
        top = [
            r.asDict() for r in usage.orderBy(F.desc("bytes"), "volume", "bucket").limit(args.top).collect()
        ]
        if out_dir is not None:
            write_frame(usage, out_dir, NAME, "buckets")
    finally:
        usage.unpersist()
    summary = {
        "keys": totals["keys"],
        "bytes": totals["bytes"],
        "volumes": totals["volumes"],
        "buckets": totals["buckets"],
        "sizeClasses": [c | {"label": class_label(c["log2"])} for c in classes],
        "topBuckets": top,
    }
    print(
        f"Keys: {summary['keys']} ({human_size(summary['bytes'])}) in {summary['buckets']} bucket(s) "
        f"of {summary['volumes']} volume(s)"
    )
    print_table(
        ("KEY SIZE", "KEYS", "BYTES"),
        [(c["label"], c["keys"], human_size(c["bytes"])) for c in summary["sizeClasses"]],
    )
    print()
    print_table(
        ("VOLUME", "BUCKET", "KEYS", "BYTES"),
        [(b["volume"], b["bucket"], b["keys"], human_size(b["bytes"])) for b in top],
    )
    if out_dir is not None:
        write_frame(spark.createDataFrame(classes, "log2 int, keys long, bytes long"), out_dir, NAME, "sizes")
        print(f"Chart: {chart(summary, out_dir / f'{NAME}.png')}")
        print(f"Results: {write_json(out_dir, NAME, summary)}")
    return 0


def chart(summary: dict[str, Any], path: Path) -> Path:
    """Key count per size class and the largest buckets by bytes; Figure (not pyplot) draws with Agg
    and keeps no global state."""
    figure = Figure(figsize=(12, 5), layout="constrained")
    sizes, buckets = figure.subplots(1, 2)
    classes = summary["sizeClasses"]
    sizes.bar(range(len(classes)), [c["keys"] for c in classes])
    sizes.set_xticks(range(len(classes)), [c["label"] for c in classes], rotation=60, ha="right", fontsize=7)
    sizes.set_ylabel("keys")
    sizes.set_title(f"Key sizes ({summary['keys']} keys)")
    top = summary["topBuckets"][::-1]
    buckets.barh(range(len(top)), [b["bytes"] / (1 << 30) for b in top])
    buckets.set_yticks(range(len(top)), [f"{b['volume']}/{b['bucket']}" for b in top], fontsize=7)
    buckets.set_xlabel("GB")
    buckets.set_title(f"Largest buckets ({summary['buckets']} in all)")
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=100)
    return path
