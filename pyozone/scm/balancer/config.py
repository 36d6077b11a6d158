"""ContainerBalancerConfiguration: every hdds.container.balancer.* setting, typed, and its persisted form.

Single-key ranges (threshold, percentage, iterations, size per iteration) are the `RULES` rows below,
which ScmSettings.from_conf (pyozone/scm/settings.py) checks, so a bad ozone-site.xml fails at SCM startup
naming key, value and source. The cross-key rules Ozone's ContainerBalancer.validateConfiguration
applies when a run starts (sizes against ozone.scm.container.size, the move timeouts against each other
and the datanode offset), SCMClientProtocolServer's (sizes and durations > 0) and the bounds of their
wire types (Java int minutes, int64 bytes) are `validate`, raised as
InvalidContainerBalancerConfigurationError on `start`; beyond Ozone, a move.replication.timeout at or
below the datanode offset is refused (every replicate would reach the datanode past its deadline). A
run's configuration is persisted with `shouldRun` and `nextIterationIndex`
(ContainerBalancerConfigurationProto in Ozone's statefulServiceConfig table), so a new leader or a
restarted SCM resumes it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, ClassVar

from pyozone.hdds.balancer import BalancerStartOptions

if TYPE_CHECKING:
    from pyozone.config.validate import Rule

CB = "hdds.container.balancer."  # as pyozone.config.keys.CB, which the core may not import

MIN_DELETE_PHASE_MS = 9 * 60_000
"""Ozone's floor for move.timeout - move.replication.timeout - the datanode offset: the delete's time."""
INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1
MAX_DURATION_MS = INT32_MAX * 60_000
"""Ozone's bound on the balancer's durations: `start` takes them as Java int minutes
(ContainerBalancerStartSubcommand, SCMClientProtocolServer.startContainerBalancer). It also keeps every
deadline (now + move.timeout) inside the int64 deadlineMsSinceEpoch of the commands."""
MAX_SIZE = INT64_MAX
"""Sizes are int64 bytes in the persisted proto: `start -s` takes MAX_SIZE >> 30 GB at most."""


class InvalidContainerBalancerConfigurationError(ValueError):
    """Ozone's InvalidContainerBalancerConfigurationException: the run is refused, nothing persisted."""


def container_ids(key: str, text: str) -> frozenset[int]:
    """Container ids separated by commas (hdds.container.balancer.exclude.containers' form)."""
    try:
        return frozenset(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise ValueError(f"{key}={text!r}: expected container ids separated by commas, e.g. 1,4,5") from None


def datanode_names(text: str) -> frozenset[str]:
    """Hostnames or IPs separated by commas (hdds.container.balancer.include.datanodes' form)."""
    return frozenset(part.strip() for part in text.split(",") if part.strip())


@dataclass(frozen=True, slots=True)
class ContainerBalancerConfiguration:
    threshold: float = 10.0  # hdds.container.balancer.utilization.threshold
    """Percent: a datanode is balanced within this many points of the cluster's average utilization."""
    max_datanodes_percentage: int = 20
    """hdds.container.balancer.datanodes.involved.max.percentage.per.iteration"""
    max_size_to_move_per_iteration: int = 500 << 30  # hdds.container.balancer.size.moved.max.per.iteration
    max_size_entering_target: int = 26 << 30  # hdds.container.balancer.size.entering.target.max
    max_size_leaving_source: int = 26 << 30  # hdds.container.balancer.size.leaving.source.max
    iterations: int = 10  # hdds.container.balancer.iterations
    """-1: iterate until balanced or stopped."""
    exclude_containers: frozenset[int] = field(default_factory=frozenset)
    """hdds.container.balancer.exclude.containers"""
    move_timeout_ms: int = 65 * 60_000  # hdds.container.balancer.move.timeout
    move_replication_timeout_ms: int = 50 * 60_000  # hdds.container.balancer.move.replication.timeout
    balancing_interval_ms: int = 70 * 60_000  # hdds.container.balancer.balancing.iteration.interval
    include_datanodes: frozenset[str] = field(default_factory=frozenset)
    """hdds.container.balancer.include.datanodes"""
    exclude_datanodes: frozenset[str] = field(default_factory=frozenset)
    """hdds.container.balancer.exclude.datanodes"""
    network_topology_enable: bool = False  # hdds.container.balancer.move.networkTopology.enable
    trigger_du_enable: bool = False  # hdds.container.balancer.trigger.du.before.move.enable

    RULES: ClassVar[tuple[Rule, ...]] = (
        ((CB + "utilization.threshold",), lambda v: 0 <= v < 100, "must be a percentage from 0 to below 100"),
        (
            (CB + "datanodes.involved.max.percentage.per.iteration",),
            lambda v: 0 <= v <= 100,
            "must be 0 to 100",
        ),
        ((CB + "iterations",), lambda v: v == -1 or v > 0, "must be > 0, or -1 to run until balanced"),
        ((CB + "size.moved.max.per.iteration",), lambda v: v > 0, "must be > 0"),
    )

    @property
    def threshold_ratio(self) -> float:
        return self.threshold / 100

    @property
    def max_datanodes_ratio(self) -> float:
        return self.max_datanodes_percentage / 100

    def with_options(self, **options: Any) -> ContainerBalancerConfiguration:
        """The configuration with the options a `start` call gave (those not None)."""
        return replace(self, **{k: v for k, v in options.items() if v is not None})

    def with_start_options(self, options: BalancerStartOptions) -> ContainerBalancerConfiguration:
        """The configuration a `start` call asks for: its options (GB and minutes, as Ozone's
        StartContainerBalancerRequestProto carries them) over this one."""
        o = options

        def gb(value: int | None) -> int | None:
            return None if value is None else value << 30

        def minutes(value: int | None) -> int | None:
            return None if value is None else value * 60_000

        return self.with_options(
            threshold=o.threshold,
            iterations=o.iterations,
            max_datanodes_percentage=o.max_datanodes_percentage,
            max_size_to_move_per_iteration=gb(o.max_size_to_move_per_iteration_gb),
            max_size_entering_target=gb(o.max_size_entering_target_gb),
            max_size_leaving_source=gb(o.max_size_leaving_source_gb),
            balancing_interval_ms=minutes(o.balancing_interval_minutes),
            move_timeout_ms=minutes(o.move_timeout_minutes),
            move_replication_timeout_ms=minutes(o.move_replication_timeout_minutes),
            network_topology_enable=o.network_topology_enable,
            include_datanodes=None if o.include_datanodes is None else datanode_names(o.include_datanodes),
            exclude_datanodes=None if o.exclude_datanodes is None else datanode_names(o.exclude_datanodes),
        )

    def iterations_done(self, index: int) -> bool:
        """Whether a run that has run `index` iterations has run all it may (-1: until balanced)."""
        return self.iterations != -1 and index >= self.iterations

    def validate(self, container_size: int, datanode_offset_ms: int) -> None:
        """ContainerBalancer.validateConfiguration and the setters' ranges: every broken rule, one error."""
        problems: list[str] = []
        if not 0 <= self.threshold < 100:
            problems.append(f"threshold {self.threshold:g} must be a percentage from 0 to below 100")
        if not 0 <= self.max_datanodes_percentage <= 100:
            problems.append(
                f"max datanodes percentage to involve {self.max_datanodes_percentage} must be 0 to 100"
            )
        if self.iterations != -1 and not 0 < self.iterations <= INT32_MAX:
            problems.append(
                f"iterations {self.iterations} must be > 0 (at most {INT32_MAX}), or -1 to run until balanced"
            )
        for key, size in (
            ("size.moved.max.per.iteration", self.max_size_to_move_per_iteration),
            ("size.entering.target.max", self.max_size_entering_target),
            ("size.leaving.source.max", self.max_size_leaving_source),
        ):
            if size <= 0:
                problems.append(f"{CB}{key} ({size}) must be greater than zero")
            elif size > MAX_SIZE:
                problems.append(f"{CB}{key} ({size}) must be at most {MAX_SIZE} bytes ({MAX_SIZE >> 30} GB)")
            elif key != "size.moved.max.per.iteration" and size <= container_size:
                problems.append(f"{CB}{key} ({size}) should be greater than ozone.scm.container.size")
        if self.balancing_interval_ms <= 0:
            problems.append(
                f"{CB}balancing.iteration.interval ({self.balancing_interval_ms}ms) must be greater than zero"
            )
        for key, duration in (
            ("balancing.iteration.interval", self.balancing_interval_ms),
            ("move.timeout", self.move_timeout_ms),
            ("move.replication.timeout", self.move_replication_timeout_ms),
        ):
            if duration > MAX_DURATION_MS:
                problems.append(
                    f"{CB}{key} ({duration}ms) must be at most {MAX_DURATION_MS}ms (2^31-1 minutes)"
                )
        if self.move_timeout_ms <= 0 or self.move_replication_timeout_ms <= 0:
            problems.append("move timeout and move replication timeout must each be greater than zero")
        elif self.move_replication_timeout_ms <= datanode_offset_ms:
            problems.append(
                f"{CB}move.replication.timeout ({self.move_replication_timeout_ms}ms) must be greater than "
                f"hdds.scm.replication.event.timeout.datanode.offset ({datanode_offset_ms}ms): the datanode "
                "would drop every move's replicate as past its deadline"
            )
        elif self.move_replication_timeout_ms >= self.move_timeout_ms:
            problems.append(f"{CB}move.replication.timeout should be less than {CB}move.timeout")
        elif (
            self.move_timeout_ms - self.move_replication_timeout_ms - datanode_offset_ms < MIN_DELETE_PHASE_MS
        ):
            problems.append(
                f"({CB}move.timeout ({self.move_timeout_ms}ms) - {CB}move.replication.timeout "
                f"({self.move_replication_timeout_ms}ms) - "
                f"hdds.scm.replication.event.timeout.datanode.offset ({datanode_offset_ms}ms)) "
                "should be greater than or equal to 540000ms or 9 minutes"
            )
        if self.network_topology_enable:
            problems.append(f"{CB}move.networkTopology.enable=true is not supported by pyozone's balancer")
        if self.trigger_du_enable:
            problems.append(f"{CB}trigger.du.before.move.enable=true is not supported by pyozone's balancer")
        if problems:
            raise InvalidContainerBalancerConfigurationError("; ".join(problems))

    # ------------------------------------------------------------------ the persisted record
    def to_record(self, should_run: bool, next_iteration_index: int) -> dict[str, Any]:
        """ContainerBalancerConfigurationProto's fields, by its names."""
        return {
            "utilizationThreshold": str(self.threshold),
            "datanodesInvolvedMaxPercentagePerIteration": self.max_datanodes_percentage,
            "sizeMovedMaxPerIteration": self.max_size_to_move_per_iteration,
            "sizeEnteringTargetMax": self.max_size_entering_target,
            "sizeLeavingSourceMax": self.max_size_leaving_source,
            "iterations": self.iterations,
            "excludeContainers": ",".join(str(c) for c in sorted(self.exclude_containers)),
            "moveTimeout": self.move_timeout_ms,
            "moveReplicationTimeout": self.move_replication_timeout_ms,
            "balancingIterationInterval": self.balancing_interval_ms,
            "includeDatanodes": ",".join(sorted(self.include_datanodes)),
            "excludeDatanodes": ",".join(sorted(self.exclude_datanodes)),
            "moveNetworkTopologyEnable": self.network_topology_enable,
            "triggerDuBeforeMoveEnable": self.trigger_du_enable,
            "shouldRun": should_run,
            "nextIterationIndex": next_iteration_index,
        }

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> ContainerBalancerConfiguration:
        return cls(
            threshold=float(record["utilizationThreshold"]),
            max_datanodes_percentage=record["datanodesInvolvedMaxPercentagePerIteration"],
            max_size_to_move_per_iteration=record["sizeMovedMaxPerIteration"],
            max_size_entering_target=record["sizeEnteringTargetMax"],
            max_size_leaving_source=record["sizeLeavingSourceMax"],
            iterations=record["iterations"],
            exclude_containers=container_ids("excludeContainers", record["excludeContainers"]),
            move_timeout_ms=record["moveTimeout"],
            move_replication_timeout_ms=record["moveReplicationTimeout"],
            balancing_interval_ms=record["balancingIterationInterval"],
            include_datanodes=datanode_names(record["includeDatanodes"]),
            exclude_datanodes=datanode_names(record["excludeDatanodes"]),
            network_topology_enable=record["moveNetworkTopologyEnable"],
            trigger_du_enable=record["triggerDuBeforeMoveEnable"],
        )
