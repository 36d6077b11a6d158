"""Closed EC containers laid onto a simulated cluster before it starts, as years of writes would leave them.

Writing thousands of EC block groups through SCM only to close them would make the simulation about
writes; here the records go straight into SCM's container manager (ContainerManager.bulk_load) and the
replicas onto the datanodes' disks, which report them when they register. Each container's d + p
indexes land on distinct nodes, scattered over the racks as EC placement does (the fewest of the
container's replicas per rack first), chosen by the cluster's seeded random. The ids do not come from
SCM's sequence, so a run that places containers here must not allocate blocks afterwards.

`kill_and_repair` then kills datanodes and runs the Replication Manager until every container is whole,
sampling the replication load on every node (sim/load.py): the measurement behind
benchmarks/ec_reconstruction_load.py and the simulator tests of the ops-per-node rule.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from pyozone.hdds.container import ContainerInfo
from pyozone.hdds.ids import ContainerID, ReplicationConfig
from pyozone.hdds.messages import ContainerReplicaReport
from pyozone.hdds.states import LifeCycleState, ReplicaState
from pyozone.sim.cluster import SimCluster
from pyozone.sim.datanode import report_with_used
from pyozone.sim.load import ROLES, LoadSampler

GB = 1 << 30


def place_ec_containers(
    cluster: SimCluster, count: int, config: ReplicationConfig, used_bytes: int = GB, keys: int = 10
) -> list[ContainerID]:
    """`count` CLOSED containers of `config`, each index on its own datanode. Call before the first
    heartbeat (the datanodes report them on registering). Returns their ids."""
    width = config.required_nodes
    nodes = sorted(cluster.datanodes)
    if len(nodes) < width:
        raise ValueError(f"{config} needs {width} datanodes, the cluster has {len(nodes)}")
    if any(node.registered for node in cluster.datanodes.values()):
        raise ValueError("place EC containers before the datanodes register")
    racks = {dn: cluster.datanodes[dn].details.network_location for dn in nodes}
    first = max((c.container_id for c in cluster.scm.containers.containers()), default=0) + 1
    infos: list[ContainerInfo] = []
    held: Counter[str] = Counter()
    for cid in range(first, first + count):
        infos.append(ContainerInfo(cid, LifeCycleState.CLOSED, 0, None, config, "sim", used_bytes, keys, 1))
        for index, dn in enumerate(_scatter(nodes, racks, width, cluster.rng), 1):
            cluster.datanodes[dn].replicas[cid] = ContainerReplicaReport(
                cid, ReplicaState.CLOSED, 1, dn, keys, used_bytes, index
            )
            held[dn] += used_bytes
    for dn, used in held.items():  # the node report counts the bytes its replicas hold (populate.py too)
        node = cluster.datanodes[dn]
        node.report = report_with_used(node.report, used)
    cluster.scm.containers.bulk_load(infos, ())
    return [info.container_id for info in infos]


def _scatter(nodes: list[str], racks: dict[str, str], width: int, rng: random.Random) -> list[str]:
    chosen: list[str] = []
    per_rack: Counter[str] = Counter()
    for _ in range(width):
        free = [dn for dn in nodes if dn not in chosen]
        least = min(per_rack[racks[dn]] for dn in free)
        pick = rng.choice([dn for dn in free if per_rack[racks[dn]] == least])
        chosen.append(pick)
        per_rack[racks[pick]] += 1
    return chosen


@dataclass(frozen=True, slots=True)
class RepairRun:
    """What one run measured: load per node (sim/load.py) and how long the repair took."""

    peak: dict[str, int]
    p95: dict[str, int]
    dead_at_ms: int
    healthy_at_ms: int | None
    """None: not fully healthy within the run's time limit."""
    reconstructions_sent: int
    replications_sent: int
    reconstructions_deferred: int
    reconstructions_failed: int

    @property
    def repair_ms(self) -> int | None:
        """From the killed nodes being declared DEAD (the Replication Manager starts) to full health."""
        return None if self.healthy_at_ms is None else self.healthy_at_ms - self.dead_at_ms


def fully_replicated(cluster: SimCluster, container_ids: Iterable[ContainerID]) -> bool:
    """Every index of every container has a CLOSED replica SCM knows of on a live datanode."""
    for cid in container_ids:
        info = cluster.scm.containers.get(cid)
        indexes = {
            r.replica_index
            for r in cluster.scm.containers.replicas(cid)
            if r.state is ReplicaState.CLOSED and cluster.datanodes[r.datanode].alive
        }
        if len(indexes) < info.replication_config.required_nodes:
            return False
    return True


def kill_and_repair(
    cluster: SimCluster,
    container_ids: list[ContainerID],
    kill: int,
    timeout_ms: int,
    sample_ms: int = 5_000,
) -> RepairRun:
    """Kills `kill` datanodes (chosen by the cluster's random) once SCM's Replication Manager may run,
    then advances virtual time, sampling every node's load, until every container is whole again."""
    if not cluster.run_until(cluster.scm.replication.should_run, timeout_ms):
        raise RuntimeError("the Replication Manager never became ready (safe mode?)")
    victims = cluster.rng.sample(sorted(cluster.datanodes), kill)
    for dn in victims:
        cluster.kill(dn)
    start = cluster.clock.now_ms()
    if not cluster.run_until(
        lambda: all(cluster.scm.nodes.node(dn).status.is_dead() for dn in victims), timeout_ms
    ):
        raise RuntimeError("the killed datanodes were never declared DEAD")
    dead_at = cluster.clock.now_ms()
    sampler = LoadSampler()
    healthy_at: int | None = None
    while cluster.clock.now_ms() - start < timeout_ms:
        cluster.advance(sample_ms)
        sampler.sample(cluster.datanodes)
        if fully_replicated(cluster, container_ids):
            healthy_at = cluster.clock.now_ms()
            break
    metrics = cluster.scm.replication.metrics
    return RepairRun(
        peak={role: sampler.peak(role) for role in ROLES},
        p95={role: sampler.p95(role) for role in ROLES},
        dead_at_ms=dead_at - start,
        healthy_at_ms=None if healthy_at is None else healthy_at - start,
        reconstructions_sent=metrics.ec_reconstruction_cmds_sent_total,
        replications_sent=metrics.replication_cmds_sent_total + metrics.ec_replication_cmds_sent_total,
        reconstructions_deferred=metrics.ec_reconstruction_cmds_deferred_total,
        reconstructions_failed=sum(n.reconstructions_failed for n in cluster.datanodes.values()),
    )
