"""The check stage on Spark, shared by `rm-report` and `affected-keys`: every container of a snapshot with
its replicas and pending ops through rm_rules.check_partition, one partial report per task, merged on
the driver.

Tasks take container-id ranges and read their rows from the snapshot themselves (range_scan.py); a
snapshot too scattered for that is shuffled by container id instead. Each task checks its containers in
ascending id order, which is what makes the merged samples the full scan's (ReplicationManagerReport
.merge keeps the smallest ids). Nothing big reaches the driver: one report per task, and the health of
the containers that are not HEALTHY only as a DataFrame.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import reduce
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.broadcast import Broadcast
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema

from pyozone.analytics.container_groups import CHECK_TABLES, OUTPUT_SCHEMA, check_tables
from pyozone.analytics.range_scan import Range, plan_ranges, read_range
from pyozone.analytics.reader import Snapshot
from pyozone.analytics.rm_rules import CheckContext
from pyozone.analytics.schema import TABLES
from pyozone.hdds.replication_report import ReplicationManagerReport
from pyozone.scm.replication.config import ReplicationManagerConfig

_SPARK_OUTPUT = from_arrow_schema(OUTPUT_SCHEMA)


def snapshot_check(
    spark: SparkSession, snapshot: Snapshot, config: ReplicationManagerConfig, with_health: bool
) -> DataFrame:
    """The check as a lazy DataFrame of OUTPUT_SCHEMA rows. The context is built from the small tables
    (nodes, pipeline ids: collected to the driver) and goes to the executors once, as a broadcast; the
    check's time is the snapshot's."""
    nodes = snapshot.table("nodes").select(
        "uuid", "rack", "health", "operational_state", "op_state_expiry_epoch_sec"
    )
    pipelines = snapshot.table("pipelines").select("pipeline_id")
    context = CheckContext.from_rows(
        (row.asDict() for row in nodes.toLocalIterator()),
        (row.pipeline_id for row in pipelines.toLocalIterator()),
        config,
        snapshot.manifest.created_ms,
    )
    shared = spark.sparkContext.broadcast(context)
    ranges = plan_ranges(snapshot.path, spark.sparkContext.defaultParallelism)
    if ranges is None:
        return _shuffled_check(snapshot, shared, with_health)
    return _range_check(spark, snapshot.path, ranges, shared, with_health)


def merged_report(checked: DataFrame, sample_limit: int, timestamp_ms: int) -> ReplicationManagerReport:
    """The tasks' reports merged on the driver (one small row per task)."""
    rows = checked.where(F.col("report").isNotNull()).select("report").toLocalIterator()
    parts = (ReplicationManagerReport.from_dict(json.loads(row.report)) for row in rows)
    report = reduce(ReplicationManagerReport.merge, parts, ReplicationManagerReport(sample_limit))
    report.set_complete(timestamp_ms)
    return report


def health_frame(checked: DataFrame) -> DataFrame:
    """(container_id, health_state) of every container whose final health is not HEALTHY."""
    return checked.where(F.col("health").isNotNull()).select(
        "container_id", F.col("health").alias("health_state")
    )


def _range_check(
    spark: SparkSession, path: Path, ranges: list[Range], context: Broadcast[CheckContext], with_health: bool
) -> DataFrame:
    """One task per range; each reads its rows straight from the snapshot."""

    def check(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for index in batch.column(0).to_pylist():
                tables = (read_range(path, table, ranges[index]) for table in CHECK_TABLES)
                yield from check_tables(*tables, context.value, with_health)

    tasks = max(1, len(ranges))
    return spark.range(0, len(ranges), 1, numPartitions=tasks).mapInArrow(check, _SPARK_OUTPUT)


def _shuffled_check(snapshot: Snapshot, context: Broadcast[CheckContext], with_health: bool) -> DataFrame:
    """The three tables unioned (the column names they share have the same types), tagged by table and
    hash-partitioned by container id; each partition (a spark.sql.shuffle.partitions-th of the tables)
    is split back into its three tables."""
    tagged = [snapshot.table(t).withColumn("table", F.lit(t)) for t in CHECK_TABLES]
    union = reduce(lambda a, b: a.unionByName(b, allowMissingColumns=True), tagged)

    def check(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        received = list(batches)
        rows = pa.Table.from_batches(received) if received else None
        tables = (
            TABLES[t].empty_table()
            if rows is None
            else rows.filter(pc.equal(rows["table"], t)).select(TABLES[t].names).cast(TABLES[t])
            for t in CHECK_TABLES
        )
        yield from check_tables(*tables, context.value, with_health)

    return union.repartition("container_id").mapInArrow(check, _SPARK_OUTPUT)
