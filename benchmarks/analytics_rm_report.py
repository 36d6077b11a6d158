"""`analytics rm-report` on Spark (local[2]) over 1M, 3M and 10M synthetic containers, three replicas each,
beside the in-process check (ReplicationManager.process_all) of the same 1M containers in the same run.

Snapshots come from `pyozone analytics generate` (a Spark job; timed apart, and kept under --data so a
rerun only times the checks): CLOSED RATIS/THREE containers on --datanodes nodes over --racks racks, one
datanode dead, so a few percent of the containers are under-replicated and go through the whole chain.
The in-process check loads the 1M snapshot into an SCM core (ContainerManager.bulk_load, as
benchmarks/rm_check.py does) and its report must equal rm-report's.

The first Spark job of a session pays for starting the Python workers; it runs untimed on the smallest
snapshot first.

    python -m benchmarks.analytics_rm_report [--sizes 1000000,3000000,10000000]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import pyarrow.dataset as ds

from benchmarks.common import peak_rss_mb, print_table
from pyozone.analytics.container_groups import CHECK_TABLES, groups
from pyozone.analytics.generate import GenerateSpec, generate, parse_failures
from pyozone.analytics.jobs.rm_report import compute
from pyozone.analytics.reader import Snapshot
from pyozone.analytics.schema import MANIFEST, TABLES
from pyozone.analytics.spark import build_session
from pyozone.hdds.clock import ManualClock
from pyozone.hdds.container import ContainerInfo, ContainerReplica
from pyozone.hdds.datanode import DatanodeDetails
from pyozone.hdds.node_status import NodeStatus
from pyozone.hdds.states import NodeOperationalState, NodeState
from pyozone.hdds.topology import NetworkTopology
from pyozone.scm.node.storage_report import node_report
from pyozone.scm.replication.config import ReplicationManagerConfig
from pyozone.scm.scm import StorageContainerManager
from pyozone.scm.settings import ScmSettings
from pyozone.scm.store import SCMMetadataStore


def snapshot_for(spark, data: Path, containers: int, datanodes: int, racks: int) -> tuple[Path, float | None]:
    """The snapshot of this size, generated unless an earlier run left it; the generation time if run."""
    path = data / f"rm-{containers}"
    if (path / MANIFEST).exists():
        return path, None
    spec = GenerateSpec(
        containers, datanodes, keys=0, racks=racks, failures=parse_failures("dead=1"), open_fraction=0.0
    )
    start = time.perf_counter()
    generate(spark, spec, path)
    return path, time.perf_counter() - start


def load_core(snapshot: Path) -> StorageContainerManager:
    """An SCM core holding the snapshot's state: its nodes (racks, health, operational state; a DEAD node
    out of the topology, as the dead-node handler leaves it) and its containers and replicas."""
    tables = {t: ds.dataset(snapshot / t, format="parquet", schema=TABLES[t]).to_table() for t in TABLES}
    nodes = tables["nodes"].to_pylist()
    topology = NetworkTopology({n["uuid"]: n["rack"] for n in nodes})
    scm = StorageContainerManager(
        ScmSettings(), ManualClock(), SCMMetadataStore.in_memory(), topology=topology
    )
    for n in nodes:
        scm.register(DatanodeDetails(n["uuid"], n["hostname"], n["ip_address"]), node_report(n["uuid"], 1, 1))
        info = scm.nodes.node(n["uuid"])
        info.status = NodeStatus(NodeOperationalState[n["operational_state"]], NodeState[n["health"]])
        if info.status.is_dead():
            scm.nodes.forget(n["uuid"])
    infos, replicas = [], []
    for container, held, _ in groups(*(tables[t] for t in CHECK_TABLES)):
        infos.append(ContainerInfo(*container))
        replicas += [ContainerReplica(*r) for r in held]
    scm.containers.bulk_load(infos, replicas)
    return scm


def timed(fn):
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--sizes", default="1000000,3000000,10000000", help="container counts, comma-separated"
    )
    parser.add_argument("--datanodes", type=int, default=100)
    parser.add_argument("--racks", type=int, default=5)
    parser.add_argument("--data", type=Path, default=Path("/tmp/pyozone-bench/analytics"))
    args = parser.parse_args()
    sizes = sorted(int(s) for s in args.sizes.split(","))

    spark = build_session("local[2]", app="pyozone-bench-rm-report")
    config = ReplicationManagerConfig()
    snapshots = {n: snapshot_for(spark, args.data, n, args.datanodes, args.racks) for n in sizes}
    warmup_s, _ = timed(lambda: compute(spark, Snapshot(spark, snapshots[sizes[0]][0]), config))
    runs = {
        n: timed(lambda p=path: compute(spark, Snapshot(spark, p), config))
        for n, (path, _) in snapshots.items()
    }
    spark.stop()

    first = sizes[0]
    load_s, core = timed(lambda: load_core(snapshots[first][0]))
    check_s, in_process = timed(core.replication.process_all)
    same = in_process.to_dict() | {"reportTimeStamp": 0} == runs[first][1].to_dict() | {"reportTimeStamp": 0}

    rows = []
    for n in sizes:
        seconds, report = runs[n]
        generated = snapshots[n][1]
        made = f"generated in {generated:.0f} s" if generated is not None else "generated earlier"
        under = report.stat("UNDER_REPLICATED")
        rows.append(
            (
                f"rm-report, {n:,} containers",
                f"{n / seconds:>9,.0f} containers/s  {seconds:6.1f} s  ({made}; {under:,} under-replicated)",
            )
        )
    rows += [
        (
            f"in-process process_all, {first:,}",
            f"{first / check_s:>9,.0f} containers/s  {check_s:6.1f} s  (bulk load {load_s:.0f} s)",
        ),
        ("reports equal (counts and samples)", "yes" if same else "NO"),
        ("first Spark job (worker start-up)", f"{warmup_s:.1f} s"),
        ("driver peak RSS", f"{peak_rss_mb():,.0f} MB"),
    ]
    print_table(
        f"rm-report on local[2]: {args.datanodes} datanodes on {args.racks} racks (1 dead), 3 replicas each",
        rows,
    )


if __name__ == "__main__":
    main()
