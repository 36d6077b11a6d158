"""Fixtures every test directory may use: a clean environment, the CLI, and directory-tree snapshots."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.cli_support import Result, run_cli, tree


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI reads $OZONE_CONF_DIR; a developer's own setting must not leak into tests."""
    monkeypatch.delenv("OZONE_CONF_DIR", raising=False)


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., Result]:
    return lambda *args: run_cli(capsys, *args)


@pytest.fixture
def snapshot() -> Callable[[Path], dict[str, bytes | None]]:
    return tree
