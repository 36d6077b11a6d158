"""Daemons start with Ozone's STARTUP_MSG banner: version, host, configuration files and their directories."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from pyozone.common.banner import daemon_logging, startup_lines
from pyozone.config.site import load_configuration


def test_banner_names_the_daemon_its_site_file_and_details(tmp_path: Path) -> None:
    (tmp_path / "ozone-site.xml").write_text(
        "<configuration><property><name>hdds.datanode.dir</name><value>/data/disk1</value></property>"
        "</configuration>"
    )
    conf = load_configuration(tmp_path, {})
    lines = startup_lines("HddsDatanodeService", conf, {"hdds.datanode.dir": "/data/disk1"})
    assert lines[1] == "STARTUP_MSG: Starting HddsDatanodeService"
    assert any(line.startswith("STARTUP_MSG:   version = ") for line in lines)
    assert f"STARTUP_MSG:   conf = {tmp_path / 'ozone-site.xml'}" in lines
    assert "STARTUP_MSG:   hdds.datanode.dir = /data/disk1" in lines


def test_daemon_logging_is_info_between_the_banners(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 11 defect 10: a datanode logged nothing at start-up (the root logger stayed at WARNING)."""
    monkeypatch.delenv("PYOZONE_LOG_LEVEL", raising=False)
    root = logging.getLogger()
    before = root.level
    root.setLevel(logging.WARNING)
    caplog.handler.setLevel(logging.INFO)
    try:
        with daemon_logging("OzoneManager", load_configuration(None, {}), {}):
            assert root.level == logging.INFO
            logging.getLogger("pyozone.om").info("serving")
        assert root.level == logging.WARNING
    finally:
        root.setLevel(before)
    messages = [r.getMessage() for r in caplog.records]
    assert "STARTUP_MSG: Starting OzoneManager" in messages[0]
    assert messages[1] == "serving"
    assert "SHUTDOWN_MSG: Shutting down OzoneManager" in messages[2]
