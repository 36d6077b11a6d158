"""A connection's life: keepalive pings answered and a dead server detected, an idle connection closed
with GOAWAY, reconnection with backoff after the server restarts, one connection shared by the channels
of a process, and SyncChannel from many threads and after a fork."""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import time
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from pyozone import rpc
from pyozone.proto.OmClientProtocol_pb2 import EchoRPCRequest, EchoRPCResponse
from pyozone.rpc import server as rpc_server
from pyozone.rpc.frames import HEADER, Flag, Kind, encode
from pyozone.rpc.loop import new_event_loop
from tests.unit.rpc.rpc_support import MB, SPEC, Echo, channel, closed, raw_peer, request, scenario, serve

Code = rpc.StatusCode
KEEPALIVE = rpc.ChannelSettings(4 * MB, keepalive_s=0.1, keepalive_timeout_s=0.2)


def test_an_idle_connection_is_pinged_and_kept_while_the_server_answers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pings: list[int] = []
    handle = rpc_server.ServerConnection._handle

    def counting(self: rpc_server.ServerConnection, frame: object) -> bool:
        pings.extend([1] if frame.kind == Kind.PING else [])  # type: ignore[attr-defined]
        return handle(self, frame)  # type: ignore[arg-type]

    monkeypatch.setattr(rpc_server.ServerConnection, "_handle", counting)

    async def test() -> None:
        server, port = await serve()
        async with channel(port, KEEPALIVE) as ch:
            stub = rpc.Stub(ch, SPEC)
            await stub.echo(request())
            conn = ch._conn
            await asyncio.sleep(0.6)  # the keepalive period under test, several times over
            assert pings and conn is not None and conn.usable
            await stub.echo(request())
            assert ch._conn is conn
        await server.stop(None)

    scenario(test)


def test_a_server_that_stops_answering_is_detected_by_keepalive_and_its_calls_fail() -> None:
    async def test() -> None:
        async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            while await reader.read(65536):
                pass

        listener = await asyncio.start_server(silent, "127.0.0.1", 0)
        port = listener.sockets[0].getsockname()[1]
        async with channel(port, KEEPALIVE) as ch:
            loop = asyncio.get_running_loop()
            start = loop.time()
            with pytest.raises(rpc.RpcError) as e:
                await rpc.Stub(ch, SPEC).hang(request())  # no deadline: only keepalive ends it
            assert e.value.code() is Code.UNAVAILABLE and "lost" in e.value.details()
            assert loop.time() - start < 2
        listener.close()

    scenario(test)


def test_an_idle_connection_is_closed_with_goaway_and_the_channel_reconnects() -> None:
    async def test() -> None:
        server, port = await serve(rpc.ServerSettings(4 * MB, idle_timeout_s=0.2))
        reader, _writer = await raw_peer(port)
        got = await asyncio.wait_for(reader.readexactly(HEADER.size), 2)
        assert HEADER.unpack(got)[1] == Kind.GOAWAY and await closed(reader, 1)
        async with channel(port) as ch:
            stub = rpc.Stub(ch, SPEC)
            await stub.echo(request())
            first = ch._conn
            assert first is not None
            for _ in range(100):
                if not first.usable:
                    break
                await asyncio.sleep(0.01)
            assert not first.usable
            assert (await stub.echo(request(b"again"), timeout=5)).payload == b"again"
            assert ch._conn is not first
        await server.stop(None)

    scenario(test)


def test_a_fail_fast_channel_does_not_wait_out_its_backoff() -> None:
    """fail_fast (an OM client of an HA service): within the backoff after a failed dial, a call with a long
    deadline fails at once instead of waiting to dial again; past it, the channel dials again."""

    async def test() -> None:
        server, port = await serve()
        await server.stop(None)
        settings = rpc.ChannelSettings(4 * MB, backoff_initial_s=30, backoff_max_s=30, fail_fast=True)
        async with channel(port, settings) as ch:
            stub = rpc.Stub(ch, SPEC)
            with pytest.raises(rpc.RpcError) as e:
                await stub.echo(request(), timeout=60)
            assert "failed to connect" in e.value.details() and "retrying in" not in e.value.details()
            with pytest.raises(rpc.RpcError) as e:
                await asyncio.wait_for(stub.echo(request(), timeout=60), 5)  # not the 30 s backoff
            assert e.value.code() is Code.UNAVAILABLE and "retrying in" in e.value.details()

    scenario(test)


def test_a_channel_reconnects_with_backoff_after_the_server_restarts() -> None:
    async def test() -> None:
        server, port = await serve()
        settings = rpc.ChannelSettings(4 * MB, backoff_initial_s=0.2, backoff_max_s=0.4)
        async with channel(port, settings) as ch:
            stub = rpc.Stub(ch, SPEC)
            await stub.echo(request())
            await server.stop(None)
            with pytest.raises(rpc.RpcError) as e:
                await stub.echo(request(), timeout=1)
            assert e.value.code() is Code.UNAVAILABLE
            with pytest.raises(rpc.RpcError) as e:
                await stub.echo(request(), timeout=1)
            assert e.value.code() is Code.UNAVAILABLE and "failed to connect" in e.value.details()
            with pytest.raises(
                rpc.RpcError
            ) as e:  # within the backoff, a short deadline is not spent waiting
                await stub.echo(request(), timeout=0.05)
            assert "retrying in" in e.value.details()
            server = rpc.Server(rpc.ServerSettings(4 * MB))
            server.add_service(SPEC, Echo())
            await server.start("127.0.0.1", port)
            assert (await stub.echo(request(b"back"), timeout=5)).payload == b"back"
        await server.stop(None)

    scenario(test)


def test_channels_of_a_process_share_one_connection_per_server() -> None:
    async def test() -> None:
        server, port = await serve()
        one, two = channel(port), channel(port)
        await rpc.Stub(one, SPEC).echo(request())
        await rpc.Stub(two, SPEC).echo(request())
        assert one._conn is two._conn and len(server.connections) == 1
        await one.close()
        assert (await rpc.Stub(two, SPEC).echo(request(b"2"))).payload == b"2"
        conn = two._conn
        await two.close()
        assert conn is not None and not conn.usable
        await server.stop(None)

    scenario(test)


@pytest.fixture
def threaded_server() -> Iterator[int]:
    """An echo server on its own loop thread, for blocking callers."""
    loop = new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    server, port = asyncio.run_coroutine_threadsafe(serve(), loop).result(5)
    yield port
    asyncio.run_coroutine_threadsafe(server.stop(None), loop).result(5)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(5)
    loop.close()


def test_a_sync_channel_serves_many_threads_on_one_connection(threaded_server: int) -> None:
    with rpc.SyncChannel(f"127.0.0.1:{threaded_server}", rpc.ChannelSettings(4 * MB)) as ch:
        stub = rpc.Stub(ch, SPEC)

        def calls(worker: int) -> list[bytes]:
            return [stub.echo(request(b"%d-%d" % (worker, i)), timeout=5).payload for i in range(50)]

        with ThreadPoolExecutor(8) as pool:
            answers = list(pool.map(calls, range(8)))
        assert answers == [[b"%d-%d" % (w, i) for i in range(50)] for w in range(8)]
        assert [a.payload for a in stub.count(request(b"3"), timeout=5)] == [b"0", b"1", b"2"]
        with pytest.raises(rpc.RpcError) as e:
            stub.fail(request(b"NOT_FOUND:gone"), timeout=5)
        assert (e.value.code(), e.value.details()) == (Code.NOT_FOUND, "gone")
        with pytest.raises(rpc.RpcError) as e:
            stub.hang(request(), timeout=0.1)
        assert e.value.code() is Code.DEADLINE_EXCEEDED


def test_a_sync_channel_works_in_a_forked_child(threaded_server: int) -> None:
    """The child has no loop thread and its own connections: the parent's channel, used there, dials."""
    with rpc.SyncChannel(f"127.0.0.1:{threaded_server}", rpc.ChannelSettings(4 * MB)) as ch:
        stub = rpc.Stub(ch, SPEC)
        assert stub.echo(request(b"parent"), timeout=5).payload == b"parent"
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child reports by its exit status
            ok = False
            try:
                ok = stub.echo(request(b"child"), timeout=5).payload == b"child"
                fresh = rpc.Stub(
                    rpc.SyncChannel(f"127.0.0.1:{threaded_server}", rpc.ChannelSettings(MB)), SPEC
                )
                ok = ok and fresh.echo(request(b"c2"), timeout=5).payload == b"c2"
            finally:
                os._exit(0 if ok else 1)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        assert stub.echo(request(b"parent again"), timeout=5).payload == b"parent again"


def test_keepalive_pings_do_not_keep_a_connection_without_calls_open() -> None:
    async def test() -> None:
        server, port = await serve(rpc.ServerSettings(4 * MB, idle_timeout_s=0.3))
        async with channel(port, KEEPALIVE) as ch:
            await rpc.Stub(ch, SPEC).echo(request())
            conn = ch._conn
            assert conn is not None
            for _ in range(300):
                if not conn.usable and not server.connections:
                    break
                await asyncio.sleep(0.01)
            assert not conn.usable and not server.connections
        await server.stop(None)

    scenario(test)


@contextlib.asynccontextmanager
async def _refused_once(backoff_s: float) -> AsyncIterator[tuple[int, rpc.Stub, rpc.Stub]]:
    """Two channels to one port whose server answered `a` and stopped: `a` then failed a call on the lost
    connection and one on a refused dial, so its next call dials after a backoff of `backoff_s`."""
    server, port = await serve()
    settings = rpc.ChannelSettings(4 * MB, backoff_initial_s=backoff_s, backoff_max_s=backoff_s)
    async with channel(port, settings) as a, channel(port, settings) as b:
        stub_a, stub_b = rpc.Stub(a, SPEC), rpc.Stub(b, SPEC)
        await stub_a.echo(request())
        await server.stop(None)
        for _ in range(2):
            with pytest.raises(rpc.RpcError):
                await stub_a.echo(request(), timeout=1)
        yield port, stub_a, stub_b


def test_a_cancelled_caller_leaves_the_shared_dial_to_the_callers_still_waiting() -> None:
    """Issue 29 D3 (a): the first caller dialled for every channel of the process; when it was cancelled
    (an S3 request whose client left) the others waiting on its dial failed UNAVAILABLE '' though the
    server was up."""

    async def test() -> None:
        async with _refused_once(0.3) as (port, stub_a, stub_b):
            server = rpc.Server(rpc.ServerSettings(4 * MB))
            server.add_service(SPEC, Echo())
            await server.start("127.0.0.1", port)
            first = asyncio.ensure_future(stub_a.echo(request(b"a")))  # dials, waiting out the backoff
            await asyncio.sleep(0.05)
            second = asyncio.ensure_future(stub_b.echo(request(b"b"), timeout=5))  # joins that dial
            await asyncio.sleep(0.05)
            first.cancel()
            assert (await second).payload == b"b"
        await server.stop(None)

    scenario(test)


def test_a_caller_waiting_on_a_shared_dial_keeps_its_own_deadline() -> None:
    """Issue 29 D3 (b): a caller joining another's dial waited for it whatever its own deadline (up to
    connect_timeout_s for a TLS handshake that never ends); it fails UNAVAILABLE when its time is up."""

    async def test() -> None:
        async with _refused_once(3.0) as (_, stub_a, stub_b):
            first = asyncio.ensure_future(stub_a.echo(request(b"a")))  # no deadline: waits out 3 s
            await asyncio.sleep(0.05)
            began = time.monotonic()
            with pytest.raises(rpc.RpcError) as e:
                await stub_b.echo(request(b"b"), timeout=0.3)
            assert time.monotonic() - began < 1.5
            assert e.value.code() is Code.UNAVAILABLE and "timed out" in e.value.details()
            first.cancel()

    scenario(test)


def test_a_caller_cancelled_as_its_dial_fails_ends_cancelled(monkeypatch: pytest.MonkeyPatch) -> None:
    """A Raft member's stop hung (CI, a loaded machine): it cancelled the task sending to a peer that was
    down just as the dial to it was refused, Python 3.11's wait_for raised the dial's UNAVAILABLE instead
    of the cancel, and the task went back to waiting for work. The cancel must win."""
    from pyozone.rpc import client as rpc_client

    async def test() -> None:
        for turns in range(20):  # the cancel lands at each step of the failure's way to the caller
            dial: asyncio.Future[object] = asyncio.get_running_loop().create_future()

            async def connect_once(*_: object, dial: asyncio.Future[object] = dial) -> object:
                return await dial

            monkeypatch.setattr(rpc_client.Channel, "_connect_once", connect_once)
            call = channel(1).unary(SPEC.methods["echo"].path, request(), None, timeout=5)
            caller = asyncio.ensure_future(call)
            await asyncio.sleep(0.01)  # the caller waits on the dial
            dial.set_exception(rpc.RpcError(Code.UNAVAILABLE, "refused"))
            for _ in range(turns):
                await asyncio.sleep(0)
            if caller.done():  # the failure reached the caller first: nothing left to race
                assert isinstance(caller.exception(), rpc.RpcError)
                break
            caller.cancel()
            with pytest.raises(asyncio.CancelledError):
                await caller

    scenario(test)


def test_a_call_the_server_never_took_before_its_goaway_is_sent_again_on_a_new_connection() -> None:
    """Issue 29 D6: an idle close raced a call sent just before the GOAWAY arrived, and the call failed
    UNAVAILABLE though the server never ran it. GOAWAY names the last call taken; a unary call above it is
    sent once more on a new connection."""

    async def test() -> None:
        connections = 0

        async def server(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            nonlocal connections
            connections += 1
            length, _, _, head_len, call_id = HEADER.unpack(await reader.readexactly(HEADER.size))
            body = (await reader.readexactly(length))[head_len:]
            if connections == 1:  # gone idle just before the call came: it was not taken
                writer.write(encode(Kind.GOAWAY, 0, call_id - 1))
            else:
                answer = EchoRPCResponse(payload=EchoRPCRequest.FromString(body).payloadReq)
                writer.write(encode(Kind.END, Flag.MESSAGE, call_id, b"", answer.SerializeToString()))
            await writer.drain()
            if connections == 1:
                writer.close()
            else:
                await reader.read()

        listening = await asyncio.start_server(server, "127.0.0.1", 0)
        async with channel(listening.sockets[0].getsockname()[1]) as ch:
            assert (await rpc.Stub(ch, SPEC).echo(request(b"again"), timeout=5)).payload == b"again"
        assert connections == 2
        listening.close()

    scenario(test)


def test_a_call_on_a_connection_lost_since_it_was_handed_out_fails_at_once() -> None:
    """Review of issue 29: over TLS 1.3 a server refuses a client's certificate after the client's side of
    the handshake is done, so the connection a dial hands out may be lost before the call is put on it;
    that call waited out its whole deadline (DEADLINE_EXCEEDED) instead of failing UNAVAILABLE."""

    async def test() -> None:
        server, port = await serve()
        try:
            async with channel(port) as ch:
                conn = await ch.connection()
                assert conn.transport is not None
                conn.transport.abort()
                await asyncio.sleep(0.05)  # connection_lost ran: no transport
                with pytest.raises(rpc.RpcError) as lost:
                    conn.new_call(False)
                assert lost.value.code() is rpc.StatusCode.UNAVAILABLE
        finally:
            await server.stop(None)

    scenario(test)
