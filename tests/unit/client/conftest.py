"""A FakeCluster per test and clients configured with small buffers, so every size boundary is cheap."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from pyozone.client import OzoneClient
from tests.unit.client.fakes import BLOCK, FakeCluster, small_conf


@pytest.fixture
def cluster() -> Iterator[FakeCluster]:
    c = FakeCluster(block_size=BLOCK)
    yield c
    c.stop()


@pytest.fixture
def make_client(cluster: FakeCluster) -> Iterator[Callable[..., OzoneClient]]:
    clients: list[OzoneClient] = []

    def make(extra: dict[str, str] | None = None) -> OzoneClient:
        client = OzoneClient(small_conf(cluster.om.address, extra))
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


@pytest.fixture
def client(make_client: Callable[..., OzoneClient]) -> OzoneClient:
    c = make_client()
    c.create_volume("vol")
    c.create_bucket("vol", "bucket")
    return c
