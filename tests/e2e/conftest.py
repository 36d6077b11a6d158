"""The real-process CLI runner for the end-to-end tests (the in-process one is in tests/conftest.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import pyozone
from tests.cli_support import Result


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
