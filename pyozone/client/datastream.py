"""BlockDataStreamOutput: one block written by write pipeline V2 (Ozone's BlockDataStreamOutput).

The block's bytes go as packets (ozone.client.datastream.min.packet.size, each with its checksums) on one
TCP connection to the nearest member of the pipeline, which forwards them along the chain (routing.py).
Every packet is acked once every member wrote it. The commit is V1's: every
ozone.client.datastream.buffer.flush.size of acked packets, and at the end, a putBlock goes through the
pipeline log to the leader and is watched ALL_COMMITTED; only that acknowledges data, so failures, retries
and the key's commit are exactly BlockOutputStream's. The last putBlock follows the END packet's ack.

A failure ack names the member that failed (counted along the chain); the writer then excludes it and
the pipeline, and KeyOutputStream rewrites the unacknowledged bytes on another pipeline. A refusal while no
packet waits for its ack is the datanode closing a stream idle for its timeout: the block ends (FailureKind
IDLE) and nothing is excluded, since no member failed; one that names a failed member (the writer paused
while the next member died) is that member's failure all the same.

With ClientConfig.tls the connection is mutual TLS through asyncio's TLS transport (the event loop's
sock_* calls cannot drive a TLS socket). The buffers are still handed over one by one, none joined, but
that transport encrypts into memory and passes the records to the socket as a new bytes object: one copy
of every packet that TLS forces here (principle 5), besides any tail the socket did not take at once,
which the transport keeps.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections import deque
from typing import TYPE_CHECKING

from pyozone.client.block_output import STREAM_IDLE, BlockOutputStream, Data, classify
from pyozone.client.config import ClientConfig
from pyozone.client.datastream_read import client_context, datanode_server_name, fill
from pyozone.framework.datanode import ChannelPool, DatanodeCallError
from pyozone.hdds.checksum import ChecksumData, compute
from pyozone.hdds.locations import DatanodeRef, KeyLocation
from pyozone.protocol import datastream as ds
from pyozone.protocol.chunks import chunk_info_to_proto
from pyozone.protocol.data import result_name

if TYPE_CHECKING:
    from pyozone.proto.DatanodeClientProtocol_pb2 import ContainerCommandRequestProto as Request
    from pyozone.proto.DatanodeClientProtocol_pb2 import ContainerCommandResponseProto as Response

ACK_GRACE_S = 1.0
"""After a failed send, how long the ack reader gets to read the member's refusal (a refused packet is
answered, then the connection is closed, which fails the sends after it)."""


class BlockDataStreamOutput(BlockOutputStream):
    PATH = "V2"
    SMALL_FILE = False  # the data never goes through the log
    ASKS_PEERS = False  # the chain's datastreams end at their members: only a named leader is followed

    def __init__(
        self,
        location: KeyLocation,
        config: ClientConfig,
        pool: ChannelPool,
        chain: tuple[DatanodeRef, ...],
        *,
        replica_index: int = 0,
    ) -> None:
        super().__init__(location, config, pool, replica_index=replica_index)
        self._chunk_size = config.packet_size
        self._chunks_per_flush = max(1, config.datastream_flush_size // config.packet_size)
        self._max_unacked = max(config.datastream_window, config.datastream_flush_size)
        self.chain = chain
        self._sock: socket.socket | None = None
        self._tls_stream: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None  # under TLS
        self._outbox: asyncio.Queue[tuple[bytes, memoryview] | None] = asyncio.Queue()
        self._waiting: deque[asyncio.Future[Response]] = deque()
        self._tasks: list[asyncio.Task[None]] = []
        self._broken: DatanodeCallError | None = None
        self._connected = asyncio.Event()

    # ------------------------------------------------------------------ the stream
    def _open(self) -> None:
        if self._sock is not None:
            return
        first = self.chain[0] if self.chain else None
        if first is None or any(m.datastream_port is None for m in self.chain):
            who = first or DatanodeRef("-", "-", "-", None)
            raise classify(DatanodeCallError(who, "NO_DATASTREAM_PORT", "a member serves no datastream",
                                             unreachable=True), self.location)  # fmt: skip
        header = ds.WriteHeader(
            self.location.container_id,
            self.location.local_id,
            self.location.pipeline.id,
            self._config.checksum_type,
            self._config.bytes_per_checksum,
            tuple(ds.Hop(m.uuid, m.ip or m.host, m.datastream_port or 0) for m in self.chain[1:]),
            self.replica_index,
            self.location.token,
        )
        self._sock = sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setblocking(False)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        loop = asyncio.get_running_loop()
        self._tasks = [
            loop.create_task(self._send(first, ds.encode_header(header))),
            loop.create_task(self._read_acks()),
        ]
        for task in self._tasks:
            task.add_done_callback(lambda t: t.cancelled() or t.exception())

    async def _send(self, first: DatanodeRef, header: bytes) -> None:
        loop, sock = asyncio.get_running_loop(), self._sock
        assert sock is not None
        host = first.ip or first.host
        try:
            await asyncio.wait_for(
                loop.sock_connect(sock, (host, first.datastream_port)), self._config.request_timeout_s
            )
            if self._config.tls is not None:
                self._tls_stream = await asyncio.open_connection(
                    sock=sock,
                    ssl=client_context(self._config.tls),
                    server_hostname=datanode_server_name(host),  # a datanode's certificate for this host
                    ssl_handshake_timeout=self._config.request_timeout_s,
                )
            self._connected.set()
            await self._write(loop, sock, header, b"")
            while (item := await self._outbox.get()) is not None:
                await self._write(loop, sock, *item)
        except (OSError, TimeoutError) as e:
            error = DatanodeCallError(first, "UNAVAILABLE", f"datastream: {e}", unreachable=True)
            if not self._connected.is_set():
                self._break(error)
            else:  # a member that refused a packet acks why and closes: let the ack reader hear it first
                loop.call_later(ACK_GRACE_S, self._break, error)

    async def _write(
        self, loop: asyncio.AbstractEventLoop, sock: socket.socket, frame: bytes, data: Data
    ) -> None:
        if self._tls_stream is None:
            await loop.sock_sendall(sock, frame)
            if data:
                await loop.sock_sendall(sock, data)
            return
        writer = self._tls_stream[1]
        writer.write(frame)
        if data:
            writer.write(data)
        await writer.drain()

    async def _fill(self, loop: asyncio.AbstractEventLoop, sock: socket.socket, view: memoryview) -> None:
        if self._tls_stream is None:
            await fill(loop, sock, view)
            return
        try:
            view[:] = await self._tls_stream[0].readexactly(len(view))  # an ack: a few bytes
        except asyncio.IncompleteReadError:
            raise ConnectionResetError("the datanode closed the connection") from None

    async def _read_acks(self) -> None:
        loop, sock = asyncio.get_running_loop(), self._sock
        assert sock is not None
        frame = bytearray(ds.ACK.size)
        await self._connected.wait()
        try:
            while True:
                await self._fill(loop, sock, memoryview(frame))
                ack, length = ds.decode_ack_frame(frame)
                message = bytearray(length)
                await self._fill(loop, sock, memoryview(message))
                if not ack.ok:
                    text = message.decode("utf-8", "replace")
                    error = self._refusal(ack, text)
                    # A refusal with no packet waiting answers none: the datanode closed the paused stream,
                    # unless it names a member that failed meanwhile (the next one died or cut its stream).
                    if not self._waiting and not error.unreachable:
                        error = self._idle(ack, text)
                    self._break(error)
                    return
                if not self._waiting:
                    raise ds.StreamProtocolError("an ack for no packet")
                future = self._waiting.popleft()
                if not future.done():
                    future.set_result(ds.ACKED)
        except (OSError, ds.StreamProtocolError) as e:
            self._break(DatanodeCallError(self.chain[0], "UNAVAILABLE", f"datastream: {e}", unreachable=True))

    def _refusal(self, ack: ds.Ack, message: str) -> DatanodeCallError:
        member = self.chain[min(ack.member, len(self.chain) - 1)]
        result = result_name(ack.result)
        # A member that could not reach or write to the next one names it: that one is excluded.
        return DatanodeCallError(member, result, message, unreachable=result == "IO_EXCEPTION")

    def _idle(self, ack: ds.Ack, message: str) -> DatanodeCallError:
        member = self.chain[min(ack.member, len(self.chain) - 1)]
        return DatanodeCallError(member, STREAM_IDLE, f"closed while idle: {message}")

    def _break(self, error: DatanodeCallError) -> None:
        if self._broken is None:
            self._broken = error
        while self._waiting:
            future = self._waiting.popleft()
            if not future.done():
                future.set_exception(error)

    def _packet(self, kind: ds.PacketKind, data: Data, sums: bytes) -> asyncio.Future[Response]:
        """Queues one packet; the future is its ack (or the stream's failure)."""
        self._open()
        future: asyncio.Future[Response] = asyncio.get_running_loop().create_future()
        future.add_done_callback(lambda f: f.cancelled() or f.exception())
        if self._broken is not None:
            future.set_exception(self._broken)
            return future
        offset = self.sent
        self._waiting.append(future)
        self._outbox.put_nowait(
            (ds.encode_packet(kind, offset, len(data), len(sums)) + sums, memoryview(data))
        )
        return future

    # ------------------------------------------------------------------ BlockOutputStream's steps
    def _write_chunk(self, data: Data, small_file: bool = False, sums: ChecksumData | None = None) -> None:
        if sums is None:
            sums = compute(data, self._config.checksum_type, self._config.bytes_per_checksum)
        name = f"{self.location.local_id}_chunk_{len(self._chunks) + 1}"
        chunk = chunk_info_to_proto(name, self.sent, len(data), sums)
        answer = self._packet(ds.PacketKind.DATA, data, b"".join(sums.checksums))
        self._chunks.append(chunk)
        self._unacked.append((self.sent, data))
        self.sent += len(data)
        self._chunk_answers.append(answer)

    def _flush(self, eof: bool) -> None:
        """putBlock of every chunk so far, sent once the chain acked them all (a member applying it
        before the data arrived would find the block file short); the last one after END's ack."""
        if eof:
            self._chunk_answers.append(self._packet(ds.PacketKind.END, b"", b""))
            self._outbox.put_nowait(None)
        request = ds.put_block_request(self.location, self._block_data(self._chunks, self.sent), eof)
        answer = asyncio.ensure_future(self._put_after(list(self._chunk_answers), request))
        answer.add_done_callback(lambda f: f.cancelled() or f.exception())
        self._track(answer)

    async def _put_after(
        self,
        acks: list[asyncio.Future[Response]],
        request: Request,
    ) -> Response:
        for ack in acks:
            await ack
        return await self._stream("data").submit(request)

    async def close(self) -> None:
        await super().close()
        self._outbox.put_nowait(None)
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(BaseException):
                await task
        if self._tls_stream is not None:
            self._tls_stream[1].transport.abort()  # it closes the socket
            self._tls_stream = None
        if self._sock is not None:
            self._sock.close()
            self._sock = None
