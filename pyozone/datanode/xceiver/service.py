"""XceiverService: the datanode's data-path gRPC service (XceiverClientProtocolService.send).

One bidirectional stream per client connection. Each request is dispatched in the worker pool (the
storage layer blocks on disk I/O) while the event loop goes on receiving the next ones, so network and
disk overlap. Responses go back in request order. Requests of one stream for the same container run one
after another in arrival order (a putBlock must see the chunks written before it); requests for
different containers may run in parallel. At most `max_in_flight` requests of a stream are received
ahead of their responses: past that the stream stops reading and gRPC flow control pushes back on the
client, so a fast client cannot queue unbounded data in the datanode's memory.

Writes that name a pipeline go to its log (pyozone.datanode.ratis), which orders them at arrival: they
are not chained behind earlier requests, so a client can have many chunks of one block in flight while
the leader replicates them in order.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from concurrent.futures import Executor
from typing import TYPE_CHECKING

import grpc

from pyozone.datanode.xceiver.dispatcher import Dispatcher
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from pyozone.proto import DatanodeClientProtocol_pb2_grpc as pb_grpc

if TYPE_CHECKING:
    from pyozone.datanode.ratis.groups import PipelineGroups

log = logging.getLogger(__name__)

MAX_IN_FLIGHT = 16
"""Requests of one stream received but not yet answered; with 4 MiB chunks, 64 MiB per stream."""


class XceiverService(pb_grpc.XceiverClientProtocolServiceServicer):
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
        request_iterator: AsyncIterator[pb.ContainerCommandRequestProto],
        context: grpc.aio.ServicerContext,
    ) -> AsyncIterator[pb.ContainerCommandResponseProto]:
        answers: asyncio.Queue[asyncio.Future[pb.ContainerCommandResponseProto] | None] = asyncio.Queue()
        slots = asyncio.Semaphore(self.max_in_flight)
        receiver = asyncio.create_task(self._receive(request_iterator, answers, slots))
        try:
            while (answer := await answers.get()) is not None:
                response = await answer
                slots.release()
                yield response
            await receiver  # a failed receive (e.g. the client went away) fails the stream
        finally:
            receiver.cancel()
            while not answers.empty():
                if (pending := answers.get_nowait()) is not None:
                    pending.cancel()  # a request already in a worker still completes there

    async def _receive(
        self,
        requests: AsyncIterator[pb.ContainerCommandRequestProto],
        answers: asyncio.Queue[asyncio.Future[pb.ContainerCommandResponseProto] | None],
        slots: asyncio.Semaphore,
    ) -> None:
        """Starts each request as it arrives: into its pipeline's log, or chained behind the previous one
        for the same container."""
        last_for: dict[int, asyncio.Future[pb.ContainerCommandResponseProto]] = {}
        try:
            async for request in requests:
                await slots.acquire()
                key = request.containerID
                task = self.groups.route(request) if self.groups is not None else None
                if task is None:
                    task = asyncio.ensure_future(self._dispatch(request, last_for.get(key)))
                last_for[key] = task
                task.add_done_callback(lambda t, k=key: last_for.pop(k) if last_for.get(k) is t else None)
                answers.put_nowait(task)
        finally:
            answers.put_nowait(None)

    async def _dispatch(
        self,
        request: pb.ContainerCommandRequestProto,
        previous: asyncio.Future[pb.ContainerCommandResponseProto] | None,
    ) -> pb.ContainerCommandResponseProto:
        if previous is not None:
            await asyncio.wait([previous])
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.executor, self.dispatcher.dispatch, request)


def add_xceiver_service(server: grpc.aio.Server, service: XceiverService) -> None:
    """Mounts the service. Create the server with
    `options=pyozone.protocol.limits.grpc_options(MAX_DATA_MESSAGE_BYTES)`: gRPC's 4 MiB default would
    refuse a 4 MiB chunk with its envelope."""
    pb_grpc.add_XceiverClientProtocolServiceServicer_to_server(service, server)
