"""The Ratis limits (SCMNodeManager, RatisPipelineProvider), as the pure functions of
scm/pipeline_limits.py."""

from __future__ import annotations

from collections.abc import Iterable
from types import SimpleNamespace

import pytest

from pyozone.config import OzoneConfiguration
from pyozone.hdds.ids import RATIS_ONE, RATIS_THREE, ReplicationConfig
from pyozone.hdds.states import PipelineState
from pyozone.scm.pipeline_limits import (
    PipelineCounter,
    PipelineLimitSettings,
    check_ratis_three_limit,
    datanode_pipeline_limit,
)
from pyozone.scm.settings import ScmSettings

MSG = "Cannot create pipeline as it would exceed the limit per datanode: {} replicationConfig: RATIS/THREE"


def counter(pipelines: list[tuple[ReplicationConfig, PipelineState]]) -> PipelineCounter:
    def count(config: ReplicationConfig, states: Iterable[PipelineState]) -> int:
        wanted = set(states)
        return sum(1 for c, s in pipelines if c == config and s in wanted)

    return count


def check(L: int, G: int, open_three: int, ratis_one: int = 0, healthy: int = 10):
    pipelines = [(RATIS_THREE, PipelineState.OPEN)] * open_three + [
        (RATIS_ONE, PipelineState.OPEN)
    ] * ratis_one
    return check_ratis_three_limit(PipelineLimitSettings(L, G), counter(pipelines), healthy)


def test_closed_ratis_one_counts_against_the_global_cap_closed_ratis_three_does_not() -> None:
    pipelines = [
        (RATIS_ONE, PipelineState.CLOSED),
        (RATIS_ONE, PipelineState.ALLOCATED),
        (RATIS_THREE, PipelineState.CLOSED),
        (RATIS_THREE, PipelineState.DORMANT),
    ]
    result = check_ratis_three_limit(PipelineLimitSettings(0, 4), counter(pipelines), 10)
    assert (result.allowed, result.refusal) == (2, None)  # 4 - 2 RATIS/ONE; 1 live RATIS/THREE < 2
    pipelines.append((RATIS_THREE, PipelineState.OPEN))
    assert check_ratis_three_limit(PipelineLimitSettings(0, 4), counter(pipelines), 10).refusal == MSG.format(
        4
    )


@pytest.mark.parametrize(
    ("L", "per_disk", "metadata", "healthy", "limit"),
    [(3, 2, 4, 1, 3), (3, 2, 4, 0, 3), (0, 2, 4, 1, 8), (0, 3, 1, 2, 3), (0, 2, 4, 0, 0)],
)
def test_datanode_limit_is_fixed_or_per_metadata_disk(
    L: int, per_disk: int, metadata: int, healthy: int, limit: int
) -> None:
    node = SimpleNamespace(metadata_volume_count=lambda: metadata, healthy_volume_count=lambda: healthy)
    assert datanode_pipeline_limit(PipelineLimitSettings(L, 0, per_disk), node) == limit
    assert datanode_pipeline_limit(PipelineLimitSettings(L, 0, per_disk), None) == (L if L > 0 else 0)


def test_settings_from_configuration_defaults() -> None:
    assert ScmSettings().pipeline_limits == PipelineLimitSettings(2, 0)


def test_settings_from_configuration_overrides() -> None:
    conf = OzoneConfiguration(
        {"ozone.scm.datanode.pipeline.limit": "0", "ozone.scm.ratis.pipeline.limit": "30"}
    )
    assert ScmSettings.from_conf(conf).pipeline_limits == PipelineLimitSettings(0, 30, 2)


@pytest.mark.parametrize(
    ("L", "healthy", "allowed"),
    [(1, 10, 3), (2, 10, 6), (2, 3, 2), (2, 4, 2), (2, 5, 3), (3, 10, 10), (4, 7, 9), (1, 2, 0), (2, 0, 0)],
)
def test_fixed_branch_is_floor_of_L_times_healthy_over_three(L: int, healthy: int, allowed: int) -> None:
    result = check(L, 0, 0, healthy=healthy)
    assert (result.allowed, result.branch) == (allowed, "datanode")


def test_fixed_branch_refuses_at_allowed_not_above() -> None:
    # 10 healthy, L=1: allowed = 3; the comparison is >= (HDDS-12624), not >
    assert check(1, 0, open_three=2).refusal is None
    refused = check(1, 0, open_three=3)
    assert refused.refusal == MSG.format(1)
    assert check(1, 0, open_three=4).refusal is not None


@pytest.mark.parametrize("G", [1, 2, 5, 1000])
def test_fixed_branch_ignores_the_global_limit(G: int) -> None:
    # L=2, 10 healthy: 6 allowed whatever G says, and RATIS/ONE pipelines are not subtracted
    assert check(2, G, open_three=5, ratis_one=40).refusal is None
    result = check(2, G, open_three=6, ratis_one=40)
    assert (result.allowed, result.branch) == (6, "datanode")
    assert result.refusal == MSG.format(2)


def test_global_branch_subtracts_ratis_one() -> None:
    result = check(0, 30, open_three=0, ratis_one=10)
    assert (result.allowed, result.branch, result.refusal) == (20, "global", None)
    assert check(0, 30, open_three=19, ratis_one=10).refusal is None
    refused = check(0, 30, open_three=20, ratis_one=10)
    assert refused.refusal == MSG.format(30)


def test_global_branch_does_not_depend_on_healthy_nodes() -> None:
    assert check(0, 30, open_three=29, healthy=0).refusal is None
    assert check(0, 30, open_three=30, healthy=1000).refusal is not None


def test_global_branch_with_more_ratis_one_than_the_cap_refuses_everything() -> None:
    result = check(0, 5, open_three=0, ratis_one=8)
    assert result.allowed == -3
    assert result.refusal is not None


def test_no_cluster_limit_when_both_are_zero() -> None:
    result = check(0, 0, open_three=10_000, ratis_one=10_000, healthy=3)
    assert (result.allowed, result.branch, result.refusal) == (None, "none", None)


def test_negative_settings_count_as_unset() -> None:
    assert check(-1, 0, open_three=10_000).branch == "none"
    assert check(-1, 4, open_three=4).branch == "global"
