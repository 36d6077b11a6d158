"""The datanode pipelines' Raft settings (PipelineRaftConfig, datanode/settings.py): Ozone's keys read once,
and the instants of the failure notifications decided once, by the settings the daemon's core and the
simulator both use."""

from __future__ import annotations

from pyozone.config import OzoneConfiguration
from pyozone.datanode.pipeline_raft import ELECTION_SPREAD_MS
from pyozone.datanode.settings import DatanodeSettings, PipelineRaftConfig


def test_the_failure_timeouts_come_from_ozones_keys_with_ozones_defaults() -> None:
    default = DatanodeSettings.from_conf(OzoneConfiguration()).ratis
    assert (default.slowness_timeout_ms, default.no_leader_timeout_ms) == (300_000, 300_000)
    conf = OzoneConfiguration(
        {
            "hdds.ratis.raft.server.rpc.slowness.timeout": "45s",
            "hdds.ratis.raft.server.Notification.no-leader.timeout": "2m",
            "hdds.ratis.leader.election.minimum.timeout.duration": "1s",
        }
    )
    settings = DatanodeSettings.from_conf(conf).ratis.settings(suggested_leader=False)
    assert settings.rpc_slowness_timeout_ms == 45_000 and settings.no_leader_timeout_ms == 120_000
    assert (settings.rpc_timeout_min_ms, settings.rpc_timeout_max_ms) == (1000, 1000 + ELECTION_SPREAD_MS)
    # the instants: a follower last heard at t is slow from t + 45 s; a member leaderless since t asks
    # SCM to close its pipeline from t + 2 min
    assert settings.slow_at_ms(10_000) == 55_000
    assert settings.no_leader_at_ms(10_000) == 130_000


def test_a_zero_timeout_turns_the_notification_off() -> None:
    off = PipelineRaftConfig(slowness_timeout_ms=0, no_leader_timeout_ms=0)
    settings = off.settings(suggested_leader=True)
    assert settings.slow_at_ms(10_000) is None and settings.no_leader_at_ms(10_000) is None
