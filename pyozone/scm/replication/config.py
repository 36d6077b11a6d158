"""ReplicationManagerConfig: every hdds.scm.replication.* setting, typed, read once (Ozone's
ReplicationManagerConfiguration).

The rules of Ozone's ReplicationManagerConfiguration.validate (datanode offset in [0, event timeout),
weight > 0, replication limit >= weight, inflight factor in [0, 1], durations >= 0) are rows of
pyozone.config.validate.RULES; `from_conf` runs that validation rather than repeating it, so a bad
value raises the same ConfigError, naming key, value, source and rule, as at SCM startup.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyozone.config import OzoneConfiguration, validate
from pyozone.hdds.replication_limits import out_of_service_factor

RM = "hdds.scm.replication."


@dataclass(frozen=True, slots=True)
class ReplicationManagerConfig:
    thread_interval_ms: int = 300_000
    under_replicated_interval_ms: int = 30_000
    over_replicated_interval_ms: int = 30_000
    event_timeout_ms: int = 720_000
    event_timeout_datanode_offset_ms: int = 360_000
    maintenance_replica_minimum: int = 2
    maintenance_remaining_redundancy: int = 1
    datanode_replication_limit: int = 20
    datanode_reconstruction_weight: int = 3
    datanode_delete_container_limit: int = 40
    inflight_limit_factor: float = 0.75
    container_sample_limit: int = 100
    quasi_closed_stuck_best_origin_copies: int = 3
    quasi_closed_stuck_other_origin_copies: int = 2
    expired_replica_op_scrub_interval_ms: int = 300_000
    out_of_service_factor: float = 2.0
    """hdds.datanode.replication.outofservice.limit.factor, clamped to [1, 10] (as Ozone's
    ReplicationManager)."""
    datanode_ops_limit_enabled: bool = False
    datanode_ops_limit: int = 10
    """pyozone's limit of ops per node per iteration (node_ops.py); used only when enabled."""

    @property
    def node_ops_limit(self) -> int:
        """The per-iteration limit node_ops.NodeOpsCounter applies; 0 when the rule is off."""
        return self.datanode_ops_limit if self.datanode_ops_limit_enabled else 0

    @classmethod
    def from_conf(cls, conf: OzoneConfiguration) -> ReplicationManagerConfig:
        validate(conf)
        return cls(
            thread_interval_ms=conf.get(RM + "thread.interval"),
            under_replicated_interval_ms=conf.get(RM + "under.replicated.interval"),
            over_replicated_interval_ms=conf.get(RM + "over.replicated.interval"),
            event_timeout_ms=conf.get(RM + "event.timeout"),
            event_timeout_datanode_offset_ms=conf.get(RM + "event.timeout.datanode.offset"),
            maintenance_replica_minimum=conf.get(RM + "maintenance.replica.minimum"),
            maintenance_remaining_redundancy=conf.get(RM + "maintenance.remaining.redundancy"),
            datanode_replication_limit=conf.get(RM + "datanode.replication.limit"),
            datanode_reconstruction_weight=conf.get(RM + "datanode.reconstruction.weight"),
            datanode_delete_container_limit=conf.get(RM + "datanode.delete.container.limit"),
            inflight_limit_factor=conf.get(RM + "inflight.limit.factor"),
            container_sample_limit=conf.get(RM + "container.sample.limit"),
            quasi_closed_stuck_best_origin_copies=conf.get(RM + "quasi.closed.stuck.best.origin.copies"),
            quasi_closed_stuck_other_origin_copies=conf.get(RM + "quasi.closed.stuck.other.origin.copies"),
            expired_replica_op_scrub_interval_ms=conf.get(
                "ozone.scm.expired.container.replica.op.scrub.interval"
            ),
            out_of_service_factor=out_of_service_factor(conf),
            datanode_ops_limit_enabled=conf.get(RM + "datanode.ops.limit.enabled"),
            datanode_ops_limit=conf.get(RM + "datanode.ops.limit"),
        )
