"""RaftServerService: the follower side of the pipeline log, on the datanode's RATIS port."""

from __future__ import annotations

from collections.abc import AsyncIterator

import grpc

from pyozone.datanode.ratis.groups import PipelineGroups
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from pyozone.proto import DatanodeClientProtocol_pb2_grpc as pb_grpc


class RaftServerService(pb_grpc.RaftServerProtocolServiceServicer):
    def __init__(self, groups: PipelineGroups) -> None:
        self.groups = groups

    async def appendEntries(
        self, request_iterator: AsyncIterator[pb.AppendEntriesRequestProto], context: grpc.aio.ServicerContext
    ) -> AsyncIterator[pb.AppendEntriesReplyProto]:
        """Applies the leader's entries in order, one answer each; ends the stream at the first entry for
        a pipeline this datanode is not in (the leader then reports the failure to SCM)."""
        async for request in request_iterator:
            group = self.groups.get(request.pipelineID)
            if group is None:
                yield pb.AppendEntriesReplyProto(
                    index=request.index, result=pb.GROUP_MISMATCH,
                    message=f"datanode {self.groups.self_id} is not in pipeline {request.pipelineID}",
                )  # fmt: skip
                return
            yield await group.follow(request)


def add_raft_service(server: grpc.aio.Server, service: RaftServerService) -> None:
    pb_grpc.add_RaftServerProtocolServiceServicer_to_server(service, server)
