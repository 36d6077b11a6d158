"""Calls end to end on 127.0.0.1 (rpc.Server and rpc.Channel on one loop): every call shape, status codes
and details, metadata, deadlines both ways, cancellation, per-method message sizes checked from the frame
header (a 30 MB body skipped unread), and RequestLimits' field bounds."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import tracemalloc

import pytest

from pyozone import rpc
from pyozone.rpc import frames
from pyozone.rpc.client_connection import ClientConnection
from pyozone.rpc.limits import Oversized, RequestBounds
from tests.unit.rpc.rpc_support import MB, SPEC, Echo, channel, request, scenario, serve, served

Code = rpc.StatusCode


async def failure(call: object) -> tuple[Code, str]:
    with pytest.raises(rpc.RpcError) as e:
        await call  # type: ignore[misc]
    return e.value.code(), e.value.details()


def test_unary_and_every_stream_shape() -> None:
    async def test() -> None:
        async with served() as (_, ch, stub):
            assert (await stub.echo(request(b"hi"), timeout=5)).payload == b"hi"
            assert (await stub.nothing(request())).payload == b""
            assert [a.payload async for a in stub.count(request(b"3"))] == [b"0", b"1", b"2"]
            assert [a.payload async for a in stub.count(request(b"0"))] == []
            gather = stub.gather(iter([request(b"a"), request(b"b")]), timeout=5)
            assert (await gather).payload == b"ab"
            chat = stub.chat(timeout=5)
            await chat.write(request(b"x"))
            assert (await chat.read()).payload == b"X"
            await chat.write(request(b"y"))
            await chat.done_writing()
            assert (await chat.read()).payload == b"Y"
            assert await chat.read() is rpc.EOF and chat.code() is Code.OK
            raw = ch.unary_unary("/test.Echo/echo")
            assert await raw(request(b"r").SerializeToString()) == b"\n\x01r"  # EchoRPCResponse.payload

    scenario(test)


def test_a_unary_body_given_as_pieces_arrives_whole() -> None:
    """A Raft append's body goes as its pieces (the entries' data shared by every follower's call), small
    or past LARGE_BODY_BYTES, never joined by the caller."""

    async def test() -> None:
        async with served() as (_, ch, _stub):
            raw = ch.unary_unary("/test.Echo/echo")
            for size in (1, 2 * MB):
                whole = request(b"p" * size).SerializeToString()
                pieces = [whole[:1], whole[1:-1], whole[-1:]]
                assert await raw(pieces) == whole  # EchoRPCResponse.payload is field 1, as the request's

    scenario(test)


def test_many_concurrent_calls_share_one_connection() -> None:
    async def test() -> None:
        async with served() as (server, _, stub):
            answers = await asyncio.gather(*(stub.echo(request(b"%d" % i)) for i in range(500)))
            assert [a.payload for a in answers] == [b"%d" % i for i in range(500)]
            assert len(server.connections) == 1

    scenario(test)


@pytest.mark.parametrize(
    ("payload", "code", "details"),
    [
        (b"NOT_FOUND:no such key", Code.NOT_FOUND, "no such key"),
        (b"PERMISSION_DENIED:", Code.PERMISSION_DENIED, ""),
        ("RESOURCE_EXHAUSTED:é ".encode(), Code.RESOURCE_EXHAUSTED, "é "),
        (b"bug", Code.INTERNAL, "/test.Echo/fail: internal error (see the server's log)"),
        (b"cancelled", Code.INTERNAL, "/test.Echo/fail: internal error (see the server's log)"),
    ],
)
def test_a_failed_call_carries_its_status_code_and_details(payload: bytes, code: Code, details: str) -> None:
    """A handler whose awaited future is cancelled under it ("cancelled") failed: it is no CANCELLED, which
    says the caller cancelled (slow-run-1: a datanode whose pipeline closed under a request answered
    CANCELLED, logging nothing)."""

    async def test() -> None:
        server, port = await serve()
        async with channel(port) as ch:
            assert await failure(rpc.Stub(ch, SPEC).fail(request(payload))) == (code, details)
        await server.stop(None)

    scenario(test)


def test_unknown_methods_and_unreadable_requests_are_refused() -> None:
    async def test() -> None:
        server, port = await serve()
        async with channel(port) as ch:
            assert await failure(ch.unary_unary("/test.Echo/absent")(b"")) == (
                Code.UNIMPLEMENTED,
                "Method not found: /test.Echo/absent",
            )
            code, details = await failure(ch.unary_unary("/test.Echo/echo")(b"\xff\xff\xff"))
            assert code is Code.INVALID_ARGUMENT and details.startswith(
                "INVALID_REQUEST: not a valid request"
            )
            assert (await rpc.Stub(ch, SPEC).echo(request(b"still"))).payload == b"still"
        await server.stop(None)

    scenario(test)


def test_metadata_of_the_channel_and_of_the_call_reach_the_handler() -> None:
    async def test() -> None:
        async with served(metadata=[("user", "alice")]) as (_, _, stub):
            assert (await stub.metadata(request())).payload == b"user=alice"
            answer = await stub.metadata(request(), metadata=[("x-trace", "t1"), ("block-token", "b")])
            assert answer.payload == b"user=alice;x-trace=t1;block-token=b"

    scenario(test)


def test_a_deadline_fails_the_call_on_the_client_and_cancels_the_handler_on_the_server() -> None:
    async def test() -> None:
        echo = Echo()
        async with served(servicer=echo) as (server, _, stub):
            assert await failure(stub.hang(request(), timeout=0.2)) == (
                Code.DEADLINE_EXCEEDED,
                "Deadline Exceeded",
            )
            await asyncio.wait_for(echo.cancelled.wait(), 2)
            assert 0 < echo.remaining[0] <= 0.2
            assert not any(c._calls for c in server.connections)
            assert (await stub.echo(request(b"after"), timeout=1)).payload == b"after"

    scenario(test)


def test_the_server_ends_a_call_whose_deadline_passed_even_if_the_client_does_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The deadline travels in the call head: the server answers DEADLINE_EXCEEDED by itself."""
    monkeypatch.setattr(ClientConnection, "_expire", lambda *a: None)  # a client that never gives up

    async def test() -> None:
        echo = Echo()
        async with served(servicer=echo) as (_, _, stub):
            assert await failure(stub.hang(request(), timeout=0.2)) == (
                Code.DEADLINE_EXCEEDED,
                "Deadline Exceeded",
            )
            assert echo.cancelled.is_set()

    scenario(test)


def test_a_client_that_cancels_mid_call_cancels_the_handler() -> None:
    async def test() -> None:
        echo = Echo()
        async with served(servicer=echo) as (server, _, stub):
            task = asyncio.create_task(stub.hang(request()))
            await asyncio.wait_for(echo.started.wait(), 2)
            task.cancel()
            await asyncio.wait_for(echo.cancelled.wait(), 2)
            stream = stub.chat()
            await stream.write(request(b"a"))
            assert (await stream.read()).payload == b"A"
            assert stream.cancel() and await failure(stream.read()) == (Code.CANCELLED, "Locally cancelled")
            for _ in range(100):
                if not any(c._calls for c in server.connections):
                    break
                await asyncio.sleep(0.01)
            assert not any(c._calls for c in server.connections)
            assert (await stub.echo(request(b"ok"))).payload == b"ok"

    scenario(test)


def test_a_request_above_the_method_limit_is_refused_from_the_header_without_being_buffered() -> None:
    """A 30 MB body against a 4 MB server: refused RESOURCE_EXHAUSTED, skipped as it arrives (the server
    never holds more than a socket read of it), and the connection keeps serving."""

    async def test() -> None:
        server, port = await serve(rpc.ServerSettings(4 * MB))
        big = request(b"x" * (30 * MB)).SerializeToString()
        buffered: list[int] = []
        feed = frames.FrameDecoder.feed

        def watched(self: frames.FrameDecoder, data: bytes) -> list[frames.Frame]:
            out = feed(self, data)
            if self._admit is not None and self.max_frame > 4 * MB:  # the server's decoder
                buffered.append(len(self._buf))
            return out

        frames.FrameDecoder.feed = watched  # type: ignore[method-assign]
        try:
            async with channel(port, rpc.ChannelSettings(64 * MB)) as ch:
                stub = rpc.Stub(ch, SPEC)
                tracemalloc.start()
                try:
                    code, details = await failure(ch.unary_unary("/test.Echo/echo")(big, timeout=20))
                    _, peak = tracemalloc.get_traced_memory()
                finally:
                    tracemalloc.stop()
                assert (code, details) == (
                    Code.RESOURCE_EXHAUSTED,
                    f"request of {30 * MB + 5} bytes, above {4 * MB}",
                )
                assert (await stub.echo(request(b"next"))).payload == b"next"
        finally:
            frames.FrameDecoder.feed = feed  # type: ignore[method-assign]
        assert buffered and max(buffered) < 1 * MB
        assert peak < 8 * MB  # the client's own copy of 30 MB is not counted (made before tracing)
        await server.stop(None)

    scenario(test)


def test_an_answer_above_the_client_limit_is_refused() -> None:
    async def test() -> None:
        async with served(channel_settings=rpc.ChannelSettings(1024)) as (_, _, stub):
            code, details = await failure(stub.echo(request(b"y" * 2000)))
            assert code is Code.RESOURCE_EXHAUSTED and "above 1024" in details
            assert (await stub.echo(request(b"small"))).payload == b"small"

    scenario(test)


class Limits:
    """Bounds /test.Echo/echo: the whole request to 1000 bytes, payloadReq (field 1) to 100."""

    def bounds(self, method: str) -> RequestBounds | None:
        if method == "/test.Echo/echo":
            return RequestBounds(1000, {1: ("payloadReq", 100)})
        return None

    def refusal(self, method: str, oversized: Oversized) -> tuple[Code, str]:
        return Code.INVALID_ARGUMENT, f"{oversized.field or 'request'} {oversized.size} > {oversized.limit}"


def test_request_limits_bound_fields_and_the_message_per_method() -> None:
    async def test() -> None:
        async with served(limits=Limits()) as (_, ch, stub):
            assert (await stub.echo(request(b"p" * 100))).payload == b"p" * 100
            assert await failure(stub.echo(request(b"p" * 101))) == (
                Code.INVALID_ARGUMENT,
                "payloadReq 101 > 100",
            )
            # above the whole message's bound it is refused from the frame header, before any field is seen
            assert await failure(stub.echo(request(b"p" * 5000))) == (
                Code.INVALID_ARGUMENT,
                "request 5003 > 1000",
            )
            assert await failure(stub.echo(request(b"p" * 900))) == (
                Code.INVALID_ARGUMENT,
                "payloadReq 900 > 100",
            )
            many = b"".join([b"\x0a\x05hello"] * 200)  # many short fields: the whole message is above 1000
            assert await failure(ch.unary_unary("/test.Echo/echo")(many)) == (
                Code.INVALID_ARGUMENT,
                "request 1400 > 1000",
            )
            assert (await stub.metadata(request(b"p" * 5000))).payload == b""  # other methods unbounded
            big = request(b"q" * (2 * MB)).SerializeToString()
            assert await failure(ch.unary_unary("/test.Echo/echo")(big)) == (
                Code.INVALID_ARGUMENT,
                f"request {len(big)} > 1000",
            )

    scenario(test)


def test_a_stream_its_reader_neglects_holds_up_only_itself() -> None:
    """Streams are flow-controlled one by one: a server stream nobody reads, and a client stream whose
    handler takes nothing, stop their own sender at the window while the connection's other calls go on;
    read again, both finish."""

    class Slow(Echo):
        def __init__(self) -> None:
            super().__init__()
            self.take = asyncio.Event()

        async def gather(self, requests: object, context: rpc.CallContext) -> object:
            await self.take.wait()
            return await super().gather(requests, context)  # type: ignore[arg-type]

    async def test() -> None:
        slow = Slow()
        async with served(
            rpc.ServerSettings(4 * MB, stream_queue=8),
            servicer=slow,
            channel_settings=rpc.ChannelSettings(4 * MB, stream_queue=8),
        ) as (_, _, stub):
            unread = stub.count(request(b"1000"))
            assert (await unread.read()).payload == b"0"
            upload = stub.gather()
            sent = 0

            async def send() -> None:
                nonlocal sent
                for _ in range(100):
                    await upload.write(request(b"u"))
                    sent += 1
                await upload.done_writing()

            sending = asyncio.create_task(send())
            for i in range(200):
                assert (await stub.echo(request(b"%d" % i), timeout=5)).payload == b"%d" % i
            assert sent <= 9 and not sending.done()  # the window, and the CALL
            assert len(unread._call.queue) <= 8  # type: ignore[union-attr]
            slow.take.set()
            await asyncio.wait_for(sending, 5)
            assert (await upload).payload == b"u" * 100
            assert [a.payload async for a in unread] == [b"%d" % i for i in range(1, 1000)]

    scenario(test)


def test_a_short_deadline_after_a_long_one_expires_on_time() -> None:
    async def test() -> None:
        async with served() as (_, _, stub):
            long = asyncio.create_task(stub.hang(request(), timeout=10))
            loop = asyncio.get_running_loop()
            start = loop.time()
            code, _ = await failure(stub.hang(request(), timeout=0.1))
            assert code is Code.DEADLINE_EXCEEDED and loop.time() - start < 2
            long.cancel()

    scenario(test)


def test_call_ids_wrap_past_the_ids_of_calls_still_running() -> None:
    """Issue 29 D7: after 2^32 - 1 calls the ids wrapped to 1 though a long-lived call still had it; the
    server saw "call id 1 opened twice" and dropped the connection with every call on it."""

    async def test() -> None:
        echo = Echo()
        async with served(servicer=echo) as (_, ch, stub):
            hanging = asyncio.ensure_future(stub.hang(request()))
            await asyncio.wait_for(echo.started.wait(), 5)
            conn = await ch.connection()
            assert list(conn.calls) == [1]
            conn._next_id = 0xFFFFFFFF
            for payload in (b"last", b"wrapped"):
                assert (await stub.echo(request(payload), timeout=5)).payload == payload
            assert not hanging.done() and not echo.cancelled.is_set()
            hanging.cancel()

    scenario(test)


def test_a_server_that_sends_and_never_reads_does_not_grow_the_clients_buffer() -> None:
    """Issue 29 D8: the client read on while its writes were blocked, so a server sending PINGs and never
    reading grew the client's buffer of PONGs without bound; now it stops reading as the server does."""
    flood = frames.encode(frames.Kind.PING, 0, 0) * 65536

    async def test() -> None:
        writing = asyncio.Event()

        async def never_reads(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            writing.set()
            with contextlib.suppress(TimeoutError, ConnectionError):
                async with asyncio.timeout(3):
                    for _ in range(40):  # 30 MiB of PINGs
                        writer.write(flood)
                        await writer.drain()
            writer.close()

        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # the kernel holds few PONGs either
        sock.bind(("127.0.0.1", 0))
        server = await asyncio.start_server(never_reads, sock=sock)
        ch = channel(sock.getsockname()[1])
        call = asyncio.ensure_future(ch.unary("/test.Echo/echo", b"", None, timeout=10))
        await asyncio.wait_for(writing.wait(), 5)
        most = 0
        for _ in range(40):
            await asyncio.sleep(0.1)
            conn = ch._conn
            if conn is not None and conn.transport is not None:
                most = max(most, conn.transport.get_write_buffer_size())
        assert most < 4 * MB
        call.cancel()
        await ch.close()
        server.close()

    scenario(test)
