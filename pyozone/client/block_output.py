"""BlockOutputStream: one block written through its pipeline's leader (Ozone's RatisBlockOutputStream).

Each full buffer (ozone.client.stream.buffer.size) goes out as a writeChunk without waiting for its
answer; every flush.size / buffer.size chunks a putBlock lists all chunks so far, and a background task
waits for its answer and then watches its log index ALL_COMMITTED (skipped when the answer's commitInfos
already show every member at that index). Only a watched putBlock acknowledges data: until then the
chunks stay in memory, because a failure means rewriting them elsewhere. When the unacknowledged bytes
would pass ozone.client.stream.buffer.max.size the writer waits for the oldest watch.

An ALL_COMMITTED watch the leader answers NOT_REPLICATED (a follower died or lags past the datanode's
hdds.ratis.raft.server.watch.timeout) still acknowledges the putBlock, which a majority committed before it
was answered: the members its commitInfos show below the index become the block's failed servers, and the
block goes on in its pipeline, its later watches MAJORITY_COMMITTED (Ozone's XceiverClientRatis.watchForCommit
"3 way commit failed", handleFailedAllCommit; BlockOutputStream.failedServers). KeyOutputStream excludes the
failed servers from the next allocations.

Watches go on a second stream to the leader, so a slow watch never holds up the answers to writes; a watch
is given hdds.ratis.raft.client.rpc.watch.request.timeout, longer than the datanode's own wait.

A NOT_LEADER naming another member of the pipeline (a leader change: Ratis's NotLeaderException with its
suggested leader) moves the block to that member: every request not answered yet is sent to it again, in
order, and so are the watches, as Ozone's XceiverClientRatis follows the suggested leader in the same
pipeline (resending is safe: every logged container op is idempotent at apply). A NOT_LEADER naming none (its
leader stepped down: a vote, a lost majority) or a leader that stopped answering (killed, hung past the
request timeout) sends them to the next member in turn, which leads or names the leader, as Ratis's
RaftClient tries another peer when no leader is suggested. The failovers of a block are bounded by
hdds.ratis.client.multilinear.random.retry.policy (retry.LeaderFailover); every member unreachable in turn
ends them too, a member counting as unreachable once it named a leader this block found unreachable on
ELECTION_TURNS asks (such a NOT_LEADER is as one naming none). Any other failure (a refusal other than
NOT_LEADER: the pipeline or container closed) becomes a BlockFailure saying what to exclude;
KeyOutputStream decides what happens next.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from dataclasses import dataclass, field, replace
from enum import Enum
from time import perf_counter
from typing import TYPE_CHECKING, Any

from pyozone.client import steps
from pyozone.client.config import ClientConfig
from pyozone.framework.datanode import ChannelPool, DatanodeCallError, XceiverStream
from pyozone.hdds.checksum import ChecksumData, compute
from pyozone.hdds.locations import DatanodeRef, KeyLocation
from pyozone.protocol import data as wire
from pyozone.protocol.chunks import chunk_info_to_proto

if TYPE_CHECKING:
    from collections.abc import Mapping

    from pyozone.proto.DatanodeClientProtocol_pb2 import BlockData, ChunkInfo
    from pyozone.protocol.data import Request, Response

CONTAINER_RESULTS = frozenset(
    {"CLOSED_CONTAINER_IO", "CONTAINER_NOT_OPEN", "CONTAINER_UNHEALTHY", "INVALID_CONTAINER_STATE"}
)
PIPELINE_RESULTS = frozenset({"GROUP_MISMATCH", "NOT_LEADER", "RAFT_RETRY_FAILURE"})
ELECTION_TURNS = 2
"""A member naming a leader this block found unreachable on this many asks in a row (a turn of the other
members between them, each after its failover sleep) is a dead end: a dead leader's followers elect another
within a turn (about 1 s end to end); a client cut off from a live leader would bounce between its
followers, each naming it, for the whole failover policy (16 min of sleeps by Ozone's default)."""
STREAM_IDLE = "STREAM_IDLE"
"""The client's name for a datastream its datanode closed unasked, after no packet came for its idle
timeout (datanode/datastream/write.py): the writer paused, nothing failed."""


class FailureKind(Enum):
    """What a failure says about where not to write next (KeyOutputStream.handleException)."""

    CONTAINER = "container"  # the container cannot take writes: exclude it
    NOT_REPLICATED = "not replicated"  # some members lag: exclude them and the pipeline
    PIPELINE = "pipeline"  # the pipeline (or its leader) failed: exclude the pipeline
    IDLE = "idle"  # the datanode closed a paused datastream: end the block, exclude nothing


class BlockFailure(Exception):
    def __init__(self, kind: FailureKind, result: str, message: str, datanodes: tuple[str, ...] = ()) -> None:
        super().__init__(f"{result}: {message}")
        self.kind = kind
        self.result = result
        self.message = message
        self.datanodes = datanodes  # uuids to exclude


@dataclass(frozen=True, slots=True)
class _Flush:
    end: int  # block bytes covered by this putBlock
    task: asyncio.Task[None]


@dataclass(eq=False, slots=True)
class _Sent:
    """A writeChunk, putBlock or putSmallFile sent and not answered yet: where it went last (`moves`: the
    block's failovers then) and the future of that answer."""

    request: Request
    stream: XceiverStream
    answer: asyncio.Future[Response] = field(repr=False)
    moves: int


def _succeeded(answer: asyncio.Future[Response]) -> bool:
    """Whether `answer` came, SUCCESS."""
    if not answer.done() or answer.cancelled() or answer.exception() is not None:
        return False
    return wire.refusal(answer.result()) is None


Answer = _Sent | asyncio.Future["Response"]
"""What a flush waits for: a request sent (`_Sent`), or a V2 packet's ack (datastream.py)."""


def classify(error: DatanodeCallError, location: KeyLocation, index: int = 0) -> BlockFailure:
    text = f"{error.datanode.address}: {error.message}"
    if error.unreachable:
        return BlockFailure(FailureKind.PIPELINE, error.result, text, (error.datanode.uuid,))
    if error.result in CONTAINER_RESULTS:
        return BlockFailure(FailureKind.CONTAINER, error.result, text)
    if error.result == STREAM_IDLE:
        return BlockFailure(FailureKind.IDLE, error.result, text)
    if error.result == "NOT_REPLICATED":
        infos = error.commit_indexes
        members = [m.uuid for m in location.pipeline.members] or list(infos)
        behind = tuple(m for m in members if infos.get(m, 0) < index)
        return BlockFailure(FailureKind.NOT_REPLICATED, error.result, text, behind)
    if error.result in PIPELINE_RESULTS:
        return BlockFailure(FailureKind.PIPELINE, error.result, text)
    # Any other refusal is the container's (Ozone's StorageContainerException): write elsewhere.
    return BlockFailure(FailureKind.CONTAINER, error.result, text)


Data = bytes | memoryview


class PendingBytes:
    """What a writer accepted and has not sent, as the caller's own buffers: `bytes` (or a view of bytes)
    is kept as it is, anything else is copied once, since its owner may change it before the data is
    acknowledged (a read-only view proves nothing: io.BufferedWriter hands out read-only views of the
    buffer it refills). A chunk is a slice of one buffer (no copy) unless it spans two."""

    def __init__(self) -> None:
        self.views: deque[memoryview] = deque()
        self._length = 0

    def __len__(self) -> int:
        return self._length

    def add(self, data: bytes | bytearray | memoryview) -> None:
        view = memoryview(data).cast("B")
        if not isinstance(view.obj, bytes):
            view = memoryview(bytes(view))
        if view:
            self.views.append(view)
            self._length += len(view)

    def peek(self, size: int) -> Data:
        """The first `size` bytes (fewer when fewer are pending), without taking them."""
        first = self.views[0]
        if len(first) >= size:
            return first[:size]
        want = min(size, self._length)
        parts: list[memoryview] = []
        done = 0
        for view in self.views:
            n = min(len(view), want - done)
            parts.append(view[:n])
            done += n
            if done == want:
                break
        return b"".join(parts)  # the one copy a chunk spanning buffers needs

    def drop(self, size: int) -> None:
        self._length -= size
        while size:
            first = self.views[0]
            if len(first) > size:
                self.views[0] = first[size:]
                return
            self.views.popleft()
            size -= len(first)


class BlockOutputStream:
    PATH = "V1"
    SMALL_FILE = True
    """A block of one chunk goes out as one putSmallFile (Ozone's ContainerProtocolCalls.writeSmallFile): one
    request and one pipeline log entry that writes the chunk and commits the block on every replica."""
    ASKS_PEERS = True
    """A NOT_LEADER naming no leader, or the leader unreachable, sends the block's requests to the next member
    (False: only a named leader is followed)."""

    def __init__(
        self, location: KeyLocation, config: ClientConfig, pool: ChannelPool, *, replica_index: int = 0
    ) -> None:
        """`replica_index`: an EC block's index on this datanode (1..data+parity), 0 for a replicated one."""
        self.location = location
        self.replica_index = replica_index
        self.block_metadata: dict[str, str] = {}
        """BlockData.metadata of the next putBlock (an EC index's "blockGroupLen")."""
        self._config = config
        self._pool = pool
        self._leader = location.pipeline.leader()
        """Where the block's requests go: the pipeline's leader as OM named it, then as a NOT_LEADER did."""
        self._moves = 0  # failovers to another member
        self._unreachable: set[str] = set()
        """The members whose last request failed unreachable (any answer, a refusal too, takes one out)."""
        self._naming_unreachable: dict[str, int] = {}
        """Per member, its NOT_LEADERs in a row naming a leader this block found unreachable (a client cut
        off from a live leader; a dead leader before its followers elected another)."""
        self._moving = asyncio.Lock()
        self._in_flight: deque[_Sent] = deque()  # sent, not answered yet, in order
        self.failover_s = 0.0
        """The time the failovers took, from the NOT_LEADER that started each to its requests resent."""
        self._chunk_size = config.buffer_size
        self._chunks_per_flush = config.chunks_per_flush
        self._max_unacked = config.max_size
        self._streams: dict[str, XceiverStream] = {}
        self._chunks: list[ChunkInfo] = []
        """The records of the chunks sent (protocol/chunks.py's chunk_info_to_proto), listed by every
        putBlock."""
        self._unacked: deque[tuple[int, Data]] = deque()  # (offset in block, data) sent, not acknowledged
        self._pending = PendingBytes()  # accepted, not sent yet
        self._chunk_answers: list[Answer] = []
        self._flushes: deque[_Flush] = deque()
        self._failure: BlockFailure | None = None
        self._put_phase: asyncio.Future[bool] | None = None  # the last flush's writes all succeeded
        self.sent = 0  # bytes sent as writeChunk
        self.acked = 0  # bytes acknowledged by a watched putBlock
        self.acked_bcsid = 0
        self.failed_servers: set[str] = set()
        """Members found below a watched index once an ALL_COMMITTED watch failed: no longer waited for in
        this block, excluded from the key's next allocations (Ozone's BlockOutputStream.failedServers)."""

    # ------------------------------------------------------------------ state
    @property
    def failure(self) -> BlockFailure | None:
        """The first failure this block met, if any."""
        return self._failure

    @property
    def length(self) -> int:
        return self.sent + len(self._pending)

    def retained(self) -> bytes:
        """Every byte not acknowledged, in order: what a retry rewrites to a new block."""
        return b"".join([*(d for off, d in self._unacked if off >= self.acked), *self._pending.views])

    def committed(self, key_offset: int) -> KeyLocation:
        """This block as commitKey lists it: its acknowledged length and BCSID."""
        return replace(self.location, bcsid=self.acked_bcsid, offset=key_offset, length=self.acked)

    # ------------------------------------------------------------------ writing
    def accept(self, data: bytes | memoryview) -> None:
        """Takes bytes into the block (they are retained until acknowledged); `emit` sends them."""
        self._pending.add(data)

    async def emit(self, final: bool = False) -> None:
        """Sends every full buffer; with `final` the rest too, the last putBlock (eof) and waits until
        all of it is acknowledged. Raises BlockFailure."""
        self._raise_failure()
        size = self._chunk_size
        small_file = False
        pending = self._pending
        while len(pending) >= size or (final and len(pending)):
            await self._make_room(min(size, len(pending)))  # may raise: the bytes stay buffered
            chunk = pending.peek(size)
            last = final and len(pending) <= size  # the eof putBlock below covers it
            small_file = self.SMALL_FILE and last and not self._chunks
            self._write_chunk(chunk, small_file=small_file)  # may raise: the bytes stay buffered
            pending.drop(len(chunk))
            if len(self._chunk_answers) >= self._chunks_per_flush and not last:
                self._flush(eof=False)
        if final:
            if self._chunks and not small_file:
                self._flush(eof=True)
            while self._flushes:
                await self._await_oldest()
            self._raise_failure()

    def _stream(self, name: str) -> XceiverStream:
        stream = self._streams.get(name)
        if stream is None:
            leader = self._leader
            if leader is None:
                raise BlockFailure(
                    FailureKind.PIPELINE, "NO_LEADER", f"pipeline {self.location.pipeline.id} has no members"
                )
            timeout_s = self._config.watch_timeout_s if name == "watch" else self._config.request_timeout_s
            try:
                stream = self._pool.stream(leader, timeout_s)
            except DatanodeCallError as e:
                raise classify(e, self.location) from None
            self._streams[name] = stream
        return stream

    def _request(self, kind: int, **body: Any) -> Request:
        """A request of command `kind` about this block (the datastream writer's putBlock)."""
        return wire.container_request(kind, self.location, **body)

    def _block_data(self, chunks: list[ChunkInfo], size: int) -> BlockData:
        """What a putBlock records: the block's chunks so far, its length and metadata."""
        return wire.block_data(self.location, self.replica_index, chunks, size, self.block_metadata)

    def _write_chunk(self, data: Data, small_file: bool = False, sums: ChecksumData | None = None) -> None:
        """Sends one chunk (`sums`: its checksums when the caller computed them); with `small_file` the
        block's only chunk, as a putSmallFile that also commits the block and is watched like a putBlock.
        Nothing changes when it raises (no stream to the leader): the caller keeps the bytes, so a retry
        rewrites them."""
        stream = self._stream("data")
        if sums is None:
            sums = compute(data, self._config.checksum_type, self._config.bytes_per_checksum)
        name = f"{self.location.local_id}_chunk_{len(self._chunks) + 1}"
        chunk = chunk_info_to_proto(name, self.sent, len(data), sums)
        # protobuf holds bytes only: V1's one copy of the data, into its request.
        if small_file:
            request = wire.put_small_file_request(
                self.location, self.replica_index, chunk, data, self.block_metadata
            )
        else:
            request = wire.write_chunk_request(self.location, self.replica_index, chunk, data)
        answer = self._send(stream, request)
        self._chunks.append(chunk)
        self._unacked.append((self.sent, data))
        self.sent += len(data)
        if small_file:
            self._track(answer)
        else:
            self._chunk_answers.append(answer)

    def _flush(self, eof: bool) -> None:
        """putBlock of every chunk so far; its answer and watch run in a task."""
        request = wire.put_block_request(
            self.location, self.replica_index, self._chunks, self.sent, self.block_metadata, eof
        )
        self._track(self._send(self._stream("data"), request))

    def _send(self, stream: XceiverStream, request: Request) -> _Sent:
        sent = _Sent(request, stream, stream.submit(request), self._moves)
        self._in_flight.append(sent)
        return sent

    async def _answer(self, sent: Answer) -> Response:
        """The answer to `sent` (SUCCESS), followed to the leader a NOT_LEADER names; DatanodeCallError. A
        V2 packet's ack is only checked: the datastream does not fail over."""
        if isinstance(sent, asyncio.Future):
            return await self._stream("data").wait(sent)
        try:
            while True:
                stream, answer, moves = sent.stream, sent.answer, sent.moves
                try:
                    response = await stream.wait(answer)
                except DatanodeCallError as e:
                    if not await self._fail_over(moves, e):
                        raise
                else:
                    self._answered(stream.datanode.uuid)
                    return response
        finally:
            self._in_flight.remove(sent)

    async def _fail_over(self, moves: int, error: DatanodeCallError) -> bool:
        """After `error` from the leader of failover `moves`: whether the block's requests now go to another
        member (resent in order there, by whichever waiter got here first)."""
        async with self._moving:
            if moves != self._moves:  # another answer moved the block already
                return True
            target = self._next_leader(error)
            if target is None:
                return False
            delay = self._config.leader_failover.delay(self._moves + 1)
            if delay is None:
                return False
            started = perf_counter()
            if delay:
                await asyncio.sleep(delay)
            return await self._move(target, started)

    def _next_leader(self, error: DatanodeCallError) -> DatanodeRef | None:
        """Where the block's requests go after `error`: the member a NOT_LEADER names; else (none named, or
        the leader unreachable) the next member after the current one whose last request did not fail
        unreachable (Ratis's RaftClientImpl.handleIOException picks another peer when no leader is
        suggested); None for any other refusal, or when every member is unreachable."""
        members = self.location.pipeline.members
        asked = error.datanode.uuid
        if error.unreachable:
            self._unreachable.add(asked)
        elif error.result == "NOT_LEADER":
            self._unreachable.discard(asked)
            named = next((m for m in members if m.uuid == error.leader), None)
            if named is not None and named.uuid in self._unreachable:  # as if none were named
                self._naming_unreachable[asked] = self._naming_unreachable.get(asked, 0) + 1
            else:
                self._naming_unreachable.pop(asked, None)
                if named is not None and named != self._leader:
                    return named
        else:
            return None
        if not self.ASKS_PEERS or self._leader is None or self._leader not in members:
            return None
        at = members.index(self._leader)
        turn = [*members[at + 1 :], *members[:at]]
        return next((m for m in turn if self._may_lead(m.uuid)), None)

    def _may_lead(self, uuid: str) -> bool:
        """Whether a turn asks this member: not unreachable, nor a dead end that named a leader this block
        found unreachable again after a whole turn (ELECTION_TURNS), long enough for a dead leader's
        followers to elect another: a client cut off from a live leader ends its failovers there."""
        return uuid not in self._unreachable and self._naming_unreachable.get(uuid, 0) < ELECTION_TURNS

    def _answered(self, uuid: str) -> None:
        """A member answered SUCCESS: it is reachable and leads."""
        self._unreachable.discard(uuid)
        self._naming_unreachable.pop(uuid, None)

    async def _move(self, target: DatanodeRef, started: float) -> bool:
        """Sends every request not answered yet to `target`, in order (its watches follow on their own),
        before anything else can: a chunk the writer sends meanwhile must follow them, or the leader would
        write it first and the resent chunks before it would find the gap's zeros changed."""
        old, self._streams = list(self._streams.values()), {}
        self._leader = target
        self._moves += 1
        try:
            stream: XceiverStream | None = self._stream("data")
        except BlockFailure:
            stream = None
        if stream is not None:
            for sent in self._in_flight:
                if not _succeeded(sent.answer):  # one answered SUCCESS (applied) is only to be read
                    sent.stream, sent.answer, sent.moves = stream, stream.submit(sent.request), self._moves
            self.failover_s += perf_counter() - started
        for done in old:
            await done.close()
        return stream is not None

    def _track(self, answer: Answer) -> asyncio.Task[None]:
        """Checks a putBlock's answer (and the chunks before it) and watches its index, in a task."""
        chunk_answers, self._chunk_answers = self._chunk_answers, []
        previous, phase = self._put_phase, asyncio.get_running_loop().create_future()
        self._put_phase = phase
        task = asyncio.get_running_loop().create_task(
            self._complete(previous, phase, chunk_answers, answer, self.sent, perf_counter())
        )
        task.add_done_callback(lambda t: t.cancelled() or t.exception())
        self._flushes.append(_Flush(self.sent, task))
        return task

    async def _complete(
        self,
        previous: asyncio.Future[bool] | None,
        phase: asyncio.Future[bool],
        chunk_answers: list[Answer],
        answer: Answer,
        end: int,
        sent_at: float,
    ) -> None:
        """Checks the chunks and putBlock of one flush, then watches its index. `previous` says whether the
        earlier flush's writes all succeeded: a putBlock after a failed writeChunk lists a chunk that may
        not exist, so it acknowledges nothing even when the datanode took it. `sent_at`: when the putBlock
        went out (perf_counter), for a steps recording."""
        recording = steps.current()
        ok = False
        try:
            if previous is not None and not await previous:
                assert self._failure is not None
                raise self._failure
            for chunk_answer in chunk_answers:
                await self._answer(chunk_answer)
            response = await self._answer(answer)
            ok = True
        except DatanodeCallError as e:
            raise self._failed(classify(e, self.location)) from None
        finally:
            if not phase.done():
                phase.set_result(ok)
        if recording is not None:
            recording.add("write", sent_at)
        index = wire.committed_index(response)
        if not self._replicated(wire.commit_indexes(response), index):
            watched_at = perf_counter()
            try:
                await self._watch(index)
            except DatanodeCallError as e:
                raise self._failed(classify(e, self.location, index)) from None
            if recording is not None:
                recording.add("watchForCommit", watched_at)
        # A later putBlock covers at least the bytes of an earlier one (a datanode without a pipeline log
        # answers index 0: then the length decides).
        if index > self.acked_bcsid or (index == 0 and end > self.acked):
            self.acked, self.acked_bcsid = end, index
            while self._unacked and self._unacked[0][0] + len(self._unacked[0][1]) <= end:
                self._unacked.popleft()

    def _failed(self, failure: BlockFailure) -> BlockFailure:
        """Records the block's first failure; a pipeline's names the members found unreachable while its
        leader was sought too, to exclude (Ozone's XceiverClientRatis.getFailedServers)."""
        if failure.kind is FailureKind.PIPELINE and self._unreachable:
            failure.datanodes = tuple(dict.fromkeys([*failure.datanodes, *sorted(self._unreachable)]))
        self._failure = self._failure or failure
        return failure

    def _replicated(self, applied: Mapping[str, int], index: int) -> bool:
        """Whether the members that applied log `index` (`applied`: each member's applied index) are enough:
        all but the failed servers when hdds.ratis.client.request.watch.type is ALL_COMMITTED (Ozone's
        getReplicatedMinCommitIndex over the members it still tracks), else a majority."""
        members = [m.uuid for m in self.location.pipeline.members] or list(applied)
        if not members:
            return False
        if not self._config.watch_all:
            return sum(applied.get(m, 0) >= index for m in members) > len(members) // 2
        tracked = [m for m in members if m not in self.failed_servers]
        return bool(tracked) and all(applied.get(m, 0) >= index for m in tracked)

    async def _watch(self, index: int) -> None:
        """WatchForCommit of `index` on the leader: ALL_COMMITTED, or MAJORITY_COMMITTED by the watch type
        or once a member failed in this block. An ALL_COMMITTED watch answered NOT_REPLICATED acknowledges
        the index all the same (the putBlock was answered once a majority committed it) and records the
        members its commitInfos show below it as failed servers (Ozone's XceiverClientRatis.watchForCommit
        and handleFailedAllCommit); so does a MAJORITY_COMMITTED one after a failure."""
        all_committed = self._config.watch_all and not self.failed_servers
        request = wire.watch_request(self.location, index, all_committed)
        while True:
            moves = self._moves
            try:
                stream = self._stream("watch")
                response = await stream.call(request)
            except DatanodeCallError as e:
                if all_committed and e.result == "NOT_REPLICATED" and not e.unreachable:
                    self._fail_servers(e.commit_indexes, index)
                    return
                if not await self._fail_over(moves, e):
                    raise
            else:
                self._answered(stream.datanode.uuid)
                if self.failed_servers:
                    self._fail_servers(wire.commit_indexes(response), index)
                return

    def _fail_servers(self, commit_indexes: Mapping[str, int], index: int) -> None:
        """Records the members of `commit_indexes` below `index` as failed servers."""
        self.failed_servers.update(m for m, at in commit_indexes.items() if at < index)

    async def _await_oldest(self) -> None:
        flush = self._flushes.popleft()
        await flush.task

    async def _make_room(self, incoming: int) -> None:
        """Waits for acknowledgements until `incoming` more unacknowledged bytes fit in the pool."""
        while self.sent - self.acked + incoming > self._max_unacked:
            if self._flushes:
                await self._await_oldest()
            elif self._chunk_answers:
                self._flush(eof=False)
            else:
                return
        self._raise_failure()

    def _raise_failure(self) -> None:
        if self._failure is not None:
            raise self._failure

    # ------------------------------------------------------------------ ending
    async def settle(self) -> None:
        """Lets the putBlocks in flight finish (or fail): whatever they acknowledge need not be rewritten."""
        tasks = [f.task for f in self._flushes]
        self._flushes.clear()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    async def close(self) -> None:
        if self._put_phase is not None and not self._put_phase.done():
            self._put_phase.set_result(False)
        for flush in self._flushes:
            flush.task.cancel()
        for flush in self._flushes:
            with contextlib.suppress(BaseException):
                await flush.task
        self._flushes.clear()
        streams, self._streams = list(self._streams.values()), {}
        for stream in streams:
            await stream.close()
