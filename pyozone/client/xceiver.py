"""Async streams to datanodes over XceiverClientProtocolService.send.

The service answers the requests of one stream in order, so a stream is a FIFO of futures: `submit`
queues a request without waiting (the write path keeps many chunks in flight) and the reader task hands
each answer to the oldest waiting future. Once a stream breaks (reset, UNAVAILABLE, a timed-out answer)
every pending and later request fails with `unreachable` set: order is lost, so nothing more on that
stream can be trusted, and the writer treats it as a failed pipeline.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import AsyncIterator

import grpc

from pyozone.client.models import DatanodeRef
from pyozone.common.tls import AioRenewing, TlsStore, renewing_aio_channel
from pyozone.hdds.limits import MAX_DATA_MESSAGE_BYTES, grpc_options
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from pyozone.proto import DatanodeClientProtocol_pb2_grpc as pb_grpc

Request = pb.ContainerCommandRequestProto
Response = pb.ContainerCommandResponseProto


class DatanodeCallError(Exception):
    """A request failed at (or on the way to) one datanode. `result` is the datanode's Result name, or
    the gRPC status name when the datanode did not answer (`unreachable`)."""

    def __init__(
        self,
        datanode: DatanodeRef,
        result: str,
        message: str,
        response: Response | None = None,
        unreachable: bool = False,
    ) -> None:
        super().__init__(f"{datanode.address} ({datanode.uuid[:8]}): {result}: {message}")
        self.datanode = datanode
        self.result = result
        self.message = message
        self.response = response
        self.unreachable = unreachable


def check(datanode: DatanodeRef, response: Response) -> Response:
    """The response, or DatanodeCallError when its result is not SUCCESS."""
    if response.result != pb.SUCCESS:
        raise DatanodeCallError(datanode, pb.Result.Name(response.result), response.message, response)
    return response


class ChannelPool:
    """One gRPC channel per datanode address, shared by every stream of a client (on its loop) and dialled
    again after a renewal of the certificate, and the calls of closed streams still finishing on them."""

    def __init__(self, tls: TlsStore | None = None) -> None:
        self.tls = tls
        """The client's certificate (ClientConfig.tls): what every channel and datastream socket presents."""
        self._channels: dict[str, AioRenewing] = {}
        self._finishing: set[asyncio.Task[None]] = set()

    def channel(self, datanode: DatanodeRef) -> grpc.aio.Channel:
        address = datanode.address
        channel = self._channels.get(address)
        if channel is None:
            channel = renewing_aio_channel(address, grpc_options(MAX_DATA_MESSAGE_BYTES), self.tls)
            self._channels[address] = channel
        return channel.get()

    def finishing(self, reader: asyncio.Task[None]) -> None:
        """Keeps a closed stream's reader until its call ends by itself."""
        self._finishing.add(reader)
        reader.add_done_callback(self._finishing.discard)

    async def close(self) -> None:
        for reader in list(self._finishing):
            reader.cancel()
        await asyncio.gather(*self._finishing, return_exceptions=True)
        channels, self._channels = list(self._channels.values()), {}
        for channel in channels:
            await channel.close()


class XceiverStream:
    """One send() stream to one datanode."""

    def __init__(self, pool: ChannelPool, datanode: DatanodeRef, timeout_s: float) -> None:
        if datanode.port is None:
            raise DatanodeCallError(datanode, "NO_DATA_PORT", "OM gave no STANDALONE port", unreachable=True)
        self.datanode = datanode
        self.timeout_s = timeout_s
        self._pool = pool
        self._queue: asyncio.Queue[Request | None] = asyncio.Queue()
        self._pending: deque[asyncio.Future[Response]] = deque()
        self._broken: DatanodeCallError | None = None
        stub = pb_grpc.XceiverClientProtocolServiceStub(pool.channel(datanode))
        self._call = stub.send(self._requests())
        self._reader = asyncio.get_running_loop().create_task(self._read())

    async def _requests(self) -> AsyncIterator[Request]:
        while (request := await self._queue.get()) is not None:
            yield request

    async def _read(self) -> None:
        try:
            async for response in self._call:
                if not self._pending:
                    raise DatanodeCallError(self.datanode, "PROTOCOL", "an answer nobody asked for")
                future = self._pending.popleft()
                if not future.done():
                    future.set_result(response)
            self._fail(DatanodeCallError(self.datanode, "CANCELLED", "stream ended", unreachable=True))
        except grpc.aio.AioRpcError as e:
            self._fail(DatanodeCallError(self.datanode, e.code().name, e.details() or "", unreachable=True))
        except DatanodeCallError as e:
            self._fail(e)
        except asyncio.CancelledError:
            self._fail(DatanodeCallError(self.datanode, "CANCELLED", "stream closed", unreachable=True))

    def _fail(self, error: DatanodeCallError) -> None:
        if self._broken is None:
            self._broken = error
        while self._pending:
            future = self._pending.popleft()
            if not future.done():
                future.set_exception(error)

    def submit(self, request: Request) -> asyncio.Future[Response]:
        """Queues `request`; the future gets its answer (whatever the result) or DatanodeCallError."""
        future: asyncio.Future[Response] = asyncio.get_running_loop().create_future()
        # A writer that gives up on a stream never awaits its later answers: mark them retrieved.
        future.add_done_callback(lambda f: f.cancelled() or f.exception())
        if self._broken is not None:
            future.set_exception(self._broken)
        else:
            self._pending.append(future)
            self._queue.put_nowait(request)
        return future

    async def wait(self, future: asyncio.Future[Response], timeout_s: float | None = None) -> Response:
        """The answer, checked for SUCCESS; a timeout breaks the stream (DEADLINE_EXCEEDED)."""
        try:
            response = await asyncio.wait_for(asyncio.shield(future), timeout_s or self.timeout_s)
        except TimeoutError:
            error = DatanodeCallError(
                self.datanode, "DEADLINE_EXCEEDED", f"no answer in {timeout_s or self.timeout_s:g}s",
                unreachable=True,
            )  # fmt: skip
            self._fail(error)
            self._call.cancel()
            raise error from None
        return check(self.datanode, response)

    async def call(self, request: Request, timeout_s: float | None = None) -> Response:
        return await self.wait(self.submit(request), timeout_s)

    async def close(self) -> None:
        """Ends the stream. With no answer owed, only the request side ends: the datanode then ends the
        call with OK, in the background (no round trip to wait for, no cancelled RPC on either side).
        With answers still owed (a writer giving up on the stream) the call is cancelled."""
        self._queue.put_nowait(None)
        if not self._pending and self._broken is None:
            self._pool.finishing(self._reader)
            return
        self._call.cancel()
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._reader
