"""The client of the datanode's container protocol (XceiverClientProtocolService.send; Ozone's
XceiverClientGrpc in hadoop-hdds/client): async streams of requests to datanodes, used by the key client's
block writers and readers, OM's length probes (ChannelPool.call) and freon's echo. The requests and what
their answers say are protocol/data.py's.

The service answers the requests of one stream in order, so a stream is a FIFO of futures: `submit`
queues a request without waiting (the write path keeps many chunks in flight) and the reader task hands
each answer to the oldest waiting future. Once a stream breaks (reset, UNAVAILABLE, a timed-out answer)
every pending and later request fails with `unreachable` set: order is lost, so nothing more on that
stream can be trusted, and the writer treats it as a failed pipeline.

A stream serves one block (or one key's reads) at a time, and a finished one goes back to the client's
pool for the next: opening a stream costs both sides more CPU than a small key's request, and a client
writing many small keys would otherwise open two per key (its data and its watch). Only a stream that
owes no answers, is not broken and was opened with the client's current certificate is kept (IDLE_STREAMS
per datanode); concurrent blocks each take their own, so no block waits behind another's answers.

The streams are calls of pyozone.rpc: every stream of a process to one datanode shares one connection.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import AsyncIterator, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING

from pyozone import rpc
from pyozone.common.tls import TlsStore
from pyozone.hdds.limits import MAX_DATA_MESSAGE_BYTES
from pyozone.hdds.locations import DatanodeRef
from pyozone.hdds.security.x509 import CertRole
from pyozone.protocol.container import XCEIVER_SERVICE
from pyozone.protocol.data import echo_payload, echo_request, refusal
from pyozone.rpc.client import Metadata

if TYPE_CHECKING:
    from pyozone.protocol.data import Request, Response

IDLE_STREAMS = 16
"""Finished streams a client keeps per datanode for its next blocks (each is one idle call on each side)."""
XCEIVER = rpc.ServiceSpec.of(XCEIVER_SERVICE)
_NONE: Mapping[str, int] = MappingProxyType({})


class DatanodeCallError(Exception):
    """A request failed at (or on the way to) one datanode. `result` is the datanode's Result name, or
    the call's status name when the datanode did not answer (`unreachable`: the stream broke);
    `commit_indexes`: each pipeline member's applied log index the refusal reported (a NOT_REPLICATED
    watch's); `leader`: the pipeline leader a NOT_LEADER named."""

    def __init__(
        self,
        datanode: DatanodeRef,
        result: str,
        message: str,
        commit_indexes: Mapping[str, int] = _NONE,
        unreachable: bool = False,
        leader: str | None = None,
    ) -> None:
        super().__init__(f"{datanode.address} ({datanode.uuid[:8]}): {result}: {message}")
        self.datanode = datanode
        self.result = result
        self.message = message
        self.commit_indexes = commit_indexes
        self.unreachable = unreachable
        self.leader = leader


def check(datanode: DatanodeRef, response: Response) -> Response:
    """The response, or DatanodeCallError when its result is not SUCCESS."""
    refused = refusal(response)
    if refused is not None:
        raise DatanodeCallError(
            datanode, refused.result, refused.message, refused.commit_indexes, leader=refused.leader
        )
    return response


class ChannelPool:
    """One channel per datanode address, shared by every stream of a client (on its loop; a channel follows
    a renewal of the certificate itself); the idle streams finished blocks gave back, and the calls of
    closed streams still finishing on them."""

    def __init__(self, tls: TlsStore | None = None, metadata: Metadata = None) -> None:
        self.tls = tls
        """The client's certificate (ClientConfig.tls): what every channel and datastream socket presents."""
        self.metadata = metadata
        """Sent with every call (e.g. who a plaintext caller is: rpc.metadata.user_metadata)."""
        self._channels: dict[str, rpc.Channel] = {}
        self._idle: dict[tuple[str, float], list[XceiverStream]] = {}
        self._finishing: set[asyncio.Task[None]] = set()

    def stream(self, datanode: DatanodeRef, timeout_s: float) -> XceiverStream:
        """A stream to `datanode` for one user at a time: an idle one from the pool, else a new one."""
        idle = self._idle.get((datanode.address, timeout_s))
        if idle:
            generation = self.generation
            while idle:
                stream = idle.pop()  # the most recently used: the likeliest to be alive
                if stream.reusable and stream.generation == generation:
                    return stream
                stream.end()
        return XceiverStream(self, datanode, timeout_s)

    @property
    def generation(self) -> int:
        """The client certificate's (TlsStore.generation; 0 without TLS): a stream opened with an older one
        runs on a connection that presents the certificate a renewal replaced, and is not reused."""
        return self.tls.generation if self.tls is not None else 0

    def release(self, stream: XceiverStream) -> bool:
        """Takes back a stream its user is done with (XceiverStream.close): kept for the next user, or
        ended when broken, opened before a renewal or past IDLE_STREAMS. False for one that owes answers."""
        if stream.owes_answers:
            return False
        idle = self._idle.setdefault((stream.datanode.address, stream.timeout_s), [])
        if stream in idle:  # closed twice
            return True
        if stream.reusable and len(idle) < IDLE_STREAMS and stream.generation == self.generation:
            idle.append(stream)
        else:
            stream.end()
        return True

    def channel(self, datanode: DatanodeRef) -> rpc.Channel:
        address = datanode.address
        channel = self._channels.get(address)
        if channel is None:
            if self.tls is not None:
                self.tls.material()  # loaded before the first stream takes its generation
            channel = rpc.Channel(
                address,
                rpc.ChannelSettings(MAX_DATA_MESSAGE_BYTES),
                self.tls,
                peer=CertRole.DATANODE,
                metadata=self.metadata,
            )
            self._channels[address] = channel
        return channel

    async def call(self, datanode: DatanodeRef, request: Request, timeout_s: float) -> Response:
        """One request on a stream of its own (OM's probes): the answer, checked for SUCCESS, else
        DatanodeCallError; the stream goes back to the pool, or is cancelled when the caller gives up."""
        stream = self.stream(datanode, timeout_s)
        try:
            return await stream.call(request)
        finally:
            await stream.close()

    def finishing(self, reader: asyncio.Task[None]) -> None:
        """Keeps a closed stream's reader until its call ends by itself."""
        self._finishing.add(reader)
        reader.add_done_callback(self._finishing.discard)

    async def close(self) -> None:
        pools, self._idle = list(self._idle.values()), {}
        for stream in (s for pool in pools for s in pool):
            stream.end()
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
        channel = pool.channel(datanode)
        self.generation = pool.generation
        self._call = rpc.Stub(channel, XCEIVER).send(self._requests())
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
        except rpc.RpcError as e:
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
            async with asyncio.timeout(timeout_s or self.timeout_s):  # not wait_for: it can lose a cancel
                response = await asyncio.shield(future)
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

    async def echo(self, payload: bytes = b"", response_size: int = 0, pipeline_id: str = "") -> bytes:
        """An Echo (freon dne): the data port's round trip with no container work; `response_size` bytes
        come back."""
        request = echo_request(self.datanode.uuid, payload, response_size, pipeline_id)
        return echo_payload(await self.call(request))

    @property
    def owes_answers(self) -> bool:
        return bool(self._pending)

    @property
    def reusable(self) -> bool:
        """Owes no answers and is not broken: a new user may take it."""
        return not self._pending and self._broken is None

    def end(self) -> None:
        """Ends a stream that owes no answers, in the background: only the request side ends (the datanode
        then ends the call with OK: no round trip to wait for, no cancelled RPC on either side); a broken
        one's call is cancelled."""
        self._queue.put_nowait(None)
        if self._broken is not None:
            self._call.cancel()
        self._pool.finishing(self._reader)

    async def close(self) -> None:
        """Its user is done with it: an idle stream goes back to the pool (or ends); with answers still
        owed (a writer giving up on the stream) the call is cancelled."""
        if self._pool.release(self):
            return
        self._queue.put_nowait(None)
        self._call.cancel()
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._reader
