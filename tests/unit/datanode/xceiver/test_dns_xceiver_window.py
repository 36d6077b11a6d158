"""A stream whose client never reads its answers holds a bounded part of the data port's memory, and the port
serves other clients meanwhile (issue 29 review: the layer's default window of 32 let a client that reads
nothing pin 33 messages of up to 33 MiB per stream).

The client here speaks raw frames on its own connection: it sends every request its stream's window lets
it (reading the server's WINDOW grants) and never grants room for an answer (it sends no WINDOW), so no
answer can leave the server. The server then runs at most MAX_IN_FLIGHT of the stream's requests, stops
taking more, and so grants no more: the client is held at the stream's window (STREAM_WINDOW), and a
request past it ends the connection rather than being buffered.
"""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor

from pyozone.datanode.xceiver.service import MAX_IN_FLIGHT, STREAM_WINDOW
from pyozone.framework.datanode import XCEIVER, ChannelPool
from pyozone.hdds.locations import DatanodeRef
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from pyozone.proto.Rpc_pb2 import RpcCallHead
from pyozone.rpc.frames import (
    F_MESSAGE,
    K_CALL,
    K_MESSAGE,
    K_WINDOW,
    WINDOW_AMOUNT,
    FrameDecoder,
    encode,
)
from tests.polling import wait_for_async
from tests.unit.datanode.dns_helpers import Node, request, serve

CALL_ID = 1
WINDOW_BUDGET = 8
"""Requests a stream holds beyond those it runs: with MAX_IN_FLIGHT, at most 24 requests of up to 33 MiB
(the layer's default window, 32, let 49 in)."""
ECHO = request(pb.Echo, 0, echo=pb.EchoRequestProto(payload=bytes(64 << 10))).SerializeToString()


class ReadsNoAnswer:
    """One send() stream on a connection of its own: every request its window allows, no answer read."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.sent = 0
        self.allowed = 1  # the CALL carries the first request; the server's WINDOW grants the rest
        self.answers = 0
        self.closed = asyncio.Event()

    def send(self, count: int) -> None:
        for _ in range(count):
            self.writer.write(encode(K_MESSAGE, F_MESSAGE, CALL_ID, b"", ECHO))
            self.sent += 1

    async def run(self) -> None:
        head = RpcCallHead(method=XCEIVER.methods["send"].path).SerializeToString()
        self.writer.write(encode(K_CALL, F_MESSAGE, CALL_ID, head, ECHO))
        self.sent = 1
        decoder = FrameDecoder(1 << 20)
        try:
            while data := await self.reader.read(1 << 16):
                for frame in decoder.feed(data):
                    if frame.kind == K_WINDOW and frame.call_id == CALL_ID and frame.body is not None:
                        self.allowed += WINDOW_AMOUNT.unpack(frame.body)[0]
                    elif frame.kind == K_MESSAGE:
                        self.answers += 1
                self.send(self.allowed - self.sent)
                await self.writer.drain()
        except ConnectionError:
            pass
        finally:
            self.closed.set()


def test_a_stream_whose_client_reads_no_answer_holds_its_window_and_others_are_served(
    node_a: Node, executor: ThreadPoolExecutor
) -> None:
    dispatched: list[int] = []
    lock = threading.Lock()

    async def scenario() -> None:
        async with serve(node_a, executor) as dn:
            dispatch = dn.dispatcher.dispatch

            def counted(req: pb.ContainerCommandRequestProto) -> pb.ContainerCommandResponseProto:
                with lock:
                    dispatched.append(len(req.echo.payload))
                return dispatch(req)

            dn.dispatcher.dispatch = counted  # type: ignore[method-assign]
            other = ChannelPool()
            member = DatanodeRef(node_a.uuid, "127.0.0.1", "127.0.0.1", dn.data_address.port)
            client = ReadsNoAnswer(*await asyncio.open_connection("127.0.0.1", dn.data_address.port))
            running = asyncio.create_task(client.run())
            try:
                await wait_for_async(
                    lambda: len(dispatched) > MAX_IN_FLIGHT, 10, "the stream's requests in flight"
                )
                await asyncio.sleep(0.3)  # time enough for the server to take more, if it could
                # Run: MAX_IN_FLIGHT, and the oldest one's answer waiting for room the client never gives;
                # held: one taken, waiting for a slot, and the stream's window (its CALL's request beside).
                assert len(dispatched) == MAX_IN_FLIGHT + 1
                assert client.sent - len(dispatched) <= 1 + STREAM_WINDOW + 1
                assert client.sent <= MAX_IN_FLIGHT + WINDOW_BUDGET
                assert client.sent == client.allowed and client.answers == 0
                # Another client of the port is served while the stream is stuck.
                echo = other.stream(member, 5)
                assert await echo.echo(b"ping", 3) == bytes(3)

                in_window = client.sent
                client.send(STREAM_WINDOW + 2)  # past its window: the connection ends, nothing is buffered
                await client.writer.drain()
                await asyncio.wait_for(client.closed.wait(), 10)
                assert len(dispatched) <= in_window  # no request past the window ran

                assert await echo.echo(b"ping", 3) == bytes(3)
                await echo.close()
            finally:
                running.cancel()
                client.writer.close()
                await other.close()

    asyncio.run(scenario())
