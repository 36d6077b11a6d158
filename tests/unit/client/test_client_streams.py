"""A client's streams to a datanode: a finished block's stream serves the next one (one user at a time,
never once broken or owing answers, at most IDLE_STREAMS kept); many small keys from one caller
(put_keys); and a key's time split into its steps (steps.recording)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator

import pytest

from pyozone.client import OMException, OzoneClient, steps
from pyozone.framework.datanode import IDLE_STREAMS, ChannelPool
from pyozone.hdds.locations import DatanodeRef
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from tests.polling import wait_for_async
from tests.unit.client.fakes import BLOCK, FakeCluster, small_conf

TIMEOUT_S = 5.0


@pytest.fixture
def one_pipeline() -> Iterator[FakeCluster]:
    cluster = FakeCluster(datanodes=3, block_size=BLOCK)
    yield cluster
    cluster.stop()


@pytest.fixture
def client(one_pipeline: FakeCluster) -> Iterator[OzoneClient]:
    with OzoneClient(small_conf(one_pipeline.om.address)) as client:
        client.create_volume("vol")
        client.create_bucket("vol", "bucket")
        yield client


def _ref(cluster: FakeCluster) -> DatanodeRef:
    dn = cluster.datanodes[0]
    return DatanodeRef(dn.uuid, dn.name, "127.0.0.1", dn.port)


def _echo() -> pb.ContainerCommandRequestProto:
    return pb.ContainerCommandRequestProto(cmdType=pb.Echo, echo=pb.EchoRequestProto())


def test_a_closed_idle_stream_serves_the_next_user_and_two_users_never_share_one(
    one_pipeline: FakeCluster,
) -> None:
    async def scenario() -> None:
        pool = ChannelPool()
        first, second = pool.stream(_ref(one_pipeline), TIMEOUT_S), pool.stream(_ref(one_pipeline), TIMEOUT_S)
        assert first is not second
        assert (await first.submit(_echo())).result == pb.UNSUPPORTED_REQUEST  # the fake's answer to Echo
        await first.close()
        assert pool.stream(_ref(one_pipeline), TIMEOUT_S) is first
        assert pool.stream(_ref(one_pipeline), 2 * TIMEOUT_S) is not second  # another timeout, another pool
        await pool.close()

    asyncio.run(scenario())


def test_a_stream_owing_answers_or_broken_is_not_kept(one_pipeline: FakeCluster) -> None:
    async def scenario() -> None:
        pool = ChannelPool()
        owing = pool.stream(_ref(one_pipeline), TIMEOUT_S)
        owing.submit(_echo())  # its answer is still owed when its user gives up
        await owing.close()
        assert pool.stream(_ref(one_pipeline), TIMEOUT_S) is not owing
        broken = pool.stream(_ref(one_pipeline), TIMEOUT_S)
        await broken.submit(_echo())
        one_pipeline.datanodes[0].stop()
        await wait_for_async(lambda: not broken.reusable, what="the stream broke")
        await broken.close()
        assert pool.stream(_ref(one_pipeline), TIMEOUT_S) is not broken
        await pool.close()

    asyncio.run(scenario())


class RenewingPool(ChannelPool):
    """A pool whose certificate a test renews (`renewals`: the store's generation)."""

    renewals = 1

    @property
    def generation(self) -> int:
        return self.renewals


def test_a_stream_opened_before_a_renewal_of_the_certificate_is_not_reused(one_pipeline: FakeCluster) -> None:
    """Its connection presents the replaced certificate: kept idle or given back, it serves no next user."""

    async def scenario() -> None:
        pool = RenewingPool()
        old, idle = pool.stream(_ref(one_pipeline), TIMEOUT_S), pool.stream(_ref(one_pipeline), TIMEOUT_S)
        await old.submit(_echo())
        await idle.submit(_echo())
        await idle.close()  # kept: opened with the current certificate
        pool.renewals += 1
        await old.close()  # given back after the renewal
        fresh = pool.stream(_ref(one_pipeline), TIMEOUT_S)
        assert fresh is not idle and fresh is not old
        await fresh.submit(_echo())
        await fresh.close()
        assert pool.stream(_ref(one_pipeline), TIMEOUT_S) is fresh  # opened after the renewal: reused
        await pool.close()

    asyncio.run(scenario())


def test_at_most_idle_streams_per_datanode_are_kept(one_pipeline: FakeCluster) -> None:
    async def scenario() -> int:
        pool = ChannelPool()
        first = [pool.stream(_ref(one_pipeline), TIMEOUT_S) for _ in range(IDLE_STREAMS + 2)]
        for stream in first:
            await stream.close()
        again = [pool.stream(_ref(one_pipeline), TIMEOUT_S) for _ in range(IDLE_STREAMS + 2)]
        await pool.close()
        return len({id(s) for s in first} & {id(s) for s in again})

    assert asyncio.run(scenario()) == IDLE_STREAMS


def test_keys_written_one_after_another_reuse_the_leaders_streams(
    client: OzoneClient, one_pipeline: FakeCluster
) -> None:
    for i in range(5):
        client.put_key("vol", "bucket", f"k{i}", os.urandom(1000))
    (pipeline,) = one_pipeline.pipelines.values()
    assert pipeline.leader.streams == 2  # its data and its watches (the fake's followers lag: a watch each)
    assert pipeline.leader.requests.count(pb.WatchForCommit) == 5


def test_put_keys_commits_every_key_and_answers_in_the_order_given(client: OzoneClient) -> None:
    data = {f"batch/{i}": os.urandom(100 + i) for i in range(12)}
    infos = client.put_keys("vol", "bucket", data, concurrency=4)
    assert [i.name for i in infos] == list(data)
    assert all(client.read_key("vol", "bucket", k).readall() == v for k, v in data.items())


def test_put_keys_raises_the_first_failure_once_the_other_keys_are_written(client: OzoneClient) -> None:
    keys = [("a", b"1"), ("", b"no name"), ("b", b"2")]
    with pytest.raises(OMException, match="INVALID_KEY_NAME"):
        client.put_keys("vol", "bucket", keys, concurrency=1)
    assert [k.name for k in client.list_keys("vol", "bucket")] == ["a", "b"]
    with pytest.raises(ValueError, match="concurrency must be at least 1"):
        client.put_keys("vol", "bucket", keys, concurrency=0)


def test_a_recording_splits_a_keys_time_into_its_steps(client: OzoneClient) -> None:
    async def put() -> steps.StepTimes:
        with steps.recording() as times:
            await client.async_client.put_key("vol", "bucket", "k", os.urandom(1000))
        assert steps.current() is None
        return times

    times = client.run(put())
    assert set(times.seconds) == {"openKey", "write", "watchForCommit", "commitKey"}
    assert all(seconds > 0 for seconds in times.seconds.values())
