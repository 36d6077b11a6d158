"""`pyozone analytics affected-keys`: the keys with a block in a container in chosen health states (default
MISSING and UNHEALTHY: the data at risk), rolled up by volume and bucket.

A container's state is its final health after the Replication Manager's check (rm_rules, the same pass
as `rm-report`; what SCM keeps as the container's health), computed once and kept. The keys table is
scanned once: blocks exploded, joined with the affected containers (broadcast to every task unless
there are millions), only the hits grouped back into keys. Keys never reach the driver; the terminal
shows totals and the largest buckets.

Results: OUT/affected-keys.json (summary), OUT/affected-keys/keys/ and OUT/affected-keys/buckets/
(Parquet), with --csv also keys-csv/ and buckets-csv/.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from pyozone.analytics.container_check import health_frame, snapshot_check
from pyozone.analytics.jobs import JobError
from pyozone.analytics.jobs.results import write_frame, write_json
from pyozone.analytics.reader import Snapshot
from pyozone.common.output import human_size, print_table
from pyozone.hdds.container_health import ContainerHealthState
from pyozone.scm.replication.config import ReplicationManagerConfig
from pyozone.scm.settings import ScmSettings

NAME = "affected-keys"
HELP = "keys with blocks in containers of chosen health states (default MISSING, UNHEALTHY), by bucket"
DEFAULT_STATES = (ContainerHealthState.MISSING, ContainerHealthState.UNHEALTHY)
BROADCAST_LIMIT = 2_000_000
"""Affected containers up to which the join ships them to every task instead of shuffling the blocks."""
KEY_COLUMNS = ("volume", "bucket", "key", "size", "replication_config", "created_ms")


def _states(text: str) -> tuple[ContainerHealthState, ...]:
    names = [n.strip().upper() for n in text.split(",") if n.strip()]
    choices = [s.name for s in ContainerHealthState if s is not ContainerHealthState.HEALTHY]
    unknown = [n for n in names if n not in choices]
    if not names or unknown:
        raise argparse.ArgumentTypeError(
            f"{', '.join(unknown) or 'nothing'}: name health states among {', '.join(choices)}"
        )
    return tuple(dict.fromkeys(ContainerHealthState[n] for n in names))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--states",
        type=_states,
        default=DEFAULT_STATES,
        metavar="STATE[,STATE...]",
        help="container health states whose keys to find (default: MISSING,UNHEALTHY)",
    )
    parser.add_argument("--csv", action="store_true", help="also write the keys and buckets as CSV")
    parser.add_argument("--top", type=int, default=20, metavar="N", help="buckets listed (default 20)")


def affected_containers(
    spark: SparkSession,
    snapshot: Snapshot,
    config: ReplicationManagerConfig,
    states: tuple[ContainerHealthState, ...],
) -> DataFrame:
    """(container_id, health_state) of the containers whose final health is one of `states`."""
    checked = snapshot_check(spark, snapshot, config, with_health=True)
    return health_frame(checked).where(F.col("health_state").isin([s.name for s in states]))


def affected_keys(keys: DataFrame, affected: DataFrame, broadcast: bool) -> DataFrame:
    """One row per key with a block in an affected container: its blocks and bytes there, and those
    containers and their states (sorted)."""
    blocks = keys.select(*KEY_COLUMNS, F.explode("blocks").alias("block")).select(
        *KEY_COLUMNS, F.col("block.container_id").alias("container_id"), F.col("block.length").alias("length")
    )
    hits = blocks.join(F.broadcast(affected) if broadcast else affected, "container_id")
    return hits.groupBy(*KEY_COLUMNS).agg(
        F.count("*").alias("affected_blocks"),
        F.sum("length").alias("affected_bytes"),
        F.array_sort(F.collect_set("container_id")).alias("containers"),
        F.array_sort(F.collect_set("health_state")).alias("states"),
    )


def bucket_rollup(keys: DataFrame) -> DataFrame:
    return keys.groupBy("volume", "bucket").agg(
        F.count("*").alias("keys"),
        F.sum("size").alias("bytes"),
        F.sum("affected_blocks").alias("affected_blocks"),
        F.sum("affected_bytes").alias("affected_bytes"),
    )


def run(spark: SparkSession, snapshot: Snapshot, args: argparse.Namespace, out_dir: Path | None) -> int:
    if args.csv and out_dir is None:
        raise JobError("--csv writes files: give --out DIR")
    config = ScmSettings.from_conf(args.conf).replication
    affected = affected_containers(spark, snapshot, config, args.states).persist(StorageLevel.MEMORY_AND_DISK)
    containers = affected.count()
    by_state = {row.health_state: row["count"] for row in affected.groupBy("health_state").count().collect()}
    keys = affected_keys(snapshot.table("keys"), affected, containers <= BROADCAST_LIMIT)
    keys = keys.persist(StorageLevel.MEMORY_AND_DISK)
    buckets = bucket_rollup(keys).persist(StorageLevel.MEMORY_AND_DISK)
    totals = buckets.agg(
        F.count("*").alias("buckets"), F.sum("keys").alias("keys"), F.sum("bytes").alias("bytes")
    ).first()
    summary = {
        "states": [s.name for s in args.states],
        "affectedContainers": {s.name: by_state.get(s.name, 0) for s in args.states},
        "affectedKeys": totals["keys"] or 0,
        "affectedKeyBytes": totals["bytes"] or 0,
        "buckets": totals["buckets"],
    }
    if out_dir is not None:
        write_json(out_dir, NAME, summary)
        write_frame(keys, out_dir, NAME, "keys")
        write_frame(buckets, out_dir, NAME, "buckets")
        if args.csv:
            _write_csv(keys, out_dir, "keys-csv")
            _write_csv(buckets, out_dir, "buckets-csv")
    _print_summary(summary, buckets.orderBy(F.desc("keys"), "volume", "bucket").limit(args.top).collect())
    return 0


def _write_csv(frame: DataFrame, out_dir: Path, name: str) -> None:
    """CSV has no lists: containers and states become ';'-separated text."""
    columns = [
        F.array_join(F.col(c).cast("array<string>"), ";").alias(c)
        if c in ("containers", "states")
        else F.col(c)
        for c in frame.columns
    ]
    path = out_dir.absolute() / NAME / name
    frame.select(*columns).write.mode("overwrite").option("header", True).csv(str(path))


def _print_summary(summary: dict, top: list) -> None:
    states = " and ".join(summary["states"])
    counts = ", ".join(f"{n} {state}" for state, n in summary["affectedContainers"].items())
    print(f"Keys with blocks in {states} containers ({counts})")
    print(
        f"{summary['affectedKeys']:,} keys, {human_size(summary['affectedKeyBytes'])}, "
        f"in {summary['buckets']:,} buckets"
    )
    if top:
        print()
        print_table(
            ["VOLUME", "BUCKET", "KEYS", "SIZE", "BLOCKS", "BLOCK BYTES"],
            [
                (
                    r.volume,
                    r.bucket,
                    f"{r['keys']:,}",
                    human_size(r.bytes),
                    f"{r.affected_blocks:,}",
                    human_size(r.affected_bytes),
                )
                for r in top
            ],
        )
