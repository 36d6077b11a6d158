"""Choosing target datanodes for new replicas (ReplicationManagerUtil on SCMContainerPlacementRackAware's
choose).

Pure functions over the registered datanodes, a rack lookup and an injected random.Random, so a seeded
simulator run repeats exactly. The flow is Ozone's: `get_excluded_and_used_nodes` sorts the nodes a
container touches into "used" (they hold a replica or will: rack placement counts them) and
"excluded" (they must not get one: unhealthy copy, pending delete, leaving the cluster, too full);
`get_target_datanodes` asks the placement choose for n nodes and, when it cannot, for n - 1, ... 1, so a
repair can make partial progress rather than none.

Ratis containers use SCMContainerPlacementRackAware's choose (11.2), with the fallbacks of closed-container
placement. EC containers use rack scatter (SCMContainerPlacementRackScatter), whose choose is not ported, so
it is modelled by its intent: every pick goes to a valid node on a rack holding the fewest of the container's
replicas, which keeps reconstructed EC replicas from landing on an already used rack.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass

from pyozone.hdds.container import ContainerInfo, ContainerReplica
from pyozone.hdds.datanode import DatanodeInfo, required_replication_space
from pyozone.hdds.exceptions import ResultCode, SCMException
from pyozone.hdds.ids import DatanodeID
from pyozone.hdds.states import LifeCycleState, ReplicaState, ReplicationType
from pyozone.scm.replication.pending_ops import PendingOp, PendingOpType
from pyozone.scm.replication.placement import PlacementPolicy, RackOf
from pyozone.scm.replication.replica_match import NodeStatusFn
from pyozone.scm.replication.unhealthy import select_unhealthy_replicas_for_delete

MAX_REJECTIONS = 3
"""A choose gives up after this many picked nodes turn out unwritable or short of space (11.2)."""


def placement_policy_for(container: ContainerInfo) -> PlacementPolicy:
    """Ratis containers are placed rack-aware, EC containers by rack scatter
    (SCMContainerPlacementRackScatter)."""
    if container.replication_config.type is ReplicationType.EC:
        return PlacementPolicy.RACK_SCATTER
    return PlacementPolicy.RACK_AWARE


def has_space(info: DatanodeInfo, size: int) -> bool:
    """A replica lives on one volume, so one healthy volume's usable space must exceed it (the same
    rule as pipeline placement: SCMCommonPlacementPolicy.hasEnoughSpace)."""
    return info.report.has_volume_for(size)


def no_suitable_node(message: str) -> SCMException:
    return SCMException(message, ResultCode.FAILED_TO_FIND_SUITABLE_NODE)


def is_no_suitable_node(error: Exception) -> bool:
    """The placement failure repair handlers react to (free a node, then requeue)."""
    return isinstance(error, SCMException) and error.code is ResultCode.FAILED_TO_FIND_SUITABLE_NODE


@dataclass(slots=True)
class ExcludedAndUsed:
    excluded: list[DatanodeID]
    used: list[DatanodeID]


def get_excluded_and_used_nodes(
    container: ContainerInfo,
    replicas: Sequence[ContainerReplica],
    to_be_removed: Collection[ContainerReplica],
    pending_ops: Iterable[PendingOp],
    node_status: NodeStatusFn,
    nodes: Iterable[DatanodeInfo],
    scheduled_size: Callable[[DatanodeID], int],
) -> ExcludedAndUsed:
    """ReplicationManagerUtil.getExcludedAndUsedNodes.

    A node with a copy that is going away (UNHEALTHY, to be removed, on a decommissioning node) may not
    receive a new one, but does not count for rack placement either. For a QUASI_CLOSED container an
    UNHEALTHY copy with a unique origin is kept, so its node is used. A DEAD maintenance node is out of
    the topology, so it is neither (listing it would only inflate the count the choose checks). Finally
    nodes with bytes scheduled by pending ADDs whose usable space (remaining less committed bytes and the
    free-space floor, StorageReport.usable), less those bytes, cannot hold two copies of this container
    are excluded (as ContainerReplicaPendingOps's scheduled sizes).
    """
    excluded: list[DatanodeID] = []
    used: list[DatanodeID] = []
    deletable: list[ContainerReplica] = []
    if container.state is LifeCycleState.QUASI_CLOSED:
        deletable = select_unhealthy_replicas_for_delete(container, replicas, 0, node_status)
    for replica in replicas:
        dn = replica.datanode
        if replica.state is ReplicaState.UNHEALTHY and (
            container.state is not LifeCycleState.QUASI_CLOSED or replica in deletable
        ):
            excluded.append(dn)
            continue
        if replica in to_be_removed:
            excluded.append(dn)
            continue
        status = node_status(dn)
        if status is None or status.is_decommission():
            excluded.append(dn)
        elif not (status.is_maintenance() and status.is_dead()):
            used.append(dn)
    for op in pending_ops:
        (used if op.type is PendingOpType.ADD else excluded).append(op.target_dn)

    required = required_replication_space(container.used_bytes)
    for info in nodes:
        scheduled = scheduled_size(info.uuid)
        if scheduled > 0 and info.uuid not in excluded and info.usable() - scheduled < required:
            excluded.append(info.uuid)
    return ExcludedAndUsed(list(dict.fromkeys(excluded)), list(dict.fromkeys(used)))


def get_target_datanodes(
    policy: PlacementPolicy,
    nodes: Sequence[DatanodeInfo],
    rack_of: RackOf,
    required: int,
    used: Sequence[DatanodeID],
    excluded: Sequence[DatanodeID],
    container: ContainerInfo,
    default_container_size: int,
    rng: random.Random,
) -> list[DatanodeID]:
    """Up to `required` new targets (ReplicationManagerUtil.getTargetDatanodes): a target must hold two copies
    of a full-size container (the container may still grow to the configured size). Asks for `required`, then
    one fewer, down to one; raises FAILED_TO_FIND_SUITABLE_NODE only when not even one node can be found."""
    size = required_replication_space(max(container.used_bytes, default_container_size))
    for wanted in range(required, 0, -1):
        try:
            return choose_datanodes(policy, nodes, rack_of, used, excluded, wanted, size, rng)
        except SCMException:
            continue
    raise no_suitable_node(
        f"no datanode can take a replica of container {container.container_id}: {required} required, "
        f"{size} bytes each, used {list(used)}, excluded {list(excluded)}"
    )


def choose_datanodes(
    policy: PlacementPolicy,
    nodes: Sequence[DatanodeInfo],
    rack_of: RackOf,
    used: Sequence[DatanodeID],
    excluded: Sequence[DatanodeID],
    required: int,
    size_required: int,
    rng: random.Random,
) -> list[DatanodeID]:
    """Exactly `required` new nodes or SCMException. Nodes leaving the cluster are always excluded
    (SCMCommonPlacementPolicy.chooseDatanodes); the topology must have a leaf for every required, used
    and excluded node."""
    leaving = [i.uuid for i in nodes if i.status.is_decommission()]
    excluded = list(dict.fromkeys([*excluded, *leaving]))
    topology = _Topology(nodes, rack_of, size_required, rng)
    if len(topology.leaves) < required + len(excluded) + len(used):
        raise no_suitable_node(
            f"not enough datanodes: {len(topology.leaves)} in the topology, {required} required, "
            f"{len(excluded)} excluded, {len(used)} used"
        )
    if policy is PlacementPolicy.RACK_SCATTER:
        return topology.choose_scattered(used, excluded, required)
    return topology.choose_rack_aware(used, excluded, required)


class _Topology:
    """The nodes placement may see in one choose: leaves of the network topology (nodes SCM removed from
    it, e.g. dead ones, are not candidates), each with its rack and whether it may take the replica."""

    def __init__(self, nodes: Iterable[DatanodeInfo], rack_of: RackOf, size: int, rng: random.Random) -> None:
        self.rng = rng
        self.rack: dict[DatanodeID, str] = {}
        self.valid: set[DatanodeID] = set()
        for info in nodes:
            rack = rack_of(info.uuid)
            if rack is None:
                continue
            self.rack[info.uuid] = rack
            if info.status.is_node_writable() and has_space(info, size):
                self.valid.add(info.uuid)
        self.leaves = sorted(self.rack)

    # ------------------------------------------------------------------ rack scatter
    def choose_scattered(
        self, used: Sequence[DatanodeID], excluded: Sequence[DatanodeID], required: int
    ) -> list[DatanodeID]:
        load = Counter(self.rack[dn] for dn in used if dn in self.rack)
        taken = {*used, *excluded}
        chosen: list[DatanodeID] = []
        for _ in range(required):
            candidates = [dn for dn in self.leaves if dn not in taken and dn in self.valid]
            if not candidates:
                raise no_suitable_node(f"only {len(chosen)} of {required} datanodes can be chosen")
            least = min(load[self.rack[dn]] for dn in candidates)
            pick = self.rng.choice([dn for dn in candidates if load[self.rack[dn]] == least])
            chosen.append(pick)
            taken.add(pick)
            load[self.rack[pick]] += 1
        return chosen

    # ------------------------------------------------------------------ rack aware
    # (SCMContainerPlacementRackAware)
    def choose_rack_aware(
        self, used: Sequence[DatanodeID], excluded: Sequence[DatanodeID], required: int
    ) -> list[DatanodeID]:
        """SCMContainerPlacementRackAware.chooseDatanodesInternal with used nodes. A new set puts its
        second node on the first's rack; one used node gets a same-rack partner; two used nodes on one
        rack send every new node elsewhere, else one new node joins a used rack. The rest go to racks
        not yet used."""
        chosen: list[DatanodeID] = []
        used = list(used)
        excluded = list(excluded)
        if not used:
            first = self._choose_node(excluded, None, None)
            chosen.append(first)
            if len(chosen) == required:
                return chosen
            excluded.append(first)
            second = self._choose_node(excluded, [first], [first])
            chosen.append(second)
            if len(chosen) == required:
                return chosen
            used.extend(chosen)
            excluded.append(second)
        elif len(used) == 1:
            first = self._choose_node(excluded, used, used)
            chosen.append(first)
            if len(chosen) == required:
                return chosen
            excluded.append(first)
            excluded.extend(used)
        elif self._two_share_a_rack(used):
            excluded.extend(used)
        else:
            second = self._choose_node(excluded, used, used)
            chosen.append(second)
            excluded.append(second)
            excluded.extend(used)
            used.extend(chosen)
            if len(chosen) == required:
                return chosen
        while len(chosen) < required:
            node = self._choose_node(excluded, None, used)
            excluded.append(node)
            used.append(node)
            chosen.append(node)
        return chosen

    def _two_share_a_rack(self, dns: Sequence[DatanodeID]) -> bool:
        racks = [self.rack[dn] for dn in dns if dn in self.rack]
        return len(set(racks)) < len(racks)

    def _choose_node(
        self,
        excluded: Sequence[DatanodeID],
        affinity: Sequence[DatanodeID] | None,
        used: Sequence[DatanodeID] | None,
    ) -> DatanodeID:
        """SCMContainerPlacementRackAware.chooseNode. Without affinity the node must be on a rack with
        no used node and must not be excluded; with affinity it must share a rack with one of them.
        When nothing fits, drop the affinity, then the rack constraint (fallback). A picked used node
        is skipped; an unwritable or too full one too, but after MAX_REJECTIONS of those it fails."""
        individually: set[DatanodeID] = set()
        by_rack = frozenset(excluded)
        if affinity is None:
            individually = set(excluded)
            by_rack = frozenset(used or ())
        rack_level = True
        rejections = 0
        while True:
            node = None
            if affinity is not None:
                for partner in affinity:
                    node = self._random(individually, by_rack, partner, rack_level)
                    if node is not None:
                        break
            else:
                node = self._random(individually, by_rack, None, rack_level)
            if node is None:
                if affinity is not None:
                    affinity = None
                    continue
                if rack_level:
                    rack_level = False
                    continue
                raise no_suitable_node("no datanode meets the excluded-node and rack constraints")
            if used is not None and node in used:
                individually.add(node)
                continue
            if node in self.valid:
                return node
            rejections += 1
            if rejections == MAX_REJECTIONS:
                raise no_suitable_node(f"{MAX_REJECTIONS} chosen datanodes were unwritable or too full")
            individually.add(node)

    def _random(
        self,
        individually: Collection[DatanodeID],
        by_rack: Collection[DatanodeID],
        affinity: DatanodeID | None,
        rack_level: bool,
    ) -> DatanodeID | None:
        """NetworkTopology.chooseRandom: a random leaf, never one of `individually`. At rack level with
        an affinity node: on its rack, never one of `by_rack`; without: on no rack of `by_rack`. Below
        rack level `by_rack` is excluded node by node."""
        if affinity is not None and rack_level:
            scope = self.rack.get(affinity)
            candidates = [
                dn
                for dn in self.leaves
                if self.rack[dn] == scope and dn not in individually and dn not in by_rack
            ]
        elif rack_level:
            banned = {self.rack[dn] for dn in by_rack if dn in self.rack}
            candidates = [dn for dn in self.leaves if self.rack[dn] not in banned and dn not in individually]
        else:
            candidates = [dn for dn in self.leaves if dn not in individually and dn not in by_rack]
        return self.rng.choice(candidates) if candidates else None
