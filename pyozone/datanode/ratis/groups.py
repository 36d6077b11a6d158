"""PipelineGroups: this datanode's pipelines as divisions of the Raft core (Ozone's XceiverServerRatis), one
`RaftMember` per pipeline with a `ContainerStateMachine`, all on one `RaftDivisions` port (the RATIS port),
and the routing of client requests into them.

A write (writeChunk, putBlock, putSmallFile), finalizeBlock (OM's, at a key's commit under a space quota:
every member applies it after every putBlock before it) or closeContainer that names a pipeline goes through
that pipeline's log: its leader logs the request without its chunk data (the data travels beside the entry
and every member writes it at append, `ContainerStateMachine.write_data`), and answers with its own apply's
result once the entry committed and it applied it; a follower refuses it with NOT_LEADER naming the leader,
a datanode that is not a member with GROUP_MISMATCH. The leader refuses, before it logs, a request whose
token fails or whose container's replica here belongs to another pipeline (Dispatcher.check_writable), in
arrival order (`_submit_in_turn`), as Ozone's ContainerStateMachine.startTransaction validates. WatchForCommit
is answered by the leader: every member's commit index, as the core knows it. A request without a pipeline id
(tools, tests, SCM's own commands) is not routed: the dispatcher runs it on this replica alone.

The group: the pipeline's members at their RATIS addresses (as SCM sent them with createPipeline), SCM's
suggested leader at priority 1 and the others at 0 (Ozone's addGroup with its priority list), the suggested
leader's first election immediate so a new pipeline has its leader at once; elections after that as
`hdds.ratis.leader.election.minimum.timeout.duration` (max = min + 200 ms, Ozone's
setRatisLeaderElectionTimeout). A failure of this member, its state machine's, a follower silent for
`hdds.ratis.raft.server.rpc.slowness.timeout` or no leader for
`hdds.ratis.raft.server.Notification.no-leader.timeout` asks SCM to close the pipeline (a pipeline action
CLOSE, Ozone's triggerPipelineClose).
"""

from __future__ import annotations

import asyncio
import logging
import shutil
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Executor
from pathlib import Path
from typing import TYPE_CHECKING, cast

from pyozone.common.net import parse_host_port
from pyozone.datanode.pipeline_raft import ELECTION_SPREAD_MS
from pyozone.datanode.pipelines import Membership
from pyozone.datanode.ratis.state_machine import ContainerStateMachine, logged_blocks
from pyozone.datanode.settings import PipelineRaftConfig
from pyozone.datanode.storage import ContainerError
from pyozone.datanode.traffic import TRAFFIC
from pyozone.datanode.xceiver.dispatcher import Refused
from pyozone.datanode.xceiver.vouching import held_by_stream
from pyozone.hdds.errors import ProtocolError
from pyozone.hdds.ids import BlockID
from pyozone.hdds.store import StoreError
from pyozone.protocol.ratis import (
    LogResult,
    answer_with,
    committed_answer,
    entry_data,
    entry_payload,
    is_put_small_file,
    is_watch,
    not_leader,
    refusal,
    refused_alike,
    routed,
    succeeded,
    watch_answer,
    watch_from_proto,
)
from pyozone.ratis.messages import CommitInfos, RaftPeerId, WatchLevel
from pyozone.ratis_server.member_api import EntryTooLargeError, NotLeaderError, NotReplicatedError, RaftStatus
from pyozone.ratis_server.segmented_log import CURRENT_DIR, SegmentedRaftLog, stored_entries
from pyozone.ratis_server.server import RaftMember
from pyozone.ratis_server.transport import RaftDivisions, RaftGroup, RaftPeer

if TYPE_CHECKING:
    from pyozone.datanode.xceiver.dispatcher import Dispatcher
    from pyozone.proto.DatanodeClientProtocol_pb2 import ContainerCommandRequestProto as Request
    from pyozone.proto.DatanodeClientProtocol_pb2 import ContainerCommandResponseProto as Response

log = logging.getLogger(__name__)

LAST_MEMBER_WAIT = 1.0
"""Once a majority committed an entry and the leader applied it, the leader waits for the other members'
commit at most this many times as long as the majority took, then answers. Ratis answers at the majority; a
client that wants every replica (watch ALL_COMMITTED, Ozone's default) then asks again with a watch, a round
trip that costs a small key about a fifth of its time (benchmarks/small_keys.py) when the last member is only
a little behind; an answer whose commitInfos show every member at the entry needs none. A member silent for
an election timeout is not waited for, and a client that watches MAJORITY_COMMITTED waits at most this much
longer."""
LAST_MEMBER_WAIT_MAX_S = 0.5
"""The wait for the last member is as long again as the majority took, at most this (and never past half
the request timeout), so a slow majority cannot push an answer past the client's deadline. A putSmallFile
(a small key's whole block in one entry) waits for every live member up to half the request timeout: the
key is committed only once every replica has it, and an answer that shows so saves its client the watch."""


class PipelineGroup:
    """One pipeline's member here: the Raft member, its state machine, and the leader's answers."""

    def __init__(
        self,
        membership: Membership,
        member: RaftMember,
        machine: ContainerStateMachine,
        config: PipelineRaftConfig,
    ) -> None:
        self.membership = membership
        self.pipeline_id = membership.pipeline_id
        self.members = membership.members
        self.member = member
        self.machine = machine
        self.config = config
        self._in_flight: asyncio.Semaphore | None = None
        """hdds.ratis.raft.server.write.element-limit: writes the leader holds at once (made on the loop)."""
        self._changed: asyncio.Future[None] | None = None
        """Done at the next leader change or stop: what every request waiting for a leader awaits."""
        self.waiting: set[asyncio.Future[None]] = set()
        """The turns of the requests waiting (`PipelineGroups._submit_in_turn`), at most the element
        limit."""

    @property
    def is_leader(self) -> bool:
        return self.member.leading_term() is not None

    @property
    def leader_id(self) -> str | None:
        if not self.member.running:
            return None
        leader = self.member.status().leader
        return leader.id if leader is not None else None

    @property
    def failure(self) -> str | None:
        """Why this member no longer serves the pipeline (None: it does)."""
        if self.machine.failure is not None:
            return self.machine.failure
        return None if self.member.running else "its Raft member stopped"

    async def leader_known(self, deadline: float) -> None:
        """Waits (until the loop's time `deadline`) until this member knows its pipeline's leader or stops:
        an election under way (a new pipeline, a leader change) ends within an election timeout or two.
        Every waiter awaits the same future, done at the next leader change (the shell's
        notify_leader_changed) or stop: no polling."""
        loop = asyncio.get_running_loop()
        while self.member.running and self.leader_id is None and loop.time() < deadline:
            if self._changed is None or self._changed.done():
                self._changed = loop.create_future()
            await asyncio.wait([self._changed], timeout=deadline - loop.time())

    def leader_changed(self) -> None:
        """The leader changed, or this member stops: the requests waiting for a leader look again."""
        if self._changed is not None and not self._changed.done():
            self._changed.set_result(None)

    async def submit(self, request: Request, held: bytes = b"") -> Response:
        """Logs `request` (this member leading) and answers with its apply's result and every member's commit
        index: NOT_LEADER naming the leader when this member does not lead, RAFT_RETRY_FAILURE when it
        failed for the pipeline. `held`: a putBlock's data, the chunks of its streamed bytes this leader
        checked (`vouching.held_by_stream`)."""
        failure = self.failure
        if failure is not None:
            return refusal(
                request, LogResult.RAFT_RETRY_FAILURE, f"pipeline {self.pipeline_id} failed here: {failure}"
            )
        if self._in_flight is None:
            self._in_flight = asyncio.Semaphore(self.config.write_element_limit)
        loop = asyncio.get_running_loop()
        submitted = loop.time()
        data = entry_data(request) or held
        async with self._in_flight:
            try:
                # Shielded: a client that goes away cancels its answer, never the entry.
                response = await asyncio.shield(
                    self.member.submit(entry_payload(request), "", 0, data=data or None)
                )
            except NotLeaderError as e:
                return self._not_leader(request, e)
            except EntryTooLargeError as e:
                return refusal(request, LogResult.MALFORMED_REQUEST, str(e))
        if isinstance(response, BaseException):  # the state machine's apply raised: the entry's result
            return refusal(request, LogResult.IO_EXCEPTION, f"pipeline {self.pipeline_id}: {response!r}")
        response = cast("Response", response)
        index = response.logIndex
        if not (succeeded(response.result) or refused_alike(response.result)):
            return response
        infos = await self._last_members(request, index, loop.time() - submitted)
        return committed_answer(response, index, self.members, _by_member(infos))

    async def _last_members(self, request: Request, index: int, majority_took: float) -> CommitInfos:
        """Every member's commit index after the leader's wait for the members not at `index` yet."""
        infos = self._infos()
        if all(i >= index for _, i in infos):
            return infos
        wait = min(LAST_MEMBER_WAIT * majority_took, LAST_MEMBER_WAIT_MAX_S)
        if is_put_small_file(request):  # a whole small key: answered once every replica has it
            wait = self.config.request_timeout_ms / 1000
        wait = min(wait, self.config.request_timeout_ms / 1000 / 2 - majority_took)
        if wait <= 0 or not self._others_alive():
            return infos
        try:
            return await self.member.watch(index, WatchLevel.ALL, wait)
        except NotReplicatedError as e:
            return e.infos
        except NotLeaderError:
            return infos

    def _others_alive(self) -> bool:
        """Every other member answered this leader within an election timeout (a member down is not waited
        for: its pipeline closes by the slowness timeout meanwhile)."""
        silent = self.member.silent_followers(self.config.election_timeout_ms)
        return not silent

    def _infos(self) -> CommitInfos:
        try:
            return self.member.commit_infos()
        except RuntimeError:
            return ()

    async def watch(self, request: Request) -> Response:
        """WatchForCommit: SUCCESS once the entry is committed on a majority (MAJORITY_COMMITTED) or on every
        member (ALL_COMMITTED); NOT_REPLICATED with the members' commit indexes when not in
        hdds.ratis.raft.server.watch.timeout."""
        try:
            watch = watch_from_proto(request)
        except ProtocolError as e:
            return refusal(request, LogResult.MALFORMED_REQUEST, str(e))
        level = WatchLevel.MAJORITY if watch.majority else WatchLevel.ALL
        try:
            infos = await self.member.watch(watch.index, level, self.config.watch_timeout_ms / 1000)
        except NotLeaderError as e:
            return self._not_leader(request, e)
        except NotReplicatedError as e:
            lagging = sorted(m for m, i in _by_member(e.infos).items() if i < watch.index)
            behind = (
                f"pipeline {self.pipeline_id}: entry {watch.index} not committed by {', '.join(lagging)} "
                f"({e.why})"
            )
            return watch_answer(request, watch.index, self.members, _by_member(e.infos), behind)
        return watch_answer(request, watch.index, self.members, _by_member(infos), None)

    def _not_leader(self, request: Request, error: NotLeaderError) -> Response:
        if not self.member.running:
            return refusal(
                request, LogResult.RAFT_RETRY_FAILURE,
                f"pipeline {self.pipeline_id} failed here: {self.failure or 'its Raft member stopped'}",
            )  # fmt: skip
        leader = error.leader_id.id if error.leader_id is not None else None
        return not_leader(request, self.pipeline_id, self.member.me.id, leader)

    async def close(self) -> None:
        await self.member.stop()
        self.leader_changed()


class PipelineGroups:
    def __init__(
        self,
        self_id: str,
        directory: Path,
        dispatcher: Dispatcher,
        executor: Executor,
        on_failure: Callable[[str, str], None],
        config: PipelineRaftConfig,
        divisions: RaftDivisions,
        on_leader_changed: Callable[[str], None] | None = None,
    ) -> None:
        """`directory` holds one sub-directory per pipeline with its Raft log and `sm-snapshot`;
        `divisions`: the RATIS port every pipeline's member serves on (started before `join`).
        `on_failure(pipeline_id, reason)` asks SCM to close a pipeline; `on_leader_changed(pipeline_id)`
        (Ozone's handleLeaderChangedNotification) sends the pipeline report at once."""
        self.self_id = self_id
        self.directory = directory
        self.dispatcher = dispatcher
        self.executor = executor
        self.on_failure = on_failure
        self.config = config
        self.divisions = divisions
        self.on_leader_changed = on_leader_changed
        self._groups: dict[str, PipelineGroup] = {}
        self._failed: dict[str, str] = {}
        """Pipelines whose member could not be built here (why): their requests are refused."""
        self._stopping: set[asyncio.Task[None]] = set()
        """Members stopping because their state machine failed (`_stop_failed`)."""
        self._turns: dict[str, asyncio.Future[None]] = {}
        """Per pipeline, the last request waiting for SCM's allocation answer (see _submit_in_turn)."""

    async def join(self, membership: Membership, *, rejoin: bool = False) -> PipelineGroup | None:
        """The pipeline's member, started (from its log after a restart) on first use; idempotent. None when
        it cannot be built (no RATIS address for a member, a log that cannot be read): the pipeline is
        reported failed. `rejoin`: a membership this datanode held before its restart (pipelines.json),
        whose Raft log must be there: without it (a lost disk, a removed directory) the member would come
        back blank, its acknowledged entries and its vote forgotten, so it fails the pipeline instead and
        starts no member (Ozone loads no group whose storage is gone: the pipeline closes)."""
        pid = membership.pipeline_id
        group = self._groups.get(pid)
        if group is not None:  # a pipeline's members never change; a resent createPipeline finds it here
            if group.members != membership.members:
                log.warning(
                    "pipeline %s: createPipeline names members %s, the group has %s; keeping the group",
                    pid, list(membership.members), list(group.members),
                )  # fmt: skip
            return group
        if pid in self._failed:
            return None
        if rejoin and not await asyncio.get_running_loop().run_in_executor(
            self.executor, _has_log, self.directory / pid
        ):
            reason = f"its Raft log {self.directory / pid} is missing or empty: it cannot rejoin as a voter"
            log.error("pipeline %s: %s", pid, reason)
            self._failed[pid] = reason
            self.on_failure(pid, f"member {self.self_id} failed: {reason}")
            return None
        try:
            group = await self._start(membership)
        except Exception as e:
            reason = f"its Raft member cannot start: {e}"
            log.exception("pipeline %s: %s", pid, reason)
            self._failed[pid] = reason
            self.on_failure(pid, f"member {self.self_id} failed: {reason}")
            return None
        self._groups[pid] = group
        log.info(
            "pipeline %s: joined at log index %d%s", pid, group.member.status().last_index,
            " (suggested leader)" if membership.suggested_leader == self.self_id else "",
        )  # fmt: skip
        return group

    async def _start(self, membership: Membership) -> PipelineGroup:
        pid = membership.pipeline_id
        peers = []
        for uuid in membership.members:
            where = membership.address(uuid)
            if where is not None:
                peers.append(RaftPeer(RaftPeerId(uuid), parse_host_port(where, None, "RATIS")))
            elif uuid == self.self_id:  # SCM sent no details of this datanode: its own port
                peers.append(RaftPeer(RaftPeerId(uuid), self.divisions.address))
            else:
                raise ValueError(f"SCM sent no RATIS address for member {uuid}")
        me = RaftPeerId(self.self_id)
        mine = next(p for p in peers if p.id == me)
        if mine.address.port != self.divisions.address.port:
            raise ValueError(
                f"this member's RATIS port is {self.divisions.address.port}, the pipeline has {mine.address}"
            )
        directory = self.directory / pid
        member: RaftMember | None = None
        group: PipelineGroup | None = None

        def snapshot_taken(covered: object) -> None:
            if member is not None and member.running:
                member.snapshot_taken(covered)  # type: ignore[arg-type]

        loop = asyncio.get_running_loop()

        def failed(pipeline_id: str, reason: str) -> None:
            self.on_failure(pipeline_id, reason)
            if machine.failure is not None:  # unhealthy, not only slow or leaderless: stops voting too
                loop.call_soon_threadsafe(self._stop_failed, member, group)

        def leader_changed() -> None:
            if group is not None:
                group.leader_changed()
            if self.on_leader_changed is not None:
                self.on_leader_changed(pid)

        machine = ContainerStateMachine(
            pid, self.dispatcher, self.executor, directory, failed,
            max_pending_apply=self.config.max_pending_apply,
            snapshot_threshold=self.config.snapshot_threshold,
            on_snapshot=snapshot_taken,
            on_leader_changed=leader_changed,
        )  # fmt: skip
        storage = await asyncio.get_running_loop().run_in_executor(self.executor, SegmentedRaftLog, directory)
        suggested = membership.suggested_leader
        member = RaftMember(
            me,
            RaftGroup(pid, tuple(peers)),
            storage,
            machine,
            self.config.settings(suggested == self.self_id),
            tls=self.divisions.tls,
            role=self.divisions.role,
            server=self.divisions,
            leader_pending_bytes=self.config.leader_pending_bytes,
            priorities={p.id: 1 if p.id.id == suggested else 0 for p in peers},
            on_sent=_count_sent,
        )
        await member.start()
        containers = self.dispatcher.containers
        machine.check_restart(
            member.status().last_index, containers.lost_from(pid), containers.unrecorded_losses
        )
        group = PipelineGroup(membership, member, machine, self.config)
        if not member.running:  # failed at its restart check (`failed`, before the group was made)
            group.leader_changed()
        return group

    def _stop_failed(self, member: RaftMember | None, group: PipelineGroup | None) -> None:
        """A member whose state machine failed stops for its group (as the shell's `_fail` does for a
        storage failure): a leader no longer leads (its heartbeats end, the healthy members elect one and
        SCM's close reaches them through its log), a follower neither votes nor acknowledges entries it
        will never apply. Its requests are answered RAFT_RETRY_FAILURE until SCM closes the pipeline."""
        if member is None or not member.running:
            return
        task = asyncio.get_running_loop().create_task(member.stop())
        if group is not None:
            task.add_done_callback(lambda _task: group.leader_changed())
        self._stopping.add(task)
        task.add_done_callback(self._stopping.discard)

    async def leave(self, pipeline_id: str) -> None:
        """The pipeline is closed: its member stops and its log goes."""
        self._failed.pop(pipeline_id, None)
        group = self._groups.pop(pipeline_id, None)
        if group is None:
            return
        await group.close()
        await asyncio.get_running_loop().run_in_executor(
            self.executor, lambda: shutil.rmtree(self.directory / pipeline_id, ignore_errors=True)
        )

    def fail(self, pipeline_ids: Iterable[str], reason: str) -> None:
        """This member has failed these pipelines (e.g. it lost their containers): SCM is asked to close
        them and their state machines here apply no more (their members acknowledge no more entries)."""
        for pipeline_id in pipeline_ids:
            group = self._groups.get(pipeline_id)
            if group is not None:
                group.machine.notify_failed(reason)

    def get(self, pipeline_id: str) -> PipelineGroup | None:
        return self._groups.get(pipeline_id)

    def __contains__(self, pipeline_id: object) -> bool:
        return pipeline_id in self._groups

    def raft_statuses(self) -> list[tuple[RaftStatus, CommitInfos]]:
        """Each running member's status and the commit indexes it knows (the datanode's /prom), by
        pipeline."""
        members = [self._groups[pid].member for pid in sorted(self._groups)]
        return [(m.status(), m.commit_infos()) for m in members if m.running]

    def leading(self, pipeline_id: str) -> bool | None:
        """Whether this member leads the pipeline now (Ozone's pipeline report from the Raft role); None
        when it has no member of it or knows no leader yet."""
        group = self._groups.get(pipeline_id)
        if group is None or group.leader_id is None:
            return None
        return group.is_leader

    def route(self, request: Request) -> asyncio.Future[Response] | None:
        """The answer to a pipeline request, ordered now; None for a request the dispatcher runs alone."""
        if not routed(request):
            return None
        group = self._groups.get(request.pipelineID)
        if group is None:
            failed = self._failed.get(request.pipelineID)
            if failed is not None:
                return _refused(
                    request, LogResult.RAFT_RETRY_FAILURE,
                    f"pipeline {request.pipelineID} failed on datanode {self.self_id}: {failed}",
                )  # fmt: skip
            return _refused(
                request, LogResult.GROUP_MISMATCH,
                f"datanode {self.self_id} is not in pipeline {request.pipelineID}",
            )  # fmt: skip
        electing = group.leader_id is None and group.failure is None
        if not electing and not group.is_leader and group.failure is None:
            return _done(not_leader(request, group.pipeline_id, self.self_id, group.leader_id))
        if is_watch(request) and not electing:
            return asyncio.ensure_future(group.watch(request))
        checks: list[Callable[[], None]] = []
        held: Callable[[], bytes] | None = None
        waits: list[asyncio.Future[None]] = []  # a putBlock after writes this leader is logging
        if not is_watch(request):
            try:
                token_check = self.dispatcher.check_token(request)  # the followers trust this leader's check
                if token_check is not None:
                    checks.append(token_check)
                allocation_check = self.dispatcher.check_writable(request)  # the container's own pipeline
                if allocation_check is not None:
                    checks.append(allocation_check)
                if group.failure is None:  # else nothing is logged: RAFT_RETRY_FAILURE is the answer
                    waits = group.machine.logging(request)
                    if not waits:  # a putBlock over bytes no entry carried here: this leader vouches for them
                        held = held_by_stream(self.dispatcher.containers, request, group.machine.uncarried)
            except Refused as e:
                return _done(answer_with(request, e.result, str(e)))
            except ContainerError as e:
                return _refused(request, e.result, str(e.args[0]))
            except ProtocolError as e:
                return _refused(request, LogResult.MALFORMED_REQUEST, str(e))
        logged = group.machine.logging_write(request)  # its chunk: carried by the log for a putBlock after it
        answer = self._in_turn(group, request, checks, held, electing, waits)
        answer.add_done_callback(lambda _answer: logged())
        return answer

    def _in_turn(
        self,
        group: PipelineGroup,
        request: Request,
        checks: list[Callable[[], None]],
        held: Callable[[], bytes] | None,
        electing: bool,
        waits: list[asyncio.Future[None]],
    ) -> asyncio.Future[Response]:
        """A request past the leader's checks at its arrival: submitted at once when it waits for nothing
        (no check off the loop, no election, no earlier turn, no write's data stage), else in its turn
        (`_submit_in_turn`)."""
        turn = self._turns.get(request.pipelineID)
        if not checks and held is None and not waits and not electing and (turn is None or turn.done()):
            return asyncio.ensure_future(group.submit(request))
        if len(group.waiting) >= self.config.write_element_limit:
            return _refused(
                request, LogResult.RAFT_RETRY_FAILURE,
                f"pipeline {group.pipeline_id}: {len(group.waiting)} requests wait already "
                "(hdds.ratis.raft.server.write.element-limit)",
            )  # fmt: skip
        loop = asyncio.get_running_loop()
        mine: asyncio.Future[None] = loop.create_future()
        self._turns[request.pipelineID] = mine
        deadline = loop.time() + 2 * (self.config.election_timeout_ms + ELECTION_SPREAD_MS) / 1000
        group.waiting.add(mine)
        task = asyncio.ensure_future(
            self._submit_in_turn(group, request, checks, turn, mine, deadline, held, waits)
        )
        task.add_done_callback(lambda _task: self._end_turn(group, turn, mine))  # cancelled unstarted too
        return task

    async def _submit_in_turn(
        self,
        group: PipelineGroup,
        request: Request,
        checks: list[Callable[[], None]],
        previous: asyncio.Future[None] | None,
        mine: asyncio.Future[None],
        deadline: float,
        held: Callable[[], bytes] | None = None,
        waits: Sequence[asyncio.Future[None]] = (),
    ) -> Response:
        """Waits for the end of an election under way (every waiter at once, each until its own `deadline`:
        one election wait from its arrival), asks SCM off the event loop (a token's secret key, the
        container's allocation), then submits in arrival order: a pipeline's requests that came after one
        waiting for SCM wait for it too, so a block's chunks and its PutBlock stay in order. A refusal
        answers the client and leaves the pipeline healthy. Cancelling a request (its client went away)
        never cancels another's turn: the previous turn is awaited without being cancelled, and a request
        that ends early passes its turn on once the previous one is done. `held`: a putBlock's check of
        this leader's own streamed bytes (`vouching.held_by_stream`), refused before anything is logged
        when they are not what it names; what it returns is the entry's data. `waits`: a putBlock naming
        chunks of writes this leader is logging: the ends of their data stages here, which it waits for
        before it decides what it vouches for (`ContainerStateMachine.logging`)."""
        try:
            if group.leader_id is None:  # an election under way (a new pipeline): wait for its end
                await group.leader_known(deadline)
            if not group.is_leader and group.failure is None:
                return not_leader(request, group.pipeline_id, self.self_id, group.leader_id)
            if previous is not None:
                await asyncio.wait([previous])
            if not group.is_leader and group.failure is None:
                return not_leader(request, group.pipeline_id, self.self_id, group.leader_id)
            if is_watch(request):
                answer = asyncio.ensure_future(group.watch(request))
                checks = []
            for check in checks:
                try:
                    await asyncio.get_running_loop().run_in_executor(self.executor, check)
                except Refused as e:
                    return answer_with(request, e.result, str(e))
                except ContainerError as e:
                    return refusal(request, e.result, str(e.args[0]))
            if waits and group.failure is None:
                await asyncio.wait(waits)
                held = held_by_stream(self.dispatcher.containers, request, group.machine.uncarried)
            data = b""
            if held is not None:
                try:
                    data = await asyncio.get_running_loop().run_in_executor(self.executor, held)
                except Refused as e:
                    return answer_with(request, e.result, str(e))
                except ContainerError as e:
                    return refusal(request, e.result, str(e.args[0]))
                except ProtocolError as e:
                    return refusal(request, LogResult.MALFORMED_REQUEST, str(e))
            if not is_watch(request):
                answer = asyncio.ensure_future(group.submit(request, data))
        finally:
            self._end_turn(group, previous, mine)
        return await answer

    def _end_turn(
        self, group: PipelineGroup, previous: asyncio.Future[None] | None, mine: asyncio.Future[None]
    ) -> None:
        """A request's turn ends (once): at once when the previous one is over, else when it is, so a
        request answered or cancelled early never lets the next one go ahead of an earlier one."""
        if mine not in group.waiting:
            return
        group.waiting.discard(mine)

        def done(_previous: object = None) -> None:
            if not mine.done():
                mine.set_result(None)
            if self._turns.get(group.pipeline_id) is mine:
                del self._turns[group.pipeline_id]

        if previous is None or previous.done():
            done()
        else:
            previous.add_done_callback(done)

    async def close(self) -> None:
        """Stops every member, then the RATIS port."""
        groups, self._groups = list(self._groups.values()), {}
        await asyncio.gather(*(g.close() for g in groups), return_exceptions=True)
        await self.divisions.stop()


def blocks_in_logs(directory: Path) -> Callable[[BlockID], bool]:
    """Before the members start (before `ContainerSet` discards uncommitted block files): whether a block is
    named by an entry of a pipeline log under `directory` (R16 D2: bytes a member acknowledged through its
    log, whose putBlock its replay is still to apply, must not be removed). A log that cannot be read
    keeps every block (its member will not start: nothing is decided about its blocks here)."""
    named: set[BlockID] = set()
    if not directory.is_dir():
        return named.__contains__
    for group_dir in directory.iterdir():
        if not group_dir.is_dir():
            continue
        try:
            named |= logged_blocks(stored_entries(group_dir))
        except (StoreError, OSError) as e:
            log.error("%s: its log cannot be read (%s): no uncommitted block file is removed", group_dir, e)
            return lambda _block: True
    return named.__contains__


def _has_log(directory: Path) -> bool:
    """Whether a group's directory holds its member's log (some file under `current`: its metadata, a
    segment)."""
    current = directory / CURRENT_DIR
    return current.is_dir() and any(p.is_file() for p in current.iterdir())


def _count_sent(peer: RaftPeerId, nbytes: int) -> None:
    """A pipeline's messages to a peer, chunk data included, are write pipeline V1's traffic (`/traffic`)."""
    TRAFFIC.sent(peer.id, "V1", nbytes)


def _by_member(infos: CommitInfos) -> dict[str, int]:
    return {peer.id: index for peer, index in infos}


def _refused(request: Request, result: str, message: str) -> asyncio.Future[Response]:
    """`request` refused with the Result of this name (a LogResult, a storage Result)."""
    return _done(refusal(request, result, message))


def _done(response: Response) -> asyncio.Future[Response]:
    future: asyncio.Future[Response] = asyncio.get_running_loop().create_future()
    future.set_result(response)
    return future
