"""`decommission --nodes ...`: what decommissioning those datanodes would copy, from where, and how long.

Spark narrows the replicas to the containers with a copy on a chosen node, groups each with its
replicas and pending ops, and runs the Replication Manager's counters on the executors
(pyozone.analytics.copies). Only per-source totals (at most one row per datanode) reach the driver, where
the throttling rules of pyozone.scm.replication.throttle turn them into a duration:

    per-source concurrency = min(replication limit, replication streams), both scaled by the
                             out-of-service factor on a node leaving service (replication_limit)
    a source's time        = its bytes / (concurrency x copy speed)
    estimate               = max(slowest source, all bytes / (cluster in-flight cap x copy speed))
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema

from pyozone.analytics.copies import container_copies
from pyozone.analytics.jobs import JobError
from pyozone.analytics.jobs.copy_speed import add_copy_speed
from pyozone.analytics.jobs.results import write_frame, write_json
from pyozone.analytics.reader import Snapshot
from pyozone.common.output import duration, human_size, print_table
from pyozone.hdds.node_status import NodeStatus
from pyozone.hdds.states import NodeOperationalState, NodeState
from pyozone.scm.replication import throttle
from pyozone.scm.replication.config import ReplicationManagerConfig
from pyozone.scm.replication.processing.processors import cluster_inflight_limit
from pyozone.scm.settings import ScmSettings

NAME = "decommission"
HELP = "containers that need new copies if datanodes are decommissioned, load per source, duration"
MB = 1 << 20

LOAD = pa.struct([("datanode", pa.string()), ("copies", pa.float64()), ("bytes", pa.float64())])
RESULT = pa.schema(
    [
        ("container_id", pa.int64()),
        ("replication_config", pa.string()),
        ("state", pa.string()),
        ("used_bytes", pa.int64()),
        ("new_copies", pa.int32()),
        ("copy_bytes", pa.int64()),
        ("indexes", pa.list_(pa.int32())),
        ("loads", pa.list_(LOAD)),
    ]
)


def _names(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise argparse.ArgumentTypeError("name at least one datanode (uuid or hostname)")
    return names


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--nodes", required=True, type=_names, metavar="UUID|HOST[,...]", help="datanodes to decommission"
    )
    add_copy_speed(parser)
    parser.add_argument("--top", type=int, default=20, help="source datanodes listed on the terminal")


def node_statuses(
    snapshot: Snapshot, names: list[str]
) -> tuple[set[str], dict[str, NodeStatus], dict[str, str]]:
    """Chosen uuids, every node's status as SCM will see it (chosen ones DECOMMISSIONING) and hostnames.
    The nodes table is O(datanodes), small enough for the driver and for shipping to executors."""
    rows = snapshot.table("nodes").select("uuid", "hostname", "health", "operational_state").collect()
    by_name = {r.uuid: r.uuid for r in rows} | {r.hostname: r.uuid for r in rows if r.hostname}
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise JobError(f"unknown datanode(s) in the snapshot: {', '.join(unknown)}")
    chosen = {by_name[n] for n in names}
    statuses = {}
    for r in rows:
        try:
            status = NodeStatus(NodeOperationalState[r.operational_state], NodeState[r.health])
        except KeyError:
            raise JobError(
                f"datanode {r.uuid}: unknown health {r.health!r} or operational state {r.operational_state!r}"
            ) from None
        if r.uuid in chosen:
            status = status.with_operational_state(NodeOperationalState.DECOMMISSIONING)
        statuses[r.uuid] = status
    return chosen, statuses, {r.uuid: r.hostname for r in rows}


def per_container(
    snapshot: Snapshot, chosen: set[str], statuses: dict[str, NodeStatus], config: ReplicationManagerConfig
) -> DataFrame:
    """One row per container with a replica on a chosen node: the copies needed and their sources."""
    leaving = snapshot.spark.createDataFrame([(dn,) for dn in sorted(chosen)], "datanode string")
    replicas = snapshot.table("replicas")
    affected = replicas.join(F.broadcast(leaving), "datanode", "left_semi").select("container_id").distinct()
    grouped = (
        replicas.join(affected, "container_id", "left_semi")
        .groupBy("container_id")
        .agg(F.collect_list(F.struct(*replicas.columns)).alias("replicas"))
    )
    ops = snapshot.table("pending_ops")
    pending = (
        ops.join(affected, "container_id", "left_semi")
        .groupBy("container_id")
        .agg(F.collect_list(F.struct(*ops.columns)).alias("ops"))
    )
    rows = snapshot.table("containers").join(grouped, "container_id").join(pending, "container_id", "left")

    def count(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            out = []
            for row in batch.to_pylist():
                copies = container_copies(row, chosen, statuses, config)
                out.append(
                    {
                        "container_id": row["container_id"],
                        "replication_config": row["replication_config"],
                        "state": row["state"],
                        "used_bytes": row["used_bytes"],
                        "new_copies": copies.new_copies,
                        "copy_bytes": copies.copy_bytes,
                        "indexes": list(copies.indexes),
                        "loads": [asdict(load) for load in copies.loads],
                    }
                )
            yield pa.RecordBatch.from_pylist(out, schema=RESULT)

    return rows.mapInArrow(count, from_arrow_schema(RESULT))


def source_loads(containers: DataFrame) -> list[dict[str, Any]]:
    """Per source datanode: containers it can source, expected copies and bytes (<= one row per node)."""
    load = containers.select(F.explode("loads").alias("load")).select("load.*")
    rows = (
        load.groupBy("datanode")
        .agg(F.count("*").alias("containers"), F.sum("copies").alias("copies"), F.sum("bytes").alias("bytes"))
        .collect()
    )
    return [r.asDict() for r in rows]


def estimate(
    sources: list[dict[str, Any]],
    statuses: dict[str, NodeStatus],
    config: ReplicationManagerConfig,
    streams: int,
    bytes_per_s: float,
    total_bytes: int,
) -> dict[str, Any]:
    """Adds each source's concurrency and time; returns the critical path and the cluster-cap bound."""
    factor = config.out_of_service_factor
    for s in sources:
        op = statuses[s["datanode"]].operational_state
        s["state"] = op.name
        s["concurrency"] = min(
            throttle.replication_limit(config.datanode_replication_limit, op, factor),
            throttle.replication_limit(streams, op, factor),
        )
        s["seconds"] = s["bytes"] / (s["concurrency"] * bytes_per_s)
    healthy = sum(st.health is NodeState.HEALTHY for st in statuses.values())
    inflight = cluster_inflight_limit(_HealthyCount(healthy), config)
    cap_seconds = total_bytes / (inflight * bytes_per_s) if inflight else 0.0
    critical = max((s["seconds"] for s in sources), default=0.0)
    return {
        "criticalPathSeconds": critical,
        "inflightLimit": inflight,
        "inflightBoundSeconds": cap_seconds,
        "estimateSeconds": max(critical, cap_seconds),
        "boundBy": "in-flight limit" if cap_seconds > critical else "slowest source",
    }


class _HealthyCount:
    """The node count cluster_inflight_limit asks a NodeManager for, from the snapshot."""

    def __init__(self, healthy: int) -> None:
        self._healthy = healthy

    def count(self, op: None = None, health: NodeState | None = None) -> int:
        return self._healthy


def run(spark: SparkSession, snapshot: Snapshot, args: argparse.Namespace, out_dir: Path | None) -> int:
    config = ScmSettings.from_conf(args.conf).replication
    streams = args.conf.get("hdds.datanode.replication.streams.limit")
    chosen, statuses, hosts = node_statuses(snapshot, args.nodes)
    containers = per_container(snapshot, chosen, statuses, config).persist()
    try:
        totals = containers.agg(
            F.count("*").alias("affected"),
            F.count(F.when(F.col("new_copies") > 0, 1)).alias("needing"),
            F.coalesce(F.sum("new_copies"), F.lit(0)).alias("copies"),
            F.coalesce(F.sum("copy_bytes"), F.lit(0)).alias("bytes"),
            F.count(F.when((F.col("new_copies") > 0) & (F.size("loads") == 0), 1)).alias("no_source"),
        ).first()
        sources = source_loads(containers)
        timing = estimate(sources, statuses, config, streams, args.copy_mb_s * MB, totals["bytes"])
        if out_dir is not None:
            write_frame(containers, out_dir, NAME, "containers")
    finally:
        containers.unpersist()
    sources.sort(key=lambda s: -s["seconds"])
    summary = {
        "nodes": [
            {"uuid": dn, "hostname": hosts[dn], "health": statuses[dn].health.name} for dn in sorted(chosen)
        ],
        "containersWithReplicaOnNodes": totals["affected"],
        "containersNeedingCopies": totals["needing"],
        "newCopies": totals["copies"],
        "copyBytes": totals["bytes"],
        "containersWithoutSource": totals["no_source"],
        "settings": {
            "hdds.scm.replication.datanode.replication.limit": config.datanode_replication_limit,
            "hdds.datanode.replication.streams.limit": streams,
            "hdds.datanode.replication.outofservice.limit.factor": config.out_of_service_factor,
            "hdds.scm.replication.inflight.limit.factor": config.inflight_limit_factor,
            "copyMBps": args.copy_mb_s,
        },
        **timing,
        "sources": [s | {"hostname": hosts.get(s["datanode"])} for s in sources],
    }
    _print(summary, args.top)
    if out_dir is not None:
        print(f"Results: {write_json(out_dir, NAME, summary)}")
    return 0


def _print(summary: dict[str, Any], top: int) -> None:
    names = [
        (n["hostname"] or n["uuid"]) + ("" if n["health"] == "HEALTHY" else f" ({n['health']})")
        for n in summary["nodes"]
    ]
    print("Decommissioning: " + ", ".join(names))
    print(
        f"Containers with a replica there: {summary['containersWithReplicaOnNodes']}; needing new copies: "
        f"{summary['containersNeedingCopies']} ({summary['newCopies']} copies, "
        f"{human_size(summary['copyBytes'])})"
    )
    if summary["containersWithoutSource"]:
        print(
            f"Containers with no replica to copy from yet: {summary['containersWithoutSource']} (open ones "
            "close first; others have only unhealthy copies or copies on nodes that do not heartbeat)"
        )
    print(
        f"Estimated duration: {duration(summary['estimateSeconds'])} (bound by the {summary['boundBy']}; "
        f"slowest source {duration(summary['criticalPathSeconds'])}, in-flight limit "
        f"{summary['inflightLimit']} copies: {duration(summary['inflightBoundSeconds'])})"
    )
    rows = [
        (
            s["hostname"] or s["datanode"],
            s["state"],
            s["containers"],
            f"{s['copies']:.1f}",
            human_size(int(s["bytes"])),
            s["concurrency"],
            duration(s["seconds"]),
        )
        for s in summary["sources"][:top]
    ]
    print_table(("SOURCE", "STATE", "CONTAINERS", "COPIES", "BYTES", "CONCURRENCY", "TIME"), rows)
