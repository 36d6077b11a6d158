"""Property: whatever the write sizes, split points and (one) injected failure, the committed key is
exactly the bytes written, its blocks tile it, and each block is at most a block long."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pyozone.client import OzoneClient
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from tests.unit.client.fakes import BLOCK, BUFFER, FakeCluster, small_conf

FAULTS = [
    None,
    (pb.WriteChunk, pb.CLOSED_CONTAINER_IO),
    (pb.PutBlock, pb.GROUP_MISMATCH),
    (pb.WatchForCommit, pb.NOT_REPLICATED),
    (pb.WriteChunk, pb.RAFT_RETRY_FAILURE),
]


@pytest.fixture(scope="module")
def setup() -> Iterator[tuple[FakeCluster, OzoneClient]]:
    cluster = FakeCluster(datanodes=12, block_size=BLOCK)
    client = OzoneClient(small_conf(cluster.om.address, {"ozone.client.max.retries": "10"}))
    client.create_volume("vol")
    client.create_bucket("vol", "bucket")
    yield cluster, client
    client.close()
    cluster.stop()


_names = itertools.count()


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    pieces=st.lists(st.integers(0, 3 * BUFFER + 3), max_size=8),
    seed=st.integers(0, 255),
    fault=st.sampled_from(FAULTS),
    after=st.integers(0, 6),
)
def test_committed_key_equals_bytes_written(setup, pieces, seed, fault, after) -> None:  # type: ignore[no-untyped-def]
    cluster, client = setup
    for dn in cluster.datanodes:
        dn.faults.clear()
        dn.lagging = False
    if fault is not None:
        for pipeline in cluster.pipelines.values():
            pipeline.leader.fail_next(*fault, after=after)
    data = [bytes((seed + i + n) % 256 for i in range(size)) for n, size in enumerate(pieces)]
    name = f"k{next(_names)}"
    with client.create_key("vol", "bucket", name) as writer:
        for piece in data:
            writer.write(piece)
    expected = b"".join(data)
    assert client.read_key("vol", "bucket", name).readall() == expected
    commit = cluster.om.commits[-1]
    assert commit.dataSize == len(expected)
    offset = 0
    for loc in commit.locations:
        assert loc.offset == offset and 0 < loc.length <= BLOCK and loc.blockID.blockCommitSequenceId > 0
        offset += loc.length
    assert offset == len(expected)
