"""Container placement validation and repair helpers (Ozone's SCMCommonPlacementPolicy).

Pure functions over datanodes and a `rack_of` lookup, so the check chain, the repair handlers and
offline analysis share one definition. A datanode whose rack is None is not in the topology and is
ignored when racks are counted.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TypeVar

from pyozone.hdds.container import ContainerReplica
from pyozone.hdds.ids import DatanodeID

RackOf = Callable[[DatanodeID], str | None]
T = TypeVar("T", bound=Hashable)
RACK_AWARE_REQUIRED_RACKS = 2


class PlacementPolicy(StrEnum):
    RACK_AWARE = "RACK_AWARE"  # Ratis containers (SCMContainerPlacementRackAware)
    RACK_SCATTER = "RACK_SCATTER"  # EC containers (SCMContainerPlacementRackScatter)
    PIPELINE = "PIPELINE"  # Ratis pipelines (PipelinePlacementPolicy)


@dataclass(frozen=True, slots=True)
class ContainerPlacementStatus:
    satisfied: bool
    current_racks: int
    required_racks: int
    max_per_rack: int
    mis_replication_count: int


def required_rack_count(policy: PlacementPolicy | str, replicas: int, total_racks: int) -> int:
    """Rack-aware policies want two racks (a rack failure then never loses every copy); rack scatter
    wants one rack per replica; never more racks than the cluster has."""
    if PlacementPolicy(policy) is PlacementPolicy.RACK_SCATTER:
        return min(total_racks, replicas)
    return min(RACK_AWARE_REQUIRED_RACKS, total_racks)


def max_replicas_per_rack(policy: PlacementPolicy | str, replicas: int, racks: int) -> int:
    """Rack-aware: all but one copy may share a rack. Rack scatter: spread evenly, ceil(R / racks)."""
    if PlacementPolicy(policy) is PlacementPolicy.RACK_SCATTER:
        return replicas // racks + min(replicas % racks, 1)
    return replicas if racks == 1 else max(replicas - 1, 1)


def validate_container_placement(
    dns: Sequence[DatanodeID],
    expected: int,
    rack_of: RackOf,
    total_racks: int,
    policy: PlacementPolicy | str,
) -> ContainerPlacementStatus:
    """Whether replicas on `dns` satisfy the policy for `expected` replicas (validateContainerPlacement).

    `total_racks` is the cluster's rack count, 0 without a topology. Replicas beyond `expected` raise
    the per-rack maximum, so over-replication is never reported as mis-replication.
    """
    required = required_rack_count(policy, expected, total_racks)
    if total_racks == 0 or expected == 1 or required <= 1:
        return _valid_if(bool(dns))
    counts = Counter(rack for rack in map(rack_of, dns) if rack is not None)
    required = min(required, expected)
    max_per_rack = max_replicas_per_rack(policy, expected, min(required, total_racks))
    max_per_rack += max(0, len(dns) - expected)
    expected_racks = min(required, total_racks)
    satisfied = len(counts) >= expected_racks and all(n <= max_per_rack for n in counts.values())
    mis_count = 0
    if not satisfied:
        over = sum(max(0, n - max_per_rack) for n in counts.values())
        mis_count = max(expected_racks - len(counts), over)
    return ContainerPlacementStatus(satisfied, len(counts), required, max_per_rack, mis_count)


def _valid_if(ok: bool) -> ContainerPlacementStatus:
    """Ozone's fixed valid/invalid statuses (1 or 0 racks of 1 required) for the no-topology case."""
    return ContainerPlacementStatus(ok, int(ok), 1, 1, 0 if ok else 1)


def replicas_to_remove_to_fix_overreplication(
    replicas: Sequence[ContainerReplica], expected_per_index: int, rack_of: RackOf
) -> list[ContainerReplica]:
    """For each index with too many copies (most copies first), remove copies one at a time from the
    rack currently holding the most replicas of any index, so what remains is as spread as possible.
    Ties go to the rack seen first; within a rack, the copy seen first goes."""
    by_index: dict[int, list[ContainerReplica]] = {}
    by_rack_index: dict[str | None, dict[int, list[ContainerReplica]]] = {}
    rack_load: Counter[str | None] = Counter()
    for replica in replicas:
        rack = rack_of(replica.datanode)
        by_index.setdefault(replica.replica_index, []).append(replica)
        by_rack_index.setdefault(rack, {}).setdefault(replica.replica_index, []).append(replica)
        rack_load[rack] += 1
    crowded = sorted(
        (i for i in by_index if len(by_index[i]) > expected_per_index), key=lambda i: -len(by_index[i])
    )
    removed: list[ContainerReplica] = []
    for index in crowded:
        while len(by_index[index]) > expected_per_index:
            racks = [rack for rack, held in by_rack_index.items() if held.get(index)]
            rack = max(racks, key=lambda r: rack_load[r])
            victim = by_rack_index[rack][index].pop(0)
            by_index[index].remove(victim)
            rack_load[rack] -= 1
            removed.append(victim)
    return removed


def replicas_to_copy_to_fix_misreplication(
    replicas: Mapping[T, bool],
    rack_of_replica: Callable[[T], str | None],
    policy: PlacementPolicy | str,
    total_racks: int,
) -> list[T]:
    """Replicas to copy to other racks (replicasToCopyToFixMisreplication): walk the fullest `required` racks;
    each may keep the per-rack maximum (recomputed as replicas and racks are accounted for) and its excess is
    chosen among the copyable replicas (mapping value True), first seen first."""
    groups: dict[str | None, list[T]] = {}
    for replica in replicas:
        groups.setdefault(rack_of_replica(replica), []).append(replica)
    remaining = len(replicas)
    required = required_rack_count(policy, remaining, total_racks)
    chosen: list[T] = []
    for group in sorted(groups.values(), key=len, reverse=True)[: max(required, 0)]:
        allowed = max_replicas_per_rack(policy, remaining, required)
        excess = max(0, len(group) - allowed)
        remaining -= allowed
        required -= 1
        chosen.extend([r for r in group if replicas[r]][:excess])
    return chosen
