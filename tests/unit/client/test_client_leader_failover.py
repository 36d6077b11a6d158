"""A block follows its pipeline's new leader. A NOT_LEADER naming another member of the pipeline (Ratis's
NotLeaderException with its suggested leader) sends the block's unanswered requests and its watches there,
in order, and the key completes in the same block and pipeline (Ozone's XceiverClientRatis). A NOT_LEADER
naming none (the leader stepped down) or an unreachable leader sends them to the next member in turn, until
one leads or names the leader (Ratis's RaftClient). Only a block past
hdds.ratis.client.multilinear.random.retry.policy's failovers, or whose every member is unreachable, closes
and rewrites the rest elsewhere, as before."""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable

import pytest

from pyozone.client import OzoneClient
from pyozone.client.block_output import BlockOutputStream
from pyozone.client.config import ClientConfig
from pyozone.client.retry import LEADER_FAILOVER, LeaderFailover
from pyozone.config import ConfigError, OzoneConfiguration
from pyozone.framework.datanode import XceiverStream
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from pyozone.protocol.data import refusal
from pyozone.protocol.ratis import not_leader
from tests.polling import wait_for
from tests.unit.client.fakes import BUFFER, FLUSH, FakeCluster, FakePipeline
from tests.unit.client.test_client_retry import blocks, check_retry, received

POLICY = LeaderFailover.KEY


def _client(
    make_client: Callable[..., OzoneClient], policy: str, extra: dict[str, str] | None = None
) -> OzoneClient:
    client = make_client({POLICY: policy, **(extra or {})})
    client.create_volume("vol")
    client.create_bucket("vol", "bucket")
    return client


def _write_with_leader_changes(
    client: OzoneClient, pipeline: FakePipeline, data: bytes, leaders: list[int]
) -> BlockOutputStream:
    """Writes `data` a flush at a time, each acknowledged before the next; before each flush after the first,
    the pipeline's leader becomes the next of `leaders` (the members' indexes)."""
    with client.create_key("vol", "bucket", "k", size_hint=len(data)) as writer:
        writer.write(data[:FLUSH])
        block = writer.stream._current
        assert isinstance(block, BlockOutputStream)
        wait_for(lambda: block.acked >= FLUSH, 5, "the first flush acknowledged", interval_s=0.01)
        for n, leader in enumerate(leaders, start=1):
            pipeline.leader_at = leader
            writer.write(data[n * FLUSH : (n + 1) * FLUSH])
            end = (n + 1) * FLUSH
            wait_for(
                lambda end=end: block.acked >= end or block.failure, 5, f"{end} bytes acknowledged", 0.01
            )
            if block.failure is not None:  # the rest goes to another block
                break
        writer.write(data[writer.stream.written :])
    return block


def test_a_block_follows_the_leader_a_not_leader_names_and_stays_in_its_pipeline(
    make_client: Callable[..., OzoneClient], cluster: FakeCluster
) -> None:
    client = _client(make_client, "0s, 2")
    pipeline = next(iter(cluster.pipelines.values()))
    old = pipeline.leader
    data = os.urandom(3 * FLUSH + 100)
    block = _write_with_leader_changes(client, pipeline, data, [1, 2])
    assert client.read_key("vol", "bucket", "k").readall() == data
    ((cid, lid, offset, length, bcsid),) = blocks(cluster)  # one block: nothing rewritten elsewhere
    assert (offset, length) == (0, len(data)) and bcsid > 0
    assert cluster.pipeline_of(cid) is pipeline
    assert cluster.om.allocations == []  # no block allocated past the pre-allocated one: nothing excluded
    assert old.received[(cid, lid)] == FLUSH
    assert pipeline.members[1].received[(cid, lid)] >= FLUSH  # the second flush, resent
    assert pipeline.members[2].received[(cid, lid)] >= len(data) - 2 * FLUSH
    assert block.failover_s > 0


def test_the_resent_requests_reach_the_new_leader_before_any_later_one(
    make_client: Callable[..., OzoneClient], cluster: FakeCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The writer goes on while the block moves (here: while the old streams close): the new leader gets the
    block's chunks in order, the resent ones first. A chunk written before them would leave zeros in the
    block file that the resent ones then change (OVERWRITE_FLAG_REQUIRED, seen end to end)."""
    release = threading.Event()
    real_close = XceiverStream.close

    async def held_close(stream: XceiverStream) -> None:
        await asyncio.get_running_loop().run_in_executor(None, release.wait, 10)
        await real_close(stream)

    monkeypatch.setattr(XceiverStream, "close", held_close)
    client = _client(make_client, "0s, 2")
    data = os.urandom(3 * FLUSH + 100)  # one block
    with client.create_key("vol", "bucket", "k", size_hint=len(data)) as writer:
        pipeline = cluster.pipelines[writer.stream._preallocated[0].pipeline.id]
        writer.write(data[:FLUSH])
        block = writer.stream._current
        assert isinstance(block, BlockOutputStream)
        wait_for(lambda: block.acked == FLUSH, 5, "the first flush acknowledged", interval_s=0.01)
        pipeline.leader_at = 1
        writer.write(data[FLUSH : 2 * FLUSH])  # refused NOT_LEADER: the block moves
        wait_for(lambda: block._moves == 1, 5, "the block moved", interval_s=0.01)
        writer.write(data[2 * FLUSH : 3 * FLUSH])  # while the old streams close
        release.set()
        writer.write(data[3 * FLUSH :])  # the block's end: its flushes awaited
    assert client.read_key("vol", "bucket", "k").readall() == data
    ((cid, lid, *_),) = blocks(cluster)
    got = pipeline.members[1].offsets[(cid, lid)]
    assert got == sorted(got) and got[0] == FLUSH and got[-1] == 3 * FLUSH, got


@pytest.mark.parametrize("policy", ["0s, 1", "0s, 0"])
def test_past_the_failover_policy_the_block_closes_and_the_rest_goes_elsewhere(
    make_client: Callable[..., OzoneClient], cluster: FakeCluster, policy: str
) -> None:
    """hdds.ratis.client.multilinear.random.retry.policy allows one failover (or none): the second leader
    change (or the first) fails the block as before: kept at its acknowledged length, pipeline excluded."""
    client = _client(make_client, policy)
    pipeline = next(iter(cluster.pipelines.values()))
    data = os.urandom(3 * FLUSH + 100)
    _write_with_leader_changes(client, pipeline, data, [1, 2])
    acked = 2 * FLUSH if policy == "0s, 1" else FLUSH
    check_retry(client, cluster, data, acked=acked)
    assert [p.id for p in cluster.om.allocations[-1].pipelineIds] == [pipeline.id]


def _write_stepping_down(
    client: OzoneClient, cluster: FakeCluster, data: bytes, change: Callable[[FakePipeline], None]
) -> tuple[FakePipeline, BlockOutputStream]:
    """Writes `data` into one block; once its first flush is acknowledged (nothing in flight), `change`
    happens to the block's pipeline and the rest is written."""
    with client.create_key("vol", "bucket", "k", size_hint=len(data)) as writer:
        pipeline = cluster.pipelines[writer.stream._preallocated[0].pipeline.id]
        writer.write(data[:FLUSH])
        block = writer.stream._current
        assert isinstance(block, BlockOutputStream)
        wait_for(lambda: block.acked == FLUSH, 5, "the first flush acknowledged", interval_s=0.01)
        change(pipeline)
        writer.write(data[FLUSH:])
    return pipeline, block


def _stayed_in(client: OzoneClient, cluster: FakeCluster, pipeline: FakePipeline, data: bytes) -> None:
    """The key reads back whole from one block of `pipeline`: nothing closed, excluded or rewritten."""
    assert client.read_key("vol", "bucket", "k").readall() == data
    ((cid, lid, offset, length, bcsid),) = blocks(cluster)
    assert (offset, length) == (0, len(data)) and bcsid > 0
    assert cluster.pipeline_of(cid) is pipeline
    assert cluster.om.allocations == []
    assert pipeline.leader.received[(cid, lid)] >= len(data) - FLUSH  # the new leader wrote the rest


@pytest.mark.parametrize(("to", "refusals"), [(1, 1), (2, 6)])
def test_a_leader_that_steps_down_naming_none_is_found_among_the_other_members(
    make_client: Callable[..., OzoneClient], cluster: FakeCluster, to: int, refusals: int
) -> None:
    """Every member answers NOT_LEADER naming none for a while (a vote), then member `to` leads: the block
    asks the members in turn (the next one may name the leader) and completes where it is."""
    client = _client(make_client, "0s, 20")
    data = os.urandom(3 * FLUSH + 100)
    pipeline, block = _write_stepping_down(client, cluster, data, lambda p: p.step_down(to, refusals))
    _stayed_in(client, cluster, pipeline, data)
    assert pipeline.leader is pipeline.members[to] and 1 <= block._moves <= 20
    assert block.failover_s > 0


def test_an_unreachable_leader_is_replaced_by_the_member_the_others_elect(
    make_client: Callable[..., OzoneClient], cluster: FakeCluster
) -> None:
    """The leader dies (its server stops): the next member still names it for a while (its election timeout),
    then the third member leads. The block goes round the members until it finds it (its watches at
    MAJORITY_COMMITTED: the dead member applies nothing more)."""
    client = _client(make_client, "0s, 20", {"hdds.ratis.client.request.watch.type": "MAJORITY_COMMITTED"})
    data = os.urandom(3 * FLUSH + 100)

    def dies(pipeline: FakePipeline) -> None:
        old = pipeline.leader
        old.stop()
        pipeline.step_down(2, 3, naming=old.uuid)

    pipeline, block = _write_stepping_down(client, cluster, data, dies)
    _stayed_in(client, cluster, pipeline, data)
    assert pipeline.leader is pipeline.members[2] and block._moves >= 2


def test_every_member_refusing_past_the_policy_closes_the_block(
    make_client: Callable[..., OzoneClient], cluster: FakeCluster
) -> None:
    """No member leads within hdds.ratis.client.multilinear.random.retry.policy (three failovers): the block
    closes at its acknowledged length and the rest goes to another pipeline, as before."""
    client = _client(make_client, "0s, 3")
    data = os.urandom(4 * BUFFER + 100)
    pipeline, block = _write_stepping_down(client, cluster, data, lambda p: p.step_down(0, 1000))
    assert block._moves == 3
    check_retry(client, cluster, data, acked=FLUSH)
    exclude = cluster.om.allocations[-1]
    assert [p.id for p in exclude.pipelineIds] == [pipeline.id] and list(exclude.datanodes) == []


def test_every_member_unreachable_closes_the_block_before_the_policy_ends(
    make_client: Callable[..., OzoneClient], cluster: FakeCluster
) -> None:
    """The whole pipeline is gone: once each member failed unreachable in turn the block closes (the policy
    would allow 20 failovers), excluding the pipeline and its members."""
    client = _client(make_client, "0s, 20")
    data = os.urandom(4 * BUFFER + 100)

    def all_die(pipeline: FakePipeline) -> None:
        for member in pipeline.members:
            member.stop()

    pipeline, block = _write_stepping_down(client, cluster, data, all_die)
    assert block._moves == 2
    exclude = cluster.om.allocations[-1]
    assert [p.id for p in exclude.pipelineIds] == [pipeline.id]
    assert sorted(exclude.datanodes) == sorted(m.uuid for m in pipeline.members)
    (first, second) = blocks(cluster)
    assert first[2:4] == (0, FLUSH) and second[2:4] == (FLUSH, len(data) - FLUSH)
    assert cluster.pipeline_of(second[0]) is not pipeline
    assert received(cluster, second[0], second[1]) == len(data) - FLUSH


def test_the_named_leader_is_read_back_from_the_datanodes_not_leader() -> None:
    """The leader travels in its own field (a message naming one is not read as one)."""
    request = pb.ContainerCommandRequestProto(cmdType=pb.PutBlock, containerID=1)
    assert refusal(not_leader(request, "p1", "dn2", "dn1")).leader == "dn1"
    assert refusal(not_leader(request, "p1", "dn2", None)).leader is None
    injected = pb.ContainerCommandResponseProto(result=pb.NOT_LEADER, message="x; the leader is dn3")
    assert refusal(injected).leader is None


def test_the_failover_policy_is_ozones_multilinear_retry_policy() -> None:
    policy = LeaderFailover.parse("1s, 2, 500ms, 1")
    assert [policy.delay(n) for n in (1, 2, 3, 4)] == [0.0, 1.0, 0.5, None]
    assert LEADER_FAILOVER.delay(35) == 60.0 and LEADER_FAILOVER.delay(36) is None
    assert ClientConfig.from_conf(OzoneConfiguration({POLICY: "2s, 3"})).leader_failover.steps == ((2.0, 3),)
    with pytest.raises(ConfigError, match=POLICY):
        ClientConfig.from_conf(OzoneConfiguration({POLICY: "2s, 3, 4s"}))


def test_a_client_cut_off_from_a_live_leader_ends_its_failovers_early(
    make_client: Callable[..., OzoneClient], cluster: FakeCluster
) -> None:
    """R16 D5 (test_r16_pingpong.py): the leader is unreachable from this client only (its followers still
    follow it and name it in every NOT_LEADER). A NOT_LEADER naming a leader this block found unreachable
    is as one naming none: the block asks the next reachable member instead of the dead end again, and a
    member naming it again after a whole turn counts as unreachable; so every member is unreachable in
    turn after four failovers (the policy would allow 30: A, B, A, B, ... until it ran out) and the block
    closes, the rest going to another pipeline."""
    client = _client(make_client, "0s, 30")
    data = os.urandom(4 * BUFFER + 100)

    def cut_off(pipeline: FakePipeline) -> None:
        old = pipeline.leader
        old.stop()
        pipeline.step_down(0, 10_000, naming=old.uuid)

    pipeline, block = _write_stepping_down(client, cluster, data, cut_off)
    assert block._moves == 4
    check_retry(client, cluster, data, acked=FLUSH)
    exclude = cluster.om.allocations[-1]
    assert [p.id for p in exclude.pipelineIds] == [pipeline.id]
    assert list(exclude.datanodes) == [pipeline.members[0].uuid]
