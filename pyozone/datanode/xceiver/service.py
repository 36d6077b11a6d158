"""XceiverService: the datanode's data-path service (XceiverClientProtocolService.send) on pyozone.rpc.

One bidirectional stream per client connection. Each request is dispatched in the worker pool (the
storage layer blocks on disk I/O) while the event loop goes on receiving the next ones, so network and
disk overlap; responses go back in request order, at most `max_in_flight` ahead (answer_in_order).
Requests of one stream for the same container run one after another in arrival order (a putBlock must
see the chunks written before it); requests for different containers may run in parallel.

Writes that name a pipeline go to its log (pyozone.datanode.ratis), which orders them at arrival: they
are not chained behind earlier requests, so a client can have many chunks of one block in flight while
the leader replicates them in order. EC writes name an EC pipeline, which has no log: they are dispatched
at once like requests that name no pipeline (Dispatcher.is_direct).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from concurrent.futures import Executor
from typing import TYPE_CHECKING

from pyozone import rpc
from pyozone.datanode.ordered_answers import answer_in_order
from pyozone.datanode.xceiver.dispatcher import Dispatcher
from pyozone.hdds.limits import MAX_DATA_MESSAGE_BYTES
from pyozone.protocol.container import XCEIVER_SERVICE

if TYPE_CHECKING:
    from pyozone.datanode.ratis.groups import PipelineGroups
    from pyozone.proto.DatanodeClientProtocol_pb2 import ContainerCommandRequestProto as Request
    from pyozone.proto.DatanodeClientProtocol_pb2 import ContainerCommandResponseProto as Response

log = logging.getLogger(__name__)

MAX_IN_FLIGHT = 16
"""Requests of one stream received but not yet answered; with 4 MiB chunks, 64 MiB per stream."""
MAX_STREAMS_PER_CONNECTION = 4096
"""Streams one client connection may have open. A client keeps finished streams for its next blocks
(framework/datanode.IDLE_STREAMS per datanode) and every client of a process shares one connection to a
datanode: above the rpc layer's default (256) the idle streams alone could make the server stop reading the
connection, stalling the streams at work on it. Each stream bounds its own requests (MAX_IN_FLIGHT)."""
SPEC = rpc.ServiceSpec.of(XCEIVER_SERVICE)


class XceiverService:
    def __init__(
        self,
        dispatcher: Dispatcher,
        executor: Executor,
        max_in_flight: int = MAX_IN_FLIGHT,
        groups: PipelineGroups | None = None,
    ) -> None:
        if max_in_flight < 1:
            raise ValueError(f"max_in_flight must be at least 1, got {max_in_flight}")
        self.groups = groups
        self.dispatcher = dispatcher
        self.executor = executor
        self.max_in_flight = max_in_flight

    async def send(
        self,
        request_iterator: AsyncIterator[Request],
        context: rpc.CallContext,
    ) -> AsyncIterator[Response]:
        last_for: dict[int, asyncio.Future[Response]] = {}

        def start(request: Request) -> asyncio.Future[Response]:
            """Into its pipeline's log, or chained behind the stream's previous request for the container."""
            key = request.containerID
            task = None
            if self.groups is not None and not self.dispatcher.is_direct(request, self.groups.__contains__):
                task = self.groups.route(request)
            if task is None:
                task = asyncio.ensure_future(self._dispatch(request, last_for.get(key)))
            last_for[key] = task
            task.add_done_callback(lambda t, k=key: last_for.pop(k) if last_for.get(k) is t else None)
            return task

        answers = answer_in_order(request_iterator, start, self.max_in_flight)
        async with contextlib.aclosing(answers):  # a stream that ends early cancels the receiver at once
            async for response in answers:
                yield response

    async def _dispatch(self, request: Request, previous: asyncio.Future[Response] | None) -> Response:
        if previous is not None:
            await asyncio.wait([previous])
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.executor, self.dispatcher.dispatch, request)


STREAM_WINDOW = 4
"""Requests of one stream the connection holds before the handler takes them (the stream's window): a
client that neither reads its answers nor stops sending pins at most MAX_IN_FLIGHT + STREAM_WINDOW
requests per stream (the layer's default of 32 let 33 MiB messages pin a GiB in a few streams)."""


def xceiver_server() -> rpc.Server:
    """A server for the service: requests up to MAX_DATA_MESSAGE_BYTES (a 4 MiB chunk with its envelope)."""
    settings = rpc.ServerSettings(
        MAX_DATA_MESSAGE_BYTES, max_in_flight=MAX_STREAMS_PER_CONNECTION, stream_queue=STREAM_WINDOW
    )
    return rpc.Server(settings)


def add_xceiver_service(server: rpc.Server, service: XceiverService) -> None:
    server.add_service(SPEC, service)
