"""The generated services run on pyozone.rpc with the protocol converters at both ends: a heartbeat and its
commands round-trip, a malformed one is refused INVALID_ARGUMENT, and the container protocol's stream
answers each request in order (the size limits: tests/unit/rpc/test_rpc_oversized.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from pyozone import protocol as p
from pyozone import rpc
from pyozone.hdds.commands import ClosePipelineCommand
from pyozone.hdds.datanode import DatanodeDetails
from pyozone.hdds.messages import Heartbeat
from pyozone.proto import DatanodeClientProtocol_pb2 as data_pb2
from pyozone.proto import ScmServerDatanodeHeartbeatProtocol_pb2 as pb
from tests.unit.rpc.rpc_support import scenario

DN = DatanodeDetails("00000000-0000-4000-8000-000000000001", "dn1.example.com", "127.0.0.1")
LIMIT = 64 * 1024
HEARTBEAT = rpc.service(pb, "StorageContainerDatanodeProtocolService")
XCEIVER = rpc.service(data_pb2, "XceiverClientProtocolService")


class FakeScm:
    async def sendHeartbeat(self, request: pb.SCMHeartbeatRequestProto, context: rpc.CallContext) -> object:
        try:
            hb = p.heartbeat_from_proto(request)
        except p.ProtocolError as e:
            await context.abort(rpc.StatusCode.INVALID_ARGUMENT, str(e))
        command = ClosePipelineCommand(pipeline_id="p1")
        return p.heartbeat_response_to_proto(p.HeartbeatResponse(hb.datanode.uuid, (command,)))


class FakeDatanode:
    async def send(
        self, requests: AsyncIterator[data_pb2.ContainerCommandRequestProto], context: rpc.CallContext
    ) -> AsyncIterator[data_pb2.ContainerCommandResponseProto]:
        async for request in requests:
            yield data_pb2.ContainerCommandResponseProto(
                cmdType=request.cmdType, traceID=request.traceID, result=data_pb2.SUCCESS
            )


async def serve_and_call() -> None:
    server = rpc.Server(rpc.ServerSettings(LIMIT))
    server.add_service(HEARTBEAT, FakeScm())
    server.add_service(XCEIVER, FakeDatanode())
    port = await server.start("127.0.0.1", 0)
    try:
        async with rpc.Channel(f"127.0.0.1:{port}", rpc.ChannelSettings(LIMIT)) as channel:
            scm = rpc.Stub(channel, HEARTBEAT)
            response = p.heartbeat_response_from_proto(
                await scm.sendHeartbeat(p.heartbeat_to_proto(Heartbeat(DN)), timeout=5)
            )
            assert response.datanode_uuid == DN.uuid
            assert [c.pipeline_id for c in response.commands] == ["p1"]

            with pytest.raises(rpc.RpcError) as bad:
                await scm.sendHeartbeat(pb.SCMHeartbeatRequestProto(), timeout=5)
            assert bad.value.code() is rpc.StatusCode.INVALID_ARGUMENT
            assert "datanodeDetails: is missing" in (bad.value.details() or "")

            call = rpc.Stub(channel, XCEIVER).send()
            for i, kind in enumerate([data_pb2.CreateContainer, data_pb2.WriteChunk, data_pb2.PutBlock]):
                await call.write(
                    data_pb2.ContainerCommandRequestProto(cmdType=kind, traceID=str(i), containerID=1)
                )
                answer = await call.read()
                assert (answer.cmdType, answer.traceID, answer.result) == (kind, str(i), data_pb2.SUCCESS)
            await call.done_writing()
    finally:
        await server.stop(None)


def test_services_on_the_rpc_layer() -> None:
    scenario(serve_and_call)


def test_limits() -> None:
    assert p.MAX_DATA_MESSAGE_BYTES > p.MAX_CHUNK_BYTES >= 4 * p.REPLICATION_CHUNK_BYTES
    assert p.MAX_HEARTBEAT_MESSAGE_BYTES >= p.MAX_ADMIN_MESSAGE_BYTES
