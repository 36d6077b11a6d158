"""A FakeCluster (tests/unit/client/fakes.py) behind the ofs filesystem, and no shared client left behind."""

from __future__ import annotations

from collections.abc import Iterator

import fsspec
import pytest

from pyozone.fs import clients
from pyozone.fs.ofs import OzoneFileSystem
from tests.unit.client.fakes import BLOCK, SMALL, FakeCluster

# The fake datanodes serve no datastream port: every write takes pipeline V1.
CONF = {**SMALL, "ozone.fs.datastream.enabled": "false"}


@pytest.fixture
def cluster() -> Iterator[FakeCluster]:
    c = FakeCluster(block_size=BLOCK)
    yield c
    clients.close_all()
    c.stop()


@pytest.fixture
def fs(cluster: FakeCluster) -> OzoneFileSystem:
    """ofs on the fake OM with the volume "vol" and the bucket "vol/bucket"."""
    fs = fsspec.filesystem("ofs", om_address=cluster.om.address, conf=CONF, skip_instance_cache=True)
    fs.makedirs("vol/bucket")
    return fs
