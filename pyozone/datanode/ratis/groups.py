"""PipelineGroups: this datanode's pipeline logs, one RaftGroup per pipeline it is a member of
(Ozone's XceiverServerRatis), and the routing of client requests into them.

A write (writeChunk, putBlock, putSmallFile), finalizeBlock (OM's, at a key's commit under a space quota:
every member applies it after every putBlock before it) or closeContainer that names a pipeline goes through
that pipeline's log: on its leader it is ordered and replicated, on a follower it is refused with
NOT_LEADER, on a datanode that is not a member with GROUP_MISMATCH. The leader refuses, before it takes an
index, one for a container whose replica here belongs to another pipeline (Dispatcher.check_writable).
WatchForCommit is answered by the leader. A request without a pipeline id (tools, tests, SCM's own commands)
is not routed: the dispatcher runs it on this replica alone.
"""

from __future__ import annotations

import asyncio
import logging
import shutil
from collections.abc import Callable, Iterable
from concurrent.futures import Executor
from pathlib import Path
from typing import TYPE_CHECKING

from pyozone.common.tls import TlsStore
from pyozone.datanode.pipelines import Membership
from pyozone.datanode.ratis.group import RaftGroup
from pyozone.datanode.ratis.log import RaftLog
from pyozone.datanode.storage import ContainerError
from pyozone.datanode.xceiver.dispatcher import Refused
from pyozone.hdds.errors import ProtocolError
from pyozone.protocol.ratis import LogResult, answer_with, is_watch, refusal, routed, watch_from_proto

if TYPE_CHECKING:
    from pyozone.datanode.xceiver.dispatcher import Dispatcher
    from pyozone.proto.DatanodeClientProtocol_pb2 import ContainerCommandRequestProto as Request
    from pyozone.proto.DatanodeClientProtocol_pb2 import ContainerCommandResponseProto as Response

log = logging.getLogger(__name__)


class PipelineGroups:
    def __init__(
        self,
        self_id: str,
        directory: Path,
        dispatcher: Dispatcher,
        executor: Executor,
        on_failure: Callable[[str, str], None],
        watch_timeout_s: float,
        request_timeout_s: float,
        tls: TlsStore | None = None,
    ) -> None:
        """`directory` holds one sub-directory per pipeline with its RaftLog; `tls`: the datanode's
        certificate, with which a leader reaches its followers (hdds.grpc.tls.enabled)."""
        self.tls = tls
        self.self_id = self_id
        self.directory = directory
        self.dispatcher = dispatcher
        self.executor = executor
        self.on_failure = on_failure
        self.watch_timeout_s = watch_timeout_s
        self.request_timeout_s = request_timeout_s
        self._groups: dict[str, RaftGroup] = {}
        self._turns: dict[str, asyncio.Future[None]] = {}
        """Per pipeline, the last request waiting for SCM's allocation answer (see _submit_in_turn)."""

    def join(self, membership: Membership) -> RaftGroup:
        """The pipeline's group, created (or recovered from its log) on first use; idempotent."""
        group = self._groups.get(membership.pipeline_id)
        if group is not None:  # a pipeline's members never change; a resent createPipeline finds it here
            if group.members != membership.members:
                log.warning(
                    "pipeline %s: createPipeline names members %s, the group has %s; keeping the group",
                    membership.pipeline_id, list(membership.members), list(group.members),
                )  # fmt: skip
            return group
        raft_log = RaftLog(self.directory / membership.pipeline_id)
        pid = membership.pipeline_id
        ours = [c.bcsid for c in self.dispatcher.containers if c.data.origin_pipeline_id == pid]
        applied = max(ours, default=0)
        group = RaftGroup(
            membership,
            self.self_id,
            raft_log,
            apply=self.dispatcher.dispatch,
            executor=self.executor,
            on_failure=self.on_failure,
            watch_timeout_s=self.watch_timeout_s,
            request_timeout_s=self.request_timeout_s,
            applied=applied,
            lost=self.dispatcher.containers.lost_from(pid),
            unrecorded_losses=self.dispatcher.containers.unrecorded_losses,
            tls=self.tls,
        )
        self._groups[membership.pipeline_id] = group
        log.info(
            "pipeline %s: log at index %d, %s", membership.pipeline_id, raft_log.last_index,
            "leader" if group.is_leader else f"following {group.leader_id}",
        )  # fmt: skip
        return group

    async def leave(self, pipeline_id: str) -> None:
        """The pipeline is closed: its group stops and its log goes."""
        group = self._groups.pop(pipeline_id, None)
        if group is None:
            return
        await group.close()
        await asyncio.get_running_loop().run_in_executor(
            self.executor, lambda: shutil.rmtree(self.directory / pipeline_id, ignore_errors=True)
        )

    def fail(self, pipeline_ids: Iterable[str], reason: str) -> None:
        """This member has failed these pipelines (e.g. it lost their containers): SCM is asked to close
        them and their leaders here take no more entries."""
        for pipeline_id in pipeline_ids:
            group = self._groups.get(pipeline_id)
            if group is not None:
                group.fail(reason)

    def get(self, pipeline_id: str) -> RaftGroup | None:
        return self._groups.get(pipeline_id)

    def __contains__(self, pipeline_id: object) -> bool:
        return pipeline_id in self._groups

    def route(self, request: Request) -> asyncio.Future[Response] | None:
        """The answer to a pipeline request, ordered now; None for a request the dispatcher runs alone."""
        if not routed(request):
            return None
        group = self._groups.get(request.pipelineID)
        if group is None:
            return _refused(
                request, LogResult.GROUP_MISMATCH,
                f"datanode {self.self_id} is not in pipeline {request.pipelineID}",
            )  # fmt: skip
        if not group.is_leader:
            return _refused(
                request, LogResult.NOT_LEADER,
                f"pipeline {request.pipelineID}: datanode {self.self_id} is a follower; "
                f"the leader is {group.leader_id}",
            )  # fmt: skip
        if is_watch(request):
            try:
                watch = watch_from_proto(request)
            except ProtocolError as e:
                return _refused(request, LogResult.MALFORMED_REQUEST, str(e))
            return group.watch(request, watch)
        checks: list[Callable[[], None]] = []
        try:
            token_check = self.dispatcher.check_token(request)  # the followers trust this leader's check
            if token_check is not None:
                checks.append(token_check)
            allocation_check = self.dispatcher.check_writable(request)  # the container's own pipeline
            if allocation_check is not None:
                checks.append(allocation_check)
        except Refused as e:
            return _done(answer_with(request, e.result, str(e)))
        except ContainerError as e:
            return _refused(request, e.result, str(e.args[0]))
        except ProtocolError as e:
            return _refused(request, LogResult.MALFORMED_REQUEST, str(e))
        turn = self._turns.get(request.pipelineID)
        if not checks and (turn is None or turn.done()):
            return group.submit(request)
        mine: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._turns[request.pipelineID] = mine
        return asyncio.ensure_future(self._submit_in_turn(group, request, checks, turn, mine))

    async def _submit_in_turn(
        self,
        group: RaftGroup,
        request: Request,
        checks: list[Callable[[], None]],
        previous: asyncio.Future[None] | None,
        mine: asyncio.Future[None],
    ) -> Response:
        """Asks SCM off the event loop (a token's secret key, the container's allocation), then submits
        in arrival order: a pipeline's requests that came after one waiting for SCM wait for it too, so a
        block's chunks and its PutBlock stay in order. A refusal answers the client and leaves the
        pipeline healthy."""
        try:
            if previous is not None:
                await previous
            for check in checks:
                try:
                    await asyncio.get_running_loop().run_in_executor(self.executor, check)
                except Refused as e:
                    return answer_with(request, e.result, str(e))
                except ContainerError as e:
                    return refusal(request, e.result, str(e.args[0]))
            answer = group.submit(request)
        finally:
            mine.set_result(None)
            if self._turns.get(request.pipelineID) is mine:
                del self._turns[request.pipelineID]
        return await answer

    async def close(self) -> None:
        groups, self._groups = list(self._groups.values()), {}
        await asyncio.gather(*(g.close() for g in groups), return_exceptions=True)


def _refused(request: Request, result: str, message: str) -> asyncio.Future[Response]:
    """`request` refused with the Result of this name (a LogResult, a storage Result)."""
    return _done(refusal(request, result, message))


def _done(response: Response) -> asyncio.Future[Response]:
    future: asyncio.Future[Response] = asyncio.get_running_loop().create_future()
    future.set_result(response)
    return future
