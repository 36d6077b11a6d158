"""The health of one Ratis or EC container from its counts: the single definition the check handlers
(ECReplicationCheckHandler, RatisReplicationCheckHandler) and offline analysis call. Reporting and queueing
stay with the handlers."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

from pyozone.hdds.container import ContainerInfo, ContainerReplica
from pyozone.hdds.ids import DatanodeID
from pyozone.hdds.states import LifeCycleState
from pyozone.scm.replication.ec_count import ECContainerReplicaCount
from pyozone.scm.replication.pending_ops import PendingOp, PendingOpType
from pyozone.scm.replication.placement import ContainerPlacementStatus
from pyozone.scm.replication.ratis_count import RatisContainerReplicaCount
from pyozone.scm.replication.replica_match import NodeStatusFn
from pyozone.scm.replication.results import (
    HealthResult,
    HealthType,
    MisReplicatedHealthResult,
    OverReplicatedHealthResult,
    UnderReplicatedHealthResult,
)
from pyozone.scm.replication.unhealthy import select_unhealthy_replica_for_delete

PlacementCheck = Callable[[Sequence[DatanodeID], int], ContainerPlacementStatus]
"""validate_container_placement bound to a policy and topology: (replica datanodes, expected count)."""


def ec_check_health(count: ECContainerReplicaCount) -> HealthResult:
    """ECReplicationCheckHandler.checkHealth. Under-replication wins over
    over-replication; remaining redundancy is parity minus the indexes with no usable copy, or parity
    when only offline copies are missing (then it queues as out-of-service work)."""
    container = count.container
    if not count.is_sufficiently_replicated(False):
        missing = count.unavailable_indexes(False)
        due_to_out_of_service = not missing
        offline_now = count.decommissioning_only_indexes(False) | count.maintenance_only_indexes(False)
        offline_after = count.decommissioning_only_indexes(True) | count.maintenance_only_indexes(True)
        return UnderReplicatedHealthResult(
            container,
            count.parity - len(missing),
            due_to_out_of_service,
            count.is_sufficiently_replicated(True),
            count.is_unrecoverable(),
            is_missing=count.is_missing(),
            has_unreplicated_offline_indexes=bool(offline_now),
            offline_indexes_ok_after_pending=not offline_after,
        )
    if count.is_over_replicated(False):
        return OverReplicatedHealthResult(
            container, len(count.over_replicated_indexes(False)), not count.is_over_replicated(True)
        )
    return HealthResult(container)


def ratis_check_health(
    container: ContainerInfo,
    replicas: Collection[ContainerReplica],
    pending_ops: Sequence[PendingOp],
    min_healthy_for_maintenance: int,
    node_status: NodeStatusFn,
    placement: PlacementCheck,
) -> HealthResult:
    """RatisReplicationCheckHandler.checkHealth, in order: under-replicated without
    unhealthy copies; over-replicated without them; over-replicated with them (for QUASI_CLOSED only if
    an unhealthy copy may go); mis-replicated; UNHEALTHY if any unhealthy copy; else HEALTHY."""
    count = RatisContainerReplicaCount(
        container, replicas, pending_ops, min_healthy_for_maintenance, False, node_status
    )
    if not count.is_sufficiently_replicated(False):
        return count.to_under_health_result()
    if count.is_over_replicated(False):
        return count.to_over_health_result()

    with_unhealthy = RatisContainerReplicaCount(
        container, replicas, pending_ops, min_healthy_for_maintenance, True, node_status
    )
    if with_unhealthy.is_over_replicated(False):
        if container.state is LifeCycleState.CLOSED:
            return with_unhealthy.to_over_health_result()
        if container.state is LifeCycleState.QUASI_CLOSED:
            # Excess unhealthy copies with unique origins are kept: then nothing is over-replicated.
            if select_unhealthy_replica_for_delete(container, replicas, 0, node_status) is None:
                return HealthResult(container)
            return with_unhealthy.to_over_health_result()

    factor = container.replication_config.required_nodes
    dns = [r.datanode for r in replicas]
    status = placement(dns, factor)
    if not status.satisfied:
        ok_after_pending = status.satisfied
        if pending_ops:
            ok_after_pending = placement(apply_pending(dns, pending_ops), factor).satisfied
        return MisReplicatedHealthResult.of(container, ok_after_pending)

    if count.unhealthy_count:
        return HealthResult(container, HealthType.UNHEALTHY)
    return HealthResult(container)


def apply_pending(dns: Sequence[DatanodeID], pending_ops: Sequence[PendingOp]) -> list[DatanodeID]:
    """Replica datanodes as they will be once pending ops complete: ADD targets in, DELETE targets out."""
    result = list(dict.fromkeys(dns))
    for op in pending_ops:
        if op.type is PendingOpType.ADD and op.target_dn not in result:
            result.append(op.target_dn)
        elif op.type is PendingOpType.DELETE and op.target_dn in result:
            result.remove(op.target_dn)
    return result
