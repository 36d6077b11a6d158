"""`balance`: what a Container Balancer run would move, iteration by iteration, and how long it would take.

The options are `admin containerbalancer start`'s (-t, -i, -d, -s, -e, -l, the interval and timeouts,
include/exclude datanodes), over the hdds.container.balancer.* configuration as SCM reads it, and a run
SCM would refuse (ContainerBalancerConfiguration.validate) is refused here, before Spark starts.

Spark runs the Replication Manager's check chain over every container (container_check.py, as
`rm-report`) and keeps the movable ones: CLOSED, HEALTHY, no pending op, not excluded. Those and their
replicas reach the driver, where SCM's own iterations run over them (balance_model.py): each moves what
the balancer would, the moves complete, the next iteration sees the cluster they left.

Time, per iteration: the replicate commands go to the sources (Ozone's push replication), each running
hdds.datanode.replication.streams.limit copies at --copy-mb-s, so an iteration lasts as long as its
busiest source takes to send what leaves it (one beyond move.replication.timeout would time out in a
real run: flagged). The run lasts its iterations plus balancing.iteration.interval between them.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from pyozone.analytics.balance_model import (
    PlannedIteration,
    PlannedRun,
    SnapshotCluster,
    SnapshotDatanode,
    plan_run,
)
from pyozone.analytics.container_check import health_frame, snapshot_check
from pyozone.analytics.container_groups import table_rows
from pyozone.analytics.jobs.copy_speed import add_copy_speed
from pyozone.analytics.jobs.results import write_json, write_rows
from pyozone.analytics.reader import Snapshot
from pyozone.analytics.rm_rules import CheckContext, ContainerRow, ReplicaRow
from pyozone.analytics.schema import SnapshotError
from pyozone.common.balancer_options import add_start_options, out_of_range, start_options
from pyozone.common.cli_options import CLIError
from pyozone.common.output import duration, human_size, print_json, print_table
from pyozone.config.keys import CB
from pyozone.hdds.container import ContainerInfo, ContainerReplica
from pyozone.hdds.datanode import DatanodeDetails
from pyozone.hdds.node_status import NodeStatus
from pyozone.hdds.states import LifeCycleState, NodeOperationalState, NodeState
from pyozone.scm.balancer.config import ContainerBalancerConfiguration
from pyozone.scm.replication.config import ReplicationManagerConfig
from pyozone.scm.settings import ScmSettings

NAME = "balance"
HELP = "what a Container Balancer run would move per iteration, and how long it would take"
MB = 1 << 20

MOVES = "container_id long, iteration int, source string, target string, bytes long"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_start_options(parser)
    add_copy_speed(parser)
    parser.add_argument("--json", action="store_true", help="print the plan as JSON")


def check(args: argparse.Namespace) -> None:
    """The run's configuration, refused as SCM's `start` refuses it (InvalidContainerBalancerConfiguration
    Error, one line): SCM's configuration with the options over it; an integer beyond its Java type first,
    as `admin containerbalancer start` refuses it."""
    problem = out_of_range(args)
    if problem is not None:
        raise CLIError(problem)
    settings = ScmSettings.from_conf(args.conf)
    config = settings.balancer.with_start_options(start_options(args))
    settings.check_balancer(config)
    args.balancer_config = config


# ---------------------------------------------------------------------------------------- Spark
def movable(
    spark: SparkSession,
    snapshot: Snapshot,
    rm: ReplicationManagerConfig,
    config: ContainerBalancerConfiguration,
) -> tuple[DataFrame, DataFrame]:
    """The containers the balancer could move (CLOSED, HEALTHY by the RM's chain, no pending op, not in
    exclude.containers) and all their replicas (targets and placement read every one)."""
    unhealthy = health_frame(snapshot_check(spark, snapshot, rm, with_health=True)).select("container_id")
    pending = snapshot.table("pending_ops").select("container_id").distinct()
    excluded = spark.createDataFrame([(c,) for c in sorted(config.exclude_containers)], "container_id long")
    containers = (
        snapshot.table("containers")
        .where(F.col("state") == LifeCycleState.CLOSED.name)
        .join(unhealthy, "container_id", "left_anti")
        .join(pending, "container_id", "left_anti")
        .join(F.broadcast(excluded), "container_id", "left_anti")
    )
    replicas = snapshot.table("replicas").join(containers.select("container_id"), "container_id", "left_semi")
    return containers, replicas


def datanodes(nodes: list[dict[str, Any]]) -> list[SnapshotDatanode]:
    out = []
    for row in nodes:
        try:
            status = NodeStatus(NodeOperationalState[row["operational_state"]], NodeState[row["health"]])
        except KeyError as e:
            raise SnapshotError(f"nodes: datanode {row['uuid']} has an unknown state {e}") from None
        details = DatanodeDetails(row["uuid"], row["hostname"] or "", row["ip_address"] or "")
        out.append(SnapshotDatanode(details, status, row["capacity"] or 0, row["remaining"] or 0))
    return out


def snapshot_cluster(
    spark: SparkSession,
    snapshot: Snapshot,
    rm: ReplicationManagerConfig,
    config: ContainerBalancerConfiguration,
) -> SnapshotCluster:
    """The balancer's view of the snapshot on the driver: datanodes, movable containers, their replicas."""
    nodes = [r.asDict() for r in snapshot.table("nodes").collect()]
    pipelines = [r.pipeline_id for r in snapshot.table("pipelines").select("pipeline_id").collect()]
    context = CheckContext.from_rows(nodes, pipelines, rm, snapshot.manifest.created_ms)
    containers, replicas = movable(spark, snapshot, rm, config)
    containers.persist()  # the check runs once, for the containers and for the replicas' join
    try:
        container_rows = table_rows(containers.select(*ContainerRow._fields).toArrow(), ContainerRow)
        replica_rows = table_rows(replicas.select(*ReplicaRow._fields).toArrow(), ReplicaRow)
    finally:
        containers.unpersist()
    return SnapshotCluster(
        datanodes(nodes),
        (ContainerInfo(*row) for row in container_rows),
        (ContainerReplica(*row) for row in replica_rows),
        context,
    )


# ---------------------------------------------------------------------------------------- time
def iteration_seconds(planned: PlannedIteration, streams: int, bytes_per_s: float) -> float:
    """The busiest source's time to send what leaves it, `streams` copies at a time."""
    leaving = planned.status.size_leaving.values()
    return max(leaving, default=0) / (streams * bytes_per_s)


def summary(
    run: PlannedRun,
    config: ContainerBalancerConfiguration,
    streams: int,
    copy_mb_s: float,
    movable_containers: int,
) -> dict[str, Any]:
    iterations = []
    for planned in run.iterations:
        seconds = iteration_seconds(planned, streams, copy_mb_s * MB)
        status = planned.status
        iterations.append(
            {
                "iteration": status.number,
                "result": status.result.value if status.result else None,
                "overUtilized": planned.sources,
                "underUtilized": planned.targets,
                "moves": status.moves_scheduled,
                "bytesMoved": status.size_moved,
                "datanodesInvolved": status.datanodes_involved,
                "spreadBefore": round(planned.spread_before, 3),
                "spreadAfter": round(planned.spread_after, 3),
                "seconds": seconds,
                "exceedsReplicationTimeout": seconds * 1000 > config.move_replication_timeout_ms,
                "sizeLeavingNodes": dict(sorted(status.size_leaving.items())),
                "sizeEnteringNodes": dict(sorted(status.size_entering.items())),
            }
        )
    moving = sum(i["seconds"] for i in iterations)
    waits = max(len(iterations) - 1, 0) * config.balancing_interval_ms / 1000
    return {
        "settings": {
            CB + "utilization.threshold": config.threshold,
            CB + "iterations": config.iterations,
            CB + "datanodes.involved.max.percentage.per.iteration": config.max_datanodes_percentage,
            CB + "size.moved.max.per.iteration": config.max_size_to_move_per_iteration,
            CB + "size.entering.target.max": config.max_size_entering_target,
            CB + "size.leaving.source.max": config.max_size_leaving_source,
            CB + "balancing.iteration.interval": config.balancing_interval_ms,
            CB + "move.timeout": config.move_timeout_ms,
            CB + "move.replication.timeout": config.move_replication_timeout_ms,
            "hdds.datanode.replication.streams.limit": streams,
            "copyMBps": copy_mb_s,
        },
        "movableContainers": movable_containers,
        "spreadBefore": round(run.spread_before, 3),
        "spreadAfter": round(run.spread_after, 3),
        "iterations": iterations,
        "totalMoves": sum(i["moves"] for i in iterations),
        "totalBytes": sum(i["bytesMoved"] for i in iterations),
        "movingSeconds": moving,
        "intervalSeconds": waits,
        "estimateSeconds": moving + waits,
        "stopReason": run.stop_reason,
    }


# ---------------------------------------------------------------------------------------- the job
def run(spark: SparkSession, snapshot: Snapshot, args: argparse.Namespace, out_dir: Path | None) -> int:
    config: ContainerBalancerConfiguration = args.balancer_config
    rm = ScmSettings.from_conf(args.conf).replication
    streams: int = args.conf.get("hdds.datanode.replication.streams.limit")
    cluster = snapshot_cluster(spark, snapshot, rm, config)
    movable_containers = cluster.movable_containers
    planned = plan_run(cluster, config)
    result = summary(planned, config, streams, args.copy_mb_s, movable_containers)
    if out_dir is not None:
        moves = [
            {
                "container_id": cid,
                "iteration": it.status.number,
                "source": pair.source,
                "target": pair.target,
                "bytes": cluster.get(cid).used_bytes,
            }
            for it in planned.iterations
            for cid, pair in sorted(it.moves.items())
        ]
        write_rows(spark, moves, MOVES, out_dir, NAME, "moves")
        write_json(out_dir, NAME, result)
    if args.json:
        print_json(result)
    else:
        _print(result)
    if out_dir is not None and not args.json:
        print(f"Results: {out_dir / (NAME + '.json')}")
    return 0


def _print(result: dict[str, Any]) -> None:
    iterations = result["iterations"]
    print(
        f"Container Balancer plan: {len(iterations)} iteration(s), {result['totalMoves']} moves, "
        f"{human_size(result['totalBytes'])} ({result['movableContainers']} movable containers)"
    )
    print(
        f"Spread of utilization: {result['spreadBefore']:.1f} -> {result['spreadAfter']:.1f} points; "
        f"stops: {result['stopReason']}"
    )
    moving, waits = duration(result["movingSeconds"]), duration(result["intervalSeconds"])
    print(f"Estimated duration: {duration(result['estimateSeconds'])} (moving {moving}, intervals {waits})")
    rows = [
        (
            i["iteration"],
            f"{i['overUtilized']}/{i['underUtilized']}",
            i["moves"],
            human_size(i["bytesMoved"]),
            i["datanodesInvolved"],
            f"{i['spreadBefore']:.1f}",
            f"{i['spreadAfter']:.1f}",
            duration(i["seconds"])
            + (" (over move.replication.timeout)" if i["exceedsReplicationTimeout"] else ""),
        )
        for i in iterations
    ]
    print_table(("ITERATION", "OVER/UNDER", "MOVES", "BYTES", "DATANODES", "SPREAD", "AFTER", "TIME"), rows)
