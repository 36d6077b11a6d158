"""A failed ALL_COMMITTED watch falls back to the majority, as Ozone's XceiverClientRatis.watchForCommit does
("3 way commit failed", handleFailedAllCommit): the data is acknowledged, the block goes on in its
pipeline, and the members below the watched index are the block's failed servers, which the key's next
allocations exclude (KeyOutputStream adds BlockOutputStream.getFailedServers to its ExcludeList)."""

from __future__ import annotations

import os
from collections.abc import Callable

from pyozone.client import OzoneClient
from pyozone.client.config import ClientConfig
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from tests.unit.client.fakes import BLOCK, BUFFER, FLUSH, FakeCluster, FakePipeline, small_conf

MAJORITY = {"hdds.ratis.client.request.watch.type": "MAJORITY_COMMITTED"}


def _commits(cluster: FakeCluster) -> list[tuple[int, int, int, int]]:
    """(containerID, localID, offset, length) of each block of the last commit."""
    return [
        (
            loc.blockID.containerBlockID.containerID,
            loc.blockID.containerBlockID.localID,
            loc.offset,
            loc.length,
        )
        for loc in cluster.om.commits[-1].locations
    ]


def _first(cluster: FakeCluster) -> FakePipeline:
    return next(iter(cluster.pipelines.values()))


def _watches(pipeline: FakePipeline) -> list[int]:
    """The replication level of every WatchForCommit the leader was sent, in order."""
    return pipeline.leader.watch_levels


def test_a_follower_that_never_commits_leaves_the_key_in_its_block_acknowledged_at_majority(
    client: OzoneClient, cluster: FakeCluster
) -> None:
    pipeline = _first(cluster)
    lagging = pipeline.members[1]
    lagging.lag()
    data = os.urandom(5 * BUFFER + 100)  # three putBlocks; the 5th chunk waits for the first one's watch
    with client.create_key("vol", "bucket", "k", size_hint=len(data)) as writer:
        writer.write(data)
    assert client.read_key("vol", "bucket", "k").readall() == data
    ((cid, lid, offset, length),) = _commits(cluster)
    assert cluster.pipeline_of(cid) is pipeline
    assert (offset, length) == (0, len(data))
    assert pipeline.leader.received[(cid, lid)] == len(data)  # nothing rewritten
    assert cluster.om.allocations == []
    # The first watch asks for every member and fails; the last one, sent after it, asks a majority.
    assert _watches(pipeline)[0] == pb.ALL_COMMITTED
    assert _watches(pipeline)[-1] == pb.MAJORITY_COMMITTED
    assert writer.stream.exclude_list.datanodes == {lagging.uuid}
    assert writer.stream.exclude_list.pipelines == set()


def test_the_next_block_of_the_key_is_allocated_without_the_failed_server(
    client: OzoneClient, cluster: FakeCluster
) -> None:
    pipeline = _first(cluster)
    follower = pipeline.members[2]
    pipeline.leader.fail_next(pb.WatchForCommit, pb.NOT_REPLICATED, behind=(follower.uuid,))
    data = os.urandom(BLOCK + 3 * BUFFER)
    with client.create_key("vol", "bucket", "k") as writer:  # one block pre-allocated, then allocateBlock
        writer.write(data)
    assert client.read_key("vol", "bucket", "k").readall() == data
    first, second = _commits(cluster)
    assert cluster.pipeline_of(first[0]) is pipeline
    assert first[2:] == (0, BLOCK)  # the whole block, acknowledged at majority
    assert pipeline.leader.received[first[:2]] == BLOCK
    (exclude,) = cluster.om.allocations
    assert list(exclude.datanodes) == [follower.uuid]
    assert list(exclude.pipelineIds) == []  # the pipeline did not fail: only its member is avoided
    assert follower not in cluster.pipeline_of(second[0]).members
    assert second[2:] == (BLOCK, 3 * BUFFER)


def test_the_failed_server_is_no_longer_waited_for_in_its_block(
    client: OzoneClient, cluster: FakeCluster
) -> None:
    """Ozone's commitInfoMap drops the failed server: an answer showing the other members at the index
    acknowledges it without a watch (here every later putBlock is answered so, instant commit)."""
    cluster.instant_commit = True
    pipeline = _first(cluster)
    lagging = pipeline.members[2]
    lagging.lag()
    data = os.urandom(6 * BUFFER)  # three putBlocks; the third is sent after the first one's watch
    with client.create_key("vol", "bucket", "k", size_hint=len(data)) as writer:
        writer.write(data)
    assert client.read_key("vol", "bucket", "k").readall() == data
    ((cid, _, offset, length),) = _commits(cluster)
    assert cluster.pipeline_of(cid) is pipeline
    assert (offset, length) == (0, len(data))
    # The second putBlock may have been answered before the first watch failed (then watched too).
    assert _watches(pipeline) in ([pb.ALL_COMMITTED], [pb.ALL_COMMITTED] * 2)
    assert writer.stream.exclude_list.datanodes == {lagging.uuid}


def test_a_majority_watch_refused_not_replicated_still_fails_the_block(
    make_client: Callable[..., OzoneClient], cluster: FakeCluster
) -> None:
    """With hdds.ratis.client.request.watch.type MAJORITY_COMMITTED there is nothing to fall back to (Ozone
    completes the watch exceptionally): the block fails, excluding its pipeline and the lagging member."""
    client = make_client(MAJORITY)
    client.create_volume("vol")
    client.create_bucket("vol", "bucket")
    pipeline = _first(cluster)
    follower = pipeline.members[2]
    pipeline.leader.fail_next(pb.WatchForCommit, pb.NOT_REPLICATED, times=5, behind=(follower.uuid,))
    data = os.urandom(2 * FLUSH)
    with client.create_key("vol", "bucket", "k", size_hint=len(data)) as writer:
        writer.write(data)
    assert client.read_key("vol", "bucket", "k").readall() == data
    exclude = cluster.om.allocations[-1]
    assert list(exclude.datanodes) == [follower.uuid]
    assert [p.id for p in exclude.pipelineIds] == [pipeline.id]
    assert cluster.pipeline_of(_commits(cluster)[-1][0]) is not pipeline


def test_a_watch_is_given_hdds_ratis_raft_client_rpc_watch_request_timeout() -> None:
    """Longer than the datanode's own wait (hdds.ratis.raft.server.watch.timeout, 30 s), so the leader's
    NOT_REPLICATED, with the members' commit indexes, comes before the client gives up on the watch."""
    key = "hdds.ratis.raft.client.rpc.watch.request.timeout"
    assert ClientConfig.from_conf(small_conf("127.0.0.1:1")).watch_timeout_s == 180
    assert ClientConfig.from_conf(small_conf("127.0.0.1:1", {key: "45s"})).watch_timeout_s == 45
