"""Fixtures: a datanode's storage over two data volumes in a temporary directory."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pyozone.datanode.storage import KeyValueContainer
from tests.unit.datanode.storage.dn_helpers import Node, open_node


@pytest.fixture
def node(tmp_path: Path) -> Iterator[Node]:
    n = open_node(tmp_path / "dn1")
    yield n
    n.close()


@pytest.fixture
def container(node: Node) -> KeyValueContainer:
    return node.containers.create(1, "origin-dn", "pipeline-1")
