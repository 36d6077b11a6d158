"""RequestBounds.read_bytes: a service that names a request's long field reads bodies up to it (and walks
their fields), while a body above it is still skipped unread from its frame header (OM: a 3 MiB name is
INVALID_VOLUME_NAME, a 30 MB one costs nothing)."""

from __future__ import annotations

from pyozone import rpc
from pyozone.proto.OmClientProtocol_pb2 import EchoRPCRequest, EchoRPCResponse
from pyozone.rpc.loop import run
from pyozone.rpc.service import Cardinality, MethodSpec, ServiceSpec

PATH = "/test.Bounded/echo"
SPEC = ServiceSpec(
    "test.Bounded",
    {"echo": MethodSpec("echo", PATH, EchoRPCRequest, EchoRPCResponse, Cardinality.UNARY_UNARY)},
)
KiB = 1024


class Limits:
    """The whole message at most 1 KiB, payloadReq at most 512 bytes; bodies up to 64 KiB are read."""

    def __init__(self, read_bytes: int | None) -> None:
        self._bounds = rpc.RequestBounds(KiB, {1: ("payloadReq", 512)}, read_bytes=read_bytes)
        self.refused: list[rpc.Oversized] = []

    def bounds(self, method: str) -> rpc.RequestBounds | None:
        return self._bounds if method == PATH else None

    def refusal(self, method: str, oversized: rpc.Oversized) -> tuple[rpc.StatusCode, str]:
        self.refused.append(oversized)
        return rpc.StatusCode.INVALID_ARGUMENT, f"{oversized.field}: {oversized.size} > {oversized.limit}"


class Echo:
    async def echo(self, request: EchoRPCRequest, context: rpc.CallContext) -> EchoRPCResponse:
        return EchoRPCResponse(payload=request.payloadReq)


async def refusals(read_bytes: int | None, *sizes: int) -> tuple[list[rpc.Oversized], list[str]]:
    limits = Limits(read_bytes)
    server = rpc.Server(rpc.ServerSettings(max_message_bytes=1 << 20), limits=limits)
    server.add_service(SPEC, Echo())
    port = await server.start("127.0.0.1", 0)
    details = []
    try:
        async with rpc.Channel(f"127.0.0.1:{port}", rpc.ChannelSettings(max_message_bytes=1 << 20)) as ch:
            stub = rpc.Stub(ch, SPEC)
            for size in sizes:
                try:
                    await stub.echo(EchoRPCRequest(payloadReq=bytes(size)), timeout=10)
                    details.append("OK")
                except rpc.RpcError as e:
                    details.append(e.details())
            assert (await stub.echo(EchoRPCRequest(payloadReq=b"x"), timeout=10)).payload == b"x"
    finally:
        await server.stop(0)
    return limits.refused, details


def test_a_body_up_to_read_bytes_is_read_and_its_long_field_named() -> None:
    refused, details = run(refusals(64 * KiB, 100, 2 * KiB, 100 * KiB))
    assert details[0] == "OK"
    assert refused[0].field == "payloadReq" and refused[0].limit == 512  # read: its field walked
    assert refused[1].field is None and refused[1].limit == 64 * KiB  # above read_bytes: skipped unread
    assert refused[1].size > 100 * KiB


def test_without_read_bytes_the_message_bound_is_the_header_bound() -> None:
    refused, details = run(refusals(None, 2 * KiB))
    assert refused == [rpc.Oversized(None, refused[0].size, KiB)] and details[0].startswith("None: ")
