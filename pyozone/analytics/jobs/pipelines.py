"""`pipelines`: the RATIS/THREE pipelines SCM would keep for the snapshot's datanodes under other limits.

The count comes from the real planner (pyozone.scm.pipeline.planner drives the real PipelineManager). Spark's
part is to reduce the nodes table, however large, to the few distinct shapes of healthy in-service nodes
(rack, healthy data disks, metadata disks) with a count each; the planner then runs on the driver once
per combination of the three limits.
"""

from __future__ import annotations

import argparse
import itertools
from pathlib import Path

from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import IntegerType, LongType, StringType, StructField, StructType

from pyozone.analytics.jobs.results import write_json, write_rows
from pyozone.analytics.reader import Snapshot
from pyozone.common.output import print_table
from pyozone.scm.pipeline.planner import InventoryNode, PipelinePlan, plan_pipelines
from pyozone.scm.settings import ScmSettings

NAME = "pipelines"
HELP = "RATIS/THREE pipelines SCM would keep for the snapshot's datanodes under alternative limits"

# (option, destination, configuration key, smallest valid value)
SETTINGS = (
    ("--datanode-limit", "datanode_limit", "ozone.scm.datanode.pipeline.limit", 0),
    ("--per-disk", "per_disk", "ozone.scm.pipeline.per.metadata.disk", 1),
    ("--global", "global_limit", "ozone.scm.ratis.pipeline.limit", 0),
)

RESULT = StructType(
    [
        StructField("datanode_pipeline_limit", IntegerType()),
        StructField("per_metadata_disk", IntegerType()),
        StructField("ratis_pipeline_limit", IntegerType()),
        StructField("cluster_branch", StringType()),
        StructField("node_target", LongType()),
        StructField("ratis_one", LongType()),
        StructField("ratis_three", LongType()),
    ]
)


def int_list(minimum: int):
    def parse(text: str) -> list[int]:
        values = []
        for item in text.split(","):
            item = item.strip()
            if not item.isdigit() or int(item) < minimum:
                raise argparse.ArgumentTypeError(f"{item!r} is not a whole number >= {minimum}")
            values.append(int(item))
        return values

    return parse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    for option, dest, key, minimum in SETTINGS:
        parser.add_argument(
            option,
            dest=dest,
            type=int_list(minimum),
            metavar="N[,N...]",
            help=f"values of {key} to compare (default: the configured value)",
        )
    parser.add_argument("--seed", type=int, default=0, help="seed for the planner's placement tie-breaks")


def inventory(snapshot: Snapshot) -> list[InventoryNode]:
    """Healthy in-service nodes (the ones SCM places pipelines on) as one inventory entry each, rebuilt
    on the driver from per-shape counts; ids only need to be unique."""
    nodes = snapshot.table("nodes").where(
        (F.col("health") == "HEALTHY") & (F.col("operational_state") == "IN_SERVICE")
    )
    shapes = (
        nodes.groupBy(
            F.coalesce(F.col("rack"), F.lit("/default-rack")).alias("rack"),
            F.greatest(F.col("data_disks") - F.coalesce(F.col("failed_disks"), F.lit(0)), F.lit(0)).alias(
                "data"
            ),
            F.col("metadata_disks").alias("meta"),
        )
        .count()
        .orderBy("rack", "data", "meta")
        .collect()
    )
    return [
        InventoryNode(f"{s.rack}:{s.data}:{s.meta}:{i}", s.rack, s.data, s.meta)
        for s in shapes
        for i in range(s["count"])
    ]


def plans(args: argparse.Namespace, nodes: list[InventoryNode]) -> list[PipelinePlan]:
    """One plan per combination of the given values (the configured value where none is given)."""
    choices = [getattr(args, dest) or [args.conf.get(key)] for _, dest, key, _ in SETTINGS]
    result = []
    for values in itertools.product(*choices):
        conf = args.conf.copy()
        for (_, _, key, _), value in zip(SETTINGS, values, strict=True):
            conf.set(key, str(value))
        result.append(plan_pipelines(ScmSettings.from_conf(conf), nodes, seed=args.seed))
    return result


def run(spark: SparkSession, snapshot: Snapshot, args: argparse.Namespace, out_dir: Path | None) -> int:
    nodes = inventory(snapshot)
    pipelines = snapshot.table("pipelines")
    open_three = pipelines.where(
        (F.col("replication_config") == "RATIS/THREE") & (F.col("state") == "OPEN")
    ).count()
    results = plans(args, nodes)
    rows = [
        {
            "datanode_pipeline_limit": p.datanode_pipeline_limit,
            "per_metadata_disk": p.per_metadata_disk,
            "ratis_pipeline_limit": p.ratis_pipeline_limit,
            "cluster_branch": p.cluster_branch,
            "node_target": p.node_target,
            "ratis_one": p.ratis_one,
            "ratis_three": p.ratis_three,
        }
        for p in results
    ]
    racks = len({n.rack for n in nodes})
    print(
        f"Datanodes: {len(nodes)} healthy in service on {racks} rack(s) of {snapshot.manifest.rows['nodes']}"
    )
    print(f"Open RATIS/THREE pipelines in the snapshot: {open_three}")
    print_table(
        ("DATANODE LIMIT", "PER DISK", "GLOBAL", "BRANCH", "NODE TARGET", "RATIS/ONE", "RATIS/THREE"),
        [tuple(row.values()) for row in rows],
    )
    if out_dir is not None:
        write_rows(spark, rows, RESULT, out_dir, NAME, "plans")
        summary = {
            "datanodes": len(nodes),
            "racks": racks,
            "snapshotOpenRatisThree": open_three,
            "plans": [p.to_dict() for p in results],
        }
        print(f"Results: {write_json(out_dir, NAME, summary)}")
    return 0
