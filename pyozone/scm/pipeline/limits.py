"""The Ratis pipeline limit (spec 6.3): the one definition SCM, the simulator and the planner all use.

Cluster level, for RATIS/THREE only:
1. fixed per-datanode limit L > 0: allowed = floor(L x healthy in-service nodes / 3); the global cap is
   not consulted in this branch;
2. else global cap G > 0: allowed = G - (RATIS/ONE pipelines in any state);
3. else no cluster-level limit.
Creation is refused when the non-closed RATIS/THREE pipelines already reach `allowed`. Per node, a
datanode already in `pipeline_limit(dn)` non-closed RATIS/THREE pipelines takes no more (NodeManager).
"""

from __future__ import annotations

from dataclasses import dataclass

from pyozone.config import OzoneConfiguration


@dataclass(frozen=True, slots=True)
class PipelineLimitSettings:
    datanode_pipeline_limit: int  # ozone.scm.datanode.pipeline.limit (L)
    ratis_pipeline_limit: int  # ozone.scm.ratis.pipeline.limit (G)

    @classmethod
    def from_conf(cls, conf: OzoneConfiguration) -> PipelineLimitSettings:
        return cls(conf.get("ozone.scm.datanode.pipeline.limit"), conf.get("ozone.scm.ratis.pipeline.limit"))


@dataclass(frozen=True, slots=True)
class LimitCheck:
    allowed: int | None  # None: no cluster-level limit
    branch: str  # "datanode", "global" or "none"
    refusal: str | None  # Ozone's message when creation must be refused


def check_ratis_three_limit(
    settings: PipelineLimitSettings, open_three: int, ratis_one: int, healthy_in_service: int
) -> LimitCheck:
    """Whether one more RATIS/THREE pipeline may be created."""
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
        allowed = settings.ratis_pipeline_limit - ratis_one
        refusal = None
        if open_three >= allowed:
            refusal = (
                "Cannot create pipeline as it would exceed the limit per datanode: "
                f"{settings.ratis_pipeline_limit} replicationConfig: RATIS/THREE"
            )
        return LimitCheck(allowed, "global", refusal)
    return LimitCheck(None, "none", None)
