"""KeyOutputStream.handleException against the fakes: each failure kind moves the rest of the key to a
new block, rewriting exactly the unacknowledged bytes, excluding what failed, and committing each block at
its acknowledged length and BCSID."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable

import pytest

from pyozone.client import BlockWriteError, OMException, OzoneClient
from pyozone.client.block_output import BlockFailure, BlockOutputStream
from pyozone.client.config import ClientConfig
from pyozone.common.net import HostPort
from pyozone.framework.datanode import ChannelPool
from pyozone.framework.om import OmEndpoint
from pyozone.hdds.checksum import ChecksumType
from pyozone.hdds.locations import DatanodeRef, KeyLocation, PipelineRef
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from tests.polling import wait_for
from tests.unit.client.fakes import BLOCK, BUFFER, FLUSH, FakeCluster, FakeDatanode


def blocks(cluster: FakeCluster) -> list[tuple[int, int, int, int, int]]:
    """(containerID, localID, offset, length, BCSID) of the last commit."""
    return [
        (
            loc.blockID.containerBlockID.containerID,
            loc.blockID.containerBlockID.localID,
            loc.offset,
            loc.length,
            loc.blockID.blockCommitSequenceId,
        )
        for loc in cluster.om.commits[-1].locations
    ]


def first_leader(cluster: FakeCluster) -> FakeDatanode:
    """The leader of the pipeline the first block goes to (the fake OM starts with the first pipeline)."""
    return next(iter(cluster.pipelines.values())).leader


def received(cluster: FakeCluster, cid: int, lid: int) -> int:
    return sum(dn.received[(cid, lid)] for dn in cluster.datanodes)


def write(client: OzoneClient, data: bytes) -> None:
    with client.create_key("vol", "bucket", "k", size_hint=len(data)) as writer:
        writer.write(data)


def check_retry(
    client: OzoneClient, cluster: FakeCluster, data: bytes, acked: int
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The key reads back whole; the first block kept `acked` bytes and the second got exactly the rest."""
    assert client.read_key("vol", "bucket", "k").readall() == data
    got = blocks(cluster)
    if acked:
        first, second = got
        assert first[2:4] == (0, acked)
        assert first[4] > 0
        assert second[2:4] == (acked, len(data) - acked)
    else:
        first, (second,) = None, got
        assert second[2:4] == (0, len(data))
    assert received(cluster, second[0], second[1]) == len(data) - acked  # nothing rewritten twice
    return first or (), second


def test_closed_container_on_a_chunk(client: OzoneClient, cluster: FakeCluster) -> None:
    leader = first_leader(cluster)
    leader.fail_next(pb.WriteChunk, pb.CLOSED_CONTAINER_IO, after=2)  # chunk 3 of 5
    data = os.urandom(5 * BUFFER)
    write(client, data)
    first, second = check_retry(client, cluster, data, acked=FLUSH)
    assert first[4] == 1  # the first putBlock's index
    assert list(cluster.om.allocations[-1].containerIds) == [first[0]]
    assert second[0] != first[0]
    assert list(cluster.om.allocations[-1].pipelineIds) == []


def test_closed_container_before_any_write_drops_the_block(client: OzoneClient, cluster: FakeCluster) -> None:
    data = os.urandom(3 * BUFFER + 7)
    with client.create_key("vol", "bucket", "k", size_hint=len(data)) as writer:
        cid = writer.stream._preallocated[0].container_id
        cluster.close_container(cid)  # after OM pre-allocated the block in it
        writer.write(data)
    _, second = check_retry(client, cluster, data, acked=0)
    assert second[0] != cid
    assert list(cluster.om.allocations[-1].containerIds) == [cid]


@pytest.mark.parametrize("result", [pb.GROUP_MISMATCH, pb.RAFT_RETRY_FAILURE])
def test_pipeline_failures_exclude_the_pipeline(
    client: OzoneClient, cluster: FakeCluster, result: int
) -> None:
    leader = first_leader(cluster)
    leader.fail_next(pb.PutBlock, result, after=1)
    data = os.urandom(4 * BUFFER + 100)
    write(client, data)
    check_retry(client, cluster, data, acked=FLUSH)
    exclude = cluster.om.allocations[-1]
    assert [p.id for p in exclude.pipelineIds] == [next(iter(cluster.pipelines))]
    assert list(exclude.datanodes) == []


def test_unreachable_leader_excludes_pipeline_and_leader(
    make_client: Callable[..., OzoneClient], cluster: FakeCluster
) -> None:
    """No other member leads within hdds.ratis.client.multilinear.random.retry.policy (one failover: the
    next member still names the unreachable leader): the block fails, excluding the leader and its
    pipeline."""
    client = make_client({"hdds.ratis.client.multilinear.random.retry.policy": "0s, 1"})
    client.create_volume("vol")
    client.create_bucket("vol", "bucket")
    leader = first_leader(cluster)
    data = os.urandom(4 * BUFFER)
    with client.create_key("vol", "bucket", "k") as writer:
        writer.write(data[:FLUSH])
        block = writer.stream._current
        wait_for(lambda: block.acked >= FLUSH, 5, "the first flush acknowledged", interval_s=0.01)
        assert block.acked == FLUSH
        leader.stop()
        writer.write(data[FLUSH:])
    check_retry(client, cluster, data, acked=FLUSH)  # block 1 is read from a follower
    exclude = cluster.om.allocations[-1]
    assert list(exclude.datanodes) == [leader.uuid]
    assert [p.id for p in exclude.pipelineIds] == [next(iter(cluster.pipelines))]


def test_pre_allocated_blocks_on_excluded_pipeline_are_discarded(
    client: OzoneClient, cluster: FakeCluster
) -> None:
    """openKey pre-allocates 4 blocks round-robin over 3 pipelines (the 1st and 4th on pipeline 1); once
    pipeline 1 fails, its 4th block is discarded and OM allocates the rest elsewhere."""
    from tests.unit.client.fakes import BLOCK

    first = next(iter(cluster.pipelines.values()))
    first.leader.fail_next(pb.WriteChunk, pb.GROUP_MISMATCH)
    data = os.urandom(4 * BLOCK)
    write(client, data)
    assert client.read_key("vol", "bucket", "k").readall() == data
    assert [length for *_, length, _ in blocks(cluster)] == [BLOCK] * 4
    assert all(cluster.pipeline_of(cid) is not first for cid, *_ in blocks(cluster))
    assert len(cluster.om.allocations) == 2  # the two blocks the discarded ones left missing
    assert all([p.id for p in ex.pipelineIds] == [first.id] for ex in cluster.om.allocations)


def test_an_allocation_refused_after_exclusions_names_the_failures_behind_them(
    client: OzoneClient, cluster: FakeCluster
) -> None:
    """SCM finding no node outside the exclude list is the consequence of this key's failures, so the
    refusal carries them: the cause, not only "only 1 of 3 datanodes can be chosen"."""
    cluster.om.no_suitable_node = True
    for pipeline in cluster.pipelines.values():
        pipeline.leader.fail_next(pb.WriteChunk, pb.GROUP_MISMATCH, times=100)
    with pytest.raises(OMException) as e:
        write(client, os.urandom(4 * BLOCK))
    assert e.value.result == "KEY_ALLOCATION_ERROR"
    message = str(e.value)
    assert "only 1 of 3 datanodes can be chosen" in message
    assert "came from this key's failures" in message
    assert "GROUP_MISMATCH" in message
    assert cluster.om.commits == []


def test_retries_are_bounded(make_client, cluster: FakeCluster) -> None:  # type: ignore[no-untyped-def]
    client = make_client({"ozone.client.max.retries": "2"})
    client.create_volume("vol")
    client.create_bucket("vol", "bucket")
    for dn in cluster.datanodes:
        dn.fail_next(pb.WriteChunk, pb.CLOSED_CONTAINER_IO, times=100)
    with pytest.raises(BlockWriteError) as e:
        write(client, os.urandom(BUFFER))
    message = str(e.value)
    assert "gave up after 2 retries" in message
    assert message.count("CLOSED_CONTAINER_IO") == 3
    assert "conID: " in message
    assert cluster.om.commits == []


def test_the_retry_bound_counts_failures_in_a_row(make_client, cluster: FakeCluster) -> None:  # type: ignore[no-untyped-def]
    """Ozone resets its retry count once rewritten data went out: a key that crosses several container
    closes, with data acknowledged between them, is not failed by max.retries (here 1)."""
    client = make_client({"ozone.client.max.retries": "1"})
    client.create_volume("vol")
    client.create_bucket("vol", "bucket")
    for pipeline in cluster.pipelines.values():  # each leader refuses once, after 4 chunks went through
        pipeline.leader.fail_next(pb.WriteChunk, pb.CLOSED_CONTAINER_IO, after=4)
    data = os.urandom(6 * BLOCK)
    with client.create_key("vol", "bucket", "k", size_hint=len(data)) as writer:
        writer.write(data)
        retries = writer.stream.retries
    assert retries >= 2  # more failures than max.retries, each after progress
    assert client.read_key("vol", "bucket", "k").readall() == data


def test_a_block_whose_leader_cannot_be_reached_keeps_every_byte_for_the_retry() -> None:
    """No stream to the leader (here OM named it without its data port): the chunk that found out is
    still retained, so the retry rewrites all of it elsewhere."""

    async def body() -> tuple[int, bytes]:
        config = ClientConfig(
            (OmEndpoint("", HostPort("127.0.0.1", 1)),), BUFFER, FLUSH, 4 * FLUSH, BLOCK, 5, 0, 3, 0,
            ChecksumType.CRC32, 1024, True, 600, True,
        )  # fmt: skip
        leader = DatanodeRef("dn-1", "dn1", "10.0.0.1", None)
        location = KeyLocation(1, 1, 0, 0, BLOCK, PipelineRef("p1", (leader,), "dn-1"))
        block = BlockOutputStream(location, config, ChannelPool())
        block.accept(data)
        with pytest.raises(BlockFailure):
            await block.emit()
        return block.acked, block.retained()

    data = os.urandom(2 * BUFFER + 5)
    assert asyncio.run(body()) == (0, data)
