"""Parity: the snapshot check (rm_rules, and `analytics rm-report` on Spark) gives exactly the report, counts
and samples, that SCM's own ReplicationManager.process_all() gives on the same state, and the same final
health per container (what affected-keys selects by).

Three sources of state: every shipped RM scenario (one container each, every handler and report state SCM
can reach; through a task's code, without Spark), whole SCM cores with random containers and failures
(rm_cores.py; snapshots read by id range and, scattered, shuffled), and a simulated live cluster
(SimCluster: client writes, closes, a dead datanode, repair under way). process_all runs in acting mode,
after the snapshot is taken.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import pyozone
from pyozone.analytics import range_scan
from pyozone.analytics.container_check import health_frame, snapshot_check
from pyozone.analytics.container_groups import CHECK_TABLES, check_tables
from pyozone.analytics.jobs.rm_report import compute
from pyozone.analytics.reader import Snapshot
from pyozone.analytics.rm_rules import CheckContext
from pyozone.analytics.schema import TABLES
from pyozone.analytics.scm_snapshot import ROWS
from pyozone.analytics.snapshot_from_core import write_core_snapshot
from pyozone.config import OzoneConfiguration
from pyozone.hdds.container_health import ContainerHealthState
from pyozone.hdds.ids import RATIS_THREE
from pyozone.hdds.replication_report import ReplicationManagerReport
from pyozone.hdds.states import LifeCycleState, NodeState
from pyozone.scm.events import SCMEvent
from pyozone.scm.replication.manager import ReplicationManager
from pyozone.scm.replication.scenario.harness import ScenarioHarness
from pyozone.scm.replication.scenario.model import load_file
from pyozone.scm.scm import StorageContainerManager
from pyozone.scm.settings import ScmSettings
from pyozone.sim.cluster import SimCluster
from tests.analytics.rm_cores import MINUTE, SAMPLE_LIMIT, SECOND, failing_core

SCENARIO_FILES = sorted((Path(pyozone.__file__).parents[1] / "scenarios" / "rm").glob("*.json"))
HEALTHY = ContainerHealthState.HEALTHY
Health = dict[int, ContainerHealthState]


def comparable(report: ReplicationManagerReport) -> dict:
    """Counts and samples: when a report was made is the one thing allowed to differ."""
    data = report.to_dict()
    del data["reportTimeStamp"]
    return data


def rm_health(rm: ReplicationManager, container_ids: list[int]) -> Health:
    """The Replication Manager's final health of each container its last scan found not HEALTHY."""
    health = {cid: rm.container_health(cid) for cid in container_ids}
    return {cid: state for cid, state in health.items() if state is not HEALTHY}


# ---------------------------------------------------------------------------------------- scenarios
def scenario_tables(h: ScenarioHarness) -> list[pa.Table]:
    """The scenario's containers, replicas and pending ops as snapshot tables."""
    containers = h.containers.containers()
    pending = h.rm.pending_ops
    records = {
        "containers": containers,
        "replicas": [r for c in containers for r in h.containers.replicas(c.container_id)],
        "pending_ops": [(cid, op) for cid in pending.containers() for op in pending.ops(cid)],
    }
    return [pa.Table.from_pylist(list(map(ROWS[t], rows)), schema=TABLES[t]) for t, rows in records.items()]


def scenario_context(h: ScenarioHarness) -> CheckContext:
    nodes = [ROWS["nodes"](info) for info in h.nodes.nodes()]
    pipelines = [p.id for p in h.pipelines.pipelines()]
    return CheckContext.from_rows(nodes, pipelines, h.rm.config, h.clock.wall_ms())


def check_task(tables: list[pa.Table], context: CheckContext) -> tuple[ReplicationManagerReport, Health]:
    """What one Spark task computes, without Spark."""
    rows = pa.Table.from_batches(check_tables(*tables, context, True)).to_pylist()
    (report,) = [json.loads(r["report"]) for r in rows if r["report"] is not None]
    health = {r["container_id"]: ContainerHealthState[r["health"]] for r in rows if r["health"] is not None}
    return ReplicationManagerReport.from_dict(report), health


@pytest.mark.parametrize("path", SCENARIO_FILES, ids=[p.name for p in SCENARIO_FILES])
def test_every_scenario_is_checked_as_the_replication_manager_checks_it(path: Path) -> None:
    differences = {}
    for scenario in load_file(path):
        h = ScenarioHarness(scenario, ScmSettings())
        tables, context = scenario_tables(h), scenario_context(h)
        expected = h.rm.process_all()
        got, health = check_task(tables, context)
        want = rm_health(h.rm, [h.container_id])
        if comparable(got) != comparable(expected) or health != want:
            differences[scenario.description] = {
                "got": (comparable(got), health),
                "want": (comparable(expected), want),
            }
    assert not differences


# ---------------------------------------------------------------------------- whole cores with failures
def spark_check(spark, core: StorageContainerManager, out: Path) -> tuple[ReplicationManagerReport, Health]:
    """`rm-report` and the per-container health over a snapshot of the core written to `out`."""
    snapshot = Snapshot(spark, out)
    config = core.replication.config
    report = compute(spark, snapshot, config)
    rows = health_frame(snapshot_check(spark, snapshot, config, with_health=True)).collect()
    return report, {r.container_id: ContainerHealthState[r.health_state] for r in rows}


def scatter(snapshot: Path, seed: int) -> None:
    """Rewrites the checked tables in random row order and small row groups: every id range reads most
    row groups and gets its rows unsorted."""
    rng = np.random.default_rng(seed)
    for table in CHECK_TABLES:
        path = next((snapshot / table).glob("*.parquet"))
        rows = pq.read_table(path)
        pq.write_table(rows.take(rng.permutation(rows.num_rows)), path, row_group_size=50)


@pytest.mark.parametrize(
    ("dead", "layout", "path"),
    [
        ([2, 5, 8, 11, 14], "id-ordered", "ranges"),
        ([0, 5, 10], "scattered", "ranges"),
        ([0, 5, 10], "scattered", "shuffle"),
    ],
    ids=["a-whole-rack-dead", "a-node-dead-on-each-rack-scattered", "a-node-dead-on-each-rack-shuffled"],
)
def test_rm_report_equals_process_all_on_a_failing_cluster(
    spark, tmp_path: Path, monkeypatch, dead: list[int], layout: str, path: str
) -> None:
    h = failing_core(seed=len(dead), dead=dead)
    write_core_snapshot(h.scm, tmp_path)
    if layout == "scattered":
        scatter(tmp_path, seed=len(dead))
    if path == "shuffle":  # what a snapshot too scattered for id ranges gets
        monkeypatch.setattr(range_scan, "MAX_READ_AMPLIFICATION", 0.0)
    assert (range_scan.plan_ranges(tmp_path, 2) is None) == (path == "shuffle")
    got, health = spark_check(spark, h.scm, tmp_path)
    expected = h.rm.process_all()

    assert comparable(got) == comparable(expected)
    assert health == rm_health(h.rm, [c.container_id for c in h.scm.containers.containers()])
    # the cluster is as varied as meant: many states, samples cut, pending ops in play
    found = {s for s in ContainerHealthState if s is not HEALTHY and expected.stat(s)}
    assert len(found) >= 12, found
    assert any(expected.stat(s) > SAMPLE_LIMIT for s in found)
    assert h.rm.pending_ops.containers()


# ------------------------------------------------------------------------- a simulated live cluster
def test_rm_report_equals_process_all_on_a_live_simulated_cluster(spark, tmp_path: Path) -> None:
    """Client writes through SCM's block allocation onto 9 simulated datanodes on 3 racks, most
    containers closed, then one datanode dies and the snapshot is taken while repair is under way."""
    c = SimCluster(
        9,
        racks=3,
        conf=OzoneConfiguration(
            {
                "ozone.scm.container.size": "10MB",
                "ozone.scm.block.size": "1MB",
                "hdds.scm.replication.container.sample.limit": str(SAMPLE_LIMIT),
                "hdds.scm.replication.datanode.replication.limit": "3",
            }
        ),
        seed=3,
    )
    assert c.run_until(lambda: len(c.scm.pipelines.open_pipelines(RATIS_THREE)) >= 6, 10 * MINUTE)
    for _ in range(300):  # a block a second: reports fill containers up, as SCM counts no allocation
        c.write_block(1 << 20)
        c.advance(SECOND)
    for container in c.scm.containers.containers(LifeCycleState.OPEN)[::2]:
        c.scm.events.fire(SCMEvent.CLOSE_CONTAINER, container.container_id)
    c.advance(2 * MINUTE)
    assert c.run_until(c.scm.replication.should_run, 10 * MINUTE)
    victim = next(iter(c.datanodes))
    c.kill(victim)
    assert c.run_until(lambda: c.scm.nodes.node(victim).status.health is NodeState.DEAD, 15 * MINUTE)
    c.advance(30 * SECOND)

    write_core_snapshot(c.scm, tmp_path)
    got, health = spark_check(spark, c.scm, tmp_path)
    expected = c.scm.replication.process_all()

    assert comparable(got) == comparable(expected)
    assert health == rm_health(c.scm.replication, [i.container_id for i in c.scm.containers.containers()])
    assert expected.stat(ContainerHealthState.UNDER_REPLICATED) > SAMPLE_LIMIT
    assert expected.stat(LifeCycleState.OPEN) and expected.stat(LifeCycleState.CLOSED)
