"""Shared fixtures for the planner tests: a clean environment, an in-process CLI and a tree snapshot."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from pyozone.cli.main import main


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI reads $OZONE_CONF_DIR; a developer's own setting must not leak into tests."""
    monkeypatch.delenv("OZONE_CONF_DIR", raising=False)


@dataclass
class Result:
    code: int
    out: str
    err: str

    @property
    def last_line(self) -> str:
        return self.out.rstrip("\n").rsplit("\n", 1)[-1]


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., Result]:
    """Runs `pyozone ARGS...` in-process; returns exit code, stdout and stderr."""

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
        return {
            str(p.relative_to(root)): None if p.is_dir() else p.read_bytes() for p in sorted(root.rglob("*"))
        }

    return take
