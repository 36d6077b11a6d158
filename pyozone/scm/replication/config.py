"""ReplicationManagerConfig: every hdds.scm.replication.* setting, typed, read once (Ozone's
ReplicationManagerConfiguration).

The rules of Ozone's ReplicationManagerConfiguration.validate (datanode offset in [0, event timeout),
weight > 0, replication limit >= weight) are the `RULES` rows below; ScmSettings.from_conf
(pyozone/scm/settings.py) checks them with every other SCM row, so a bad value raises one ConfigError
naming key, value, source and rule. The inflight factor is a fraction, range-checked when parsed;
durations >= 0 is a row of pyozone.config.validate.RULES.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    from pyozone.config.validate import Rule

RM = "hdds.scm.replication."


@dataclass(frozen=True, slots=True)
class ReplicationManagerConfig:
    thread_interval_ms: int = 300_000  # hdds.scm.replication.thread.interval
    under_replicated_interval_ms: int = 30_000  # hdds.scm.replication.under.replicated.interval
    over_replicated_interval_ms: int = 30_000  # hdds.scm.replication.over.replicated.interval
    event_timeout_ms: int = 720_000  # hdds.scm.replication.event.timeout
    event_timeout_datanode_offset_ms: int = 360_000  # hdds.scm.replication.event.timeout.datanode.offset
    maintenance_replica_minimum: int = 2  # hdds.scm.replication.maintenance.replica.minimum
    maintenance_remaining_redundancy: int = 1  # hdds.scm.replication.maintenance.remaining.redundancy
    datanode_replication_limit: int = 20  # hdds.scm.replication.datanode.replication.limit
    datanode_reconstruction_weight: int = 3  # hdds.scm.replication.datanode.reconstruction.weight
    datanode_delete_container_limit: int = 40  # hdds.scm.replication.datanode.delete.container.limit
    inflight_limit_factor: float = 0.75  # hdds.scm.replication.inflight.limit.factor
    container_sample_limit: int = 100  # hdds.scm.replication.container.sample.limit
    quasi_closed_stuck_best_origin_copies: int = 3
    """hdds.scm.replication.quasi.closed.stuck.best.origin.copies"""
    quasi_closed_stuck_other_origin_copies: int = 2
    """hdds.scm.replication.quasi.closed.stuck.other.origin.copies"""
    expired_replica_op_scrub_interval_ms: int = 300_000
    """ozone.scm.expired.container.replica.op.scrub.interval"""
    out_of_service_factor: float = 2.0
    """hdds.datanode.replication.outofservice.limit.factor, clamped to [1, 10] (as Ozone's
    ReplicationManager)."""
    datanode_ops_limit_enabled: bool = False  # hdds.scm.replication.datanode.ops.limit.enabled
    datanode_ops_limit: int = 10  # hdds.scm.replication.datanode.ops.limit
    """pyozone's limit of ops per node per iteration (node_ops.py); used only when enabled."""

    RULES: ClassVar[tuple[Rule, ...]] = (
        (
            (RM + "event.timeout.datanode.offset", RM + "event.timeout"),
            lambda o, t: 0 <= o < t,
            "the datanode offset must be >= 0 and less than the event timeout",
        ),
        ((RM + "datanode.reconstruction.weight",), lambda v: v > 0, "must be > 0"),
        ((RM + "datanode.ops.limit",), lambda v: v >= 1, "must be >= 1"),
        (
            (RM + "datanode.replication.limit", RM + "datanode.reconstruction.weight"),
            lambda lim, w: lim >= w,
            "the replication limit must be >= the reconstruction weight",
        ),
    )

    @property
    def node_ops_limit(self) -> int:
        """The per-iteration limit node_ops.NodeOpsCounter applies; 0 when the rule is off."""
        return self.datanode_ops_limit if self.datanode_ops_limit_enabled else 0
