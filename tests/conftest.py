"""Fixtures every test directory may use: a clean environment, the CLI, and directory-tree snapshots."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import settings

from pyozone.cluster.layout import PORT_RANGE_VARIABLE, port_range
from pyozone.config import ConfigError
from tests.cli_support import Result, run_cli, tree

# No per-example deadline for any property test: on a loaded CI machine one slow example (a GC pause, a
# busy core) must not fail a run. Loaded here, before any test module, so every test gets it.
settings.register_profile("pyozone", deadline=None)
settings.load_profile("pyozone")


def _worker_port_range() -> None:
    """Each xdist worker's clusters take ports from their own slice of the cluster plan's port range
    ($PYOZONE_PORT_RANGE, else 10000 up to the kernel's ephemeral ports): a cluster restarting a daemon
    (kill, then start on the same port) cannot lose the port to another worker's new cluster."""
    worker, count = os.environ.get("PYTEST_XDIST_WORKER", ""), os.environ.get("PYTEST_XDIST_WORKER_COUNT")
    if not worker.startswith("gw") or not count:
        return
    try:
        start, end = port_range()  # $PYOZONE_PORT_RANGE, else below the kernel's ephemeral ports
    except ConfigError:
        return  # left as it is: the first cluster's plan refuses it in one line
    index, slices = int(worker[2:]), int(count)
    width = (end - start) // slices
    low = start + index * width
    os.environ[PORT_RANGE_VARIABLE] = f"{low}-{low + width}"


_worker_port_range()


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
