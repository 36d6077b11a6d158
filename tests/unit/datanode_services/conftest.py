"""Fixtures: two datanodes' storage over temporary directories, and a worker pool."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from dns_helpers import Node, open_node


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
