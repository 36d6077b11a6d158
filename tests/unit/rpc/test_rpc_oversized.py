"""A request above its method's limit is refused RESOURCE_EXHAUSTED, whatever its size, as gRPC refuses it:
its body is skipped unread, and the connection (shared by every call of the process to that server) keeps
serving the other calls. Only a frame the receiver would have to buffer, above the connection's limit,
closes it."""

from __future__ import annotations

import asyncio

import pytest

from pyozone import rpc
from pyozone.proto import ScmServerDatanodeHeartbeatProtocol_pb2 as pb
from pyozone.rpc.frames import HEADER, MAX_HEAD_BYTES, FrameDecoder, FrameError, Kind

LIMIT = 64 * 1024
SPEC = rpc.service(pb, "StorageContainerDatanodeProtocolService")


class Scm:
    async def getVersion(self, request: pb.SCMVersionRequestProto, context: rpc.CallContext) -> object:
        return pb.SCMVersionResponseProto(clusterID="CID-rpc")

    async def sendHeartbeat(self, request: pb.SCMHeartbeatRequestProto, context: rpc.CallContext) -> object:
        return pb.SCMHeartbeatResponseProto()


def test_a_request_far_above_its_limit_is_refused_and_the_connection_serves_on() -> None:
    async def main() -> None:
        server = rpc.Server(rpc.ServerSettings(max_message_bytes=LIMIT))
        server.add_service(SPEC, Scm())
        port = await server.start("127.0.0.1", 0)
        try:
            async with rpc.Channel(f"127.0.0.1:{port}", rpc.ChannelSettings(LIMIT)) as channel:
                stub = rpc.Stub(channel, SPEC)
                slow = asyncio.ensure_future(stub.getVersion(pb.SCMVersionRequestProto(), timeout=10))
                big = pb.SCMHeartbeatRequestProto()
                big.datanodeDetails.version = "x" * (4 * LIMIT + MAX_HEAD_BYTES)  # above the frame limit too
                with pytest.raises(rpc.RpcError) as refused:
                    await stub.sendHeartbeat(big, timeout=10)
                assert refused.value.code() is rpc.StatusCode.RESOURCE_EXHAUSTED, refused.value
                assert (await slow).clusterID == "CID-rpc"
                answer = await stub.getVersion(pb.SCMVersionRequestProto(), timeout=10)
                assert answer.clusterID == "CID-rpc"
        finally:
            await server.stop(0)

    asyncio.run(main())


def test_a_frame_it_would_have_to_buffer_above_the_limit_breaks_the_connection() -> None:
    decoder = FrameDecoder(LIMIT + MAX_HEAD_BYTES, lambda kind, call_id, head, size: True)
    with pytest.raises(FrameError):
        decoder.feed(HEADER.pack(1 << 31, Kind.CALL, 0, 4, 1) + b"head")
    with pytest.raises(FrameError):  # a kind whose body is never skipped
        FrameDecoder(LIMIT + MAX_HEAD_BYTES, lambda *_: False).feed(HEADER.pack(1 << 31, Kind.PING, 0, 0, 1))
    skipping = FrameDecoder(LIMIT + MAX_HEAD_BYTES, lambda kind, call_id, head, size: False)
    assert skipping.feed(HEADER.pack(1 << 30, Kind.CALL, 0, 4, 1) + b"head") == []
    assert skipping.pending  # skipped as it arrives (2 GiB or more: a broken peer); a stall is timed out
