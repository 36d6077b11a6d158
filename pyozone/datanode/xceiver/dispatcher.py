"""Dispatcher: one ContainerCommandRequestProto in, one ContainerCommandResponseProto out (Ozone's
HddsDispatcher with its KeyValueHandler).

Pure and synchronous: it calls the storage layer, which does blocking I/O, so the RPC service runs it in
a worker pool. It never raises: every failure is a response with Ozone's Result and a message, because
a client that gets an exception instead of an answer cannot tell "retry elsewhere" from "bad request".
The wire is protocol/container.py's (a request's body, its blocks and chunks, the answers); the handlers
read plain fields of the request they are handed (ids, replica index, data bytes), which costs no copy.

Semantics that differ from a plain storage call, and why:
- With TokenVerifier (block or container tokens required, tokens.py) a request that is not a pipeline log
  entry is refused with BLOCK_TOKEN_VERIFICATION_FAILED unless its token allows it (a write: within its
  maxLength), before anything else is looked at; a log entry's token was checked by its leader
  (`check_token`).
- WriteChunk / PutSmallFile to an unknown container create it (origin = this datanode, pipeline = the
  request's), as HddsDispatcher does: the first write on a new pipeline container is what creates it. With
  ContainerAllocations (the daemon's) only if SCM allocated it on that pipeline (see allocations.py), so
  no data lands in a container SCM does not know; so does CreateContainer.
- Writes (WriteChunk, PutBlock, PutSmallFile) need an OPEN replica; CLOSING, QUASI_CLOSED and CLOSED
  answer CLOSED_CONTAINER_IO (the client then excludes the container), UNHEALTHY CONTAINER_UNHEALTHY.
  The storage layer itself still accepts writes while CLOSING (what a follower applies from its log
  before the close); only this client-facing entry refuses them.
- The datanode assigns every BCSID, never the client (issue 28 defect 1: one direct putBlock claiming
  BCSID 2^62 made every later putBlock of the container a replay, dropped). A putBlock that is entry
  `index` of its pipeline's log commits at that index (Ozone's KeyValueHandler takes the
  DispatcherContext's log index); one outside any log (an EC write) at the container's BCSID + 1,
  assigned under a per-container lock so two concurrent putBlocks never get the same BCSID (the second
  would be dropped as a replay). The request's blockCommitSequenceId is ignored.
- A RATIS container (replica index 0, created through a pipeline) takes writes (WriteChunk, PutBlock,
  PutSmallFile), FinalizeBlock and CloseContainer only through its pipeline's log: one that names no
  pipeline is refused with UNSUPPORTED_REQUEST (the Result Ozone's HddsDispatcher blames on the client),
  before anything is written, so no client can change one replica behind the log's back. A request that
  names the pipeline is routed into its log by the service (ratis/groups.py); only a dispatcher without
  pipeline logs (tools, tests) runs one directly. One naming another pipeline than the replica's origin is
  refused (CONTAINER_NOT_FOUND, `_check_replica`) by the leader and at apply: another log's indexes are no
  BCSIDs of this container, so a putBlock at or below the container's BCSID, skipped as applied already, is
  only ever a replay of its own log.
- A logged writeChunk or putSmallFile can also run in two stages, as Ozone's ContainerStateMachine runs it
  (for the pipeline on the Raft core, datanode/ratis/state_machine.py): `write_data` at append (container
  created, chunk verified and written, nothing committed) and `apply_entry` after commit, in log order per
  container, which decides again what depends on the entries before it (the container's state, a
  finalized block, a small file's chunk list) and commits the block the entry carries. A data stage runs
  before the entries ahead of it are applied, so these must not depend on it, and it changes no byte
  already written to the block file, committed or not (a putBlock still to apply may commit them);
  `dispatch` runs both at once for everyone else.
- A putBlock over bytes no log entry carried (a V2 datastream: each member wrote its own copy; or any
  chunk the leader's log did not carry, as after the leader restarted, R16 D4) also has a data stage
  (`vouching.held_by_stream`): its leader checks its own bytes against the chunks it names before it logs it
  (refused CHECKSUM_MISMATCH or UNABLE_TO_FIND_CHUNK, no entry made) and attaches those chunks, lengths
  and checksums, as the entry's data; every member's `write_data` then checks its own bytes against them
  at append (on an OPEN or CLOSING replica: another refuses the putBlock alike at apply, by its state). A
  member whose bytes are not the leader's is no refusal alike: its state machine fails that write (the
  member fails for the group).
- PutSmallFile (Ozone's, the client's path for a block of one chunk) writes the chunk and commits the block
  with it as the whole chunk list, in one request (one pipeline log entry). Its chunk must start at 0
  (MALFORMED_REQUEST) and it never replaces a block committed with other chunks (PUT_SMALL_FILE_ERROR):
  Ozone's would, hiding the block's other committed bytes.
- ReadChunk and GetSmallFile verify against the checksums committed with the block, not the ones in the
  request: a mismatch then proves the replica damaged (reads.py).
- CloseContainer (SCM's through the pipeline, or a client's to a replica no log orders) marks an OPEN
  replica CLOSING and closes it; CLOSED is a no-op; QUASI_CLOSED is refused (closing it is SCM's force
  decision, which comes as a command, not as a client request) and so is UNHEALTHY. A RECOVERING replica
  closes at once (its reconstruction's coordinator declares it whole), reported to SCM then for the first
  time.
- EC replicas (issue 14): a write names its replica index (blockID.replicaIndex, the datastream header's);
  the first creates the replica with it, if SCM allocated the container as EC on the write's pipeline
  (allocations.py), and one naming another index > 0 than the replica's is refused (CONTAINER_NOT_FOUND:
  that replica is not here). No pipeline log orders them (`is_direct`): a putBlock commits at once, at the
  container's BCSID + 1, with its metadata (blockGroupLen) kept for GetBlock.
- CreateContainer with state RECOVERING (and a replicaIndex) creates an EC reconstruction's target
  without a pipeline, if SCM knows the container as EC; writes to it need no pipeline and are refused
  if they name one (a client's stale write must not land in a replica being rebuilt).
- DeleteContainer honours forceDelete as Ozone does: without it an OPEN or non-empty replica is refused
  (DELETE_ON_OPEN_CONTAINER, DELETE_ON_NON_EMPTY_CONTAINER); with it any replica is deleted.
- CreateContainer of an existing id answers CONTAINER_EXISTS (the caller decides whether that is fine).
- Echo answers payloadSizeResp zero bytes and does not honour sleepTimeMs (a worker is not for sleeping).
- FinalizeBlock (Ozone's, sent by OM at a key's commit under a space quota, through the block's
  pipeline's log like a write, with a WRITE token) marks a committed block finalized, persisted with its
  record: later WriteChunk, PutBlock and PutSmallFile to it answer BLOCK_ALREADY_FINALIZED (storage), so a
  write token cannot add bytes OM did not charge. Ordered in the log, every member applies it after
  every putBlock before it; the answer carries the block, whose length OM charges. It needs an OPEN
  replica (CLOSING for a log entry) and never creates one.
- UpdateContainer, ListContainer, DeleteBlock, DeleteChunk, ListChunk, CompactChunk, StreamInit and
  StreamWrite answer UNSUPPORTED_REQUEST (Ozone's KeyValueHandler refuses most of these
  too; blocks are deleted through SCM's deleteBlocks command).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import replace
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from pyozone.datanode.container_full import check_close_threshold, is_full
from pyozone.datanode.storage import (
    BlockData,
    ChunkInfo,
    ContainerError,
    ContainerSet,
    KeyValueContainer,
    Result,
)
from pyozone.datanode.xceiver.allocations import ContainerAllocations
from pyozone.datanode.xceiver.reads import read_committed, verified_read
from pyozone.datanode.xceiver.tokens import TokenVerifier, WouldBlock
from pyozone.hdds.errors import ProtocolError
from pyozone.hdds.ids import BlockID
from pyozone.hdds.limits import MAX_CHUNK_BYTES, MAX_ECHO_PAYLOAD_BYTES
from pyozone.hdds.security.block_token import AccessMode, BlockTokenError, BlockTokenIdentifier
from pyozone.hdds.states import ReplicaState
from pyozone.protocol import container as wire
from pyozone.protocol.common import container_id, int32, integer
from pyozone.protocol.container import CommandType, command_name, result_code
from pyozone.protocol.data import result_name
from pyozone.protocol.ratis import held_from_data

if TYPE_CHECKING:
    from pyozone.proto import DatanodeClientProtocol_pb2 as pb
    from pyozone.proto.DatanodeClientProtocol_pb2 import ContainerCommandRequestProto as Request
    from pyozone.proto.DatanodeClientProtocol_pb2 import ContainerCommandResponseProto as Response
    from pyozone.protocol.datastream import Hop

log = logging.getLogger(__name__)

_BCSID_STRIPES = 64
_LIST_BUDGET_BYTES = MAX_CHUNK_BYTES  # a ListBlock answer stays far below the message size limit
_NOT_OPEN = {
    ReplicaState.UNHEALTHY: Result.CONTAINER_UNHEALTHY,
    ReplicaState.INVALID: Result.INVALID_CONTAINER_STATE,
    ReplicaState.DELETED: Result.CONTAINER_NOT_FOUND,
}
_SUCCESS = result_code("SUCCESS")
_MALFORMED = result_code(Result.MALFORMED_REQUEST)
_INTERNAL_ERROR = result_code(Result.CONTAINER_INTERNAL_ERROR)
_LOUD = frozenset(
    result_code(r)
    for r in (
        Result.CHECKSUM_MISMATCH,
        Result.IO_EXCEPTION,
        Result.DISK_OUT_OF_SPACE,
        Result.CONTAINER_INTERNAL_ERROR,
    )
)


class Refusal(StrEnum):
    """The Results (Ozone's names) the dispatcher refuses requests with that the storage layer has no name
    for."""

    UNSUPPORTED_REQUEST = "UNSUPPORTED_REQUEST"
    UNKNOWN_CONTAINER_TYPE = "UNKNOWN_CONTAINER_TYPE"
    BLOCK_TOKEN_VERIFICATION_FAILED = "BLOCK_TOKEN_VERIFICATION_FAILED"
    PUT_SMALL_FILE_ERROR = "PUT_SMALL_FILE_ERROR"
    GET_SMALL_FILE_ERROR = "GET_SMALL_FILE_ERROR"
    GROUP_MISMATCH = "GROUP_MISMATCH"


class Refused(Exception):
    """A request refused with a Refusal; `result` is its wire number, what the answer carries."""

    def __init__(self, refusal: Refusal, message: str) -> None:
        super().__init__(message)
        self.result = result_code(refusal)


class ContainerOps:
    """Requests dispatched, by command type (Ozone's ContainerMetrics numOps and num<Type>): a client's
    and every pipeline log entry applied here. Thread-safe: workers dispatch in parallel."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: dict[int, int] = {}

    def add(self, kind: int) -> None:
        with self._lock:
            self._counts[kind] = self._counts.get(kind, 0) + 1

    def counts(self) -> dict[str, int]:
        """{type name: requests}, for the types seen."""
        with self._lock:
            counts = dict(self._counts)
        return {command_name(kind): n for kind, n in sorted(counts.items())}


class Dispatcher:
    def __init__(
        self,
        containers: ContainerSet,
        datanode_uuid: str,
        on_container_full: Callable[[int], None],
        close_threshold: float = 0.9,
        allocations: ContainerAllocations | None = None,
        tokens: TokenVerifier | None = None,
    ) -> None:
        """`on_container_full(container_id)` runs once per container, in the dispatching worker thread,
        when a write takes the container to `close_threshold` (hdds.container.close.threshold) of its
        max size: the daemon then sends SCM a close action. It must be thread-safe and quick.
        `allocations`: what a request may create; None (tools, storage tests) creates what it names.
        `tokens`: the block and container tokens requests must carry (tokens.py); None: none."""
        self.containers = containers
        self.allocations = allocations
        self.tokens = tokens
        self.datanode_uuid = datanode_uuid
        self.ops = ContainerOps()
        self.on_container_full = on_container_full
        self.close_threshold = check_close_threshold(close_threshold)
        self._full: set[int] = set()
        self._full_lock = threading.Lock()
        self._bcsid_locks = [threading.Lock() for _ in range(_BCSID_STRIPES)]
        self._handlers: dict[int, Callable[[Request, Any, int], Response]] = {
            CommandType.CreateContainer: self._create_container,
            CommandType.ReadContainer: self._read_container,
            CommandType.CloseContainer: self._close_container,
            CommandType.DeleteContainer: self._delete_container,
            CommandType.PutBlock: self._put_block,
            CommandType.GetBlock: self._get_block,
            CommandType.ListBlock: self._list_block,
            CommandType.GetCommittedBlockLength: self._committed_length,
            CommandType.FinalizeBlock: self._finalize_block,
            CommandType.WriteChunk: self._write_chunk,
            CommandType.ReadChunk: self._read_chunk,
            CommandType.PutSmallFile: self._put_small_file,
            CommandType.GetSmallFile: self._get_small_file,
            CommandType.Echo: self._echo,
        }

    def dispatch(self, request: Request, index: int = 0) -> Response:
        """Runs one request, data and commit at once. `index` > 0: the request is entry `index` of its
        pipeline's log, applied on this member (leader or follower): writes then also go to a CLOSING
        replica (a close ordered after them in the log has not been applied yet) and a putBlock commits at
        BCSID `index`."""
        self.ops.add(request.cmdType)
        return self._answer(request, lambda: self._handle(request, index))

    def write_data(self, request: Request, index: int, data: bytes | memoryview | None = None) -> Response:
        """The WRITE_DATA stage of pipeline log entry `index`, a writeChunk or putSmallFile (Ozone's
        DispatcherContext.WriteChunkStage.WRITE_DATA, run by ContainerStateMachine.writeStateMachineData at
        append, before the entry commits): the container is created if it is not here (its leader checked
        the allocation with SCM), the chunk checked against its checksums and written; nothing is committed.
        `data`: the chunk bytes, kept out of the log's `request` (None: the request's own). Decided on the
        state this member has applied so far, which differs between members at append: `apply_entry`
        re-decides the state's refusals in log order."""
        return self._answer(request, lambda: self._write_stage(request, index, data))

    def apply_entry(self, request: Request, index: int, written: Response | None = None) -> Response:
        """The COMMIT stage of pipeline log entry `index` (Ozone's applyTransaction, COMMIT_DATA for a
        writeChunk), in log order per container, alike on every member: a writeChunk or putSmallFile whose
        data `write_data` handled (`written`: its answer; None when it is not known, as for an entry
        replayed from the log after a restart, whose data was written before the member acknowledged it)
        re-checks, in log order, the container's state and the block's (not finalized, a small file's
        chunk list) and then answers the data stage's refusal, if any, or commits the block it carries
        (a piggybacked putBlock, a small file's block) at BCSID `index`. Every other entry runs whole, as
        `dispatch(request, index)`."""
        self.ops.add(request.cmdType)
        return self._answer(request, lambda: self._commit_stage(request, index, written))

    def apply_small_files(self, entries: Sequence[tuple[Request, int, Response | None]]) -> list[Response]:
        """`apply_entry` for putSmallFile entries of one container queued together, in log order, each
        (request, index, written): each is checked as `apply_entry` checks it, and the blocks of those
        that pass are committed at their BCSIDs with one fsync of the chunks directory and one synced DB
        batch (`KeyValueContainer.put_blocks`); the answers, in the same order."""
        answers: list[Response | None] = []
        staged: list[tuple[int, BlockData]] = []
        container: KeyValueContainer | None = None
        for request, index, written in entries:
            self.ops.add(request.cmdType)
            try:
                container, block = self._small_file_commit(request, index, written, container)
            except Exception as e:
                answers.append(self._answer_error(request, e))
                continue
            staged.append((len(answers), block))
            answers.append(None)
        if container is not None:
            at = [(block, entries[i][1]) for i, block in staged]
            try:
                with self._bcsid_locks[container.container_id % _BCSID_STRIPES]:
                    refusals: list[Exception | None] = list(container.put_blocks(at))
            except Exception as e:
                refusals = [e] * len(staged)
            for (i, block), refused in zip(staged, refusals, strict=True):
                request, index = entries[i][0], entries[i][1]
                answers[i] = (
                    self._answer_error(request, refused)
                    if refused is not None
                    else wire.succeeded(request, wire.put_small_file_answer(block.with_bcsid(index)))
                )
        return [answer for answer in answers if answer is not None]

    def _small_file_commit(
        self, request: Request, index: int, written: Response | None, same: KeyValueContainer | None
    ) -> tuple[KeyValueContainer, BlockData]:
        """A putSmallFile's COMMIT-stage checks (`_commit_stage`): its container, which must be `same`
        (if given), and the block it commits."""
        if request.cmdType != CommandType.PutSmallFile:
            raise ProtocolError("cmdType", "is not putSmallFile")
        small = request.putSmallFile
        block, chunk = _small_file(small, request.containerID)
        container = self._logged_writable(request, small.block.blockData.blockID.replicaIndex, index)
        if same is not None and container is not same:
            raise ProtocolError("containerID", "differs from the other entries applied with it")
        _refuse_other_chunks(container, block.block_id, chunk)
        container.refuse_if_finalized(block.block_id)
        _raise_refusal(written)
        return container, replace(block, chunks=(chunk,))

    def _answer(self, request: Request, run: Callable[[], Response]) -> Response:
        try:
            return wire.succeeded(request, run())
        except Exception as e:
            return self._answer_error(request, e)

    def _answer_error(self, request: Request, e: Exception) -> Response:
        if isinstance(e, (Refused, _Answered)):
            return self._failed(request, e.result, str(e))
        if isinstance(e, ContainerError):
            return self._failed(request, result_code(e.result), str(e.args[0]))
        if isinstance(e, ProtocolError):
            return self._failed(request, _MALFORMED, str(e))
        log.error("%s on container %d failed", command_name(request.cmdType), request.containerID, exc_info=e)
        return self._failed(request, _INTERNAL_ERROR, f"{type(e).__name__}: {e}")

    def _failed(self, request: Request, result: int, message: str) -> Response:
        level = logging.WARNING if result in _LOUD else logging.DEBUG
        log.log(
            level, "%s on container %d: %s: %s",
            command_name(request.cmdType), request.containerID, result_name(result), message,
        )  # fmt: skip
        return wire.failed(request, result, message)

    def _handle(self, request: Request, index: int) -> Response:
        if request.cmdType == CommandType.TYPE_UNSPECIFIED:
            raise ProtocolError("cmdType", "is missing")
        if self.tokens is not None and not index:  # a log entry's token was checked by its leader
            self._check_token(request)
        handler = self._handlers.get(request.cmdType)
        if handler is None:
            raise Refused(Refusal.UNSUPPORTED_REQUEST, f"{command_name(request.cmdType)} is not supported")
        return handler(request, wire.request_body(request), index)

    # --- the two stages of a logged write

    def _write_stage(self, request: Request, index: int, data: bytes | memoryview | None) -> Response:
        if index <= 0:
            raise ProtocolError("index", "a data stage is that of a pipeline log entry")
        kind = request.cmdType
        if kind == CommandType.WriteChunk:
            body = request.writeChunk
            block_id, chunk, _ = wire.write_chunk_from_proto(body, request.containerID)
            container = self._writable(request, body.blockID.replicaIndex, index)
            self.write(container, block_id, chunk, body.data if data is None else data, keep_written=True)
            return wire.write_chunk_answer(None)
        if kind == CommandType.PutSmallFile:
            small = request.putSmallFile
            block, chunk = _small_file(small, request.containerID)
            container = self._writable(request, small.block.blockData.blockID.replicaIndex, index)
            _refuse_other_chunks(container, block.block_id, chunk)
            self.write(
                container, block.block_id, chunk, small.data if data is None else data, keep_written=True
            )
            return wire.write_chunk_answer(None)
        if kind == CommandType.PutBlock and data is not None:  # the chunks its leader holds (V2)
            held = wire.put_block_from_proto(held_from_data(data), request.containerID, "the leader's chunks")
            container = self._container(request)
            if container.state in (ReplicaState.OPEN, ReplicaState.CLOSING):  # else refused alike at apply
                container.check_written(held)
            return wire.put_block_answer(held)
        raise Refused(Refusal.UNSUPPORTED_REQUEST, f"{command_name(kind)} has no data stage")

    def _commit_stage(self, request: Request, index: int, written: Response | None) -> Response:
        kind = request.cmdType
        if kind == CommandType.WriteChunk:
            body = request.writeChunk
            block_id, _, block = wire.write_chunk_from_proto(body, request.containerID)
            container = self._logged_writable(request, body.blockID.replicaIndex, index)
            container.refuse_if_finalized(block_id)
            _raise_refusal(written)
            if block is not None:
                block = self._commit(container, block, index)
            return wire.write_chunk_answer(block)
        if kind == CommandType.PutSmallFile:
            container, block = self._small_file_commit(request, index, written, None)
            return wire.put_small_file_answer(self._commit(container, block, index))
        return self._handle(request, index)

    def _logged_writable(self, request: Request, replica_index: int, index: int) -> KeyValueContainer:
        """The container a logged write commits to, in log order: here (its data stage created it), the
        replica of the entry's pipeline, OPEN or CLOSING (a close after the entry is not applied yet)."""
        if index <= 0:
            raise ProtocolError("index", "a commit stage is that of a pipeline log entry")
        container = self._container(request)
        _check_replica(container, request.pipelineID, replica_index)
        if container.state not in (ReplicaState.OPEN, ReplicaState.CLOSING):
            self._refuse_not_open(container)
        return container

    # --- tokens

    def _check_token(self, request: Request) -> None:
        assert self.tokens is not None
        try:
            self.tokens.check(request)
        except BlockTokenError as e:
            raise Refused(Refusal.BLOCK_TOKEN_VERIFICATION_FAILED, str(e)) from None

    def check_token(self, request: Request) -> Callable[[], None] | None:
        """What a leader checks before it puts a client's request into the pipeline log (on the event
        loop): the token, now, raising Refused; or, when that needs a secret key from SCM, the check to
        run off the loop."""
        if self.tokens is None:
            return None
        try:
            self.tokens.check(request, may_block=False)
        except WouldBlock:
            return lambda: self._check_token(request)
        except BlockTokenError as e:
            raise Refused(Refusal.BLOCK_TOKEN_VERIFICATION_FAILED, str(e)) from None
        return None

    def check_block_token(
        self, encoded: str, block_id: BlockID, mode: AccessMode
    ) -> BlockTokenIdentifier | None:
        """A datastream header's token (blocking: run off the event loop): its identifier, whose maxLength
        the stream's packets must keep to, or None when no token is required; raises Refused."""
        if self.tokens is None:
            return None
        try:
            return self.tokens.check_block(encoded, block_id, mode)
        except BlockTokenError as e:
            raise Refused(Refusal.BLOCK_TOKEN_VERIFICATION_FAILED, str(e)) from None

    def check_chain(self, pipeline_id: str, chain: Sequence[Hop], from_client: bool = False) -> None:
        """A datastream header's chain: only other members of its pipeline, at their own datastream
        addresses, and all of them if the stream comes from a client (allocations.py); raises Refused
        (GROUP_MISMATCH). Without `allocations` (tools, tests) any chain is followed."""
        if self.allocations is None:
            return
        refusal = self.allocations.chain_refusal(pipeline_id, chain, from_client)
        if refusal:
            raise Refused(Refusal.GROUP_MISMATCH, refusal)

    # --- lookups and checks

    def _container(self, request: Request) -> KeyValueContainer:
        return self.containers.require(container_id(request.containerID, "containerID"))

    def is_direct(self, request: Request, has_log: Callable[[str], bool]) -> bool:
        """True for a request no pipeline log orders although it names a pipeline: an EC write (replica
        index > 0) or a request to an EC replica here, naming a pipeline this datanode has no log for
        (`has_log`); the dispatcher runs it at once."""
        if not request.pipelineID or has_log(request.pipelineID):
            return False
        if wire.replica_index_of(request) > 0:
            return True
        container = self.containers.get(request.containerID)
        return container is not None and container.data.replica_index > 0

    def check_writable(self, request: Request) -> Callable[[], None] | None:
        """What a leader checks before it puts a client's write or close into the pipeline log: the
        container here is the replica of the request's pipeline (`_check_replica`) and, for a write, OPEN,
        or not here yet (its first write creates it) and a volume has room for it (a full disk refuses the
        write, DISK_OUT_OF_SPACE, rather than failing the pipeline when the entry applies). Raises
        ContainerError otherwise. For a container not here yet it returns SCM's allocation check, which
        blocks (run it off the event loop): the leader asks for the whole pipeline, and its members apply
        the log's entries without asking, so an entry never creates a replica SCM did not allocate on that
        pipeline."""
        cid = container_id(request.containerID, "containerID")
        container = self.containers.get(cid)
        if request.cmdType == CommandType.CloseContainer:  # a missing replica is the close's answer, at apply
            if container is not None:
                _check_replica(container, request.pipelineID, container.data.replica_index)
            return None
        if container is None and request.cmdType == CommandType.FinalizeBlock:
            raise ContainerError(Result.CONTAINER_NOT_FOUND, f"container {cid} is not here to finalize")
        if container is None:
            self.containers.refuse_if_missing(cid)
            self.containers.volume_set.check_room()
            allocations, pipeline_id = self.allocations, request.pipelineID
            replica_index = wire.replica_index_of(request)
            if allocations is not None:
                return lambda: allocations.check(cid, pipeline_id, replica_index)
        else:
            _check_replica(container, request.pipelineID, wire.replica_index_of(request))
            if container.state is not ReplicaState.OPEN:
                self._refuse_not_open(container)
        return None

    def _writable(self, request: Request, replica_index: int, index: int) -> KeyValueContainer:
        """The container to write to, created by its first write (HddsDispatcher); refused unless OPEN
        (or CLOSING, for a log entry), and refused to a write outside the log of a RATIS container's
        pipeline."""
        cid = container_id(request.containerID, "containerID")
        container = self.writable(cid, request.pipelineID, replica_index, index)
        _refuse_outside_log(request, container, index)
        return container

    def writable(
        self, cid: int, pipeline_id: str, replica_index: int = 0, index: int = 0
    ) -> KeyValueContainer:
        """What a write finds: also a datastream's, which every chain member opens for itself (blocks;
        run it off the event loop)."""
        container = self.containers.get(cid)
        if container is None:  # created by its first write, unless it was lost (ContainerSet.missing)
            container = self._create(cid, pipeline_id, replica_index, index, exist_ok=True)
        _check_replica(container, pipeline_id, replica_index)
        state = container.state
        if state is ReplicaState.CLOSING and index:
            return container
        if state is ReplicaState.RECOVERING and not index and not pipeline_id:
            return container
        if state is not ReplicaState.OPEN:
            self._refuse_not_open(container)
        return container

    @staticmethod
    def _refuse_not_open(container: KeyValueContainer) -> None:
        cid, state = container.container_id, container.state
        result = _NOT_OPEN.get(state, Result.CLOSED_CONTAINER_IO)
        raise ContainerError(result, f"container {cid} is {state.name}: only an OPEN replica takes writes")

    def _create(
        self,
        cid: int,
        pipeline_id: str,
        replica_index: int,
        index: int,
        exist_ok: bool,
        state: ReplicaState = ReplicaState.OPEN,
    ) -> KeyValueContainer:
        """`index` > 0: a pipeline log entry, which its leader checked with SCM (check_writable)."""
        if self.allocations is not None and state is ReplicaState.RECOVERING:
            self.allocations.check_recovering(cid, replica_index)
        elif self.allocations is not None and not index:
            self.allocations.check(cid, pipeline_id, replica_index)
        try:
            created = self.containers.create(
                cid, self.datanode_uuid, pipeline_id, replica_index=replica_index, state=state
            )
        except ContainerError as e:
            existing = self.containers.get(cid)
            if exist_ok and e.result is Result.CONTAINER_EXISTS and existing is not None:
                return existing  # a concurrent first write created it
            raise
        if self.allocations is not None:
            self.allocations.forget(cid)  # here now: a write after its deletion asks SCM again
        return created

    def write(
        self,
        container: KeyValueContainer,
        block_id: BlockID,
        chunk: ChunkInfo,
        data: bytes | memoryview,
        keep_written: bool = False,
        streamed: bool = False,
    ) -> None:
        """Writes a chunk (checked against its checksums) and asks for the container's close once it (or
        its volume) fills; not for a RECOVERING replica, which SCM does not know yet and which its
        reconstruction closes. `keep_written`: a data stage's write, `streamed`: a datastream's packet
        (KeyValueContainer.write_chunk)."""
        try:
            container.write_chunk(block_id, chunk, data, keep_written=keep_written, streamed=streamed)
        finally:  # a write refused for lack of space finds the volume full too
            if container.state is not ReplicaState.RECOVERING:
                self._check_full(container)

    def _check_full(self, container: KeyValueContainer) -> None:
        cid, volume = container.container_id, container.volume
        if is_full(container.used_bytes, container.data.max_size, self.close_threshold):
            self._report_full(cid, f"reached {100 * self.close_threshold:.0f}% of its size")
        elif volume.is_full:
            self._report_full(cid, f"is on the full volume {volume.root}")

    def _report_full(self, cid: int, why: str) -> None:
        with self._full_lock:
            if cid in self._full:
                return
            self._full.add(cid)
        log.info("container %d %s: asking for it to close", cid, why)
        try:
            self.on_container_full(cid)
        except Exception:
            log.exception("on_container_full failed for container %d", cid)

    def _commit(self, container: KeyValueContainer, block: BlockData, index: int) -> BlockData:
        """Puts the block at BCSID `index` (its log entry's) or, outside a log, at the container's next
        BCSID; returns it with its BCSID."""
        with self._bcsid_locks[container.container_id % _BCSID_STRIPES]:
            bcsid = index or container.bcsid + 1
            container.put_block(block, bcsid)
        return block.with_bcsid(bcsid)

    # --- containers

    def _create_container(
        self, request: Request, body: pb.CreateContainerRequestProto, index: int
    ) -> Response:
        cid = container_id(request.containerID, "containerID")
        if not wire.container_type_supported(body):
            raise Refused(
                Refusal.UNKNOWN_CONTAINER_TYPE, f"container type {body.containerType} is not supported"
            )
        replica_index = int32(body.replicaIndex, "createContainer.replicaIndex")
        state = wire.created_state(body)
        if state is ReplicaState.RECOVERING:
            if replica_index <= 0:
                raise ProtocolError("createContainer.replicaIndex", "is missing: a RECOVERING replica is EC")
            if index:
                raise Refused(
                    Refusal.UNSUPPORTED_REQUEST, "a RECOVERING replica is created without a pipeline"
                )
            self._create(cid, "", replica_index, 0, exist_ok=False, state=ReplicaState.RECOVERING)
        elif state is ReplicaState.OPEN:
            self._create(cid, request.pipelineID, replica_index, index, exist_ok=False)
        else:
            raise Refused(Refusal.UNSUPPORTED_REQUEST, "containers are created OPEN or RECOVERING")
        return wire.create_container_answer()

    def _read_container(self, request: Request, body: pb.ReadContainerRequestProto, index: int) -> Response:
        container = self._container(request)
        data = container.data
        return wire.read_container_answer(
            container_id=container.container_id,
            path=str(container.directory),
            bytes_used=container.used_bytes,
            max_size=data.max_size,
            block_count=container.key_count,
            state=container.state,
            bcsid=container.bcsid,
            replica_index=data.replica_index,
            origin_node_id=data.origin_node_id,
        )

    def _close_container(self, request: Request, body: pb.CloseContainerRequestProto, index: int) -> Response:
        container = self._container(request)
        _refuse_outside_log(request, container, index)
        if request.pipelineID:
            _check_replica(container, request.pipelineID, container.data.replica_index)
        if container.state is not ReplicaState.RECOVERING:  # RECOVERING closes at once
            container.mark_closing()
        container.close()
        return wire.close_container_answer(container.container_id)

    def _delete_container(
        self, request: Request, body: pb.DeleteContainerRequestProto, index: int
    ) -> Response:
        self.containers.delete(container_id(request.containerID, "containerID"), force=body.forceDelete)
        return wire.delete_container_answer()

    # --- blocks

    def _put_block(self, request: Request, body: pb.PutBlockRequestProto, index: int) -> Response:
        block = wire.put_block_from_proto(body, request.containerID, "putBlock")
        container = self._writable(request, body.blockData.blockID.replicaIndex, index)
        return wire.put_block_answer(self._commit(container, block, index))

    def _get_block(self, request: Request, body: pb.GetBlockRequestProto, index: int) -> Response:
        block_id = wire.body_block(body, request.containerID, "getBlock")
        container = self._container(request)
        replica_index = body.blockID.replicaIndex
        if replica_index and replica_index != container.data.replica_index:
            raise ContainerError(
                Result.CONTAINER_NOT_FOUND,
                f"container {block_id.container_id} here is replica index {container.data.replica_index}, "
                f"not {replica_index}",
            )
        block = container.get_block(block_id, body.blockID.blockCommitSequenceId or None)
        return wire.get_block_answer(block, container.data.replica_index)

    def _committed_length(
        self, request: Request, body: pb.GetCommittedBlockLengthRequestProto, index: int
    ) -> Response:
        block_id = wire.body_block(body, request.containerID, "getCommittedBlockLength")
        block = self._container(request).get_block(block_id)
        return wire.committed_length_answer(block_id, block.bcsid, block.size)

    def _finalize_block(self, request: Request, body: pb.FinalizeBlockRequestProto, index: int) -> Response:
        block_id = wire.body_block(body, request.containerID, "finalizeBlock")
        container = self._container(request)
        _refuse_outside_log(request, container, index)
        _check_replica(container, request.pipelineID, body.blockID.replicaIndex)
        state = container.state
        if state is not ReplicaState.OPEN and not (state is ReplicaState.CLOSING and index):
            self._refuse_not_open(container)
        block = container.finalize_block(block_id)
        return wire.finalize_block_answer(block, container.data.replica_index)

    def _list_block(self, request: Request, body: pb.ListBlockRequestProto, index: int) -> Response:
        """Up to `count` blocks from startLocalID; fewer when the answer would grow too large (the client
        pages on from the last local id + 1)."""
        container = self._container(request)
        start = integer(body.startLocalID, "listBlock.startLocalID")
        if body.count == 0:
            raise ProtocolError("listBlock.count", "is missing")
        blocks = container.list_blocks(start, body.count)
        return wire.list_block_answer(blocks, container.data.replica_index, _LIST_BUDGET_BYTES)

    # --- chunks

    def _write_chunk(self, request: Request, body: pb.WriteChunkRequestProto, index: int) -> Response:
        block_id, chunk, block = wire.write_chunk_from_proto(body, request.containerID)
        container = self._writable(request, body.blockID.replicaIndex, index)
        self.write(container, block_id, chunk, body.data)
        if block is not None:
            block = self._commit(container, block, index)
        return wire.write_chunk_answer(block)

    def _read_chunk(self, request: Request, body: pb.ReadChunkRequestProto, index: int) -> Response:
        block_id, wanted = wire.read_chunk_from_proto(body, request.containerID)
        data = read_committed(self._container(request), block_id, wanted, "readChunk.chunkData")
        return wire.read_chunk_answer(body, data)

    # --- small files: a whole block in one request

    def _put_small_file(self, request: Request, body: pb.PutSmallFileRequestProto, index: int) -> Response:
        """Ozone's KeyValueHandler.handlePutSmallFile: writes the one chunk, then commits the block with
        that chunk as its whole chunk list, at BCSID `index` in a pipeline log (one entry, applied by every
        member). A small file is a whole new block: its chunk starts at 0 (MALFORMED_REQUEST otherwise),
        and a block already committed with other chunks is refused (PUT_SMALL_FILE_ERROR) before anything
        is written, since its chunk list would shrink to this one and hide committed bytes."""
        block, chunk = _small_file(body, request.containerID)
        container = self._writable(request, body.block.blockData.blockID.replicaIndex, index)
        _refuse_other_chunks(container, block.block_id, chunk)
        self.write(container, block.block_id, chunk, body.data)
        return wire.put_small_file_answer(self._commit(container, replace(block, chunks=(chunk,)), index))

    def _get_small_file(self, request: Request, body: pb.GetSmallFileRequestProto, index: int) -> Response:
        block_id = wire.small_file_block(body, request.containerID)
        container = self._container(request)
        block = container.get_block(block_id, body.block.blockID.blockCommitSequenceId or None)
        if block.size > MAX_CHUNK_BYTES:
            raise Refused(
                Refusal.GET_SMALL_FILE_ERROR, f"{block_id} has {block.size} bytes; read it by chunks"
            )
        data = b"".join(verified_read(container, block_id, c) for c in block.chunks)
        return wire.get_small_file_answer(body, data, block.chunks[-1] if block.chunks else None)

    def _echo(self, request: Request, body: pb.EchoRequestProto, index: int) -> Response:
        """freon dne's round trip: payloadSizeResp zero bytes back, bounded as OM's echoRPC."""
        size = integer(body.payloadSizeResp, "echo.payloadSizeResp", 0, MAX_ECHO_PAYLOAD_BYTES)
        return wire.echo_answer(size)


def _check_replica(container: KeyValueContainer, pipeline_id: str, replica_index: int) -> None:
    """A write or close names the replica it is for: its index, if it names one, is the replica's; one
    through a pipeline names the replica's own pipeline (its origin) and index. A stray write must not land
    in another index's cells, nor in a RECOVERING replica, which has no pipeline; nor may another
    pipeline's log, whose indexes are not this container's BCSIDs, write or close a RATIS replica (issue
    28 defect 1: a putBlock through a pipeline with the same members committed at that log's higher
    index, and every later putBlock through the container's own log was dropped as a replay)."""
    here = container.data
    if pipeline_id and (here.replica_index > 0 or here.origin_pipeline_id):
        ok = pipeline_id == here.origin_pipeline_id and replica_index == here.replica_index
    else:
        ok = replica_index in (0, here.replica_index)
    if not ok:
        raise ContainerError(
            Result.CONTAINER_NOT_FOUND,
            f"container {container.container_id} here is replica index {here.replica_index} of pipeline "
            f"{here.origin_pipeline_id or 'none'}, not {replica_index} of {pipeline_id or 'none'}",
        )


def _small_file(body: pb.PutSmallFileRequestProto, cid: int) -> tuple[BlockData, ChunkInfo]:
    """A putSmallFile's block and chunk, which starts at 0 (MALFORMED_REQUEST otherwise)."""
    block, chunk = wire.put_small_file_from_proto(body, cid)
    if chunk.offset != 0:
        raise ProtocolError("putSmallFile.chunkInfo.offset", f"is {chunk.offset}: a small file starts at 0")
    return block, chunk


def _raise_refusal(written: Response | None) -> None:
    """A data stage's refusal (`written`, not SUCCESS), answered again by its commit stage."""
    if written is not None and written.result != _SUCCESS:
        raise _Answered(written.result, written.message)


class _Answered(Exception):
    """A refusal already decided (a logged write's data stage): its Result number and message as they were."""

    def __init__(self, result: int, message: str) -> None:
        super().__init__(message)
        self.result = result


def _refuse_other_chunks(container: KeyValueContainer, block_id: BlockID, chunk: ChunkInfo) -> None:
    """A putSmallFile may commit a block anew or again with the same chunk (a replayed request), never
    replace another committed chunk list. A finalized block is left to the write's own refusal
    (BLOCK_ALREADY_FINALIZED, storage)."""
    try:
        block = container.get_block(block_id)
    except ContainerError as e:
        if e.result is Result.NO_SUCH_BLOCK:
            return
        raise
    committed = block.chunks
    if committed != (chunk,) and not block.finalized:
        raise Refused(
            Refusal.PUT_SMALL_FILE_ERROR,
            f"{block_id} is committed with {len(committed)} chunk(s) of {sum(c.length for c in committed)} "
            f"bytes: a small file is a whole new block",
        )


def _refuse_outside_log(request: Request, container: KeyValueContainer, index: int) -> None:
    """A RATIS container's replica (index 0, created through a pipeline) changes only through its pipeline's
    log: a write or close that names no pipeline is refused (UNSUPPORTED_REQUEST)."""
    here = container.data
    if not index and not request.pipelineID and here.replica_index == 0 and here.origin_pipeline_id:
        raise Refused(
            Refusal.UNSUPPORTED_REQUEST,
            f"container {container.container_id} is replicated by pipeline {here.origin_pipeline_id}: "
            f"{command_name(request.cmdType)} goes through its pipeline's log, not to one replica",
        )
