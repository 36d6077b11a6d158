"""`analytics balance`: the run it plans on Spark is the run SCM's own ContainerBalancer makes on the same
cluster (parity, iteration by iteration: the same moves, sizes, datanodes involved, results and stop), its
time follows the settings (hand-checked), and a configuration SCM would refuse is refused before Spark."""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pyozone.analytics.balance_model import PlannedRun, plan_run
from pyozone.analytics.jobs import balance
from pyozone.analytics.reader import Snapshot
from pyozone.analytics.snapshot_from_core import write_core_snapshot
from pyozone.config import ConfigError, OzoneConfiguration
from pyozone.hdds.container import ContainerInfo
from pyozone.hdds.ids import ReplicationConfig
from pyozone.hdds.states import LifeCycleState
from pyozone.scm.balancer.balancer import ContainerBalancerStatus
from pyozone.scm.balancer.config import ContainerBalancerConfiguration
from pyozone.scm.balancer.iteration import BalancerIteration
from pyozone.scm.settings import ScmSettings
from tests.builders import GB
from tests.unit.scm.balancer.balancer_harness import CB, BalancerHarness
from tests.unit.scm.replication.rm_harness import SEQ

MINUTE = 60_000
LIMITS = {
    CB + "datanodes.involved.max.percentage.per.iteration": "50",
    CB + "size.moved.max.per.iteration": "30GB",
    CB + "size.entering.target.max": "6GB",
    CB + "size.leaving.source.max": "8GB",
    CB + "iterations": "6",
    CB + "utilization.threshold": "5",
    CB + "exclude.containers": "3,4",
}
"""Tight enough that every limit bites: 6 of 12 datanodes, 30 GB an iteration, 6 GB into a target."""


def skewed_cluster(seed: int, iterations: int = 6) -> tuple[BalancerHarness, dict[str, int]]:
    """12 datanodes of 100 GB on 3 racks: three full ones (80-90 GB), three nearly empty (0-5 GB), the rest
    at 35-50 GB; containers of 1-3 GB, most replicas on the full ones. Beside the movable ones, containers
    the balancer must leave: under-replicated (two copies), OPEN, one with an UNHEALTHY replica, EC ones
    (moves must keep their indexes spread), two in exclude.containers. The RM has scanned (its health and
    pending ops are what the balancer reads). Returns the core and each datanode's used GB."""
    h = BalancerHarness(12, racks=3, overrides={**LIMITS, CB + "iterations": str(iterations)})
    rng = random.Random(seed)
    used = {dn: rng.randint(35, 50) for dn in h.dns}
    for i in (0, 1, 2):
        used[h.dns[i]] = rng.randint(80, 90)
    for i in (9, 10, 11):
        used[h.dns[i]] = rng.randint(0, 5)
    heavy = [*h.dns[:3]] * 4 + h.dns[3:9]
    for cid in range(1, 161):
        kind = rng.random()
        config = "EC/RS-3-2-1024k" if kind < 0.08 else "RATIS/THREE"
        state = "OPEN" if 0.08 <= kind < 0.12 else "CLOSED"
        replication = ReplicationConfig.parse(config)
        size = rng.randint(1, 3) * GB
        info = ContainerInfo(cid, LifeCycleState[state], 0, None, replication, "test", size, 5, SEQ)
        h.scm.containers.bulk_load([info], [])
        count = replication.required_nodes - (1 if 0.12 <= kind < 0.2 else 0)
        dns: list[str] = []
        while len(dns) < count:  # one per rack first (placement holds), a heavy node most likely
            pool = heavy if len(dns) < 3 else h.dns
            dn = rng.choice(pool)
            racks = {h.dns.index(d) % 3 for d in dns}
            if dn not in dns and (len(dns) >= 3 or h.dns.index(dn) % 3 not in racks):
                dns.append(dn)
        for i, dn in enumerate(dns):
            bad = 0.2 <= kind < 0.23 and i == 0
            h.add_replica(cid, dn, "UNHEALTHY" if bad else state, index=i + 1 if kind < 0.08 else 0)
    for i, dn in enumerate(h.dns):
        h.set_used(i, used[dn])
    h.rm.process_all()
    # a movable container (three closed copies, one on a full datanode) with a pending replica op: left too
    cid = next(cid for cid in h.scm.containers.container_ids() if _healthy_ratis(h, cid) and cid not in (3, 4)
               and h.dns[0] in {r.datanode for r in h.scm.containers.replicas(cid)})  # fmt: skip
    h.rm.pending_ops.schedule_add(cid, h.dns[11], 0, None, h.clock.wall_ms() + 60 * MINUTE)
    return h, used


def _healthy_ratis(h: BalancerHarness, cid: int) -> bool:
    replicas = h.scm.containers.replicas(cid)
    info = h.scm.containers.get(cid)
    return (
        info.state is LifeCycleState.CLOSED
        and info.replication_config.required_nodes == 3
        and len(replicas) == 3
        and all(r.state.name == "CLOSED" for r in replicas)
    )


def config_of(h: BalancerHarness) -> ContainerBalancerConfiguration:
    return ScmSettings.from_conf(h.conf).balancer


def planned(spark, h: BalancerHarness, path: Path) -> PlannedRun:
    write_core_snapshot(h.scm, path)
    config = config_of(h)
    cluster = balance.snapshot_cluster(spark, Snapshot(spark, path), h.rm.config, config)
    return plan_run(cluster, config)


def test_first_iteration_is_scms(spark, tmp_path: Path) -> None:
    h, _ = skewed_cluster(seed=1)
    run = planned(spark, h, tmp_path)
    config = config_of(h)
    h.moves.set_timeouts(config.move_timeout_ms, config.move_replication_timeout_ms)
    scm = BalancerIteration(1, config, h.scm.nodes, h.scm.containers, h.rm, h.moves, h.clock.now_ms())
    scm.select()

    first = run.iterations[0]
    assert first.moves == scm.container_to_pair
    ours, theirs = first.status, scm.status(h.clock.now_ms())
    assert ours.size_scheduled == theirs.size_scheduled and ours.moves_scheduled == theirs.moves_scheduled
    assert ours.size_entering == theirs.size_entering and ours.size_leaving == theirs.size_leaving
    assert ours.datanodes_involved == theirs.datanodes_involved <= 6  # 50 % of 12
    assert max(ours.size_entering.values()) == 6 * GB  # size.entering.target.max reached
    assert (first.sources, first.targets) == (len(scm.over), len(scm.under))
    # the cluster is as meant: containers the balancer must leave are there and left
    left = {3, 4} | {
        c.container_id for c in h.scm.containers.containers() if c.state is not LifeCycleState.CLOSED
    }
    pending = {  # the op skewed_cluster scheduled (the RM's own carry their command)
        cid
        for cid in h.scm.containers.container_ids()
        if any(op.command is None for op in h.rm.pending_ops.ops(cid))
    }
    assert len(pending) == 1 and not pending & set(first.moves)
    assert len(left) > 2 and not left & set(first.moves)


def complete_moves(h: BalancerHarness, used: dict[str, int]) -> None:
    """Every replicate of a move lands on its target, then every delete it brought runs; the node reports
    show the bytes where they went. The Replication Manager's own commands (it repairs the
    under-replicated containers) are dropped: the plan keeps those containers as they are."""
    for _, command in h.replicates():
        if h.moves.is_moving(command.container_id):
            h.report_copy(command.container_id, command.target.uuid, command.replica_index)
            used[command.target.uuid] += h.scm.containers.get(command.container_id).used_bytes // GB
    for dn, command in h.deletes():
        if h.moves.is_moving(command.container_id):
            h.remove_replica(command.container_id, dn)
            used[dn] -= h.scm.containers.get(command.container_id).used_bytes // GB
    h.drain()
    for i, dn in enumerate(h.dns):
        h.set_used(i, used[dn])


def heartbeat_for(h: BalancerHarness, ms: int, step_ms: int = 30_000) -> None:
    """Virtual time passes with every datanode heartbeating and SCM ticking."""
    for _ in range(ms // step_ms):
        h.clock.advance(step_ms)
        for dn in h.dns:
            h.scm.nodes.process_heartbeat(dn)
        h.scm.tick()


@pytest.mark.parametrize(("seed", "iterations"), [(1, 6), (2, -1)], ids=["6-iterations", "until-balanced"])
def test_every_iteration_is_scms(spark, tmp_path: Path, seed: int, iterations: int) -> None:
    """SCM's balancer runs on the core, its moves completing as datanodes would carry them out; the plan
    made from the snapshot taken before it started has the same iterations and the same end."""
    h, used = skewed_cluster(seed, iterations)
    run = planned(spark, h, tmp_path)
    h.balancer.start()
    moved: list[dict[int, tuple[str, str]]] = []
    while h.balancer.status is ContainerBalancerStatus.RUNNING and len(moved) < 40:
        h.scm.tick()
        iteration = h.balancer.iteration
        if iteration is not None:
            moved.append({c: (p.source, p.target) for c, p in iteration.container_to_pair.items()})
            complete_moves(h, used)
            h.scm.tick()
        heartbeat_for(h, config_of(h).balancing_interval_ms)
    assert h.balancer.status is ContainerBalancerStatus.STOPPED

    history = h.balancer.history
    assert len(run.iterations) == len(history) >= 2
    assert [{c: (p.source, p.target) for c, p in it.moves.items()} for it in run.iterations] == moved
    for ours, theirs in zip(run.iterations, history, strict=True):
        assert theirs.moves_completed == theirs.moves_scheduled  # every move done, as the plan has them
        assert ours.status.size_moved == theirs.size_moved
        assert ours.status.datanodes_involved == theirs.datanodes_involved
        assert ours.status.result is theirs.result
    assert run.stop_reason == h.balancer.stop_reason
    assert run.spread_after < run.spread_before


# ------------------------------------------------------------------------------------ the job itself
def job_args(*argv: str, conf: OzoneConfiguration) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    balance.add_arguments(parser)
    args = parser.parse_args(list(argv))
    args.conf = conf
    balance.check(args)
    return args


def test_the_job_prints_and_writes_the_plan_with_its_time(spark, tmp_path: Path, capsys) -> None:
    h, _ = skewed_cluster(seed=1)
    snapshot = tmp_path / "snapshot"
    write_core_snapshot(h.scm, snapshot)
    conf = OzoneConfiguration({**LIMITS, "hdds.datanode.replication.streams.limit": "2"})
    args = job_args("-i", "2", "--balancing-iteration-interval-minutes", "30", "--copy-mb-s", "8", conf=conf)
    assert balance.run(spark, Snapshot(spark, snapshot), args, tmp_path / "out") == 0
    printed = capsys.readouterr().out
    summary = json.loads((tmp_path / "out" / "balance.json").read_text())

    assert [i["iteration"] for i in summary["iterations"]] == [1, 2]
    assert summary["stopReason"] == "Completed all iterations."
    for it in summary["iterations"]:
        # the busiest source sends at most size.leaving.source.max, 2 streams at 8 MB/s each
        busiest = max(it["sizeLeavingNodes"].values())
        assert busiest <= 8 * GB and it["seconds"] == pytest.approx(busiest / (2 * 8 * (1 << 20)))
        assert it["bytesMoved"] == sum(it["sizeLeavingNodes"].values()) <= 30 * GB
        assert it["datanodesInvolved"] <= 6 and it["result"] == "ITERATION_COMPLETED"
        assert it["spreadAfter"] <= it["spreadBefore"]
    assert summary["intervalSeconds"] == 30 * 60
    assert summary["estimateSeconds"] == pytest.approx(
        sum(i["seconds"] for i in summary["iterations"]) + 1800
    )
    assert summary["totalBytes"] == sum(i["bytesMoved"] for i in summary["iterations"])
    assert summary["settings"][CB + "iterations"] == 2
    moves = pq.read_table(tmp_path / "out" / "balance" / "moves").to_pylist()
    assert len(moves) == summary["totalMoves"] and sum(m["bytes"] for m in moves) == summary["totalBytes"]
    assert "ITERATION  OVER/UNDER  MOVES" in printed and "Estimated duration:" in printed

    assert balance.run(spark, Snapshot(spark, snapshot), job_args("--json", conf=conf), None) == 0
    assert json.loads(capsys.readouterr().out)["stopReason"]


@pytest.mark.parametrize(
    ("used", "result", "reason"),
    [
        ([40, 41, 42, 43, 44, 45], None, "Could not initialize ContainerBalancer's iteration number 0"),
        ([90, 40, 40, 40, 40, 0], "CAN_NOT_BALANCE_ANY_MORE", "CAN_NOT_BALANCE_ANY_MORE"),
    ],
    ids=["balanced", "nothing-movable"],
)
def test_a_run_that_stops_at_once(spark, tmp_path: Path, used: list[int], result, reason: str) -> None:
    """Within the threshold: no iteration; unbalanced with no container to move: one that moves nothing."""
    h = BalancerHarness(6)
    for i, gb in enumerate(used):
        h.set_used(i, gb)
    write_core_snapshot(h.scm, tmp_path)
    config = config_of(h)
    run = plan_run(balance.snapshot_cluster(spark, Snapshot(spark, tmp_path), h.rm.config, config), config)
    assert [it.status.result.value for it in run.iterations] == ([result] if result else [])
    assert run.stop_reason == reason


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["-t", "100"], "threshold 100 must be a percentage from 0 to below 100"),
        (["-i", "0"], "iterations 0 must be > 0 (at most 2147483647), or -1"),
        (["-d", "101"], "max datanodes percentage to involve 101 must be 0 to 100"),
        (
            ["-e", "1"],
            "size.entering.target.max (1073741824) should be greater than ozone.scm.container.size",
        ),
        (
            ["--balancing-iteration-interval-minutes", "0"],
            "balancing.iteration.interval (0ms) must be greater than zero",
        ),
        (["--move-timeout-minutes", "40"], "move.replication.timeout should be less than"),
        (["--move-network-topology-enable", "true"], "is not supported by pyozone's balancer"),
    ],
)
def test_a_run_scm_would_refuse_is_refused(argv: list[str], message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        job_args(*argv, conf=OzoneConfiguration())
