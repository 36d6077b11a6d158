"""The Container Balancer through the whole core on virtual time: a cluster with empty datanodes added gets
every datanode within the threshold in a bounded number of iterations, moves only what it may (never an
open, unhealthy or under-replicated container), keeps racks, and does not slow the Replication Manager's
repair of a dead datanode's containers (the same run with the balancer off, compared in one test)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from pyozone.config import OzoneConfiguration
from pyozone.hdds.balancer import IterationResult, IterationStatus
from pyozone.hdds.container_health import ContainerHealthState
from pyozone.hdds.ids import ContainerID, DatanodeID
from pyozone.hdds.states import LifeCycleState, NodeState, ReplicaState
from pyozone.scm.balancer.move_manager import MoveResult
from pyozone.sim.balance import BalancerRun, UtilizationSpread
from pyozone.sim.cluster import SimCluster
from pyozone.sim.datanode import SimDatanode
from pyozone.sim.populate import place_closed_containers

MINUTE = 60_000
TB = 1 << 40
CB = "hdds.container.balancer."
BALANCER = {
    "hdds.scm.wait.time.after.safemode.exit": "30s",
    CB + "datanodes.involved.max.percentage.per.iteration": "100",
    CB + "balancing.iteration.interval": "10m",
    CB + "iterations": "-1",
    CB + "size.entering.target.max": "100GB",
    CB + "size.leaving.source.max": "100GB",
}


def skewed_cluster(
    datanodes: int,
    racks: int,
    containers: int,
    empty: int,
    seed: int = 3,
    capacity: int = TB,
    overrides: dict[str, str] | None = None,
) -> SimCluster:
    """`datanodes` of one `capacity` disk holding `containers` closed RATIS/THREE containers, then
    `empty` new ones."""
    conf = OzoneConfiguration({**BALANCER, **(overrides or {})})
    c = SimCluster(datanodes, racks=racks, conf=conf, seed=seed, disk_capacity=capacity)
    assert c.run_until(c.scm.replication.should_run, 30 * MINUTE)
    place_closed_containers(c, containers)
    for i in range(empty):
        c.add_datanode(rack=f"/rack{(datanodes + i) % racks + 1}")
    c.advance(2 * MINUTE)  # the new ones register and report
    return c


def record_moves(c: SimCluster, check: Callable[[ContainerID, DatanodeID], None]) -> list[ContainerID]:
    """Every move the balancer starts, checked as it starts."""
    moves = c.scm.balancer.moves
    started: list[ContainerID] = []
    inner = moves.move

    def move(cid: ContainerID, source: DatanodeID, target: DatanodeID) -> MoveResult | None:
        check(cid, source)
        started.append(cid)
        return inner(cid, source, target)

    moves.move = move  # type: ignore[method-assign]
    return started


def racks_of(c: SimCluster, cid: ContainerID) -> set[str]:
    return {c.scm.nodes.topology.rack_of(r.datanode) for r in c.scm.containers.replicas(cid)}


def forbidden_containers(c: SimCluster) -> tuple[ContainerID, ContainerID, set[ContainerID]]:
    """Containers the balancer must leave alone: one under-replicated, one with an UNHEALTHY replica,
    and open ones being written."""
    scm = c.scm
    first, second = list(c.datanodes.values())[:2]
    under = next(iter(first.replicas))
    unhealthy = next(cid for cid in second.replicas if cid != under)
    first.drop_replica(under)
    second.set_replica(replace(second.replicas[unhealthy], state=ReplicaState.UNHEALTHY))
    for _ in range(6):
        c.write_block(1 << 20)
    c.advance(MINUTE)
    open_ = {i.container_id for i in scm.containers.containers(LifeCycleState.OPEN)}
    assert open_
    return under, unhealthy, open_


def may_move(c: SimCluster) -> Callable[[ContainerID, DatanodeID], None]:
    """A check of every move as it starts: a closed, healthy container without pending ops."""
    scm = c.scm

    def check(cid: ContainerID, source: DatanodeID) -> None:
        container = scm.containers.get(cid)
        assert container.state is LifeCycleState.CLOSED
        assert scm.containers.replica(cid, source).state is ReplicaState.CLOSED
        assert scm.replication.replication_health(container, scm.containers.replicas(cid)) is (
            ContainerHealthState.HEALTHY
        )
        assert not scm.replication.pending_ops.ops(cid)

    return check


def test_empty_datanodes_are_filled_within_the_threshold() -> None:
    c = skewed_cluster(datanodes=9, racks=3, containers=600, empty=3)
    scm, ids = c.scm, list(c.scm.containers.container_ids())
    under, unhealthy, open_ = forbidden_containers(c)
    started = record_moves(c, may_move(c))
    before = UtilizationSpread.of(scm)
    assert before.low < 0.01 and not before.within(0.1)
    scm.balancer.start()
    assert c.run_until(lambda: not scm.balancer.is_running(), 600 * MINUTE, step_ms=MINUTE)

    after = UtilizationSpread.of(scm)
    assert after.within(0.1), after
    statuses = scm.balancer.iteration_statuses()
    assert len(statuses) <= 12
    assert scm.balancer.stop_reason.startswith("Could not initialize")  # nothing outside the threshold
    assert started and not {under, unhealthy} & set(started) and not open_ & set(started)
    assert sum(s.moves_completed for s in statuses) == len(started)  # none failed
    # every closed container: three replicas over at least two racks, HEALTHY
    c.advance(10 * MINUTE)  # the RM's scan after the last moves
    scm.replication.process_all()
    for cid in ids:
        if cid in (under, unhealthy):
            continue
        assert len(scm.containers.replicas(cid)) == 3 and len(racks_of(c, cid)) >= 2, cid
        assert scm.replication.container_health(cid) is ContainerHealthState.HEALTHY


def repair_minutes(c: SimCluster, balancer: bool, step_ms: int = 10_000) -> tuple[float, Counter[str], bool]:
    """A datanode killed five minutes into the run: minutes until each of its containers has three
    replicas on the other healthy datanodes again, the balancer's moves by result, and whether the
    balancer was still running when the repair was done."""
    scm = c.scm
    results: Counter[str] = Counter()
    inner = scm.balancer.moves.listener

    def listener(cid: ContainerID, pair: Any, result: MoveResult) -> None:
        results[result.name] += 1
        if inner is not None:
            inner(cid, pair, result)

    scm.balancer.moves.listener = listener
    victim = list(c.datanodes)[1]
    if balancer:
        scm.balancer.start()
    c.advance(5 * MINUTE)
    c.kill(victim)
    killed = c.clock.now_ms()
    ids = list(c.datanodes[victim].replicas)

    def repaired() -> bool:
        # not the victim's copies: SCM still counts it HEALTHY until it goes stale
        healthy = {
            i.uuid for i in scm.nodes.nodes() if i.status.health is NodeState.HEALTHY and i.uuid != victim
        }
        return all(sum(1 for r in scm.containers.replicas(cid) if r.datanode in healthy) >= 3 for cid in ids)

    assert ids and not repaired()  # the victim held copies: there is something to repair
    assert c.run_until(repaired, 24 * 60 * MINUTE, step_ms=step_ms)
    return (c.clock.now_ms() - killed) / MINUTE, results, scm.balancer.is_running()


def test_a_dead_datanode_is_repaired_as_fast_with_the_balancer_running() -> None:
    without, _, _ = repair_minutes(skewed_cluster(datanodes=9, racks=3, containers=600, empty=3), False)
    with_balancer, results, running = repair_minutes(
        skewed_cluster(datanodes=9, racks=3, containers=600, empty=3), True
    )
    assert results["COMPLETED"] > 0 and running  # the balancer was moving containers all along
    assert without > 5  # a repair that takes the stale and dead intervals, not one found done at once
    assert with_balancer <= without + 0.5, (with_balancer, without)


def scale_cluster(containers: int, per_datanode: str = "1TB") -> SimCluster:
    """Issue 32's scale: 200 datanodes (10 racks) holding `containers`, 20 empty ones added. The disks
    are large (480 TB at a million containers: the average is near 10.4 %, so an empty datanode is within
    the threshold past ~2 TB) and a datanode takes or gives `per_datanode` an iteration."""
    return skewed_cluster(
        datanodes=200,
        racks=10,
        containers=containers,
        empty=20,
        capacity=480 * TB * containers // 1_000_000,
        overrides={
            "hdds.container.report.interval": "6h",
            CB + "size.entering.target.max": per_datanode,
            CB + "size.leaving.source.max": per_datanode,
            CB + "size.moved.max.per.iteration": "100TB",
        },
    )


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_at_scale_a_dead_datanode_is_repaired_as_fast_with_the_balancer_running() -> None:
    """The repair comparison on 200 + 20 datanodes: a datanode holding some 3,000 replicas killed five
    minutes into the run is repaired as fast with the balancer moving as without it (a datanode takes or
    gives 50 GB an iteration: the run outlasts the repair)."""
    without, _, _ = repair_minutes(scale_cluster(200_000, "50GB"), False, step_ms=MINUTE)
    with_balancer, results, running = repair_minutes(scale_cluster(200_000, "50GB"), True, step_ms=MINUTE)
    print(f"repair minutes: balancer off {without:.1f}, on {with_balancer:.1f}; moves {dict(results)}")
    assert results["COMPLETED"] > 0 and running
    assert without > 5
    assert with_balancer <= without + 1, (with_balancer, without)


def test_cli_shows_the_spread_narrowing(cli: Callable[..., Any]) -> None:
    result = cli(
        "sim", "--json", "--datanodes", "6", "--racks", "3", "--containers", "1500",
        "--add-empty-datanodes", "3", "--balancer", "--minutes", "240", "--every", "40",
        "-D", CB + "datanodes.involved.max.percentage.per.iteration=100",
        "-D", CB + "size.entering.target.max=200GB", "-D", CB + "size.leaving.source.max=200GB",
    )  # fmt: skip
    assert result.code == 0, result
    rows = [json.loads(line) for line in result.out.splitlines()]
    balancer = [r for r in rows if r.get("event") == "balancer" and r["status"] == "RUNNING"]
    spreads = [r["utilizationHigh"] - r["utilizationLow"] for r in balancer]
    assert len(spreads) >= 3 and spreads[-1] < spreads[0]
    assert balancer[-1]["movesCompleted"] > 0 and balancer[-1]["movesFailed"] == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--add-empty-datanodes", "-1"), "--add-empty-datanodes must not be negative"),
        (("--scm-ha", "--balancer"), "not with --scm-ha"),
        (
            ("--balancer", "-D", CB + "move.replication.timeout=70m"),
            "--balancer: hdds.container.balancer.move.replication.timeout should be less than",
        ),
        (  # refused only once the run's datanodes registered: still one line
            ("--balancer", "--minutes", "20", "-D", CB + "include.datanodes=nosuchhost"),
            "--balancer: Invalid configuration: The included datanode 'nosuchhost' does not exist",
        ),
    ],
)
def test_cli_refuses_bad_balancer_options(
    cli: Callable[..., Any], args: tuple[str, ...], message: str
) -> None:
    result = cli("sim", *args)
    assert result.code != 0 and message in result.err


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_a_million_containers_on_200_datanodes_with_20_empty_ones() -> None:
    """Issue 32's proof at scale: 200 datanodes (10 racks) holding a million containers, 20 empty ones
    added; every datanode ends within the threshold in a bounded number of iterations, racks kept, and
    no open, unhealthy or under-replicated container is moved: some 8,000 moves, minutes of simulation."""
    c = scale_cluster(1_000_000)
    scm = c.scm
    under, unhealthy, open_ = forbidden_containers(c)
    before = UtilizationSpread.of(scm)
    assert before.low == 0.0 and not before.within(0.1), before
    started = record_moves(c, may_move(c))
    scm.balancer.start()
    assert c.run_until(lambda: not scm.balancer.is_running(), 48 * 60 * MINUTE, step_ms=10 * MINUTE)
    assert UtilizationSpread.of(scm).within(0.1), UtilizationSpread.of(scm)
    assert len(scm.balancer.iteration_statuses()) <= 10
    assert started and not {under, unhealthy} & set(started) and not open_ & set(started)
    assert all(len(racks_of(c, cid)) >= 2 for cid in set(started))


def test_a_restored_datanode_reports_its_replicas_bytes() -> None:
    """`pyozone sim --data-dir` saves the datanodes and restores them: the disk's size and the bytes its
    replicas hold come back in the node report the balancer reads."""
    c = skewed_cluster(datanodes=3, racks=1, containers=30, empty=0)
    for saved in c.saved_datanodes():
        node = c.datanodes[saved["uuid"]]
        restored = SimDatanode.from_dict(saved)
        assert restored.report.storage[0].capacity == TB
        assert restored.report.storage[0].used == node.report.storage[0].used > 0


def test_the_simulators_balancer_row_counts_every_iteration() -> None:
    """R27 D4: SCM keeps only the latest iterations' statuses; the row's totals are the run's counters."""
    c = skewed_cluster(datanodes=3, racks=1, containers=30, empty=0)
    balancer = c.scm.balancer
    for number in range(1, 61):
        status = IterationStatus(number, IterationResult.ITERATION_COMPLETED, 60, 4, 3, 1, 0, 1, 1, 2)
        balancer.history.append(status)
        balancer.run_metrics.iteration_ended(status)
    row = BalancerRun(c, 0, True, lambda: True, 1).row()
    assert row is not None and (row["iteration"], row["movesCompleted"], row["movesFailed"]) == (60, 180, 60)
