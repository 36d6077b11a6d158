"""Fixtures every test directory may use: a clean environment, the CLI, and directory-tree snapshots."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import settings

from tests.cli_support import Result, run_cli, tree

# No per-example deadline for any property test: on a loaded CI machine one slow example (a GC pause, a
# busy core) must not fail a run. Loaded here, before any test module, so every test gets it.
settings.register_profile("pyozone", deadline=None)
settings.load_profile("pyozone")


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
