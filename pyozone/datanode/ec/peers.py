"""The coordinator's connections to datanodes: one XceiverClientProtocolService.send stream per datanode.

The service answers a stream's requests in order and runs those for one container one after another, so
a stream is a FIFO of futures: `submit` queues a request without waiting (many cells in flight), and the
writes of a block land before its putBlock. Once a stream breaks, every pending and later request fails:
order is lost, and the reconstruction fails as a whole (SCM retries it).

The requests and the result of each answer are protocol/ec.py's. The client's XceiverStream does the same
for key writes; the datanode may not import the client, so this one stays until both use the datanode
client in pyozone/framework.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Protocol

from pyozone import rpc
from pyozone.common.tls import TlsStore
from pyozone.framework.datanode import XCEIVER
from pyozone.hdds.datanode import DatanodeDetails
from pyozone.hdds.limits import MAX_DATA_MESSAGE_BYTES
from pyozone.hdds.security.x509 import CertRole
from pyozone.protocol.data import refusal

if TYPE_CHECKING:
    from pyozone.proto.DatanodeClientProtocol_pb2 import ContainerCommandRequestProto as Request
    from pyozone.proto.DatanodeClientProtocol_pb2 import ContainerCommandResponseProto as Response

DATA_PORT = "STANDALONE"
"""The port of the datanode's xceiver service, as the datanode registers it."""


class PeerError(Exception):
    """A request failed at (or on the way to) one datanode: `result` is the datanode's Result name, or
    the call's status when it did not answer."""

    def __init__(self, peer: str, result: str, message: str) -> None:
        super().__init__(f"{peer}: {result}: {message}")
        self.peer = peer
        self.result = result


class Peer(Protocol):
    name: str

    def submit(self, request: Request) -> asyncio.Future[Response]:
        """Queues `request`; the future gets its answer, whatever its result, or PeerError."""
        ...

    async def close(self) -> None: ...


Connect = Callable[[DatanodeDetails], Peer]
"""Opens a stream to a datanode (the coordinator's own too: one path for local and remote targets)."""


async def call(peer: Peer, request: Request) -> Response:
    """The answer to `request`, or PeerError unless it is SUCCESS."""
    return checked(peer, await peer.submit(request))


def checked(peer: Peer, response: Response) -> Response:
    refused = refusal(response)
    if refused is not None:
        raise PeerError(peer.name, refused.result, refused.message)
    return response


class SignedPeer:
    """A peer whose every request carries this datanode's token for it (block and container tokens
    required: Ozone's TokenHelper); `sign` sets a request's encodedToken (xceiver/tokens.py)."""

    def __init__(self, peer: Peer, sign: Callable[[Request], Request]) -> None:
        self.name = peer.name
        self._peer = peer
        self._sign = sign

    def submit(self, request: Request) -> asyncio.Future[Response]:
        return self._peer.submit(self._sign(request))

    async def close(self) -> None:
        await self._peer.close()


def signing(connect: Connect, sign: Callable[[Request], Request]) -> Connect:
    return lambda details: SignedPeer(connect(details), sign)


def peer_name(details: DatanodeDetails) -> str:
    return f"{details.ip_address or details.hostname}:{details.port(DATA_PORT)} ({str(details.uuid)[:8]})"


class RpcPeer:
    """One send() stream to one datanode, with a deadline for the whole stream."""

    def __init__(self, channel: rpc.Channel, name: str, timeout_s: float) -> None:
        self.name = name
        self._queue: asyncio.Queue[Request | None] = asyncio.Queue()
        self._pending: deque[asyncio.Future[Response]] = deque()
        self._broken: PeerError | None = None
        self._call = rpc.Stub(channel, XCEIVER).send(self._requests(), timeout=timeout_s)
        self._reader = asyncio.get_running_loop().create_task(self._read())

    async def _requests(self) -> AsyncIterator[Request]:
        while (request := await self._queue.get()) is not None:
            yield request

    async def _read(self) -> None:
        try:
            async for response in self._call:
                if not self._pending:
                    raise PeerError(self.name, "PROTOCOL", "an answer nobody asked for")
                future = self._pending.popleft()
                if not future.done():
                    future.set_result(response)
            self._fail(PeerError(self.name, "CANCELLED", "stream ended"))
        except rpc.RpcError as e:
            self._fail(PeerError(self.name, e.code().name, e.details() or ""))
        except PeerError as e:
            self._fail(e)
        except asyncio.CancelledError:
            self._fail(PeerError(self.name, "CANCELLED", "stream closed"))

    def _fail(self, error: PeerError) -> None:
        if self._broken is None:
            self._broken = error
        while self._pending:
            future = self._pending.popleft()
            if not future.done():
                future.set_exception(error)

    def submit(self, request: Request) -> asyncio.Future[Response]:
        future: asyncio.Future[Response] = asyncio.get_running_loop().create_future()
        # A failed reconstruction never awaits its later answers: mark them retrieved.
        future.add_done_callback(lambda f: f.cancelled() or f.exception())
        if self._broken is not None:
            future.set_exception(self._broken)
        else:
            self._pending.append(future)
            self._queue.put_nowait(request)
        return future

    async def close(self) -> None:
        """Ends the stream after the queued requests; answers still pending fail."""
        self._queue.put_nowait(None)
        try:
            async with asyncio.timeout(5):  # not wait_for: it can lose a cancel
                await asyncio.shield(self._reader)
        except TimeoutError:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader


class RpcPeers:
    """Streams to datanodes over one channel per address; `close` ends the channels."""

    def __init__(self, timeout_s: float, tls: TlsStore | None = None) -> None:
        self.timeout_s = timeout_s
        self.tls = tls
        self._channels: dict[str, rpc.Channel] = {}

    def connect(self, details: DatanodeDetails) -> Peer:
        port, host = details.port(DATA_PORT), details.ip_address or details.hostname
        if not port or not host:
            raise PeerError(peer_name(details), "NO_DATA_PORT", f"datanode advertises no {DATA_PORT} port")
        address = f"{host}:{port}"
        channel = self._channels.get(address)
        if channel is None:
            settings = rpc.ChannelSettings(MAX_DATA_MESSAGE_BYTES)
            channel = rpc.Channel(address, settings, self.tls, CertRole.DATANODE)
            self._channels[address] = channel
        return RpcPeer(channel, peer_name(details), self.timeout_s)

    async def close(self) -> None:
        channels, self._channels = list(self._channels.values()), {}
        for channel in channels:
            await channel.close()
