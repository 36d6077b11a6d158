"""ContainerStateMachine: one pipeline's container replicas on this datanode as the state machine of the
pipeline's Raft group (Ozone's ContainerStateMachine), a `DataStateMachine` of pyozone.ratis_server.

The datanode's pipelines run on it (`groups.py`), one per pipeline, its settings from the configuration.

An entry's payload is the container request without its chunk data (`protocol.ratis.entry_payload`); the
data travels beside it (state machine data) and is written at append by `write_data`, on every member,
leader included, before the member acknowledges the entry. A committed entry is applied by `apply_async`,
in log order per container (Ozone's containerTaskQueues), containers in parallel on the executor:

- `write_data` = the dispatcher's WRITE_DATA stage (container created, checksums verified, bytes written),
  serialized per block; it changes no byte already in the block file (OVERWRITE_FLAG_REQUIRED), so that
  it cannot change what an earlier putBlock, not yet applied here, commits. A refusal every member reaches
  alike for the entry (`protocol.ratis.refused_alike`: a checksum mismatch, a container not open) is
  remembered for its apply and is no failure: it is kept, with the entry's data, in `refused/<index>-<term>`
  of the pipeline's directory (synced before the entry is acknowledged) until a snapshot covers the entry;
  anything else (IO_EXCEPTION, DISK_OUT_OF_SPACE) raises DataWriteError: the shell fails this member of
  the group. A putBlock over bytes written outside the log (a V2 datastream: each member wrote its own
  copy), or naming any chunk the leader's log did not carry (`uncarried`), carries the chunks its
  leader holds, checked by the leader before it logged it (`vouching.held_by_stream`); its data stage
  checks this member's own bytes against them, and any difference (missing, short, other checksums)
  raises DataWriteError: the leader's are the bytes the entry commits, so a member without them has
  failed for the group (its pipeline closes through SCM, as Ozone's applyTransaction failure), rather
  than refuse alike, or commit, what the others do not.
- `apply_async` = the dispatcher's COMMIT stage (`Dispatcher.apply_entry`), given the data stage's answer:
  the state's refusals are decided again in log order, so every member answers an entry alike although
  their data stages ran at different points of their applies. At most `max_pending_apply`
  (dfs.container.ratis.statemachine.max.pending.apply-transactions) entries run on the executor at once.
  A result neither SUCCESS nor refused alike (Ozone: not SUCCESS, CONTAINER_NOT_OPEN or CLOSED_CONTAINER_IO;
  pyozone also counts CONTAINER_UNHEALTHY alike: SCM replaces that replica) makes the state machine
  unhealthy: `on_failure(pipeline, reason)` (Ozone's handleApplyTransactionFailure: a pipeline action
  CLOSE) once, and no later entry is applied (each answered RAFT_RETRY_FAILURE). So does an entry
  refused UNABLE_TO_FIND_CHUNK or CHECKSUM_MISMATCH over a chunk whose bytes an entry's data stage wrote
  or (a putBlock's, V2) found here (lost on this disk, or by a power cut before a replay,
  `check_restart`), not over chunks no entry wrote or checked here nor an entry refused alike (its kept
  refusal is answered again). An apply
  cancelled (the member stops) is not applied: the applied point, and so a snapshot, stays before it, and
  the later entries of its container are not applied either.
- `read_data`: a chunk's bytes read back from its block file (committed or not), or kept with its
  refusal, or a putBlock's chunks (`protocol.ratis.held_chunks`, made from the entry's payload again),
  for a follower the leader no longer caches the entry's data for (Ratis's
  StateMachine.DataApi.read); when it fails, the shell fails the member for the group.
- Snapshots (`take_snapshot`, every `snapshot_threshold` applied entries, dfs.ratis.snapshot.threshold):
  the block files written since the last one are synced, then `sm-snapshot` records the last entry of the
  gap-free applied prefix and each of the pipeline's containers' BCSID (Ozone's takeSnapshot with its
  container2BCSIDMap), and `on_snapshot(term_index)` lets the member purge its log up to it. An unhealthy
  state machine takes none (Ozone refuses too). `latest_snapshot` reads it back at start.

Why the data stage may write what the log later drops: an entry appended and then truncated by a new
leader has its bytes in the block file, beyond every length a putBlock committed; reads, the scanner and
exports see only committed chunks, and its client resends the same bytes, which pass (tests pin both). A
client that sent other bytes for the same offsets would be refused only by the members holding the
truncated ones.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Iterable
from concurrent.futures import Executor
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from pyozone.common.fsutil import atomic_write
from pyozone.common.net import HostPort
from pyozone.datanode.pipeline_raft import (
    MAX_PENDING_APPLY,
    NO_LEADER_REASON,
    SNAPSHOT_THRESHOLD,
    slow_member_reason,
)
from pyozone.datanode.storage import ContainerError, chunk_io
from pyozone.hdds.block_data import ChunkInfo
from pyozone.hdds.checksum import ChecksumMismatch
from pyozone.hdds.errors import ProtocolError
from pyozone.hdds.ids import BlockID
from pyozone.protocol import container as wire
from pyozone.protocol.container import CommandType, command_name, result_code
from pyozone.protocol.data import result_name
from pyozone.protocol.ratis import (
    LogResult,
    entry_request,
    held_chunks,
    kept_refusal,
    kept_refusal_bytes,
    refusal,
    refused_alike,
    succeeded,
)
from pyozone.ratis.messages import EntryKind, LogEntry, RaftPeerId, TermIndex
from pyozone.ratis_server.member_api import DataWriteError, InstalledSnapshot

if TYPE_CHECKING:
    from pyozone.datanode.xceiver.dispatcher import Dispatcher
    from pyozone.proto.DatanodeClientProtocol_pb2 import ContainerCommandRequestProto as Request
    from pyozone.proto.DatanodeClientProtocol_pb2 import ContainerCommandResponseProto as Response

log = logging.getLogger(__name__)

SNAPSHOT_FILE = "sm-snapshot"
REFUSED_DIR = "refused"
"""Where the entries whose data stage refused them keep that answer and their data, `<index>-<term>`."""

_BlockKey = tuple[int, int]
_Extent = tuple[_BlockKey, int, int]
"""A chunk of a block: (block, offset, length)."""
MAX_SMALL_FILES = 64
"""The most putSmallFile entries applied together (`_SmallFiles`)."""
_DATA_GONE = frozenset(result_code(r) for r in ("UNABLE_TO_FIND_CHUNK", "CHECKSUM_MISMATCH"))


@dataclass(frozen=True)
class Snapshot:
    """What `sm-snapshot` holds: the applied prefix's last entry and the pipeline's containers' BCSIDs."""

    term: int
    index: int
    bcsids: dict[int, int]

    @property
    def term_index(self) -> TermIndex:
        return TermIndex(self.term, self.index)

    def to_bytes(self) -> bytes:
        bcsids = {str(cid): bcsid for cid, bcsid in sorted(self.bcsids.items())}
        return json.dumps({"term": self.term, "index": self.index, "bcsids": bcsids}).encode()

    @classmethod
    def from_bytes(cls, raw: bytes) -> Snapshot:
        doc = json.loads(raw)
        return cls(int(doc["term"]), int(doc["index"]), {int(c): int(b) for c, b in doc["bcsids"].items()})


def read_snapshot(directory: Path) -> Snapshot | None:
    """The pipeline's `sm-snapshot` in `directory`; None when there is none. ValueError when damaged."""
    try:
        raw = (directory / SNAPSHOT_FILE).read_bytes()
    except FileNotFoundError:
        return None
    try:
        return Snapshot.from_bytes(raw)
    except (ValueError, KeyError, TypeError) as e:
        raise ValueError(f"{directory / SNAPSHOT_FILE} is damaged: {e}") from None


class ContainerStateMachine:
    def __init__(
        self,
        pipeline_id: str,
        dispatcher: Dispatcher,
        executor: Executor,
        directory: Path,
        on_failure: Callable[[str, str], None],
        *,
        max_pending_apply: int = MAX_PENDING_APPLY,
        snapshot_threshold: int = SNAPSHOT_THRESHOLD,
        on_snapshot: Callable[[TermIndex], None] | None = None,
        on_leader_changed: Callable[[], None] | None = None,
    ) -> None:
        """`directory`: the pipeline's Raft directory (its log's), where `sm-snapshot` lives.
        `on_failure(pipeline_id, reason)` asks SCM to close the pipeline (a pipeline action CLOSE).
        `on_snapshot(term_index)`: a snapshot is durable (the member's `snapshot_taken`).
        `on_leader_changed()`: the group has a new leader (the datanode reports its pipelines at once)."""
        if max_pending_apply < 1 or snapshot_threshold < 1:
            raise ValueError("max_pending_apply and snapshot_threshold are at least 1")
        self.pipeline_id = pipeline_id
        self.dispatcher = dispatcher
        self.directory = directory
        self._executor = executor
        self._on_failure = on_failure
        self._on_snapshot = on_snapshot
        self._on_leader_changed = on_leader_changed
        self._snapshot_threshold = snapshot_threshold
        self._permits: asyncio.Semaphore | None = None  # made on the loop, at the first apply
        self._max_pending = max_pending_apply
        self.failure: str | None = None
        """Why this member no longer applies (None: healthy)."""
        self._written: dict[tuple[int, int], Response] = {}
        """(term, index) -> the data stage's refusal, until the entry is handed to apply (or truncated)."""
        self._block_tails: dict[_BlockKey, asyncio.Future[None]] = {}
        self._container_tails: dict[int, asyncio.Future[None]] = {}
        self._dirty: set[_BlockKey] = set()
        """Blocks whose files took bytes since the last snapshot (synced by the next one)."""
        self._handed: dict[int, TermIndex] = {}  # handed to apply, not all done: in log order
        self._done: set[int] = set()
        self.applied: TermIndex | None = None
        """The last entry of the gap-free prefix of what was applied (entries handed here; the shell's
        no-op and configuration entries between them never are)."""
        self._since_snapshot = 0
        self._snapshotting: asyncio.Task[TermIndex | None] | None = None
        self._replay_to = 0
        """The log's last index at start (`check_restart`): entries up to it are replayed, their data
        written (and acknowledged) before the restart."""
        self._kept_refusals: set[tuple[int, int]] = set()
        """(term, index) of the replayed entries whose data stage refused them (`REFUSED_DIR` at start)."""
        self._acknowledged: dict[_BlockKey, dict[int, ChunkInfo]] = {}
        """The chunks whose bytes entries' data stages wrote here (by offset; replayed ones: written before
        the restart, maybe not synced), until their container closes."""
        self._small_files: dict[int, _SmallFiles] = {}
        """The batch of putSmallFile entries each container's next ones may join (`_SmallFiles`)."""
        self._logging: dict[_Extent, list[_Logging]] = {}
        """The writes this member, leading, is putting into the log (`logging_write`), by their chunk, in
        the order they came."""

    # ------------------------------------------------------------------ data (at append)

    async def write_data(self, entry: LogEntry, data: memoryview) -> None:
        """The entry's data stage, after the previous one of its block (chunks of a block are written in
        log order), on the executor. Raises DataWriteError when this member could not write the data, or
        applies no more (an unhealthy state machine holds no new data: it must not acknowledge entries)."""
        if self.failure is not None:
            raise DataWriteError(f"pipeline {self.pipeline_id} failed here: {self.failure}")
        request = self._request(entry)
        key = _block_key(request)
        loop = asyncio.get_running_loop()
        previous = self._block_tails.get(key)
        mine: asyncio.Future[None] = loop.create_future()
        self._block_tails[key] = mine
        wrote = False
        try:
            if previous is not None:
                await asyncio.wait([previous])
            response = await loop.run_in_executor(
                self._executor, self.dispatcher.write_data, request, entry.index, data
            )
            wrote = succeeded(response.result)
        finally:
            mine.set_result(None)
            if self._block_tails.get(key) is mine:
                del self._block_tails[key]
            if self._logging:
                self._written_here(request, wrote)
        if succeeded(response.result):
            self._dirty.add(key)
            return
        if refused_alike(response.result) and request.cmdType != CommandType.PutBlock:
            try:
                await loop.run_in_executor(self._executor, self._keep_refusal, entry, response, data)
            except OSError as e:
                raise DataWriteError(
                    f"pipeline {self.pipeline_id}: entry {entry.index}: its refusal could not be kept: {e}"
                ) from None
            self._written[(entry.term, entry.index)] = response
            return
        putting = request.cmdType == CommandType.PutBlock
        whose = " (this member's bytes are not the leader's)" if putting else ""
        raise DataWriteError(
            f"pipeline {self.pipeline_id}: entry {entry.index} ({command_name(request.cmdType)}){whose}: "
            f"{result_name(response.result)}: {response.message}"
        )

    async def read_data(self, entry: LogEntry) -> bytes:
        """The entry's chunk bytes again, read from its block file (committed or not), or kept with its
        data stage's refusal (`REFUSED_DIR`: nothing went to the block file), for a follower whose data the
        leader no longer caches; the follower's data stage then refuses it alike. OSError (or ValueError
        for a short read: the data is not here) when they cannot be read; Ozone's readStateMachineData
        fails alike, and the shell fails the group."""
        kept = await asyncio.get_running_loop().run_in_executor(self._executor, self._read_refusal, entry)
        if kept is not None:
            return kept[1]
        request = self._request(entry)
        if request.cmdType == CommandType.PutBlock:  # the chunks it names, as its leader attached them
            return held_chunks(request)
        cid, lid = _block_key(request)
        body = request.writeChunk if request.HasField("writeChunk") else request.putSmallFile
        chunk = body.chunkData if request.HasField("writeChunk") else body.chunkInfo
        container = self.dispatcher.containers.require(cid)
        path = chunk_io.block_file(container.chunks_dir, lid)
        data = await asyncio.get_running_loop().run_in_executor(
            self._executor, chunk_io.read_at, path, chunk.offset, entry.data_size
        )
        if len(data) != entry.data_size:
            raise ValueError(
                f"pipeline {self.pipeline_id}: entry {entry.index}: {len(data)} of its {entry.data_size} "
                f"bytes are in {path}"
            )
        return data

    # ------------------------------------------------------------------ apply (after commit)

    def apply(self, entry: LogEntry) -> object:
        """The plain StateMachine's apply: the shell uses `apply_async` for a DataStateMachine."""
        raise NotImplementedError("a ContainerStateMachine is applied with apply_async")

    def apply_async(self, entry: LogEntry) -> Awaitable[Response]:
        """Applies a committed entry (called in log order) after the previous entry of its container; the
        awaitable is the entry's answer."""
        request = self._request(entry)
        written = self._written.pop((entry.term, entry.index), None)
        for stale in [k for k in self._written if k[1] <= entry.index]:  # truncated entries' refusals
            del self._written[stale]
        if entry.index <= self._replay_to:
            written = self._replayed(entry, request, written)
        if written is None and entry.data_size:
            self._note_acknowledged(request)
        loop = asyncio.get_running_loop()
        if self._permits is None:
            self._permits = asyncio.Semaphore(self._max_pending)
        cid = request.containerID
        # The batch is decided before the entry becomes its container's tail, so nothing after that can
        # raise and leave the tail unresolved (every later entry of the container would wait for it). A
        # putSmallFile without its body joins none: apply_entry refuses it MALFORMED_REQUEST alone.
        batch = self._small_files.pop(cid, None)  # any other entry of the container ends the batch
        if request.cmdType != CommandType.PutSmallFile or not request.HasField("putSmallFile"):
            batch = None
        else:
            batch = batch if batch is not None and batch.joinable(request) else _SmallFiles()
            batch.join(request, entry.index, written)
            self._small_files[cid] = batch
        previous = self._container_tails.get(cid)
        mine: asyncio.Future[None] = loop.create_future()
        self._container_tails[cid] = mine
        self._handed[entry.index] = TermIndex(entry.term, entry.index)
        task = loop.create_task(self._apply(entry, request, written, previous, mine, batch))
        task.add_done_callback(partial(self._cancelled_unstarted, cid, mine))
        return task

    async def _apply(
        self,
        entry: LogEntry,
        request: Request,
        written: Response | None,
        previous: asyncio.Future[None] | None,
        mine: asyncio.Future[None],
        batch: _SmallFiles | None,
    ) -> Response:
        cid = request.containerID
        raised = False
        try:
            if previous is not None:
                await asyncio.wait([previous])
                if previous.cancelled():  # the container's previous entry was never applied
                    raise asyncio.CancelledError
            if self.failure is not None:
                return refusal(
                    request, LogResult.RAFT_RETRY_FAILURE,
                    f"pipeline {self.pipeline_id} failed here: {self.failure}",
                )  # fmt: skip
            assert self._permits is not None
            async with self._permits:
                if batch is None:
                    response = await asyncio.get_running_loop().run_in_executor(
                        self._executor, self.dispatcher.apply_entry, request, entry.index, written
                    )
                else:
                    response = await self._apply_small_files(cid, batch, entry.index)
            response.logIndex = entry.index  # Ratis's RaftClientReply.logIndex: a putBlock's BCSID
            what = f"entry {entry.index} ({command_name(request.cmdType)})"
            if not (succeeded(response.result) or refused_alike(response.result)):
                self._fail(f"{what} failed: {result_name(response.result)}: {response.message}")
            elif (
                response.result in _DATA_GONE
                and written is None
                and await asyncio.get_running_loop().run_in_executor(
                    self._executor, self._acknowledged_bytes_gone, request
                )
            ):
                replayed = " replayed after a restart" if entry.index <= self._replay_to else ""
                self._fail(
                    f"{what}{replayed}: {result_name(response.result)}: bytes this member acknowledged "
                    f"are gone: {response.message}"
                )
            elif request.cmdType == CommandType.CloseContainer and succeeded(response.result):
                self._forget_acknowledged(cid)
            return response
        except asyncio.CancelledError:  # the member stops: the entry is not applied (the applied point,
            mine.cancel()  # and so a snapshot, stays before it), nor are its container's later entries
            raise
        except Exception as error:  # an exception is an apply failure, never an entry applied
            raised = True
            reason = f"entry {entry.index} ({command_name(request.cmdType)}) raised {error!r}"
            self._fail(reason)
            return refusal(request, "CONTAINER_INTERNAL_ERROR", reason)
        finally:
            if not mine.cancelled():
                mine.set_result(None)
            if self._container_tails.get(cid) is mine:
                del self._container_tails[cid]
            if not mine.cancelled() and not raised:  # the applied point stays before an entry that raised
                self._applied_one(entry.index)

    async def _apply_small_files(self, cid: int, batch: _SmallFiles, index: int) -> Response:
        """Entry `index`'s answer from its batch, which its first entry runs (on the executor) once the
        container's earlier entries are applied; the later ones, each after the one before it as any
        entry, find their answers there."""
        if batch.answers is None:
            batch.started = True
            if self._small_files.get(cid) is batch:
                del self._small_files[cid]
            batch.answers = await asyncio.get_running_loop().run_in_executor(
                self._executor, self.dispatcher.apply_small_files, batch.entries
            )
        return batch.answers[batch.indexes.index(index)]

    def _cancelled_unstarted(
        self, cid: int, mine: asyncio.Future[None], task: asyncio.Task[Response]
    ) -> None:
        """An apply cancelled before its task started (its `finally` never ran): not applied either."""
        if not mine.done():
            mine.cancel()
            if self._container_tails.get(cid) is mine:
                del self._container_tails[cid]

    def _applied_one(self, index: int) -> None:
        self._done.add(index)
        while self._handed:
            first = next(iter(self._handed))
            if first not in self._done:
                break
            self._done.discard(first)
            self.applied = self._handed.pop(first)
            self._since_snapshot += 1
        if (
            self._since_snapshot >= self._snapshot_threshold
            and self._snapshotting is None
            and not self.failure
        ):
            self._snapshotting = asyncio.get_running_loop().create_task(self.take_snapshot())
            self._snapshotting.add_done_callback(self._snapshot_done)

    def _snapshot_done(self, task: asyncio.Task[TermIndex | None]) -> None:
        self._snapshotting = None
        if not task.cancelled() and task.exception() is not None:
            log.error("pipeline %s: snapshot failed: %r", self.pipeline_id, task.exception())

    def _fail(self, reason: str) -> None:
        if self.failure is not None:
            return
        self.failure = reason
        log.warning("pipeline %s: %s; no more entries are applied here, asking SCM to close it",
                    self.pipeline_id, reason)  # fmt: skip
        self._on_failure(self.pipeline_id, reason)

    # ------------------------------------------------------------------ the shell's notifications

    def notify_failed(self, reason: str) -> None:
        """The member failed for this group (a data write or its log failed): SCM is asked to close it."""
        self._fail(reason)

    def notify_leader_changed(self, leader: RaftPeerId) -> None:
        """Ozone's handleLeaderChangedNotification: the pipeline report (its leader) goes to SCM at once."""
        log.info(
            "Leader change notification received for group: %s with new leaderId: %s",
            self.pipeline_id,
            leader,
        )
        if self._on_leader_changed is not None:
            self._on_leader_changed()

    def notify_no_leader(self) -> None:
        """Ozone's handleNoLeader: no leader for hdds.ratis.raft.server.Notification.no-leader.timeout, SCM
        is asked to close the pipeline (the state machine stays healthy: a leader may still come)."""
        log.warning("pipeline %s: %s; asking SCM to close it", self.pipeline_id, NO_LEADER_REASON)
        self._on_failure(self.pipeline_id, NO_LEADER_REASON)

    def notify_follower_slow(self, peer: RaftPeerId) -> None:
        """Ozone's handleNodeSlowness: a follower silent for hdds.ratis.raft.server.rpc.slowness.timeout;
        SCM is asked to close the pipeline (its writes go on at majority meanwhile)."""
        reason = slow_member_reason(peer.id)
        log.warning("pipeline %s: %s; asking SCM to close it", self.pipeline_id, reason)
        self._on_failure(self.pipeline_id, reason)

    async def install_snapshot(
        self, leader_id: RaftPeerId, leader_address: HostPort | None, first_available: TermIndex
    ) -> InstalledSnapshot | None:
        """The leader purged entries this member needs: a datanode never installs a snapshot (Ozone's
        notifyInstallSnapshotFromLeader), it reports the pipeline failed and SCM closes it."""
        self._fail(
            f"the leader {leader_id} no longer holds the entries from {self.applied} on (its log starts at "
            f"{first_available.index}): a datanode installs no snapshot"
        )
        return None

    def check_restart(self, log_last_index: int, lost: Iterable[int], unrecorded_losses: bool) -> None:
        """At start: this member cannot go on (`on_failure`) when its containers are ahead of its log
        (entries applied that the log lost), lost some containers with a volume (`lost`: the pipeline's,
        ContainerSet.lost_from), or a failed volume may have held some (`unrecorded_losses`) while the log
        has history (the checks of the former leader-ordered log, unchanged in meaning). Later, a replayed
        entry (up to `log_last_index`) whose block's bytes are missing or differ (UNABLE_TO_FIND_CHUNK,
        CHECKSUM_MISMATCH: refusals alike for a client's entry, but here the member acknowledged those
        bytes, and a power cut took them: chunk writes are not synced) fails the pipeline too, rather than
        leave this replica without a block the others committed; not one whose data stage refused it
        (kept in `REFUSED_DIR`) nor one over chunks no replayed write acknowledged."""
        self._replay_to = log_last_index
        self._kept_refusals = {
            (term, index) for index, term in self._refusal_names() if index <= log_last_index
        }
        applied = max(self._bcsids().values(), default=0)
        lost = list(lost)
        if applied > log_last_index:
            self._fail(
                f"restarted with entries up to {applied} applied but its log ending at {log_last_index}"
            )
        elif lost:
            self._fail(f"restarted without its containers {lost}, lost with a volume")
        elif unrecorded_losses and log_last_index:
            self._fail("restarted with a failed data volume: containers may be gone")

    # ------------------------------------------------------------------ snapshots

    def latest_snapshot(self) -> TermIndex | None:
        snapshot = read_snapshot(self.directory)
        return None if snapshot is None else snapshot.term_index

    async def take_snapshot(self) -> TermIndex | None:
        """Syncs the block files written since the last snapshot, then writes `sm-snapshot` for the applied
        prefix; returns what it covers (None: nothing applied yet). RuntimeError when unhealthy."""
        if self.failure is not None:
            raise RuntimeError(
                f"pipeline {self.pipeline_id}: no snapshot of an unhealthy state machine ({self.failure})"
            )
        covered = self.applied
        if covered is None:
            return None
        dirty, self._dirty = self._dirty, set()
        self._since_snapshot = 0
        try:
            await asyncio.get_running_loop().run_in_executor(
                self._executor, self._write_snapshot, covered, dirty
            )
        except BaseException:
            self._dirty |= dirty
            raise
        if self._on_snapshot is not None:
            self._on_snapshot(covered)
        return covered

    def _write_snapshot(self, covered: TermIndex, dirty: set[_BlockKey]) -> None:
        for cid, lid in sorted(dirty):
            container = self.dispatcher.containers.get(cid)
            if container is None:
                continue  # deleted since: nothing of it to keep
            path = chunk_io.block_file(container.chunks_dir, lid)
            if path.exists():
                chunk_io.sync_file(path)
        self.directory.mkdir(parents=True, exist_ok=True)
        atomic_write(
            self.directory / SNAPSHOT_FILE, Snapshot(covered.term, covered.index, self._bcsids()).to_bytes()
        )
        for index, term in self._refusal_names():  # applied and covered: no follower is sent them again
            if index <= covered.index:
                (self.directory / REFUSED_DIR / f"{index}-{term}").unlink(missing_ok=True)

    def _bcsids(self) -> dict[int, int]:
        return {
            c.container_id: c.bcsid
            for c in self.dispatcher.containers
            if c.data.origin_pipeline_id == self.pipeline_id
        }

    # ------------------------------------------------------------------ refusals kept, replays

    def _keep_refusal(self, entry: LogEntry, response: Response, data: memoryview) -> None:
        """Keeps the data stage's refusal of an entry and its data, durably before the entry is acknowledged:
        the leader sends that data to a follower that needs the entry (`read_data`), and after a restart
        the replay knows the entry was refused, not that its bytes were lost."""
        folder = self.directory / REFUSED_DIR
        folder.mkdir(parents=True, exist_ok=True)
        atomic_write(folder / f"{entry.index}-{entry.term}", kept_refusal_bytes(response, data))

    def _read_refusal(self, entry: LogEntry) -> tuple[Response, bytes] | None:
        try:
            raw = (self.directory / REFUSED_DIR / f"{entry.index}-{entry.term}").read_bytes()
        except FileNotFoundError:
            return None
        return kept_refusal(raw)

    def _refusal_names(self) -> list[tuple[int, int]]:
        """(index, term) of each refusal kept."""
        try:
            names = [p.name for p in (self.directory / REFUSED_DIR).iterdir()]
        except FileNotFoundError:
            return []
        found = []
        for name in names:
            index, _, term = name.partition("-")
            if index.isdigit() and term.isdigit():
                found.append((int(index), int(term)))
        return found

    def _replayed(self, entry: LogEntry, request: Request, written: Response | None) -> Response | None:
        """A replayed entry's data stage answer: its refusal kept before the restart, if any (None: a write
        acknowledged here)."""
        if written is None and (entry.term, entry.index) in self._kept_refusals:
            kept = self._read_refusal(entry)
            written = kept[0] if kept is not None else None
        return written

    def _note_acknowledged(self, request: Request) -> None:
        """Notes the chunk of an entry whose data stage wrote its bytes here, or the chunks of a putBlock
        whose data stage found them here (`_acknowledged_bytes_gone`)."""
        try:
            chunks = _named_chunks(request)
        except ProtocolError:
            return
        key = _block_key(request)
        if request.cmdType != CommandType.PutBlock:
            chunks = chunks[:1]  # its data's chunk (a piggybacked block's come after)
        for chunk in chunks:
            self._acknowledged.setdefault(key, {})[chunk.offset] = chunk

    def logging_write(self, request: Request) -> Callable[[], None]:
        """This member, leading, puts a client's writeChunk or putSmallFile into the log: until the returned
        call (its answer: its entry applied here, or refused), the chunk it writes counts as carried by the
        log (`uncarried`) once its data stage wrote it here (`_written_here`), and a putBlock naming it
        waits for that data stage first (`logging`)."""
        extent = _written_extent(request)
        if extent is None:
            return lambda: None
        mine = _Logging()
        self._logging.setdefault(extent, []).append(mine)

        def done() -> None:
            mine.settle(False)  # its data stage's outcome, if known, stays
            writes = self._logging.get(extent, [])
            if mine in writes:
                writes.remove(mine)
            if not writes:
                self._logging.pop(extent, None)

        return done

    def _written_here(self, request: Request, wrote: bool) -> None:
        """This member's data stage of a write it is logging (the oldest of its chunk not settled) ended:
        `wrote` its bytes here, or not (refused, or failed)."""
        extent = _written_extent(request)
        for write in self._logging.get(extent, []) if extent is not None else []:
            if write.wrote is None:
                write.settle(wrote)
                return

    def logging(self, request: Request) -> list[asyncio.Future[None]]:
        """The ends of the data stages here of the writes this member is logging, still to end, of chunks a
        putBlock names (R20 D3): the putBlock waits for them before its leader decides which chunks it
        vouches for (`uncarried`). Counted as carried at once, a write refused after (a data stage
        refusing it, the leader's own checks off the event loop) would leave the putBlock logged without
        data, and members holding other bytes there (streamed, a chain that left the leader out) would
        commit what the leader refuses. Waiting for the leader's own data stage, not for the entry's
        commit, keeps a V1 client's putBlock right behind its writeChunk: it is that leader's bytes the
        entry commits, and every member's data stages of a block run in log order. Only the writes come
        before the putBlock: one after it may wait for the putBlock's turn."""
        waits = []
        for extent in self._named_extents(request):
            for write in self._logging.get(extent, []):
                if write.wrote is None:
                    ended: asyncio.Future[None] = asyncio.get_running_loop().create_future()
                    write.waiters.append(ended)
                    waits.append(ended)
        return waits

    def uncarried(self, request: Request) -> set[tuple[int, int]]:
        """The chunks (offset, length) a putBlock (or a piggybacked one, `_named_extents`) names whose bytes
        this member's log did not carry: not
        written by an entry's data stage here and applied (a replayed one too), nor named by a putBlock the
        leader vouched for, nor by a write this member is logging whose data stage wrote them here
        (`logging_write`; one whose data stage has not ended counts as not carried: its putBlock waits
        for it first, `logging`). The log carried the others: every member holds those bytes as the log
        wrote them (no stream changes bytes already written), and judges the putBlock's checksums against
        them alike at apply. The bytes of the uncarried ones came outside the log (a V2 datastream:
        before this member restarted, or to other members only), before the member's last snapshot (no
        replayed entry notes them), or not at all: the leader vouches for them before it logs the
        putBlock (`vouching.held_by_stream`), checking only those (R20 D1). A malformed putBlock is refused
        by that check (MALFORMED_REQUEST) or alike on every member by the commit."""
        key = (request.containerID, _named_block(request))
        applied = self._acknowledged.get(key, {})
        missing = set()
        for extent in self._named_extents(request):
            _, offset, length = extent
            written = applied.get(offset)
            if written is not None and written.length == length:
                continue
            if not any(write.wrote for write in self._logging.get(extent, [])):
                missing.add((offset, length))
        return missing

    @staticmethod
    def _named_extents(request: Request) -> list[_Extent]:
        """The chunks a putBlock names, or the block a writeChunk commits with it (Ozone's putBlock
        piggybacking) other than the writeChunk's own, as (block, offset, length), read off the request:
        no checksums are parsed on the event loop for every putBlock (R20 D5); a malformed one is refused
        at apply."""
        if request.cmdType == CommandType.PutBlock:
            block, own = request.putBlock.blockData, None
        elif request.cmdType == CommandType.WriteChunk and request.writeChunk.HasField("block"):
            block, own = request.writeChunk.block.blockData, _written_extent(request)
        else:
            return []
        key = (request.containerID, block.blockID.localID)
        named = [(key, chunk.offset, chunk.len) for chunk in block.chunks]
        return [extent for extent in named if extent != own]

    def _forget_acknowledged(self, cid: int) -> None:
        """The container closed: no later putBlock names its chunks."""
        for key in [k for k in self._acknowledged if k[0] == cid]:
            del self._acknowledged[key]

    def _acknowledged_bytes_gone(self, request: Request) -> bool:
        """Whether an entry refused UNABLE_TO_FIND_CHUNK or CHECKSUM_MISMATCH names a chunk whose bytes an
        entry's data stage wrote here (this member acknowledged them) and that are now missing or damaged:
        lost on this member's disk, or taken by a power cut (chunk writes are synced only by a putBlock or
        a snapshot), or that a putBlock's data stage found here (V2 stream bytes, checked at append).
        Ozone fails the pipeline at such an apply (not SUCCESS); a refusal over chunks no entry wrote or
        checked here is one every member reaches alike (a putBlock naming a chunk never written)."""
        try:
            chunks = _named_chunks(request)
        except ProtocolError:
            return False
        key = (request.containerID, _named_block(request))
        acknowledged = self._acknowledged.get(key, {})
        container = self.dispatcher.containers.get(request.containerID)
        for chunk in chunks:
            written = acknowledged.get(chunk.offset)
            if written is None or written.length != chunk.length:
                continue
            if container is None:
                return True
            try:
                container.read_chunk(BlockID(*key), written)
            except (ContainerError, ChecksumMismatch):  # missing, or damaged (a power cut's zeros)
                return True
        return False

    # ------------------------------------------------------------------ helpers

    @staticmethod
    def _request(entry: LogEntry) -> Request:
        return entry_request(entry.payload)


def _named_chunks(request: Request) -> list[ChunkInfo]:
    """The chunks a logged write names: a writeChunk's (then its piggybacked block's), a putSmallFile's, a
    putBlock's block's. ProtocolError for a malformed one."""
    cid = request.containerID
    if request.HasField("writeChunk"):
        _, chunk, block = wire.write_chunk_from_proto(request.writeChunk, cid)
        return [chunk, *(block.chunks if block is not None else ())]
    if request.HasField("putSmallFile"):
        _, chunk = wire.put_small_file_from_proto(request.putSmallFile, cid)
        return [chunk]
    if request.HasField("putBlock"):
        return list(wire.put_block_from_proto(request.putBlock, cid, "putBlock").chunks)
    return []


@dataclass
class _SmallFiles:
    """Consecutive putSmallFile entries of one container applied together, with one fsync of its chunks
    directory and one synced DB batch (`Dispatcher.apply_small_files`), as Ratis' log worker flushes the
    entries appended meanwhile at once. Entries join while its first waits for the container's earlier
    entries; each is still answered, and counted applied, in log order after the one before it."""

    entries: list[tuple[Request, int, Response | None]] = field(default_factory=list)
    indexes: list[int] = field(default_factory=list)
    blocks: set[_BlockKey] = field(default_factory=set)
    started: bool = False
    answers: list[Response] | None = None

    def joinable(self, request: Request) -> bool:
        """Not run yet, not full, and not about the request's block (each block is put once a batch)."""
        full = len(self.entries) >= MAX_SMALL_FILES
        return not (self.started or full) and _block_key(request) not in self.blocks

    def join(self, request: Request, index: int, written: Response | None) -> None:
        self.entries.append((request, index, written))
        self.indexes.append(index)
        self.blocks.add(_block_key(request))


@dataclass
class _Logging:
    """A write this member, leading, is putting into the log (`ContainerStateMachine.logging_write`)."""

    wrote: bool | None = None
    """Whether its data stage wrote its bytes here (None: not ended yet)."""
    waiters: list[asyncio.Future[None]] = field(default_factory=list)

    def settle(self, wrote: bool) -> None:
        if self.wrote is None:
            self.wrote = wrote
        for waiter in self.waiters:
            if not waiter.done():
                waiter.set_result(None)
        self.waiters.clear()


def _written_extent(request: Request) -> _Extent | None:
    """The chunk a writeChunk or putSmallFile writes (None for anything else), read off the request (R20
    D5)."""
    if request.HasField("writeChunk"):
        chunk = request.writeChunk.chunkData
    elif request.HasField("putSmallFile"):
        chunk = request.putSmallFile.chunkInfo
    else:
        return None
    return _block_key(request), chunk.offset, chunk.len


def logged_blocks(entries: Iterable[LogEntry]) -> set[BlockID]:
    """The blocks the writes among `entries` name (a log's entries a restarted member will apply)."""
    named = set()
    for entry in entries:
        if entry.kind is not EntryKind.STATE_MACHINE:
            continue
        try:
            request = entry_request(entry.payload)
        except ProtocolError:
            continue
        if local_id := _named_block(request):
            named.add(BlockID(request.containerID, local_id))
    return named


def _named_block(request: Request) -> int:
    """The local id of the block a logged write names (0: none)."""
    if request.HasField("putBlock"):
        return request.putBlock.blockData.blockID.localID
    if request.HasField("writeChunk") or request.HasField("putSmallFile"):
        return _block_key(request)[1]
    return 0


def _block_key(request: Request) -> _BlockKey:
    """The block an entry with data is about: the one a writeChunk or putSmallFile writes to, or whose
    streamed bytes a putBlock commits."""
    if request.HasField("writeChunk"):
        block = request.writeChunk.blockID
    elif request.HasField("putSmallFile"):
        block = request.putSmallFile.block.blockData.blockID
    elif request.HasField("putBlock"):
        block = request.putBlock.blockData.blockID
    else:
        raise DataWriteError(f"{command_name(request.cmdType)} carries no data")
    return request.containerID, block.localID
