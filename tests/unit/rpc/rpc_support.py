"""An echo service with every call shape, run in-process on 127.0.0.1, for the RPC layer's tests."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

from pyozone import rpc
from pyozone.common.tls import TlsStore
from pyozone.proto.OmClientProtocol_pb2 import EchoRPCRequest, EchoRPCResponse
from pyozone.proto.Rpc_pb2 import RpcCallHead
from pyozone.rpc.frames import Flag, Kind, encode
from pyozone.rpc.loop import run
from pyozone.rpc.service import Cardinality, MethodSpec, ServiceSpec

T = TypeVar("T")
SERVICE = "test.Echo"


def _method(name: str, cardinality: Cardinality) -> MethodSpec:
    return MethodSpec(name, f"/{SERVICE}/{name}", EchoRPCRequest, EchoRPCResponse, cardinality)


SPEC = ServiceSpec(
    SERVICE,
    {
        m.name: m
        for m in (
            _method("echo", Cardinality.UNARY_UNARY),
            _method("fail", Cardinality.UNARY_UNARY),
            _method("metadata", Cardinality.UNARY_UNARY),
            _method("hang", Cardinality.UNARY_UNARY),
            _method("nothing", Cardinality.UNARY_UNARY),
            _method("count", Cardinality.UNARY_STREAM),
            _method("gather", Cardinality.STREAM_UNARY),
            _method("chat", Cardinality.STREAM_STREAM),
        )
    },
)
MB = 1 << 20


def request(payload: bytes = b"") -> EchoRPCRequest:
    return EchoRPCRequest(payloadReq=payload)


class Echo:
    """`hang` waits until cancelled and records how it ended; `fail` aborts with the code named in its
    payload ("NOT_FOUND:why"), raises a bug when the payload is "bug", and with "cancelled" awaits a future
    that is cancelled under it (nobody cancelled the call)."""

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.cancelled = asyncio.Event()
        self.remaining: list[float | None] = []

    async def echo(self, req: EchoRPCRequest, context: rpc.CallContext) -> EchoRPCResponse:
        return EchoRPCResponse(payload=req.payloadReq)

    async def fail(self, req: EchoRPCRequest, context: rpc.CallContext) -> EchoRPCResponse:
        if req.payloadReq == b"bug":
            raise ValueError("a bug")
        if req.payloadReq == b"cancelled":
            answer = asyncio.get_running_loop().create_future()
            answer.cancel()
            await answer
        code, details = req.payloadReq.decode().split(":", 1)
        await context.abort(rpc.StatusCode[code], details)

    async def metadata(self, req: EchoRPCRequest, context: rpc.CallContext) -> EchoRPCResponse:
        shown = ";".join(f"{k}={v}" for k, v in context.invocation_metadata())
        return EchoRPCResponse(payload=shown.encode())

    async def hang(self, req: EchoRPCRequest, context: rpc.CallContext) -> EchoRPCResponse:
        self.remaining.append(context.time_remaining())
        self.started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled.set()
            raise
        raise AssertionError("not reached")

    async def nothing(self, req: EchoRPCRequest, context: rpc.CallContext) -> bytes:
        return b""

    async def count(self, req: EchoRPCRequest, context: rpc.CallContext) -> AsyncIterator[EchoRPCResponse]:
        for i in range(int(req.payloadReq or b"0")):
            yield EchoRPCResponse(payload=str(i).encode())

    async def gather(self, requests: AsyncIterator[EchoRPCRequest], context: rpc.CallContext) -> Any:
        return EchoRPCResponse(payload=b"".join([r.payloadReq async for r in requests]))

    async def chat(
        self, requests: AsyncIterator[EchoRPCRequest], context: rpc.CallContext
    ) -> AsyncIterator[EchoRPCResponse]:
        async for r in requests:
            yield EchoRPCResponse(payload=r.payloadReq.upper())


async def serve(
    settings: rpc.ServerSettings | None = None,
    servicer: Any = None,
    limits: rpc.RequestLimits | None = None,
    tls: TlsStore | None = None,
) -> tuple[rpc.Server, int]:
    server = rpc.Server(settings or rpc.ServerSettings(4 * MB), limits)
    server.add_service(SPEC, servicer if servicer is not None else Echo())
    return server, await server.start("127.0.0.1", 0, tls)


def channel(port: int, settings: rpc.ChannelSettings | None = None, **kwargs: Any) -> rpc.Channel:
    return rpc.Channel(f"127.0.0.1:{port}", settings or rpc.ChannelSettings(4 * MB), **kwargs)


@contextlib.asynccontextmanager
async def served(
    settings: rpc.ServerSettings | None = None,
    servicer: Any = None,
    limits: rpc.RequestLimits | None = None,
    channel_settings: rpc.ChannelSettings | None = None,
    **channel_kwargs: Any,
) -> AsyncIterator[tuple[rpc.Server, rpc.Channel, Any]]:
    """A server of SPEC (`serve`), a channel to it and a stub on that channel; the server stops after."""
    server, port = await serve(settings, servicer, limits)
    try:
        async with channel(port, channel_settings, **channel_kwargs) as ch:
            yield server, ch, rpc.Stub(ch, SPEC)
    finally:
        await server.stop(None)


def scenario(test: Callable[[], Awaitable[T]], timeout: float = 20.0) -> T:
    """Runs an async test on the RPC layer's loop, bounded in time."""

    async def bounded() -> T:
        async with asyncio.timeout(timeout):
            return await test()

    return run(bounded())


def call_frame(method: str, body: bytes, call_id: int = 1, timeout_ms: int = 0) -> bytes:
    """A CALL frame as a client writes it, for raw-socket peers."""
    head = RpcCallHead(method=method, timeoutMillis=timeout_ms).SerializeToString()
    return encode(Kind.CALL, Flag.MESSAGE | Flag.END_STREAM, call_id, head, body)


async def raw_peer(port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    return await asyncio.open_connection("127.0.0.1", port)


async def closed(reader: asyncio.StreamReader, within: float) -> bool:
    """Whether the server closes the connection within `within` seconds (what it sent is drained)."""
    try:
        async with asyncio.timeout(within):
            while await reader.read(65536):
                pass
    except TimeoutError:
        return False
    except ConnectionError:
        pass
    return True
