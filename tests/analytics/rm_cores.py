"""SCM cores in trouble, for the analytics parity tests: random containers of every state and config on
15 datanodes over 3 racks, then failures brought about as a cluster meets them (heartbeats stop, nodes go
STALE and DEAD on virtual time, the Replication Manager repairs meanwhile, so the pending ops are real)."""

from __future__ import annotations

import random

from pyozone.hdds.container import ContainerInfo, ContainerReplica
from pyozone.hdds.ids import ReplicationConfig
from pyozone.hdds.states import LifeCycleState, NodeOperationalState, NodeState, ReplicaState
from tests.unit.scm.replication.rm_harness import RMHarness

SECOND, MINUTE = 1_000, 60_000
SAMPLE_LIMIT = 5  # small, so samples are cut and merging partitions must keep the right ids
CONTAINER_STATES = ["CLOSED"] * 8 + ["QUASI_CLOSED"] * 3 + ["OPEN", "CLOSING", "DELETING", "DELETED"]
CONFIGS = ["RATIS/THREE"] * 6 + ["RATIS/ONE", "EC/RS-3-2-1024k", "EC/RS-3-2-1024k"]
ODD_REPLICA_STATES = ["CLOSED", "QUASI_CLOSED", "UNHEALTHY", "UNHEALTHY", "OPEN", "CLOSING"]
SEQ = 10


def random_container(
    rng: random.Random, cid: int, dns: list[str], pipelines: list[str | None]
) -> tuple[ContainerInfo, list[ContainerReplica]]:
    """A container of any state and config with a random replica set: missing, extra and duplicate
    copies, odd replica states, stale BCSIDs, several origins, empty copies."""
    state = LifeCycleState[rng.choice(CONTAINER_STATES)]
    config = ReplicationConfig.parse(rng.choice(CONFIGS))
    required = config.required_nodes
    count = min(
        len(dns), max(0, rng.choice([required] * 5 + [0, 1, required - 1, required + 1, required + 2]))
    )
    usual = "CLOSED" if state in (LifeCycleState.DELETING, LifeCycleState.DELETED) else state.name
    all_empty = rng.random() < 0.05
    replicas = [
        ContainerReplica(
            cid,
            dn,
            ReplicaState[usual if rng.random() < 0.85 else rng.choice(ODD_REPLICA_STATES)],
            dn if rng.random() < 0.7 else rng.choice(dns[:4]),
            SEQ if rng.random() < 0.9 else SEQ - 1,
            5,
            1 << 30,
            i % required + 1 if config.type.name == "EC" else 0,
            all_empty or rng.random() < 0.03,
        )
        for i, dn in enumerate(rng.sample(dns, count))
    ]
    info = ContainerInfo(
        cid,
        state,
        0,
        rng.choice(pipelines) if state is LifeCycleState.OPEN else None,
        config,
        "test",
        1 << 30,
        0 if rng.random() < 0.05 else 5,
        SEQ,
        rng.random() < 0.02,
    )
    return info, replicas


def heartbeat_for(h: RMHarness, ms: int, silent: set[str], step_ms: int = 10 * SECOND) -> None:
    """Virtual time passes; every node not `silent` heartbeats; SCM ticks (health checks, RM, monitor)."""
    for _ in range(ms // step_ms):
        h.clock.advance(step_ms)
        for dn in h.dns:
            if dn not in silent:
                h.scm.nodes.process_heartbeat(dn)
        h.scm.tick()


def add_random_containers(h: RMHarness, rng: random.Random, ids: range) -> None:
    pipelines = [*(p.id for p in h.scm.pipelines.pipelines()), None, "no-such-pipeline"]
    for cid in ids:
        info, replicas = random_container(rng, cid, h.dns, pipelines)
        h.scm.containers.bulk_load([info], [])
        for replica in replicas:
            h.scm.containers.update_replica(replica)
            h.scm.nodes.add_container(replica.datanode, cid)


def failing_core(seed: int, dead: list[int], containers: int = 1500) -> RMHarness:
    """15 datanodes on 3 racks (node i on rack i % 3 + 1) and random containers, then failures: the `dead`
    nodes stop heartbeating (the first of them IN_MAINTENANCE, which keeps its replicas when dead), node 1
    decommissions, node 4 enters maintenance, node 7 goes STALE, and the RM runs for 11 minutes. A last
    tenth of the containers arrives after that, so some findings are not yet acted on (open ones)."""
    h = RMHarness(
        datanodes=15,
        racks=3,
        overrides={"hdds.scm.replication.container.sample.limit": str(SAMPLE_LIMIT)},
    )
    rng = random.Random(seed)
    late = containers - containers // 10
    add_random_containers(h, rng, range(1, late))
    h.set_op_state(h.dns[dead[0]], NodeOperationalState.ENTERING_MAINTENANCE)
    h.set_op_state(h.dns[dead[0]], NodeOperationalState.IN_MAINTENANCE)
    h.set_op_state(h.dns[1], NodeOperationalState.DECOMMISSIONING)
    h.set_op_state(h.dns[4], NodeOperationalState.ENTERING_MAINTENANCE)
    silent = {h.dns[i] for i in dead}
    heartbeat_for(h, 5 * MINUTE, silent)
    heartbeat_for(h, 6 * MINUTE, silent | {h.dns[7]})
    assert {h.scm.nodes.node(h.dns[i]).status.health for i in dead} == {NodeState.DEAD}
    assert h.scm.nodes.node(h.dns[7]).status.health is NodeState.STALE
    add_random_containers(h, rng, range(late, containers + 1))
    return h
