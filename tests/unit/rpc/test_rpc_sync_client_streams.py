"""Client streams from blocking callers (rpc.SyncChannel): the requests come from an iterator drawn on a
thread of its own (it may block, as a queue's `get`), the answers as they come (a bidirectional stream)
or the one answer (a client stream)."""

from __future__ import annotations

import queue
from collections.abc import AsyncIterator, Iterator

import pytest

from pyozone import rpc
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from pyozone.rpc.sync import run_sync

XCEIVER = rpc.service(pb, "XceiverClientProtocolService")
INTRA = rpc.service(pb, "IntraDatanodeProtocolService")
MiB = 1 << 20


class Echo:
    async def send(
        self, requests: AsyncIterator[pb.ContainerCommandRequestProto], context: rpc.CallContext
    ) -> AsyncIterator[pb.ContainerCommandResponseProto]:
        async for request in requests:
            if request.containerID < 0:
                await context.abort(rpc.StatusCode.INVALID_ARGUMENT, "negative container")
            yield pb.ContainerCommandResponseProto(cmdType=request.cmdType, message=str(request.containerID))


class Sink:
    async def upload(
        self, requests: AsyncIterator[pb.SendContainerRequest], context: rpc.CallContext
    ) -> pb.SendContainerResponse:
        received = 0
        async for request in requests:
            received += len(request.data)
        return pb.SendContainerResponse(containerID=7, bytesReceived=received)


@pytest.fixture
def port() -> Iterator[int]:
    server = rpc.Server(rpc.ServerSettings(MiB))
    server.add_service(XCEIVER, Echo())
    server.add_service(INTRA, Sink())
    yield run_sync(server.start("127.0.0.1", 0), 5)
    run_sync(server.stop(0), 5)


def echo(cid: int) -> pb.ContainerCommandRequestProto:
    return pb.ContainerCommandRequestProto(cmdType=pb.Echo, containerID=cid, datanodeUuid="x")


def test_a_bidirectional_stream_answers_each_request_as_a_blocking_iterator_gives_it(port: int) -> None:
    requests: queue.Queue[pb.ContainerCommandRequestProto | None] = queue.Queue()
    with rpc.SyncChannel(f"127.0.0.1:{port}", rpc.ChannelSettings(MiB)) as channel:
        answers = rpc.Stub(channel, XCEIVER).send(iter(requests.get, None), timeout=10)
        for cid in (1, 2, 3):
            requests.put(echo(cid))
            assert next(answers).message == str(cid)  # answered before the next request exists
        requests.put(None)
        assert list(answers) == []


def test_a_failed_bidirectional_stream_raises_its_status(port: int) -> None:
    with rpc.SyncChannel(f"127.0.0.1:{port}", rpc.ChannelSettings(MiB)) as channel:
        answers = rpc.Stub(channel, XCEIVER).send(iter([echo(1), echo(-1), echo(2)]), timeout=10)
        assert next(answers).message == "1"
        with pytest.raises(rpc.RpcError) as e:
            next(answers)
    assert e.value.code() is rpc.StatusCode.INVALID_ARGUMENT and e.value.details() == "negative container"


def test_a_client_stream_returns_its_one_answer(port: int) -> None:
    parts = [pb.SendContainerRequest(containerID=7, offset=i * 3, data=b"abc") for i in range(4)]
    with rpc.SyncChannel(f"127.0.0.1:{port}", rpc.ChannelSettings(MiB)) as channel:
        answer = rpc.Stub(channel, INTRA).upload(iter(parts), timeout=10)
    assert answer.bytesReceived == 12
