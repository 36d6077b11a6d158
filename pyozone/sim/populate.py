"""Closed containers laid onto a running simulated cluster, as years of writes would have left them.

`pyozone sim --containers N` shows SCM's web UI over a cluster that holds a million containers. Writing
them block by block, or having every datanode report them on registering, would take minutes (SCM
processes a reported replica in some 25 us: 3M replicas are over a minute). Here, once SCM is out of safe
mode, the records go straight into SCM's managers (ContainerManager.bulk_load, the nodes' container
sets) and the same replicas onto the datanodes' disks, so their later full reports agree with SCM.

Ids come from SCM's container sequence, so blocks allocated afterwards get fresh containers. Each
container is CLOSED RATIS/THREE with three replicas on consecutive nodes of a rack-interleaved order of
the healthy in-service datanodes (three racks when there are three, two when two): the Replication
Manager finds them healthy. Sizes and key counts come from the cluster's seeded random; each datanode's
node report then counts the bytes its replicas hold.
"""

from __future__ import annotations

import gc
import time
from collections import defaultdict
from collections.abc import Callable
from itertools import zip_longest

from pyozone.hdds.container import ContainerInfo, ContainerReplica
from pyozone.hdds.ids import RATIS_THREE, DatanodeID
from pyozone.hdds.messages import ContainerReplicaReport
from pyozone.hdds.states import LifeCycleState, ReplicaState
from pyozone.scm.block.sequence_id import CONTAINER_ID
from pyozone.sim.cluster import SimCluster
from pyozone.sim.datanode import report_with_used

KEY_BYTES = 16 << 20
"""The average key a closed container's bytes are counted in."""


def place_closed_containers(cluster: SimCluster, count: int, owner: str = "sim") -> range:
    """`count` CLOSED RATIS/THREE containers, in SCM and on the datanodes; returns their ids.

    SCM must be out of safe mode (containers it has not seen reported would hold it there) and at least
    three datanodes healthy and in service."""
    scm = cluster.scm
    if scm.safe_mode.in_safe_mode():
        raise ValueError("place containers once SCM is out of safe mode")
    nodes = _rack_interleaved(cluster)
    if len(nodes) < 3:
        raise ValueError(f"RATIS/THREE containers need 3 healthy datanodes, the cluster has {len(nodes)}")
    first = scm.sequence_ids.next_id(CONTAINER_ID)
    for _ in range(count - 1):
        scm.sequence_ids.next_id(CONTAINER_ID)
    ids = range(first, first + count)
    rand = cluster.rng.random
    used = [int(cluster.container_size * (0.5 + rand() / 2)) for _ in ids]  # closed: mostly full
    scm.containers.bulk_load(*_records(cluster, nodes, ids, used, owner))
    n = len(nodes)
    for i, dn in enumerate(nodes):
        # the container at position p is on nodes p, p+1 and p+2: node i holds positions i, i-1, i-2 (mod n)
        starts = {(i - k) % n for k in range(3)}
        scm.nodes.set_containers(dn, scm.nodes.containers(dn).union(*(ids[p::n] for p in starts)))
        node = cluster.datanodes[dn]
        node.report = report_with_used(node.report, sum(sum(used[p::n]) for p in starts))
    return ids


def _records(
    cluster: SimCluster, nodes: list[DatanodeID], ids: range, used: list[int], owner: str
) -> tuple[list[ContainerInfo], list[ContainerReplica]]:
    """SCM's records and replicas; the same replicas go onto the datanodes' disks as they are made."""
    now, closed = cluster.clock.wall_ms(), ReplicaState.CLOSED
    disks = [cluster.datanodes[dn].replicas for dn in nodes]
    infos: list[ContainerInfo] = []
    replicas: list[ContainerReplica] = []
    n = len(nodes)
    for position, cid in enumerate(ids):
        size, keys = used[position], used[position] // KEY_BYTES + 1
        infos.append(
            ContainerInfo(cid, LifeCycleState.CLOSED, now, None, RATIS_THREE, owner, size, keys, keys)
        )
        for i in (position % n, (position + 1) % n, (position + 2) % n):
            dn = nodes[i]
            disks[i][cid] = ContainerReplicaReport(cid, closed, keys, dn, keys, size)
            replicas.append(ContainerReplica(cid, dn, closed, dn, keys, keys, size))
    return infos, replicas


def _rack_interleaved(cluster: SimCluster) -> list[DatanodeID]:
    """Healthy in-service live datanodes, one rack after another: any three in a row span min(3, racks)
    racks while the racks are about equal in size, as the simulator deals them."""
    by_rack: dict[str, list[DatanodeID]] = defaultdict(list)
    for info in cluster.scm.nodes.healthy_in_service():
        node = cluster.datanodes.get(info.uuid)
        if node is not None and node.alive:
            by_rack[node.details.network_location].append(info.uuid)
    rows = zip_longest(*(by_rack[rack] for rack in sorted(by_rack)))
    return [dn for row in rows for dn in row if dn is not None]


class PlaceAtSafeModeExit:
    """`--containers N`: the containers are placed the first time SCM is found out of safe mode with three
    healthy datanodes (and frozen out of the cyclic GC); `announce` is told when and how long it took
    (real seconds)."""

    def __init__(
        self, cluster: SimCluster, count: int, announce: Callable[[int, float, float], None]
    ) -> None:
        self.cluster, self.pending, self.announce = cluster, count, announce

    def __call__(self) -> None:
        if not self.pending or self.cluster.scm.safe_mode.in_safe_mode():
            return
        if len(_rack_interleaved(self.cluster)) < 3:
            return
        count, self.pending = self.pending, 0
        started = time.perf_counter()
        # Millions of records without cycles, which live as long as the process: the cyclic collector
        # would walk the growing heap again and again while they are made (a third of the time), and
        # every full collection after (a 6 s stall of the web UI at a million containers). It is paused
        # while they are made, and they are frozen out of its sight.
        enabled = gc.isenabled()
        gc.disable()
        try:
            place_closed_containers(self.cluster, count)
            gc.freeze()
        finally:
            if enabled:
                gc.enable()
        self.announce(count, self.cluster.clock.now_ms() / 60_000, time.perf_counter() - started)
