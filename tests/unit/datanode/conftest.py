"""Fixtures of the datanode tests above storage: a fake SCM per test (daemon tests), two datanodes' storage
over temporary directories and a worker pool (data-service tests: xceiver, replication, scanner service)."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.unit.datanode.dnd_helpers import FakeScm
from tests.unit.datanode.dns_helpers import Node, open_node


@pytest.fixture
def scm() -> Iterator[FakeScm]:
    with FakeScm() as fake:
        yield fake


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI reads $OZONE_CONF_DIR; a developer's own setting must not leak into tests."""
    monkeypatch.delenv("OZONE_CONF_DIR", raising=False)


@pytest.fixture
def executor() -> Iterator[ThreadPoolExecutor]:
    pool = ThreadPoolExecutor(8, thread_name_prefix="dn-test")
    yield pool
    pool.shutdown(wait=True)


@pytest.fixture
def node_a(tmp_path: Path) -> Iterator[Node]:
    node = open_node(tmp_path / "dn-a", "aaaaaaaa-0000-4000-8000-000000000001")
    yield node
    node.close()


@pytest.fixture
def node_b(tmp_path: Path) -> Iterator[Node]:
    node = open_node(tmp_path / "dn-b", "bbbbbbbb-0000-4000-8000-000000000002")
    yield node
    node.close()
