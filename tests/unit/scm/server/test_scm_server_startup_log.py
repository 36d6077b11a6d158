"""SCM says at start-up which node-health intervals are in force, after it sanitised the configured ones
(issue 11 defect 10: a README example promised STALE after 6 s; SCM silently used 15 s)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from tests.unit.scm.server.scm_server_helpers import async_test, running_scm, scm_conf


@async_test
async def test_the_intervals_in_force_are_logged_with_the_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    overrides = {
        "ozone.scm.heartbeat.thread.interval": "3s",
        "hdds.heartbeat.interval": "1s",
        "ozone.scm.stale.node.interval": "6s",
        "ozone.scm.dead.node.interval": "12s",
    }
    with caplog.at_level(logging.INFO):
        async with running_scm(scm_conf(tmp_path, overrides)):
            pass
    assert "ozone.scm.stale.node.interval value = 6000 ms is smaller than min = 15000 ms" in caplog.text
    assert "STALE after 15000 ms and DEAD after 30000 ms" in caplog.text
