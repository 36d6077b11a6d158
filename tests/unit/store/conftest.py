"""Shared fixtures: a clean environment, a CLI runner and a snapshot of a directory tree."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from pyozone.cli.main import main


@pytest.fixture(autouse=True)
def _no_conf_dir_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI falls back to $OZONE_CONF_DIR; a developer's own setting must not leak into tests."""
    monkeypatch.delenv("OZONE_CONF_DIR", raising=False)


@dataclass
class Result:
    code: int
    out: str
    err: str


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., Result]:
    """Runs `pyozone ARGS...` in-process and returns its exit code, stdout and stderr."""

    def run(*args: str) -> Result:
        capsys.readouterr()
        code = main(list(args))
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return run


@pytest.fixture
def snapshot() -> Callable[[Path], dict[str, bytes | None]]:
    """Every path under a root with its bytes (None for a directory): equal snapshots mean nothing changed."""

    def take(root: Path) -> dict[str, bytes | None]:
        if not root.exists():
            return {}
        return {
            str(p.relative_to(root)): None if p.is_dir() else p.read_bytes() for p in sorted(root.rglob("*"))
        }

    return take
