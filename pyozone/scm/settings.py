"""ScmSettings: SCM's configuration, typed, validated and read once at the edge (Ozone's @ConfigGroup
classes, such as ReplicationManagerConfiguration, play this role).

The daemon, the simulator and the planners build it with `ScmSettings.from_conf`; the SCM core takes
its groups and never sees the OzoneConfiguration (an import-linter contract keeps pyozone.config out of
it). Durations are milliseconds (`_ms`), sizes bytes. Each group's rules are rows next to its fields
(`RULES`, as pyozone.config.validate's rows); `from_conf` checks all of them, with the rows every process
shares, and raises one ConfigError listing every broken rule with its key, value and source.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from pyozone.config import ConfigError, OzoneConfiguration
from pyozone.config.validate import RULES, Rule, broken_rules, raise_broken
from pyozone.hdds.ids import ReplicationConfig
from pyozone.hdds.replication_limits import out_of_service_factor
from pyozone.hdds.states import ReplicationType
from pyozone.scm.balancer.config import (
    CB,
    ContainerBalancerConfiguration,
    InvalidContainerBalancerConfigurationError,
    container_ids,
    datanode_names,
)
from pyozone.scm.container.report_handler import UnknownContainerAction
from pyozone.scm.node.health import CHECK, DEAD, HEARTBEAT, STALE, HealthIntervals
from pyozone.scm.pipeline_limits import PipelineLimitSettings
from pyozone.scm.replication.config import RM, ReplicationManagerConfig


@dataclass(frozen=True, slots=True)
class ContainerSettings:
    """Containers and blocks (ContainerManager, BlockManager, the close and report handlers)."""

    size_bytes: int = 5 << 30  # ozone.scm.container.size
    block_size_bytes: int = 256 << 20  # ozone.scm.block.size
    owner_container_count: int = 3  # ozone.scm.pipeline.owner.container.count: open containers a pipeline
    close_wait_ms: int = 150_000  # ozone.scm.close.container.wait.duration
    unknown_container_action: UnknownContainerAction = UnknownContainerAction.WARN
    """hdds.scm.unknown-container.action"""

    RULES: ClassVar[tuple[Rule, ...]] = (
        (("ozone.scm.pipeline.owner.container.count",), lambda v: v >= 1, "must be >= 1"),
        (("hdds.scm.unknown-container.action",), lambda v: v in {"WARN", "DELETE"}, "must be WARN or DELETE"),
    )

    @classmethod
    def from_conf(cls, conf: OzoneConfiguration) -> ContainerSettings:
        return cls(
            size_bytes=conf.get("ozone.scm.container.size"),
            block_size_bytes=conf.get("ozone.scm.block.size"),
            owner_container_count=conf.get("ozone.scm.pipeline.owner.container.count"),
            close_wait_ms=conf.get("ozone.scm.close.container.wait.duration"),
            unknown_container_action=UnknownContainerAction.parse(
                conf.get("hdds.scm.unknown-container.action")
            ),
        )


@dataclass(frozen=True, slots=True)
class PipelineSettings:
    """Pipeline creation, placement and scrubbing (BackgroundPipelineCreator, PipelinePlacementPolicy,
    PipelineManager's scrubber, WritableECContainerProvider)."""

    default_ec: ReplicationConfig | None = None
    """ozone.replication.type and ozone.replication: the default EC config; None if the default is not EC."""
    creation_ratis_three: bool = True  # ozone.scm.pipeline.creation.ratis.three
    creation_auto_factor_one: bool = True  # ozone.scm.pipeline.creation.auto.factor.one
    creation_interval_ms: int = 120_000  # ozone.scm.pipeline.creation.interval
    scrub_interval_ms: int = 300_000  # ozone.scm.pipeline.scrub.interval
    allocated_timeout_ms: int = 300_000  # ozone.scm.pipeline.allocated.timeout
    destroy_timeout_ms: int = 66_000  # ozone.scm.pipeline.destroy.timeout
    metadata_free_space_min_bytes: int = 1 << 30  # ozone.scm.datanode.ratis.volume.free-space.min
    disallow_same_peers: bool = False  # ozone.scm.datanode.disallow.same.peers
    ec_minimum: int = 5  # ozone.scm.ec.pipeline.minimum
    ec_per_volume_factor: float = 1.0  # ozone.scm.ec.pipeline.per.volume.factor

    @classmethod
    def from_conf(cls, conf: OzoneConfiguration) -> PipelineSettings:
        return cls(
            default_ec=default_ec_config(conf),
            creation_ratis_three=conf.get("ozone.scm.pipeline.creation.ratis.three"),
            creation_auto_factor_one=conf.get("ozone.scm.pipeline.creation.auto.factor.one"),
            creation_interval_ms=conf.get("ozone.scm.pipeline.creation.interval"),
            scrub_interval_ms=conf.get("ozone.scm.pipeline.scrub.interval"),
            allocated_timeout_ms=conf.get("ozone.scm.pipeline.allocated.timeout"),
            destroy_timeout_ms=conf.get("ozone.scm.pipeline.destroy.timeout"),
            metadata_free_space_min_bytes=conf.get("ozone.scm.datanode.ratis.volume.free-space.min"),
            disallow_same_peers=conf.get("ozone.scm.datanode.disallow.same.peers"),
            ec_minimum=conf.get("ozone.scm.ec.pipeline.minimum"),
            ec_per_volume_factor=conf.get("ozone.scm.ec.pipeline.per.volume.factor"),
        )


def default_ec_config(conf: OzoneConfiguration) -> ReplicationConfig | None:
    """The default EC replication config (ozone.replication, e.g. rs-3-2-1024k), or None when the
    default replication type is not EC."""
    if str(conf.get("ozone.replication.type")).upper() != ReplicationType.EC.name:
        return None
    text = conf.get("ozone.replication")
    try:
        return ReplicationConfig.parse(f"EC/{text}")
    except ValueError as e:
        raise ConfigError(
            f"ozone.replication: {text!r} is not an EC config while ozone.replication.type is EC ({e})"
        ) from None


@dataclass(frozen=True, slots=True)
class SafeModeSettings:
    """Safe mode's exit rules and what waits for its exit (SafeModeManager, SafeModeRuleFactory)."""

    enabled: bool = True  # hdds.scm.safemode.enabled
    min_datanodes: int = 3  # hdds.scm.safemode.min.datanode
    container_threshold: float = 0.99  # hdds.scm.safemode.threshold.pct
    healthy_pipeline_threshold: float = 0.10  # hdds.scm.safemode.healthy.pipeline.pct
    one_replica_pipeline_threshold: float = 0.90  # hdds.scm.safemode.atleast.one.node.reported.pipeline.pct
    pipeline_creation: bool = True  # hdds.scm.safemode.pipeline.creation
    refresh_interval_ms: int = 5_000  # hdds.scm.safemode.rule.refresh.interval
    wait_after_exit_ms: int = 300_000  # hdds.scm.wait.time.after.safemode.exit

    RULES: ClassVar[tuple[Rule, ...]] = (
        (("hdds.scm.safemode.min.datanode",), lambda v: v >= 0, "must be >= 0"),
    )

    @classmethod
    def from_conf(cls, conf: OzoneConfiguration) -> SafeModeSettings:
        return cls(
            enabled=conf.get("hdds.scm.safemode.enabled"),
            min_datanodes=conf.get("hdds.scm.safemode.min.datanode"),
            container_threshold=conf.get("hdds.scm.safemode.threshold.pct"),
            healthy_pipeline_threshold=conf.get("hdds.scm.safemode.healthy.pipeline.pct"),
            one_replica_pipeline_threshold=conf.get(
                "hdds.scm.safemode.atleast.one.node.reported.pipeline.pct"
            ),
            pipeline_creation=conf.get("hdds.scm.safemode.pipeline.creation"),
            refresh_interval_ms=conf.get("hdds.scm.safemode.rule.refresh.interval"),
            wait_after_exit_ms=conf.get("hdds.scm.wait.time.after.safemode.exit"),
        )


@dataclass(frozen=True, slots=True)
class BlockDeletionSettings:
    """The deleted-block log and SCMBlockDeletingService."""

    per_interval_max: int = 500_000  # hdds.scm.block.deletion.per-interval.max
    interval_ms: int = 60_000  # hdds.scm.block.deleting.service.interval
    timeout_ms: int = 300_000  # ozone.block.deleting.service.timeout: a sent transaction's retry
    datanode_queue_limit: int = 5  # hdds.datanode.block.delete.queue.limit: the datanode's own queue
    commit_map_limit: int = 5_000_000  # hdds.scm.block.deletion.txn.dn.commit.map.limit
    per_datanode_factor: int = 8  # ozone.scm.block.deletion.per.dn.distribution.factor
    batch_byte_limit: int = 32 << 20
    """ozone.scm.ha.ratis.log.appender.queue.byte-limit: a run's transactions fit one Raft append."""

    RULES: ClassVar[tuple[Rule, ...]] = (
        (("hdds.scm.block.deletion.per-interval.max",), lambda v: v > 0, "must be > 0"),
    )

    @classmethod
    def from_conf(cls, conf: OzoneConfiguration) -> BlockDeletionSettings:
        return cls(
            per_interval_max=conf.get("hdds.scm.block.deletion.per-interval.max"),
            interval_ms=conf.get("hdds.scm.block.deleting.service.interval"),
            timeout_ms=conf.get("ozone.block.deleting.service.timeout"),
            datanode_queue_limit=conf.get("hdds.datanode.block.delete.queue.limit"),
            commit_map_limit=conf.get("hdds.scm.block.deletion.txn.dn.commit.map.limit"),
            per_datanode_factor=conf.get("ozone.scm.block.deletion.per.dn.distribution.factor"),
            batch_byte_limit=conf.get("ozone.scm.ha.ratis.log.appender.queue.byte-limit"),
        )


@dataclass(frozen=True, slots=True)
class ScmSettings:
    """Every setting of the SCM core, by group; the defaults are the key registry's."""

    health: HealthIntervals = field(default_factory=HealthIntervals)
    pipeline_limits: PipelineLimitSettings = field(default_factory=PipelineLimitSettings)
    pipeline: PipelineSettings = field(default_factory=PipelineSettings)
    container: ContainerSettings = field(default_factory=ContainerSettings)
    safe_mode: SafeModeSettings = field(default_factory=SafeModeSettings)
    block_deletion: BlockDeletionSettings = field(default_factory=BlockDeletionSettings)
    replication: ReplicationManagerConfig = field(default_factory=ReplicationManagerConfig)
    """hdds.scm.replication.*"""
    balancer: ContainerBalancerConfiguration = field(default_factory=ContainerBalancerConfiguration)
    """hdds.container.balancer.*: the configuration a `start` without options runs."""
    sequence_id_batch_size: int = 1000  # ozone.scm.sequence.id.batch.size
    admin_monitor_interval_ms: int = 30_000  # ozone.scm.datanode.admin.monitor.interval
    admin_monitor_logging_limit: int = 1000  # ozone.scm.datanode.admin.monitor.logging.limit

    RULES: ClassVar[tuple[Rule, ...]] = (
        (("ozone.scm.sequence.id.batch.size",), lambda v: v >= 1, "must be >= 1"),
    )

    @classmethod
    def from_conf(cls, conf: OzoneConfiguration) -> ScmSettings:
        """Checks every rule first (the shared rows, then each group's), then reads each group."""
        raise_broken(broken_rules(conf, scm_rules()))
        return cls(
            health=_health(conf),
            pipeline_limits=PipelineLimitSettings(
                conf.get("ozone.scm.datanode.pipeline.limit"),
                conf.get("ozone.scm.ratis.pipeline.limit"),
                conf.get("ozone.scm.pipeline.per.metadata.disk"),
            ),
            pipeline=PipelineSettings.from_conf(conf),
            container=ContainerSettings.from_conf(conf),
            safe_mode=SafeModeSettings.from_conf(conf),
            block_deletion=BlockDeletionSettings.from_conf(conf),
            replication=_replication(conf),
            balancer=_balancer(conf),
            sequence_id_batch_size=conf.get("ozone.scm.sequence.id.batch.size"),
            admin_monitor_interval_ms=conf.get("ozone.scm.datanode.admin.monitor.interval"),
            admin_monitor_logging_limit=conf.get("ozone.scm.datanode.admin.monitor.logging.limit"),
        )

    def check_balancer(self, config: ContainerBalancerConfiguration) -> None:
        """A balancer run's configuration, refused as SCM's `start` refuses it, as a ConfigError."""
        try:
            config.validate(self.container.size_bytes, self.replication.event_timeout_datanode_offset_ms)
        except InvalidContainerBalancerConfigurationError as e:
            raise ConfigError(str(e)) from None


def scm_rules() -> tuple[Rule, ...]:
    """The rows every process shares (durations >= 0 among them), then SCM's, in the order they report."""
    return (
        *RULES,
        *HealthIntervals.RULES,
        *ReplicationManagerConfig.RULES,
        *ContainerBalancerConfiguration.RULES,
        *BlockDeletionSettings.RULES,
        *ContainerSettings.RULES,
        *PipelineLimitSettings.RULES,
        *SafeModeSettings.RULES,
        *ScmSettings.RULES,
    )


def _health(conf: OzoneConfiguration) -> HealthIntervals:
    try:
        return HealthIntervals.sanitized(
            conf.get(CHECK), conf.get(HEARTBEAT), conf.get(STALE), conf.get(DEAD)
        )
    except ValueError as e:
        raise ConfigError(str(e)) from None


def _replication(conf: OzoneConfiguration) -> ReplicationManagerConfig:
    return ReplicationManagerConfig(
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


def _balancer(conf: OzoneConfiguration) -> ContainerBalancerConfiguration:
    try:
        excluded = container_ids(CB + "exclude.containers", conf.get(CB + "exclude.containers") or "")
    except ValueError as e:
        raise ConfigError(str(e)) from None
    return ContainerBalancerConfiguration(
        threshold=conf.get(CB + "utilization.threshold"),
        max_datanodes_percentage=conf.get(CB + "datanodes.involved.max.percentage.per.iteration"),
        max_size_to_move_per_iteration=conf.get(CB + "size.moved.max.per.iteration"),
        max_size_entering_target=conf.get(CB + "size.entering.target.max"),
        max_size_leaving_source=conf.get(CB + "size.leaving.source.max"),
        iterations=conf.get(CB + "iterations"),
        exclude_containers=excluded,
        move_timeout_ms=conf.get(CB + "move.timeout"),
        move_replication_timeout_ms=conf.get(CB + "move.replication.timeout"),
        balancing_interval_ms=conf.get(CB + "balancing.iteration.interval"),
        include_datanodes=datanode_names(conf.get(CB + "include.datanodes") or ""),
        exclude_datanodes=datanode_names(conf.get(CB + "exclude.datanodes") or ""),
        network_topology_enable=conf.get(CB + "move.networkTopology.enable"),
        trigger_du_enable=conf.get(CB + "trigger.du.before.move.enable"),
    )
