"""Shared fixtures: a clean environment and a helper writing ozone-site.xml files."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _no_conf_dir_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI falls back to $OZONE_CONF_DIR; a developer's own setting must not leak into tests."""
    monkeypatch.delenv("OZONE_CONF_DIR", raising=False)


@pytest.fixture
def site_dir(tmp_path: Path) -> Callable[[str], Path]:
    """Writes a site file from the given <configuration> body and returns its directory."""

    def write(body: str) -> Path:
        (tmp_path / "ozone-site.xml").write_text(f"<configuration>{body}</configuration>")
        return tmp_path

    return write
