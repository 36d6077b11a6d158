"""ReplicationManagerMetrics: the counters of Ozone's ReplicationManagerMetrics, as plain ints.

Counters split Ratis (replica index 0) from EC (index > 0) work as Ozone does, so an operator can tell
a slow EC reconstruction from slow Ratis copies. "Deferred" counters record work the throttle refused
(the item is requeued), "partial" ones work done with fewer targets than needed. The report's health
counts are exported as gauges elsewhere (ContainerHealthState.metric_name); they are not kept here.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyozone.hdds.ids import ContainerID
from pyozone.scm.replication.pending_ops import PendingOp, PendingOpType


@dataclass(slots=True)
class ReplicationManagerMetrics:
    # commands sent (ReplicationManager.adjustPendingOpsAndMetrics)
    replication_cmds_sent_total: int = 0
    ec_replication_cmds_sent_total: int = 0
    deletion_cmds_sent_total: int = 0
    deletion_bytes_total: int = 0
    ec_deletion_cmds_sent_total: int = 0
    ec_reconstruction_cmds_sent_total: int = 0
    # pending ops completed or expired (ContainerReplicaPendingOps)
    replicas_created_total: int = 0
    ec_replicas_created_total: int = 0
    replicas_deleted_total: int = 0
    ec_replicas_deleted_total: int = 0
    replica_create_timeout_total: int = 0
    ec_replica_create_timeout_total: int = 0
    replica_delete_timeout_total: int = 0
    ec_replica_delete_timeout_total: int = 0
    # throttling (UnhealthyReplicationProcessor, ReplicationManager)
    pending_replication_limit_reached_total: int = 0
    replicate_container_cmds_deferred_total: int = 0
    ec_reconstruction_cmds_deferred_total: int = 0
    delete_container_cmds_deferred_total: int = 0
    # partial repairs (the under-replication handlers)
    partial_replication_total: int = 0
    partial_replication_for_mis_replication_total: int = 0
    ec_partial_replication_for_mis_replication_total: int = 0
    ec_partial_reconstruction_skipped_total: int = 0
    ec_partial_reconstruction_critical_total: int = 0
    ec_partial_reconstruction_none_overloaded_total: int = 0
    ec_partial_replication_for_out_of_service_replicas_total: int = 0

    def pending_op_completed(self, op: PendingOp, container_id: ContainerID, timed_out: bool) -> None:
        """A ContainerReplicaPendingOps subscriber: a replica was created or deleted as asked, or the
        op expired first. Subscribe it with `pending_ops.subscribe(metrics.pending_op_completed)`."""
        name = _OP_COUNTERS[op.type, op.is_ec, timed_out]
        setattr(self, name, getattr(self, name) + 1)


_OP_COUNTERS = {
    (PendingOpType.ADD, False, False): "replicas_created_total",
    (PendingOpType.ADD, True, False): "ec_replicas_created_total",
    (PendingOpType.ADD, False, True): "replica_create_timeout_total",
    (PendingOpType.ADD, True, True): "ec_replica_create_timeout_total",
    (PendingOpType.DELETE, False, False): "replicas_deleted_total",
    (PendingOpType.DELETE, True, False): "ec_replicas_deleted_total",
    (PendingOpType.DELETE, False, True): "replica_delete_timeout_total",
    (PendingOpType.DELETE, True, True): "ec_replica_delete_timeout_total",
}
