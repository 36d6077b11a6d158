"""Peers that break the rules, each from a raw socket against rpc.Server: garbage, a truncated frame, a
length prefix of 2^31, a header and then silence, a client that never reads its answers, more calls than
max_in_flight. Each is refused or ended without unbounded memory or a stuck handler, and the server keeps
serving its other connections."""

from __future__ import annotations

import asyncio

import pytest

from pyozone import rpc
from pyozone.rpc.frames import HEADER, Kind
from tests.unit.rpc.rpc_support import (
    MB,
    SPEC,
    Echo,
    call_frame,
    channel,
    closed,
    raw_peer,
    request,
    scenario,
    serve,
)

STALL_S = 0.6  # long enough that a loaded machine does not pass it between two lines of a test
SETTINGS = rpc.ServerSettings(4 * MB, stall_timeout_s=STALL_S, idle_timeout_s=60)


async def still_serves(port: int) -> None:
    async with channel(port) as ch:
        assert (await rpc.Stub(ch, SPEC).echo(request(b"ok"), timeout=5)).payload == b"ok"


@pytest.mark.parametrize(
    "garbage",
    [
        b"GET / HTTP/1.1\r\nHost: om\r\n\r\n",  # a length prefix of 1.2 GB with a head longer than it
        HEADER.pack(1 << 31, Kind.CALL, 3, 10, 1),  # a length prefix of 2^31
        HEADER.pack(0xFFFFFFFF, Kind.MESSAGE, 2, 0, 1),
        HEADER.pack(8 * MB, Kind.PING, 0, 0, 1),  # a frame without a message, above the limit
        HEADER.pack(0, 99, 0, 0, 1),  # a kind no client sends
        HEADER.pack(0, Kind.END, 0, 0, 1),
    ],
)
def test_garbage_closes_the_connection_at_once_and_others_are_served(garbage: bytes) -> None:
    async def test() -> None:
        server, port = await serve(SETTINGS)
        reader, writer = await raw_peer(port)
        writer.write(garbage)
        assert await closed(reader, STALL_S / 2)  # before any stall timeout could have
        await still_serves(port)
        await server.stop(None)

    scenario(test)


@pytest.mark.parametrize(
    "partial",
    [
        call_frame("/test.Echo/echo", request(b"x" * 100).SerializeToString())[:-10],  # a truncated frame
        call_frame("/test.Echo/echo", b"")[: HEADER.size],  # a header, then nothing
        call_frame("/test.Echo/echo", b"")[:5],  # part of a header
        call_frame("/test.Echo/echo", b"x" * (30 * MB))[: 1 * MB],  # a skipped body that stops coming
    ],
)
def test_a_peer_that_stalls_mid_frame_is_closed_after_the_stall_timeout(partial: bytes) -> None:
    async def test() -> None:
        server, port = await serve(SETTINGS)
        reader, writer = await raw_peer(port)
        writer.write(partial)
        loop = asyncio.get_running_loop()
        start = loop.time()
        assert not await closed(reader, STALL_S * 0.5)
        await still_serves(port)
        assert await closed(reader, STALL_S * 3)
        assert loop.time() - start >= STALL_S * 0.9  # its first byte arrived a little before `start`
        assert len(server.connections) == 0
        await server.stop(None)

    scenario(test)


def test_an_idle_connection_between_frames_is_not_a_stall() -> None:
    async def test() -> None:
        server, port = await serve(SETTINGS)
        reader, writer = await raw_peer(port)
        writer.write(call_frame("/test.Echo/echo", request(b"a").SerializeToString()))
        assert not await closed(reader, STALL_S * 3)
        assert len(server.connections) == 1
        await server.stop(None)

    scenario(test)


def test_a_peer_that_never_reads_its_answers_is_not_read_and_is_closed_after_the_stall_timeout() -> None:
    """It sends 64 MB of echo calls and reads nothing: the server stops reading it, the answers it holds
    stay bounded, the connection is closed after the stall timeout, and another client is served."""

    async def test() -> None:
        server, port = await serve(SETTINGS)
        _reader, writer = await raw_peer(port)
        body = request(b"x" * 32 * 1024).SerializeToString()

        async def flood() -> None:
            for call_id in range(1, 2049):
                writer.write(call_frame("/test.Echo/echo", body, call_id))
                await writer.drain()

        flooding = asyncio.create_task(flood())
        (conn,) = server.connections
        held: list[int] = []
        loop = asyncio.get_running_loop()
        end = loop.time() + STALL_S * 0.5
        while loop.time() < end:
            await asyncio.sleep(0.01)
            assert conn.transport is not None
            held.append(conn.transport.get_write_buffer_size() + len(conn._out) + len(conn._decoder._buf))
        assert max(held) < 8 * MB
        await still_serves(port)
        assert not flooding.done()  # the server stopped reading it
        for _ in range(int(STALL_S * 3 / 0.01)):
            if conn.transport is None:
                break
            await asyncio.sleep(0.01)
        assert conn.transport is None and conn not in server.connections
        flooding.cancel()
        writer.close()
        await still_serves(port)
        await server.stop(None)

    scenario(test)


def test_max_in_flight_bounds_the_running_calls_of_a_connection() -> None:
    """Ten calls arriving in one read with room for four: four handlers run, the rest wait their turn
    (not refused) and run as slots free."""

    class Counting(Echo):
        def __init__(self) -> None:
            super().__init__()
            self.running = 0
            self.most = 0
            self.release = asyncio.Event()

        async def hang(self, req: object, context: rpc.CallContext) -> object:
            self.running += 1
            self.most = max(self.most, self.running)
            try:
                await self.release.wait()
            finally:
                self.running -= 1
            return await self.echo(req, context)  # type: ignore[arg-type]

    async def test() -> None:
        counting = Counting()
        server, port = await serve(rpc.ServerSettings(4 * MB, max_in_flight=4), servicer=counting)
        reader, writer = await raw_peer(port)
        writer.write(b"".join(call_frame("/test.Echo/hang", b"", i) for i in range(1, 11)))
        for _ in range(100):
            if counting.running == 4:
                break
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.05)
        assert counting.running == 4
        counting.release.set()
        answers = 0
        while answers < 10:
            header = await asyncio.wait_for(reader.readexactly(HEADER.size), 5)
            length, kind, _, _, _ = HEADER.unpack(header)
            await reader.readexactly(length)
            answers += kind == Kind.END
        assert counting.most == 4
        writer.close()
        await server.stop(None)

    scenario(test)


def test_a_frame_the_server_does_not_read_for_its_own_reasons_is_not_a_stall() -> None:
    """With max_in_flight taken and max_held_bytes of calls waiting the server stops reading: the rest of
    a frame it has not read yet is not the peer's stall, and the connection stays open as long as its
    calls run."""

    async def test() -> None:
        echo = Echo()
        settings = rpc.ServerSettings(4 * MB, max_in_flight=1, max_held_bytes=0, stall_timeout_s=STALL_S)
        server, port = await serve(settings, echo)
        reader, writer = await raw_peer(port)
        second = call_frame("/test.Echo/echo", request(b"2").SerializeToString(), 2)
        third = call_frame("/test.Echo/echo", request(b"3").SerializeToString(), 3)
        writer.write(call_frame("/test.Echo/hang", b"", 1) + second + third[:-3])
        await asyncio.wait_for(echo.started.wait(), 2)
        assert not await closed(reader, STALL_S * 3)
        assert len(server.connections) == 1
        writer.close()
        await server.stop(None)

    scenario(test)


def test_frames_of_running_calls_are_read_while_new_calls_wait_for_max_in_flight() -> None:
    """Issue 29 D1: at max_in_flight the server stopped reading, so the WINDOW frames its own streams
    waited on were never read and every call of the connection hung. Streams longer than their window
    filling max_in_flight finish, and a call past them runs when one ends."""

    async def test() -> None:
        server, port = await serve(rpc.ServerSettings(4 * MB, max_in_flight=2))
        async with channel(port) as ch:
            stub = rpc.Stub(ch, SPEC)
            count = ch.method(SPEC.methods["count"])

            async def stream() -> int:
                return len([a async for a in count(request(b"40"), timeout=5)])

            results = await asyncio.wait_for(
                asyncio.gather(stream(), stream(), stub.echo(request(b"x"), timeout=5)), 5
            )
            assert results[:2] == [40, 40] and results[2].payload == b"x"
        await server.stop(None)

    scenario(test)


def test_a_frame_trickled_a_byte_at_a_time_is_a_stall_from_its_first_byte() -> None:
    """Issue 29 D5: the stall was counted from the last byte read, so a frame trickled a byte at a time
    held its connection forever; a frame must be whole within stall_timeout_s of its first byte."""

    async def test() -> None:
        server, port = await serve(SETTINGS)
        reader, writer = await raw_peer(port)
        writer.write(HEADER.pack(MB, Kind.PING, 0, 0, 0))
        gone = False
        for _ in range(10):  # 3 s, five stall timeouts
            try:
                writer.write(b"\0")
                await writer.drain()
            except ConnectionError:
                gone = True
                break
            if await closed(reader, STALL_S / 2):
                gone = True
                break
        assert gone
        await still_serves(port)
        writer.close()
        await server.stop(None)

    scenario(test)


@pytest.mark.parametrize(
    "answer",
    [
        b"HTTP/1.1 400 Bad Request\r\n\r\n",
        HEADER.pack(1 << 31, Kind.END, 2, 0, 1),  # a length prefix of 2^31
        HEADER.pack(64, Kind.WINDOW, 0, 80, 1),  # a head longer than its frame
    ],
)
def test_a_server_that_answers_garbage_fails_the_calls_on_that_connection_only(answer: bytes) -> None:
    async def test() -> None:
        async def garbage(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await reader.read(1)
            writer.write(answer)
            await reader.read()

        listener = await asyncio.start_server(garbage, "127.0.0.1", 0)
        server, port = await serve()
        async with channel(listener.sockets[0].getsockname()[1]) as bad:
            with pytest.raises(rpc.RpcError) as e:
                await rpc.Stub(bad, SPEC).echo(request(), timeout=5)
            assert e.value.code() is rpc.StatusCode.INTERNAL and "broke the framing" in e.value.details()
        await still_serves(port)
        listener.close()
        await server.stop(None)

    scenario(test)


def test_a_client_that_does_not_answer_keepalive_pings_is_closed_and_its_calls_cancelled() -> None:
    """Issue 29 D4: the server had no keepalive, so the calls of a client that froze (or never sent the
    WINDOW or the messages its calls wait for) ran forever; it is pinged when not heard from in
    keepalive_s and closed when it does not answer. A live client answers and keeps its call."""

    async def test() -> None:
        echo = Echo()
        settings = rpc.ServerSettings(4 * MB, idle_timeout_s=60, keepalive_s=0.3, keepalive_timeout_s=0.3)
        server, port = await serve(settings, echo)
        async with channel(port) as ch:
            live = asyncio.ensure_future(rpc.Stub(ch, SPEC).hang(request()))
            await asyncio.wait_for(echo.started.wait(), 2)
            echo.started.clear()
            reader, writer = await raw_peer(port)
            writer.write(call_frame("/test.Echo/hang", b"", 1))
            await asyncio.wait_for(echo.started.wait(), 2)
            assert await closed(reader, 3)
            await asyncio.wait_for(echo.cancelled.wait(), 2)
            assert len(server.connections) == 1 and not live.done()  # the channel answered its pings
            live.cancel()
        writer.close()
        await server.stop(None)

    scenario(test)
