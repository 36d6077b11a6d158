"""Interval sanitisation (Ozone's HddsServerUtil, ServerUtils.sanitizeUserArgs): stale and dead intervals are
clamped, stale < dead is required.

`sanitized` clamps what it is given; ScmSettings.from_conf first refuses what breaks a rule (stale < dead,
intervals > 0), so a few clampings below are reachable only by building HealthIntervals directly."""

from __future__ import annotations

import logging

import pytest

from pyozone.config import ConfigError, OzoneConfiguration
from pyozone.scm.node.health import CHECK, DEAD, HEARTBEAT, STALE, HealthIntervals, sanitize
from pyozone.scm.settings import ScmSettings

S = 1_000
M = 60 * S


def conf_intervals(overrides: dict[str, str]) -> HealthIntervals:
    return ScmSettings.from_conf(OzoneConfiguration(overrides)).health


def sanitized(overrides: dict[str, str]) -> HealthIntervals:
    """The clamping alone, on values the settings' rules would refuse first."""
    conf = OzoneConfiguration(overrides)
    return HealthIntervals.sanitized(conf.get(CHECK), conf.get(HEARTBEAT), conf.get(STALE), conf.get(DEAD))


@pytest.mark.parametrize(
    ("value", "base", "lo", "hi", "expected"),
    [
        (10, 3, 5, 1000, 15),  # raised to base x minFactor
        (20, 3, 5, 1000, 20),  # inside the range: kept
        (5000, 3, 5, 1000, 3000),  # lowered to base x maxFactor
        (15, 3, 5, 1000, 15),  # bounds are inclusive
        (3000, 3, 5, 1000, 3000),
    ],
)
def test_sanitize_clamps(value: int, base: int, lo: int, hi: int, expected: int) -> None:
    assert sanitize(value, base, lo, hi) == expected


def test_defaults_are_kept() -> None:
    got = conf_intervals({})
    assert (got.check_interval_ms, got.stale_ms, got.dead_ms) == (3 * S, 5 * M, 10 * M)


def test_stale_below_three_heartbeats_is_raised() -> None:
    # 5 x 3s = 15s is satisfied, 3 x 30s = 90s is not.
    got = conf_intervals({"ozone.scm.stale.node.interval": "20s"})
    assert got.stale_ms == 90 * S
    assert got.dead_ms == 10 * M


def test_stale_below_five_check_intervals_is_raised() -> None:
    got = conf_intervals(
        {
            "ozone.scm.heartbeat.thread.interval": "10s",
            "hdds.heartbeat.interval": "1s",
            "ozone.scm.stale.node.interval": "20s",
        }
    )
    assert got.stale_ms == 50 * S  # 5 x 10s; 3 x 1s = 3s is already satisfied


def test_both_stale_rules_apply_in_order() -> None:
    got = conf_intervals(
        {
            "ozone.scm.heartbeat.thread.interval": "3s",
            "hdds.heartbeat.interval": "10s",
            "ozone.scm.stale.node.interval": "1s",
        }
    )
    assert got.stale_ms == 30 * S  # 15s (5 x check), then raised to 30s (3 x heartbeat)


def test_stale_above_thousand_check_intervals_is_lowered() -> None:
    got = sanitized({"ozone.scm.stale.node.interval": "2h"})
    assert got.stale_ms == 3_000 * S  # 1000 x 3s
    assert got.dead_ms == 6_000 * S  # default 10m raised to 2 x stale


@pytest.mark.parametrize(("dead", "expected"), [("1m", 10 * M), ("6m", 10 * M), ("15m", 15 * M)])
def test_dead_below_twice_stale_is_raised(dead: str, expected: int) -> None:
    got = sanitized({"ozone.scm.dead.node.interval": dead})
    assert got.stale_ms == 5 * M
    assert got.dead_ms == expected


def test_dead_follows_a_raised_stale() -> None:
    got = conf_intervals({"ozone.scm.stale.node.interval": "8m", "ozone.scm.dead.node.interval": "10m"})
    assert (got.stale_ms, got.dead_ms) == (8 * M, 16 * M)


def test_stale_not_below_dead_after_sanitisation_is_refused() -> None:
    # A zero heartbeat interval clamps stale to [0, 0] and then dead to [0, 0]: stale == dead.
    with pytest.raises(ValueError, match=r"ozone\.scm\.stale\.node\.interval \(0 ms after sanitisation\)"):
        sanitized({"hdds.heartbeat.interval": "0s"})
    with pytest.raises(ConfigError, match=r"hdds\.heartbeat\.interval='0s' \(override\): must be > 0"):
        conf_intervals({"hdds.heartbeat.interval": "0s"})


def test_non_positive_check_interval_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match=r"ozone\.scm\.heartbeat\.thread\.interval"):
        conf_intervals({"ozone.scm.heartbeat.thread.interval": "0s"})


def test_sanitising_an_interval_logs_what_is_in_force(caplog: pytest.LogCaptureFixture) -> None:
    """The README's short intervals: without a 1s check interval, 6s/12s become 15s/30s, and SCM says so."""
    asked = {"hdds.heartbeat.interval": "1s", "ozone.scm.stale.node.interval": "6s",
             "ozone.scm.dead.node.interval": "12s"}  # fmt: skip
    with caplog.at_level(logging.WARNING, logger="pyozone.scm.node.health"):
        intervals = ScmSettings.from_conf(OzoneConfiguration(asked)).health
    assert (intervals.stale_ms, intervals.dead_ms) == (15_000, 30_000)
    assert [r.getMessage() for r in caplog.records] == [
        "ozone.scm.stale.node.interval value = 6000 ms is smaller than min = 15000 ms based on the key value "
        "of ozone.scm.heartbeat.thread.interval, reset to 15000 ms",
        "ozone.scm.dead.node.interval value = 12000 ms is smaller than min = 30000 ms based on the key value "
        "of ozone.scm.stale.node.interval, reset to 30000 ms",
    ]
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="pyozone.scm.node.health"):
        readme = ScmSettings.from_conf(
            OzoneConfiguration({**asked, "ozone.scm.heartbeat.thread.interval": "1s"})
        ).health
    assert (readme.stale_ms, readme.dead_ms) == (6_000, 12_000) and caplog.records == []
