"""Shared fixtures for the end-to-end CLI tests: in-process and real-process runners, tree snapshots."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

import pyozone
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
def proc() -> Callable[..., Result]:
    """Runs `python -m pyozone ARGS...` as a real process in `cwd`; its exit code and output."""

    def run(cwd: Path, *args: str, timeout: float = 60, env: dict[str, str] | None = None) -> Result:
        full = {k: v for k, v in os.environ.items() if k != "OZONE_CONF_DIR"} | (env or {})
        full["PYTHONPATH"] = str(Path(pyozone.__file__).parents[1])
        done = subprocess.run(
            [sys.executable, "-m", "pyozone", *args],
            cwd=cwd,
            env=full,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        return Result(done.returncode, done.stdout, done.stderr)

    return run


@pytest.fixture
def snapshot() -> Callable[[Path], dict[str, bytes | None]]:
    """Every path under a root with its bytes (None for a directory): equal snapshots mean nothing changed."""

    def take(root: Path) -> dict[str, bytes | None]:
        return {
            str(p.relative_to(root)): None if p.is_dir() else p.read_bytes() for p in sorted(root.rglob("*"))
        }

    return take
