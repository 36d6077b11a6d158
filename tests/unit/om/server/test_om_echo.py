"""OM's echoRPC (freon ome): payloadSizeResp zero bytes back, answered by the client's `echo`, with sizes
out of bounds refused as INVALID_REQUEST naming the field, and a request above its bound refused whole."""

from __future__ import annotations

from pathlib import Path

import pytest

from pyozone import rpc
from pyozone.client import AsyncOzoneClient, OMException
from pyozone.hdds.limits import MAX_ECHO_PAYLOAD_BYTES
from pyozone.proto import OmClientProtocol_pb2 as pb
from tests.unit.om.om_fakes import FakeScm
from tests.unit.om.test_om_server import failure, run, running


def test_echo_answers_the_size_asked(tmp_path: Path) -> None:
    async def body() -> None:
        async with running(tmp_path, FakeScm()) as (daemon, stub):
            answer = await stub.echoRPC(pb.EchoRPCRequest(payloadReq=b"x" * 4096, payloadSizeResp=10))
            assert answer.payload == bytes(10)
            async with AsyncOzoneClient(f"127.0.0.1:{daemon.rpc_port}") as client:
                assert await client.om.echo() == b""
                largest = await client.om.echo(bytes(MAX_ECHO_PAYLOAD_BYTES), MAX_ECHO_PAYLOAD_BYTES)
                assert largest == bytes(MAX_ECHO_PAYLOAD_BYTES)

    run(body())


@pytest.mark.parametrize(
    ("size", "details"),
    [
        (-1, "INVALID_REQUEST: payloadSizeResp: must be at least 0, got -1"),
        (
            MAX_ECHO_PAYLOAD_BYTES + 1,
            f"INVALID_REQUEST: payloadSizeResp: must be at most {MAX_ECHO_PAYLOAD_BYTES}",
        ),
    ],
)
def test_a_response_size_out_of_bounds_is_invalid_request(tmp_path: Path, size: int, details: str) -> None:
    async def body() -> None:
        async with running(tmp_path, FakeScm()) as (_, stub):
            code, got = await failure(stub.echoRPC, pb.EchoRPCRequest(payloadSizeResp=size))
            assert code is rpc.StatusCode.INVALID_ARGUMENT and got.startswith(details), got

    run(body())


def test_a_payload_above_the_bound_is_refused_before_it_is_parsed(tmp_path: Path) -> None:
    async def body() -> None:
        async with (
            running(tmp_path, FakeScm()) as (daemon, _),
            AsyncOzoneClient(f"127.0.0.1:{daemon.rpc_port}") as client,
        ):
            with pytest.raises(OMException) as refused:
                await client.om.echo(bytes(MAX_ECHO_PAYLOAD_BYTES + 2048))
            assert refused.value.result == "INVALID_REQUEST"
            assert "echoRPC request of" in str(refused.value), refused.value

    run(body())
