"""The generated services work on grpc.aio, and the message size limits hold (on 127.0.0.1)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import grpc
import pytest

from pyozone import protocol as p
from pyozone.hdds.commands import ClosePipelineCommand
from pyozone.hdds.datanode import DatanodeDetails
from pyozone.hdds.messages import Heartbeat
from pyozone.proto import DatanodeClientProtocol_pb2 as data_pb2
from pyozone.proto import DatanodeClientProtocol_pb2_grpc as data_grpc
from pyozone.proto import ScmServerDatanodeHeartbeatProtocol_pb2 as pb
from pyozone.proto import ScmServerDatanodeHeartbeatProtocol_pb2_grpc as pb_grpc

DN = DatanodeDetails("00000000-0000-4000-8000-000000000001", "dn1.example.com", "127.0.0.1")
LIMIT = 64 * 1024


class FakeScm(pb_grpc.StorageContainerDatanodeProtocolServiceServicer):
    async def sendHeartbeat(self, request, context):
        try:
            hb = p.heartbeat_from_proto(request)
        except p.ProtocolError as e:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(e))
        command = ClosePipelineCommand(pipeline_id="p1")
        return p.heartbeat_response_to_proto(p.HeartbeatResponse(hb.datanode.uuid, (command,)))


class FakeDatanode(data_grpc.XceiverClientProtocolServiceServicer):
    async def send(self, request_iterator, context) -> AsyncIterator[data_pb2.ContainerCommandResponseProto]:
        async for request in request_iterator:
            yield data_pb2.ContainerCommandResponseProto(
                cmdType=request.cmdType, traceID=request.traceID, result=data_pb2.SUCCESS
            )


async def serve_and_call() -> None:
    server = grpc.aio.server(options=p.grpc_options(LIMIT))
    pb_grpc.add_StorageContainerDatanodeProtocolServiceServicer_to_server(FakeScm(), server)
    data_grpc.add_XceiverClientProtocolServiceServicer_to_server(FakeDatanode(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}", options=p.grpc_options(LIMIT)) as channel:
            scm = pb_grpc.StorageContainerDatanodeProtocolServiceStub(channel)
            response = p.heartbeat_response_from_proto(
                await scm.sendHeartbeat(p.heartbeat_to_proto(Heartbeat(DN)))
            )
            assert response.datanode_uuid == DN.uuid
            assert [c.pipeline_id for c in response.commands] == ["p1"]

            with pytest.raises(grpc.aio.AioRpcError) as bad:
                await scm.sendHeartbeat(pb.SCMHeartbeatRequestProto())
            assert bad.value.code() is grpc.StatusCode.INVALID_ARGUMENT
            assert "datanodeDetails: is missing" in (bad.value.details() or "")

            big = p.heartbeat_to_proto(Heartbeat(DN))
            big.datanodeDetails.version = "x" * (2 * LIMIT)
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as unlimited:  # the server refuses it
                with pytest.raises(grpc.aio.AioRpcError) as oversized:
                    await pb_grpc.StorageContainerDatanodeProtocolServiceStub(unlimited).sendHeartbeat(big)
            assert oversized.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED

            datanode = data_grpc.XceiverClientProtocolServiceStub(channel)
            call = datanode.send()
            for i, kind in enumerate([data_pb2.CreateContainer, data_pb2.WriteChunk, data_pb2.PutBlock]):
                await call.write(
                    data_pb2.ContainerCommandRequestProto(cmdType=kind, traceID=str(i), containerID=1)
                )
                answer = await call.read()
                assert (answer.cmdType, answer.traceID, answer.result) == (kind, str(i), data_pb2.SUCCESS)
            await call.done_writing()
    finally:
        await server.stop(None)


def test_services_on_grpc_aio() -> None:
    asyncio.run(serve_and_call())


def test_limits() -> None:
    assert p.MAX_DATA_MESSAGE_BYTES > p.MAX_CHUNK_BYTES >= 4 * p.REPLICATION_CHUNK_BYTES
    assert p.MAX_HEARTBEAT_MESSAGE_BYTES >= p.MAX_ADMIN_MESSAGE_BYTES
    assert dict(p.grpc_options(123)) == {
        "grpc.max_send_message_length": 123,
        "grpc.max_receive_message_length": 123,
        "grpc.so_reuseport": 0,
    }
