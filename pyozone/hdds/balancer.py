"""The Container Balancer's records as the admin protocol carries them: what `containerbalancer start`
may set, one iteration's results, and the running balancer's status (Ozone's
StartContainerBalancerRequestProto, ContainerBalancerTaskIterationStatusInfo and
ContainerBalancerStatusInfo). SCM's balancer (pyozone/scm/balancer) makes them; the CLI reads them."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any


class IterationResult(Enum):
    """ContainerBalancerTask.IterationResult."""

    ITERATION_COMPLETED = "ITERATION_COMPLETED"
    ITERATION_INTERRUPTED = "ITERATION_INTERRUPTED"
    CAN_NOT_BALANCE_ANY_MORE = "CAN_NOT_BALANCE_ANY_MORE"


@dataclass(frozen=True, slots=True)
class IterationStatus:
    """One iteration (Ozone's ContainerBalancerTaskIterationStatusInfo: IterationInfo, ContainerMoveInfo,
    DataMoveInfo, and pyozone's datanodes involved); `result` None while it runs."""

    number: int
    result: IterationResult | None
    duration_s: int
    moves_scheduled: int
    moves_completed: int
    moves_failed: int
    moves_timed_out: int
    size_scheduled: int
    size_moved: int
    datanodes_involved: int
    size_entering: dict[str, int] = field(default_factory=dict)
    size_leaving: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "iterationNumber": self.number,
            "iterationResult": None if self.result is None else self.result.value,
            "iterationDuration": self.duration_s,
            "containerMovesScheduled": self.moves_scheduled,
            "containerMovesCompleted": self.moves_completed,
            "containerMovesFailed": self.moves_failed,
            "containerMovesTimeout": self.moves_timed_out,
            "sizeScheduledForMove": self.size_scheduled,
            "dataSizeMoved": self.size_moved,
            "datanodesInvolved": self.datanodes_involved,
            "sizeEnteringNodes": dict(sorted(self.size_entering.items())),
            "sizeLeavingNodes": dict(sorted(self.size_leaving.items())),
        }


@dataclass(frozen=True, slots=True)
class BalancerStartOptions:
    """`containerbalancer start`'s options, None where not given (the SCM's configuration applies): sizes
    in GB and durations in minutes, as Ozone's request carries them."""

    threshold: float | None = None
    iterations: int | None = None
    max_datanodes_percentage: int | None = None
    max_size_to_move_per_iteration_gb: int | None = None
    max_size_entering_target_gb: int | None = None
    max_size_leaving_source_gb: int | None = None
    balancing_interval_minutes: int | None = None
    move_timeout_minutes: int | None = None
    move_replication_timeout_minutes: int | None = None
    network_topology_enable: bool | None = None
    include_datanodes: str | None = None
    exclude_datanodes: str | None = None


@dataclass(frozen=True, slots=True)
class BalancerStartResult:
    """StartContainerBalancerResponseProto: started, or why not."""

    started: bool
    message: str = ""


@dataclass(frozen=True, slots=True)
class BalancerStatusInfo:
    """ContainerBalancerStatusInfoResponseProto: whether it runs and the current (or, once it stopped,
    the last) run since this SCM started leading: since when (epoch seconds), with which configuration
    (ContainerBalancerConfigurationProto's fields), its iterations, and when and why it stopped."""

    running: bool
    started_at_s: int = 0
    configuration: dict[str, Any] = field(default_factory=dict)
    iterations: tuple[IterationStatus, ...] = ()
    stopped_at_s: int | None = None
    stop_reason: str | None = None

    @property
    def has_run(self) -> bool:
        """Whether there is a run to describe (Ozone's hasContainerBalancerStatusInfo)."""
        return bool(self.configuration)
