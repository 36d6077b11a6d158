"""The local cluster's plan: its site file carries the short intervals a one-machine cluster wants."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from pyozone.cluster import layout
from pyozone.cluster.layout import LOCAL_INTERVALS, plan_cluster
from pyozone.config.site import load_configuration
from pyozone.scm.node.health import HealthIntervals


def test_local_intervals_are_in_the_site_file_and_overrides_win(tmp_path: Path) -> None:
    state = plan_cluster(tmp_path, 3, 1, {"ozone.scm.dead.node.interval": "90s"})
    conf = load_configuration(Path(state.conf_dir), {})
    assert conf.get_raw("hdds.scm.wait.time.after.safemode.exit") == "10s"  # issue 11 defect 9
    assert conf.get_raw("hdds.heartbeat.interval") == LOCAL_INTERVALS["hdds.heartbeat.interval"]
    assert conf.get_raw("ozone.scm.dead.node.interval") == "90s"


def test_local_intervals_need_no_sanitising(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    conf = load_configuration(Path(plan_cluster(tmp_path, 3, 1, {}).conf_dir), {})
    with caplog.at_level(logging.WARNING):
        intervals = HealthIntervals.from_conf(conf)
    assert caplog.records == []
    assert (intervals.stale_ms, intervals.dead_ms) == (30_000, 60_000)


def test_cluster_ports_are_distinct_and_below_the_ephemeral_range(tmp_path, monkeypatch):
    ports = layout.free_ports(40)
    assert len(set(ports)) == 40
    assert all(layout.LOWEST_PORT <= p < layout._ephemeral_start() for p in ports)
    monkeypatch.setattr(layout, "EPHEMERAL_RANGE", tmp_path / "missing")
    assert layout._ephemeral_start() == 32768  # Linux's default when the kernel does not say
