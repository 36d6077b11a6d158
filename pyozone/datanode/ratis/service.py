"""RaftServerService: the follower side of the pipeline log, on the datanode's RATIS port."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from pyozone import rpc
from pyozone.datanode.ordered_answers import answer_in_order
from pyozone.datanode.ratis.groups import PipelineGroups
from pyozone.datanode.xceiver.tokens import intra_datanode_refusal
from pyozone.protocol import MAX_DATA_MESSAGE_BYTES
from pyozone.protocol.ratis import (
    RAFT_SERVER_SERVICE,
    AppendReply,
    LogResult,
    append_reply_to_proto,
    ends_stream,
    refused_reply,
)

if TYPE_CHECKING:
    from pyozone.proto.DatanodeClientProtocol_pb2 import AppendEntriesReplyProto, AppendEntriesRequestProto

MAX_IN_FLIGHT = 32
"""Entries of one leader's stream taken but not yet answered."""
SERVER_SETTINGS = rpc.ServerSettings(max_message_bytes=MAX_DATA_MESSAGE_BYTES, stream_queue=MAX_IN_FLIGHT)
"""The RATIS port's server: an entry carries at most one chunk (MAX_DATA_MESSAGE_BYTES)."""


class RaftServerService:
    def __init__(self, groups: PipelineGroups) -> None:
        self.groups = groups

    async def appendEntries(
        self, request_iterator: AsyncIterator[AppendEntriesRequestProto], context: rpc.CallContext
    ) -> AsyncIterator[AppendEntriesReplyProto]:
        """Applies the leader's entries (in parallel across containers) and answers each, in order; ends
        the stream at the first entry for a pipeline this datanode is not in (the leader then reports
        the failure to SCM). At most MAX_IN_FLIGHT entries are taken ahead of their answers, so a slow
        disk pushes back on the leader (past that the RPC layer stops reading the connection). Over mutual
        TLS only a datanode may send entries: its followers apply them without checking the tokens their
        leader checked."""
        refusal = intra_datanode_refusal(context)
        if refusal is not None:
            await context.abort(rpc.StatusCode.PERMISSION_DENIED, refusal)
        replies = answer_in_order(request_iterator, self._start, MAX_IN_FLIGHT, ends_stream)
        async with contextlib.aclosing(replies):  # a stream that ends early cancels the receiver at once
            async for reply in replies:
                yield append_reply_to_proto(reply)

    def _start(self, request: AppendEntriesRequestProto) -> asyncio.Future[AppendReply]:
        group = self.groups.get(request.pipelineID)
        if group is not None:
            return group.receive(request.leaderID, request.index, request.entry)
        future: asyncio.Future[AppendReply] = asyncio.get_running_loop().create_future()
        future.set_result(
            refused_reply(
                request.index,
                LogResult.GROUP_MISMATCH,
                f"datanode {self.groups.self_id} is not in pipeline {request.pipelineID}",
            )
        )
        return future


def add_raft_service(server: rpc.Server, service: RaftServerService) -> None:
    """Mounts the service; create the server with SERVER_SETTINGS."""
    server.add_service(rpc.ServiceSpec.of(RAFT_SERVER_SERVICE), service)
