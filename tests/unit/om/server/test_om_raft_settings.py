"""An OM's Raft settings come from OM's keys as Ozone's OzoneManagerRatisServer derives Ratis's: the election
timer is drawn between ozone.om.ratis.minimum.timeout and 200 ms more (a dead leader noticed within that)."""

from __future__ import annotations

from pyozone.config import OzoneConfiguration
from pyozone.om.server.daemon import ELECTION_TIMEOUT_SPREAD_MS, om_raft_settings


def test_the_election_timer_is_drawn_within_200_ms_above_the_minimum() -> None:
    settings = om_raft_settings(OzoneConfiguration({"ozone.om.ratis.minimum.timeout": "1s"}))
    assert (settings.rpc_timeout_min_ms, settings.rpc_timeout_max_ms) == (1000, 1200)
    assert ELECTION_TIMEOUT_SPREAD_MS == 200


def test_ozones_defaults() -> None:
    settings = om_raft_settings(OzoneConfiguration())
    assert (settings.rpc_timeout_min_ms, settings.rpc_timeout_max_ms) == (5000, 5200)
    assert settings.pre_vote is True
    assert settings.heartbeat_interval_ms == 2500
