"""The Ratis pipeline limits (SCMNodeManager, RatisPipelineProvider): the one definition SCM, the simulator
and the planners use.

Per datanode (SCMNodeManager.pipelineLimit): the fixed limit L if L > 0, else
ozone.scm.pipeline.per.metadata.disk x the node's metadata volumes, and 0 for a node with no healthy volume. A
datanode already in that many non-closed RATIS/THREE pipelines takes no more (placement asks
NodeManager.pipeline_limit, which asks this module).

Cluster level, for RATIS/THREE only:
1. fixed per-datanode limit L > 0: allowed = floor(L x healthy in-service nodes / 3); the global cap is
   not consulted in this branch;
2. else global cap G > 0: allowed = G - (RATIS/ONE pipelines in any state);
3. else no cluster-level limit.
Creation is refused when the non-closed RATIS/THREE pipelines already reach `allowed`. Which pipelines
count is part of the rule, so callers hand over their counter rather than numbers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Protocol

from pyozone.hdds.ids import RATIS_ONE, RATIS_THREE, ReplicationConfig
from pyozone.hdds.states import PipelineState

if TYPE_CHECKING:
    from pyozone.config.validate import Rule

PipelineCounter = Callable[[ReplicationConfig, Iterable[PipelineState]], int]
"""(replication config, states) -> how many pipelines of that config are in those states."""

LIVE_STATES = (PipelineState.ALLOCATED, PipelineState.OPEN, PipelineState.DORMANT)
"""Every state but CLOSED: what a pipeline limit counts against."""


@dataclass(frozen=True, slots=True)
class PipelineLimitSettings:
    datanode_pipeline_limit: int = 2  # ozone.scm.datanode.pipeline.limit (L)
    ratis_pipeline_limit: int = 0  # ozone.scm.ratis.pipeline.limit (G)
    per_metadata_disk: int = 2  # ozone.scm.pipeline.per.metadata.disk

    RULES: ClassVar[tuple[Rule, ...]] = (
        (("ozone.scm.datanode.pipeline.limit",), lambda v: v >= 0, "must be >= 0"),
        (("ozone.scm.pipeline.per.metadata.disk",), lambda v: v >= 1, "must be >= 1"),
        (("ozone.scm.ratis.pipeline.limit",), lambda v: v >= 0, "must be >= 0"),
    )


class NodeVolumes(Protocol):
    """What the per-node limit reads of a datanode (DatanodeInfo); only when no fixed limit is set."""

    def metadata_volume_count(self) -> int: ...

    def healthy_volume_count(self) -> int: ...


def datanode_pipeline_limit(settings: PipelineLimitSettings, node: NodeVolumes | None) -> int:
    """How many non-closed RATIS/THREE pipelines one datanode (None: unknown) may be in."""
    if settings.datanode_pipeline_limit > 0:
        return settings.datanode_pipeline_limit
    if node is None or node.healthy_volume_count() < 1:
        return 0
    return settings.per_metadata_disk * node.metadata_volume_count()


@dataclass(frozen=True, slots=True)
class LimitCheck:
    allowed: int | None  # None: no cluster-level limit
    branch: str  # "datanode", "global" or "none"
    refusal: str | None  # Ozone's message when creation must be refused


def check_ratis_three_limit(
    settings: PipelineLimitSettings, count: PipelineCounter, healthy_in_service: int
) -> LimitCheck:
    """Whether one more RATIS/THREE pipeline may be created. Non-closed RATIS/THREE pipelines count
    against the limit; the global cap also counts RATIS/ONE pipelines in any state, closed ones too, as
    Ozone's PipelineManager does."""
    open_three = count(RATIS_THREE, LIVE_STATES)
    if settings.datanode_pipeline_limit > 0:
        allowed = settings.datanode_pipeline_limit * healthy_in_service // 3
        refusal = None
        if open_three >= allowed:
            refusal = (
                "Cannot create pipeline as it would exceed the limit per datanode: "
                f"{settings.datanode_pipeline_limit} replicationConfig: RATIS/THREE"
            )
        return LimitCheck(allowed, "datanode", refusal)
    if settings.ratis_pipeline_limit > 0:
        allowed = settings.ratis_pipeline_limit - count(RATIS_ONE, tuple(PipelineState))
        refusal = None
        if open_three >= allowed:
            refusal = (
                "Cannot create pipeline as it would exceed the limit per datanode: "
                f"{settings.ratis_pipeline_limit} replicationConfig: RATIS/THREE"
            )
        return LimitCheck(allowed, "global", refusal)
    return LimitCheck(None, "none", None)
