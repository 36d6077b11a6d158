"""Which unhealthy replicas may be deleted (Ozone's ReplicationManagerUtil).

Used by the Ratis check (is a QUASI_CLOSED container really over-replicated?) and by the repair
handlers (free a node when no target is left). For a QUASI_CLOSED container a copy whose origin has no
other copy may hold data nobody else has, so one copy per origin is always spared.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from pyozone.hdds.container import ContainerInfo, ContainerReplica
from pyozone.hdds.states import LifeCycleState, ReplicaState
from pyozone.scm.replication.replica_match import NodeStatusFn, compare_state, is_in_service_healthy

MIN_REPLICAS_KEPT = 2


def select_unhealthy_replicas_for_delete(
    container: ContainerInfo,
    replicas: Collection[ContainerReplica],
    pending_deletes: int,
    node_status: NodeStatusFn,
) -> list[ContainerReplica]:
    """Deletable UNHEALTHY (and, unless the container is QUASI_CLOSED, lagging QUASI_CLOSED) replicas on
    in-service heartbeating nodes, lowest BCSID first; empty when nothing may be deleted: a delete is
    already pending, no more than two replicas exist, or no replica matches the container."""
    if pending_deletes > 0 or len(replicas) <= MIN_REPLICAS_KEPT:
        return []
    if not any(compare_state(container.state, r.state) for r in replicas):
        return []
    candidates = []
    for r in replicas:
        if not is_in_service_healthy(node_status, r.datanode):
            continue
        if container.state is not LifeCycleState.QUASI_CLOSED and r.state is ReplicaState.QUASI_CLOSED:
            if r.sequence_id < container.sequence_id:
                candidates.append(r)
        elif r.state is ReplicaState.UNHEALTHY:
            candidates.append(r)
    candidates.sort(key=lambda r: r.sequence_id)
    if container.state is LifeCycleState.CLOSED:
        return candidates
    if container.state is LifeCycleState.QUASI_CLOSED:
        return find_non_unique_delete_candidates(replicas, candidates, node_status)
    return []


def select_unhealthy_replica_for_delete(
    container: ContainerInfo,
    replicas: Collection[ContainerReplica],
    pending_deletes: int,
    node_status: NodeStatusFn,
) -> ContainerReplica | None:
    selected = select_unhealthy_replicas_for_delete(container, replicas, pending_deletes, node_status)
    return selected[0] if selected else None


def find_non_unique_delete_candidates(
    all_replicas: Collection[ContainerReplica],
    candidates: Sequence[ContainerReplica],
    node_status: NodeStatusFn,
) -> list[ContainerReplica]:
    """Candidates whose origin survives elsewhere, in candidate order. Origins of non-candidates on
    in-service heartbeating nodes are taken; then non-UNHEALTHY candidates, then UNHEALTHY ones, each
    either deletable (origin taken) or spared (taking the origin), so a QUASI_CLOSED copy is kept in
    preference to an UNHEALTHY copy of the same origin."""
    taken = {
        r.origin_node_id
        for r in all_replicas
        if r not in candidates and is_in_service_healthy(node_status, r.datanode)
    }
    deletable = set()
    ordered = [r for r in candidates if r.state is not ReplicaState.UNHEALTHY]
    ordered += [r for r in candidates if r.state is ReplicaState.UNHEALTHY]
    for r in ordered:
        if r.origin_node_id in taken:
            deletable.add(r)
        else:
            taken.add(r.origin_node_id)
    return [r for r in ordered if r in deletable]
