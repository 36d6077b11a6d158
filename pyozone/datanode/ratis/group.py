"""RaftGroup: one pipeline's leader-ordered log on one member (the part of Ratis write pipeline V1 uses).

The leader gives every client write (writeChunk, putBlock, putSmallFile, finalizeBlock, closeContainer)
the next log index in arrival order, applies it locally and sends it to every follower on one ordered
stream each; it answers the client once a majority of members applied the entry (Ratis' MAJORITY
commit), after waiting a little for the rest (LAST_MEMBER_WAIT; a putSmallFile, a small key's whole block,
waits for every live member), so the client rarely needs a watch. A member
applies an entry by running it through the dispatcher, which writes chunk data into the block file and
commits a putBlock at BCSID = its log index, then appends the metadata to its RaftLog. So a replica's
BCSID is the index of the last putBlock it applied, and `watch(index, ALL_COMMITTED)` tells a client
that every replica has its data.

Entries for different containers are applied in parallel (Ozone's ContainerStateMachine does the same);
entries for one container, log appends and acknowledgements keep index order, so a putBlock always
sees its chunks and a member's applied index only ever covers a gap-free prefix of the log.

What pyozone leaves out of Raft, and why that is safe here: the leader is the one SCM suggested and
there are no elections (term stays 1). A leader's failure is found by SCM (the node goes stale and its
pipelines close) and a follower's by the leader (its stream breaks or it stops answering within
hdds.ratis.raft.server.rpc.request.timeout), which then asks SCM to close the pipeline. A failed member
is never caught up: the pipeline is closed and its containers close or quasi-close, as Ozone's SCM does
after a pipeline action. Because an entry is never overwritten, a follower applies what it receives at
once instead of waiting for the commit index.

A member counts an entry as applied when the dispatcher answered SUCCESS or a refusal every member may
reach alike for the same entry (protocol.ratis.DETERMINISTIC: the entry is then a no-op everywhere), except
on a follower when the leader applied the entry, and a follower's SUCCESS does not count when the leader's
healthy replica refused the entry so (either way that replica has diverged, see RaftGroup._judge); any
other failure (IO_EXCEPTION, DISK_OUT_OF_SPACE, ...) is the member's own: it has failed the pipeline. (A
leader without room for a write's new container refuses the write before it enters the log,
Dispatcher.check_writable, so a full disk does not fail its pipelines.) Every message is built and read in
pyozone.protocol.ratis: the group works with indexes, member ids and Result numbers.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from typing import TYPE_CHECKING

from pyozone.common.tls import TlsStore
from pyozone.datanode.pipelines import Membership
from pyozone.datanode.ratis.appender import LogAppender
from pyozone.datanode.ratis.log import RaftLog
from pyozone.protocol.data import result_name
from pyozone.protocol.ratis import (
    AppendReply,
    LogResult,
    Watch,
    applied_reply,
    commits,
    committed_answer,
    encode_entry,
    is_put_small_file,
    refusal,
    refused_alike,
    refused_reply,
    succeeded,
    unhealthy,
    watch_answer,
)

if TYPE_CHECKING:
    from pyozone.proto.DatanodeClientProtocol_pb2 import ContainerCommandRequestProto as Request
    from pyozone.proto.DatanodeClientProtocol_pb2 import ContainerCommandResponseProto as Response

log = logging.getLogger(__name__)

TERM = 1
MAX_FOLLOWER_LAG = 32
"""A leader answers entry i only once every live follower applied i - MAX_FOLLOWER_LAG: a slow follower
then slows clients down instead of piling up their data in the leader's memory."""
LAST_MEMBER_WAIT = 1.0
"""Once a majority applied an entry, the leader waits for the other members at most this many times as
long as the majority took, then answers. Ratis answers at the majority; a client that wants every replica
(watch ALL_COMMITTED, Ozone's default) then asks again with a watch, a round trip that costs a small key
about a fifth of its time (benchmarks/small_keys.py) when the last member is only a little behind; an
answer whose commitInfos show every member at the entry needs none. A member that failed is not waited
for, and a client that watches MAJORITY_COMMITTED waits at most this much longer."""
LAST_MEMBER_WAIT_MAX_S = 0.5
"""The wait for the last member is as long again as the majority took, at most this (and never past half
the request timeout), so a slow majority cannot push an answer past the client's deadline. A putSmallFile
(a small key's whole block in one entry) waits for every live member up to half the request timeout: the
key is committed only once every replica applied it, and an answer that shows so saves its client the
watch. A member that fails meanwhile is not waited for; the answer's commitInfos then show it behind and
the client's watch fails (NOT_REPLICATED)."""

Apply = Callable[["Request", int], "Response"]


class RaftGroup:
    def __init__(
        self,
        membership: Membership,
        self_id: str,
        raft_log: RaftLog,
        *,
        apply: Apply,
        executor: Executor,
        on_failure: Callable[[str, str], None],
        watch_timeout_s: float,
        request_timeout_s: float,
        applied: int = 0,
        lost: Sequence[int] = (),
        unrecorded_losses: bool = False,
        tls: TlsStore | None = None,
    ) -> None:
        """`apply(request, index)` runs an entry through the dispatcher (blocking; run on `executor`).
        `on_failure(pipeline_id, reason)` asks SCM to close the pipeline. `applied` is the highest BCSID
        of this pipeline's containers here: above the log's last index, entries were applied but not
        logged when the datanode stopped, and the log cannot go on from its end. `lost`: containers this
        pipeline still writes to that went with a data volume while the datanode was down; the log cannot
        go on either, as this replica would miss their earlier blocks. `unrecorded_losses`: a data volume
        is failed and nothing says which containers it held; a log with history cannot go on either.
        `tls`: the datanode's certificate for a leader's streams to its followers (mutual TLS)."""
        self.pipeline_id = membership.pipeline_id
        self.members = membership.members
        self.self_id = self_id
        self.leader_id = membership.leader
        self.log = raft_log
        self._apply = apply
        self._executor = executor
        self._on_failure = on_failure
        self.watch_timeout_s = watch_timeout_s
        self.request_timeout_s = request_timeout_s
        # what the followers applied before a restart is unknown: they count from their next answer
        self.match = {m: raft_log.last_index if m == self_id else 0 for m in self.members}
        self.failed: dict[str, str] = {}
        self._next = raft_log.last_index + 1
        self._received = raft_log.last_index  # follower: the last entry taken from the leader
        self._log_tail: asyncio.Future[None] | None = None  # the last entry's log record written
        self._container_tail: dict[int, asyncio.Future[None]] = {}  # per container, its last entry applied
        self._synced_to = raft_log.last_index  # the log is fsynced up to this index
        self._syncing: asyncio.Future[None] | None = None
        self._closed = False
        self._waiters: list[tuple[Callable[[], bool], asyncio.Future[None]]] = []
        self._appenders: dict[str, LogAppender] = {}
        # leader: its own result per index until every live follower answered it, and follower answers
        # that came before the leader's own apply finished
        self._outcomes: dict[int, int] = {}
        self._early: dict[int, list[tuple[str, AppendReply]]] = {}
        self._judged_to = raft_log.last_index
        if self.is_leader:
            for member in self.members:
                if member != self_id:
                    self._appenders[member] = LogAppender(
                        member,
                        membership.address(member),
                        self._follower_replied,
                        self._member_failed,
                        request_timeout_s,
                        tls,
                    )
        if applied > raft_log.last_index:
            self._member_failed(
                self_id,
                f"restarted with entries up to {applied} applied but its log ending at {raft_log.last_index}",
            )
        elif lost:
            self._member_failed(self_id, f"restarted without its containers {list(lost)}, lost with a volume")
        elif unrecorded_losses and raft_log.last_index:
            self._member_failed(self_id, "restarted with a failed data volume: containers may be gone")

    @property
    def is_leader(self) -> bool:
        return self.leader_id == self.self_id

    @property
    def majority(self) -> int:
        return len(self.members) // 2 + 1

    @property
    def commit_index(self) -> int:
        return sorted(self.match.values(), reverse=True)[self.majority - 1]

    def majority_lost(self) -> bool:
        return len(self.failed) > len(self.members) - self.majority

    # ------------------------------------------------------------------ leader
    def submit(self, request: Request) -> asyncio.Future[Response]:
        """Orders the request now (its index is taken before this returns); the future is its answer."""
        if self._closed:  # the pipeline closed, and a request still reached it before it left its routes
            return _done(
                refusal(request, LogResult.RAFT_RETRY_FAILURE, f"pipeline {self.pipeline_id} closed")
            )
        if self.majority_lost() or self.self_id in self.failed:
            return _done(refusal(request, LogResult.RAFT_RETRY_FAILURE, self._failure_summary()))
        index, self._next = self._next, self._next + 1
        submitted = asyncio.get_running_loop().time()
        local = self._start_apply(request, index)
        live = [a for m, a in self._appenders.items() if m not in self.failed]
        if live:
            entry = encode_entry(self.pipeline_id, self.self_id, TERM, index, self.commit_index, request)
            for appender in live:
                appender.send(index, entry)
        return asyncio.ensure_future(self._answer(request, index, local, submitted))

    def _start_apply(self, request: Request, index: int) -> asyncio.Future[Response]:
        """Applies entry `index` once the previous entry of its container is applied and writes its log
        record after entry index - 1's; the future completes once that record is on disk when it must
        be. So a container's entries wait for each other's apply, not for each other's fsync."""
        cid = request.containerID
        loop = asyncio.get_running_loop()
        applied: asyncio.Future[None] = loop.create_future()
        logged: asyncio.Future[None] = loop.create_future()
        done = asyncio.ensure_future(
            self._apply_in_order(
                self._container_tail.get(cid), self._log_tail, (applied, logged), request, index
            )
        )
        self._container_tail[cid] = applied
        applied.add_done_callback(
            lambda f: self._container_tail.pop(cid) if self._container_tail.get(cid) is f else None
        )
        self._log_tail = logged
        return done

    async def _apply_in_order(
        self,
        same_container: asyncio.Future[None] | None,
        previous: asyncio.Future[None] | None,
        marks: tuple[asyncio.Future[None], asyncio.Future[None]],
        request: Request,
        index: int,
    ) -> Response:
        """`marks`: (applied, logged), set as this entry passes each step; set here when it fails or is
        cancelled first, so the entries after it go on."""
        try:
            return await self._apply_and_log(same_container, previous, marks, request, index)
        finally:
            for mark in marks:
                if not mark.done():
                    mark.set_result(None)

    async def _apply_and_log(
        self,
        same_container: asyncio.Future[None] | None,
        previous: asyncio.Future[None] | None,
        marks: tuple[asyncio.Future[None], asyncio.Future[None]],
        request: Request,
        index: int,
    ) -> Response:
        applied, logged = marks
        if same_container is not None:
            await asyncio.wait([same_container])
        loop = asyncio.get_running_loop()
        try:
            response = await loop.run_in_executor(self._executor, self._apply, request, index)
        except Exception as e:
            log.exception("pipeline %s: applying entry %d failed", self.pipeline_id, index)
            response = refusal(request, LogResult.IO_EXCEPTION, f"entry {index}: {e!r}")
        applied.set_result(None)
        if previous is not None:
            await asyncio.wait([previous])
        if self._closed:  # the pipeline went (or its log failed) while this entry was applied
            return response
        try:
            self.log.append(TERM, index, request)  # a small record: written in index order, on the loop
        except (OSError, ValueError) as e:
            return self._log_failed(request, index, e)
        finally:
            logged.set_result(None)
        if self._appenders:
            self._record_outcome(index, response.result)
        if commits(request):
            try:
                await self._synced(index)
            except (OSError, ValueError) as e:
                return self._log_failed(request, index, e)
        if succeeded(response.result) or refused_alike(response.result):
            self._advance(self.self_id, index)
        elif self.is_leader:
            self._member_failed(self.self_id, f"entry {index}: {result_name(response.result)}")
        return response

    def _log_failed(self, request: Request, index: int, e: Exception) -> Response:
        """A log that cannot be written (or synced) takes no more entries."""
        if isinstance(e, ValueError) and self._closed:  # closed while the entry awaited its fsync
            return refusal(request, LogResult.RAFT_RETRY_FAILURE, f"entry {index}: the pipeline closed")
        log.exception("pipeline %s: writing entry %d to the log failed", self.pipeline_id, index)
        self._member_failed(self.self_id, f"entry {index}: log write failed: {e!r}")
        self._closed = True  # no later entry is logged, judged or counted as applied here
        return refusal(request, LogResult.IO_EXCEPTION, f"entry {index}: log write failed: {e!r}")

    async def _answer(
        self,
        request: Request,
        index: int,
        local: asyncio.Future[Response],
        submitted: float,
    ) -> Response:
        # Shielded: a client that goes away cancels its answer, never the entry, which already has its
        # index; the log would otherwise have a gap and refuse every later entry.
        response = await asyncio.shield(local)
        if not (succeeded(response.result) or refused_alike(response.result)):
            return response
        committed = await self._wait_until(
            lambda: (
                (self.commit_index >= index and self._followers_within(index - MAX_FOLLOWER_LAG))
                or self.majority_lost()
                or self.self_id in self.failed
            ),
            self.request_timeout_s,
        )
        if self.commit_index < index:
            return refusal(
                request, LogResult.RAFT_RETRY_FAILURE,
                f"pipeline {self.pipeline_id}: entry {index} reached no majority"
                f"{' before the pipeline closed' if self._closed else '' if committed else ' in time'}"
                f" ({self._failure_summary()})",
            )  # fmt: skip
        if not self._all_applied(index):
            majority_took = asyncio.get_running_loop().time() - submitted
            wait = min(LAST_MEMBER_WAIT * majority_took, LAST_MEMBER_WAIT_MAX_S)
            if is_put_small_file(request):  # a whole small key: answered once every replica has it
                wait = self.request_timeout_s
            wait = min(wait, self.request_timeout_s / 2 - majority_took)  # the client's deadline stays far
            if wait > 0:
                await self._wait_until(lambda: self._all_applied(index), wait)
        return committed_answer(response, index, self.members, self.match)

    async def _synced(self, index: int) -> None:
        """Returns once the log is on disk up to `index`. One fsync covers every record written before it
        started (group commit): entries that arrive together share one, and the next starts only when
        it is done, covering all that came meanwhile."""
        while self._synced_to < index:
            if self._syncing is None:
                self._syncing = asyncio.ensure_future(self._sync(self.log.last_index))
            await asyncio.shield(self._syncing)

    async def _sync(self, upto: int) -> None:
        try:
            await asyncio.get_running_loop().run_in_executor(self._executor, self.log.sync)
            self._synced_to = max(self._synced_to, upto)
        finally:
            self._syncing = None

    def _all_applied(self, index: int) -> bool:
        """Every member that has not failed applied entry `index`."""
        return all(self.match[m] >= index or m in self.failed for m in self.members)

    def _followers_within(self, index: int) -> bool:
        return all(self.match[m] >= index for m in self._appenders if m not in self.failed)

    def watch(self, request: Request, watch: Watch) -> asyncio.Future[Response]:
        """Answers the watchForCommit `request` (read as `watch`) once it holds or cannot."""
        return asyncio.ensure_future(self._watch(request, watch))

    async def _watch(self, request: Request, watch: Watch) -> Response:
        index = watch.index
        if watch.majority:
            done = lambda: self.commit_index >= index  # noqa: E731
            hopeless = self.majority_lost
        else:
            done = lambda: min(self.match.values()) >= index  # noqa: E731
            hopeless = lambda: any(self.match[m] < index for m in self.failed)  # noqa: E731
        await self._wait_until(lambda: done() or hopeless(), self.watch_timeout_s)
        behind: str | None = None
        if not done():
            lagging = sorted(m for m in self.members if self.match[m] < index)
            behind = (
                f"pipeline {self.pipeline_id}: entry {index} not applied by {', '.join(lagging)}"
                f" ({self._failure_summary() or f'watch timed out after {self.watch_timeout_s:g} s'})"
            )
        return watch_answer(request, index, self.members, self.match, behind)

    def _record_outcome(self, index: int, result: int) -> None:
        """The leader's own result for entry `index`, recorded once the entry is logged, before its fsync:
        records are written in index order, so outcomes become known in index order too. A follower
        answers in index order (service.py), so each follower's answers are judged in index order and
        its match never passes an entry not yet judged."""
        self._outcomes[index] = result
        for member, reply in self._early.pop(index, ()):
            self._judge(member, reply, result)

    def _follower_replied(self, member: str, reply: AppendReply) -> None:
        """Judged against the leader's own result for the entry, once the leader has it (a follower
        may finish an entry first: entries of different containers apply in parallel)."""
        outcome = self._outcomes.get(reply.index)
        if outcome is None:
            self._early.setdefault(reply.index, []).append((member, reply))
        else:
            self._judge(member, reply, outcome)

    def _judge(self, member: str, reply: AppendReply, leader_result: int) -> None:
        """What the leader applied, every follower must have applied, and what the leader's healthy
        replica refused as all members would (DETERMINISTIC) no follower may have applied: the leader
        applies in parallel with its followers, so a follower's SUCCESS there left its replica different
        from the leader's, which nothing would repair (a putBlock of bytes only some members hold): that
        follower has failed, never agreed. Where the leader's own copy went UNHEALTHY (SCM replaces it
        from the healthy ones) or the leader failed itself (IO_EXCEPTION, ...: the pipeline goes), a
        follower's SUCCESS or alike refusal is fine. A failed member's later answers count for nothing."""
        if member in self.failed:
            return
        if succeeded(leader_result):
            agrees = succeeded(reply.result)
        elif refused_alike(leader_result) and not unhealthy(leader_result):
            agrees = refused_alike(reply.result)
        else:
            agrees = succeeded(reply.result) or refused_alike(reply.result)
        if not agrees:
            self._member_failed(
                member,
                f"entry {reply.index}: {result_name(reply.result)} where the leader had "
                f"{result_name(leader_result)}: {reply.message}",
            )
            return
        self._advance(member, reply.index)
        live = [self.match[m] for m in self._appenders if m not in self.failed]
        while live and self._judged_to < min(live):  # every live follower answered: forget the outcome
            self._judged_to += 1
            self._outcomes.pop(self._judged_to, None)

    # ------------------------------------------------------------------ follower
    def receive(self, leader_id: str, index: int, entry: Request) -> asyncio.Future[AppendReply]:
        """Takes entry `index` from leader `leader_id` (entries must come without gaps) and starts
        applying it; the answer completes once it and every earlier entry are applied."""
        if leader_id != self.leader_id or leader_id == self.self_id:
            return _done_reply(
                index,
                LogResult.GROUP_MISMATCH,
                f"pipeline {self.pipeline_id}: the leader here is {self.leader_id}",
            )
        if index != self._received + 1:
            return _done_reply(
                index, LogResult.RAFT_RETRY_FAILURE,
                f"pipeline {self.pipeline_id}: entry {index} after {self._received}",
            )  # fmt: skip
        self._received = index
        return asyncio.ensure_future(self._reply(index, self._start_apply(entry, index)))

    @staticmethod
    async def _reply(index: int, applied: asyncio.Future[Response]) -> AppendReply:
        response = await asyncio.shield(applied)  # a broken stream must not leave a gap in the log
        return applied_reply(index, response)

    # ------------------------------------------------------------------ shared
    def fail(self, reason: str) -> None:
        """This member can no longer keep the pipeline's replicas (e.g. a container lost with a volume)."""
        self._member_failed(self.self_id, reason)

    def _advance(self, member: str, index: int) -> None:
        if index > self.match[member]:
            self.match[member] = index
            self._notify()

    def _member_failed(self, member: str, reason: str) -> None:
        if member in self.failed:
            return
        self.failed[member] = reason
        log.warning(
            "pipeline %s: member %s failed: %s; asking SCM to close it", self.pipeline_id, member, reason
        )
        appender = self._appenders.get(member)
        if appender is not None:
            appender.close()
        self._on_failure(self.pipeline_id, f"member {member} failed: {reason}")
        self._notify()

    def _failure_summary(self) -> str:
        return "; ".join(f"{m}: {why}" for m, why in sorted(self.failed.items()))

    def _notify(self) -> None:
        still = []
        for predicate, future in self._waiters:
            if future.done():
                continue
            if predicate():
                future.set_result(None)
            else:
                still.append((predicate, future))
        self._waiters = still

    async def _wait_until(self, predicate: Callable[[], bool], timeout_s: float) -> bool:
        """True once `predicate` holds (rechecked at every change); False after `timeout_s`. A closed group
        changes no more: it answers at once (close() woke the waits it had; none may start after it)."""
        if predicate() or self._closed:
            return predicate()
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append((predicate, future))
        try:
            await asyncio.wait_for(future, timeout_s)
            return True
        except TimeoutError:
            return predicate()

    async def close(self) -> None:
        self._closed = True
        for appender in self._appenders.values():
            appender.close()
        await asyncio.gather(*(a.wait_closed() for a in self._appenders.values()), return_exceptions=True)
        for _, future in self._waiters:  # woken, each sees the pipeline closed and answers with a refusal
            if not future.done():
                future.set_result(None)
        self._waiters = []
        await asyncio.get_running_loop().run_in_executor(self._executor, self.log.close)


def _done_reply(index: int, result: LogResult, message: str) -> asyncio.Future[AppendReply]:
    future: asyncio.Future[AppendReply] = asyncio.get_running_loop().create_future()
    future.set_result(refused_reply(index, result, message))
    return future


def _done(response: Response) -> asyncio.Future[Response]:
    future: asyncio.Future[Response] = asyncio.get_running_loop().create_future()
    future.set_result(response)
    return future
