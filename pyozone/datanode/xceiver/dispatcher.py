"""Dispatcher: one ContainerCommandRequestProto in, one ContainerCommandResponseProto out (Ozone's
HddsDispatcher with its KeyValueHandler).

Pure and synchronous: it calls the storage layer, which does blocking I/O, so the RPC service runs it in
a worker pool. It never raises: every failure is a response with Ozone's Result and a message, because
a client that gets an exception instead of an answer cannot tell "retry elsewhere" from "bad request".

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
from typing import Any

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
from pyozone.datanode.xceiver.convert import (
    block_from_proto,
    block_to_proto,
    chunk_from_proto,
    chunk_to_proto,
    committed_length,
    container_data_to_proto,
)
from pyozone.datanode.xceiver.reads import read_committed, verified_read
from pyozone.datanode.xceiver.tokens import TokenVerifier, WouldBlock
from pyozone.hdds.errors import ProtocolError
from pyozone.hdds.ids import BlockID
from pyozone.hdds.limits import MAX_CHUNK_BYTES, MAX_ECHO_PAYLOAD_BYTES
from pyozone.hdds.security.block_token import AccessMode, BlockTokenError, BlockTokenIdentifier
from pyozone.hdds.states import ReplicaState
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from pyozone.protocol.common import container_id, int32, integer, sub_message
from pyozone.protocol.data import block_id_from_proto
from pyozone.protocol.datastream import Hop

log = logging.getLogger(__name__)

Response = pb.ContainerCommandResponseProto
Request = pb.ContainerCommandRequestProto

_BCSID_STRIPES = 64
_LIST_BUDGET_BYTES = MAX_CHUNK_BYTES  # a ListBlock answer stays far below the message size limit
_NOT_OPEN = {
    ReplicaState.UNHEALTHY: Result.CONTAINER_UNHEALTHY,
    ReplicaState.INVALID: Result.INVALID_CONTAINER_STATE,
    ReplicaState.DELETED: Result.CONTAINER_NOT_FOUND,
}
_LOUD = {pb.CHECKSUM_MISMATCH, pb.IO_EXCEPTION, pb.DISK_OUT_OF_SPACE, pb.CONTAINER_INTERNAL_ERROR}


class Refused(Exception):
    """A request refused with a protocol Result that the storage layer has no name for."""

    def __init__(self, result: int, message: str) -> None:
        super().__init__(message)
        self.result = result


def _type_name(kind: int) -> str:
    try:
        return pb.Type.Name(kind)
    except ValueError:
        return f"command type {kind}"


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
        return {_type_name(kind): n for kind, n in sorted(counts.items())}


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
        self._handlers: dict[int, tuple[str, Callable[[Request, Any, int], Response]]] = {
            pb.CreateContainer: ("createContainer", self._create_container),
            pb.ReadContainer: ("readContainer", self._read_container),
            pb.CloseContainer: ("closeContainer", self._close_container),
            pb.DeleteContainer: ("deleteContainer", self._delete_container),
            pb.PutBlock: ("putBlock", self._put_block),
            pb.GetBlock: ("getBlock", self._get_block),
            pb.ListBlock: ("listBlock", self._list_block),
            pb.GetCommittedBlockLength: ("getCommittedBlockLength", self._committed_length),
            pb.FinalizeBlock: ("finalizeBlock", self._finalize_block),
            pb.WriteChunk: ("writeChunk", self._write_chunk),
            pb.ReadChunk: ("readChunk", self._read_chunk),
            pb.PutSmallFile: ("putSmallFile", self._put_small_file),
            pb.GetSmallFile: ("getSmallFile", self._get_small_file),
            pb.Echo: ("echo", self._echo),
        }

    def dispatch(self, request: Request, index: int = 0) -> Response:
        """Runs one request. `index` > 0: the request is entry `index` of its pipeline's log, applied on
        this member (leader or follower): writes then also go to a CLOSING replica (a close ordered after
        them in the log has not been applied yet) and a putBlock commits at BCSID `index`."""
        self.ops.add(request.cmdType)
        try:
            response = self._handle(request, index)
            response.result = pb.SUCCESS
        except Refused as e:
            response = self._failed(request, e.result, str(e))
        except ContainerError as e:
            response = self._failed(request, pb.Result.Value(e.result.value), str(e.args[0]))
        except ProtocolError as e:
            response = self._failed(request, pb.MALFORMED_REQUEST, str(e))
        except Exception as e:
            log.exception("%s on container %d failed", _type_name(request.cmdType), request.containerID)
            response = self._failed(request, pb.CONTAINER_INTERNAL_ERROR, f"{type(e).__name__}: {e}")
        response.cmdType = request.cmdType
        response.traceID = request.traceID
        return response

    def _failed(self, request: Request, result: int, message: str) -> Response:
        level = logging.WARNING if result in _LOUD else logging.DEBUG
        log.log(
            level, "%s on container %d: %s: %s",
            _type_name(request.cmdType), request.containerID, pb.Result.Name(result), message,
        )  # fmt: skip
        return Response(result=result, message=message)

    def _handle(self, request: Request, index: int) -> Response:
        if request.cmdType == pb.TYPE_UNSPECIFIED:
            raise ProtocolError("cmdType", "is missing")
        if self.tokens is not None and not index:  # a log entry's token was checked by its leader
            self._check_token(request)
        entry = self._handlers.get(request.cmdType)
        if entry is None:
            raise Refused(pb.UNSUPPORTED_REQUEST, f"{_type_name(request.cmdType)} is not supported")
        field, handler = entry
        present = request.WhichOneof("request")
        if present != field:
            problem = "is missing" if present is None else f"is missing ({present} was sent instead)"
            raise ProtocolError(field, problem)
        return handler(request, getattr(request, field), index)

    # --- tokens

    def _check_token(self, request: Request) -> None:
        assert self.tokens is not None
        try:
            self.tokens.check(request)
        except BlockTokenError as e:
            raise Refused(pb.BLOCK_TOKEN_VERIFICATION_FAILED, str(e)) from None

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
            raise Refused(pb.BLOCK_TOKEN_VERIFICATION_FAILED, str(e)) from None
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
            raise Refused(pb.BLOCK_TOKEN_VERIFICATION_FAILED, str(e)) from None

    def check_chain(self, pipeline_id: str, chain: Sequence[Hop], from_client: bool = False) -> None:
        """A datastream header's chain: only other members of its pipeline, at their own datastream
        addresses, and all of them if the stream comes from a client (allocations.py); raises Refused
        (GROUP_MISMATCH). Without `allocations` (tools, tests) any chain is followed."""
        if self.allocations is None:
            return
        refusal = self.allocations.chain_refusal(pipeline_id, chain, from_client)
        if refusal:
            raise Refused(pb.GROUP_MISMATCH, refusal)

    # --- lookups and checks

    def _container(self, request: Request) -> KeyValueContainer:
        return self.containers.require(container_id(request.containerID, "containerID"))

    @staticmethod
    def _block_id(request: Request, proto: pb.DatanodeBlockID, field: str) -> BlockID:
        block_id = block_id_from_proto(proto, field)
        if block_id.container_id != request.containerID:
            raise ProtocolError(
                f"{field}.containerID",
                f"is {block_id.container_id}; the request is for {request.containerID}",
            )
        return block_id

    def is_direct(self, request: Request, has_log: Callable[[str], bool]) -> bool:
        """True for a request no pipeline log orders although it names a pipeline: an EC write (replica
        index > 0) or a request to an EC replica here, naming a pipeline this datanode has no log for
        (`has_log`); the dispatcher runs it at once."""
        if not request.pipelineID or has_log(request.pipelineID):
            return False
        if _replica_index(request) > 0:
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
        if request.cmdType == pb.CloseContainer:  # a missing replica is the close's own answer, at apply
            if container is not None:
                _check_replica(container, request.pipelineID, container.data.replica_index)
            return None
        if container is None and request.cmdType == pb.FinalizeBlock:
            raise ContainerError(Result.CONTAINER_NOT_FOUND, f"container {cid} is not here to finalize")
        if container is None:
            self.containers.refuse_if_missing(cid)
            self.containers.volume_set.check_room()
            allocations, pipeline_id = self.allocations, request.pipelineID
            replica_index = _replica_index(request)
            if allocations is not None:
                return lambda: allocations.check(cid, pipeline_id, replica_index)
        else:
            _check_replica(container, request.pipelineID, _replica_index(request))
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
        self, container: KeyValueContainer, block_id: BlockID, chunk: ChunkInfo, data: bytes | memoryview
    ) -> None:
        """Writes a chunk (checked against its checksums) and asks for the container's close once it (or
        its volume) fills; not for a RECOVERING replica, which SCM does not know yet and which its
        reconstruction closes."""
        try:
            container.write_chunk(block_id, chunk, data)
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
        if body.containerType not in (pb.CONTAINER_TYPE_UNSPECIFIED, pb.KeyValueContainer):
            raise Refused(pb.UNKNOWN_CONTAINER_TYPE, f"container type {body.containerType} is not supported")
        replica_index = int32(body.replicaIndex, "createContainer.replicaIndex")
        if body.state == pb.ContainerDataProto.RECOVERING:
            if replica_index <= 0:
                raise ProtocolError("createContainer.replicaIndex", "is missing: a RECOVERING replica is EC")
            if index:
                raise Refused(pb.UNSUPPORTED_REQUEST, "a RECOVERING replica is created without a pipeline")
            self._create(cid, "", replica_index, 0, exist_ok=False, state=ReplicaState.RECOVERING)
        elif body.state in (pb.ContainerDataProto.STATE_UNSPECIFIED, pb.ContainerDataProto.OPEN):
            self._create(cid, request.pipelineID, replica_index, index, exist_ok=False)
        else:
            raise Refused(pb.UNSUPPORTED_REQUEST, "containers are created OPEN or RECOVERING")
        return Response(createContainer=pb.CreateContainerResponseProto())

    def _read_container(self, request: Request, body: pb.ReadContainerRequestProto, index: int) -> Response:
        data = container_data_to_proto(self._container(request))
        return Response(readContainer=pb.ReadContainerResponseProto(containerData=data))

    def _close_container(self, request: Request, body: pb.CloseContainerRequestProto, index: int) -> Response:
        container = self._container(request)
        _refuse_outside_log(request, container, index)
        if request.pipelineID:
            _check_replica(container, request.pipelineID, container.data.replica_index)
        if container.state is not ReplicaState.RECOVERING:  # RECOVERING closes at once
            container.mark_closing()
        container.close()
        cid = container.container_id
        return Response(closeContainer=pb.CloseContainerResponseProto(containerID=cid))

    def _delete_container(
        self, request: Request, body: pb.DeleteContainerRequestProto, index: int
    ) -> Response:
        self.containers.delete(container_id(request.containerID, "containerID"), force=body.forceDelete)
        return Response(deleteContainer=pb.DeleteContainerResponseProto())

    # --- blocks

    def _put_block(self, request: Request, body: pb.PutBlockRequestProto, index: int) -> Response:
        proto = sub_message(body, "blockData", "putBlock")
        block = block_from_proto(proto, "putBlock.blockData")
        self._block_id(request, proto.blockID, "putBlock.blockData.blockID")
        container = self._writable(request, proto.blockID.replicaIndex, index)
        block = self._commit(container, block, index)
        length = committed_length(block.block_id, block.bcsid, block.size)
        return Response(putBlock=pb.PutBlockResponseProto(committedBlockLength=length))

    def _get_block(self, request: Request, body: pb.GetBlockRequestProto, index: int) -> Response:
        proto = sub_message(body, "blockID", "getBlock")
        block_id = self._block_id(request, proto, "getBlock.blockID")
        container = self._container(request)
        if proto.replicaIndex and proto.replicaIndex != container.data.replica_index:
            raise ContainerError(
                Result.CONTAINER_NOT_FOUND,
                f"container {block_id.container_id} here is replica index {container.data.replica_index}, "
                f"not {proto.replicaIndex}",
            )
        block = container.get_block(block_id, proto.blockCommitSequenceId or None)
        data = block_to_proto(block, container.data.replica_index)
        return Response(getBlock=pb.GetBlockResponseProto(blockData=data))

    def _committed_length(
        self, request: Request, body: pb.GetCommittedBlockLengthRequestProto, index: int
    ) -> Response:
        proto = sub_message(body, "blockID", "getCommittedBlockLength")
        block_id = self._block_id(request, proto, "getCommittedBlockLength.blockID")
        block = self._container(request).get_block(block_id)
        return Response(getCommittedBlockLength=committed_length(block_id, block.bcsid, block.size))

    def _finalize_block(self, request: Request, body: pb.FinalizeBlockRequestProto, index: int) -> Response:
        proto = sub_message(body, "blockID", "finalizeBlock")
        block_id = self._block_id(request, proto, "finalizeBlock.blockID")
        container = self._container(request)
        _refuse_outside_log(request, container, index)
        _check_replica(container, request.pipelineID, proto.replicaIndex)
        state = container.state
        if state is not ReplicaState.OPEN and not (state is ReplicaState.CLOSING and index):
            self._refuse_not_open(container)
        block = container.finalize_block(block_id)
        data = block_to_proto(block, container.data.replica_index)
        return Response(finalizeBlock=pb.FinalizeBlockResponseProto(blockData=data))

    def _list_block(self, request: Request, body: pb.ListBlockRequestProto, index: int) -> Response:
        """Up to `count` blocks from startLocalID; fewer when the answer would grow too large (the client
        pages on from the last local id + 1)."""
        container = self._container(request)
        start = integer(body.startLocalID, "listBlock.startLocalID")
        if body.count == 0:
            raise ProtocolError("listBlock.count", "is missing")
        answer, size = pb.ListBlockResponseProto(), 0
        for block in container.list_blocks(start, body.count):
            proto = block_to_proto(block, container.data.replica_index)
            size += proto.ByteSize()
            if answer.blockData and size > _LIST_BUDGET_BYTES:
                break
            answer.blockData.append(proto)
        return Response(listBlock=answer)

    # --- chunks

    def _write_chunk(self, request: Request, body: pb.WriteChunkRequestProto, index: int) -> Response:
        proto = sub_message(body, "blockID", "writeChunk")
        block_id = self._block_id(request, proto, "writeChunk.blockID")
        chunk = chunk_from_proto(sub_message(body, "chunkData", "writeChunk"), "writeChunk.chunkData")
        block = None
        if body.HasField("block"):  # parsed before anything is written, so a bad one writes nothing
            block_proto = sub_message(body.block, "blockData", "writeChunk.block")
            block = block_from_proto(block_proto, "writeChunk.block.blockData")
            if block.block_id != block_id:
                raise ProtocolError("writeChunk.block.blockData.blockID", f"is not {block_id}")
        container = self._writable(request, proto.replicaIndex, index)
        self.write(container, block_id, chunk, body.data)
        answer = pb.WriteChunkResponseProto()
        if block is not None:
            block = self._commit(container, block, index)
            answer.committedBlockLength.CopyFrom(committed_length(block_id, block.bcsid, block.size))
        return Response(writeChunk=answer)

    def _read_chunk(self, request: Request, body: pb.ReadChunkRequestProto, index: int) -> Response:
        proto = sub_message(body, "blockID", "readChunk")
        block_id = self._block_id(request, proto, "readChunk.blockID")
        wanted = sub_message(body, "chunkData", "readChunk")
        data = read_committed(self._container(request), block_id, wanted, "readChunk.chunkData")
        answer = pb.ReadChunkResponseProto(blockID=proto, chunkData=wanted)
        if body.readChunkVersion == pb.V1:
            step = wanted.checksumData.bytesPerChecksum or len(data) or 1
            answer.dataBuffers.buffers.extend(data[i : i + step] for i in range(0, len(data), step))
        else:
            answer.data = data
        return Response(readChunk=answer)

    # --- small files: a whole block in one request

    def _put_small_file(self, request: Request, body: pb.PutSmallFileRequestProto, index: int) -> Response:
        """Ozone's KeyValueHandler.handlePutSmallFile: writes the one chunk, then commits the block with
        that chunk as its whole chunk list, at BCSID `index` in a pipeline log (one entry, applied by every
        member). A small file is a whole new block: its chunk starts at 0 (MALFORMED_REQUEST otherwise),
        and a block already committed with other chunks is refused (PUT_SMALL_FILE_ERROR) before anything
        is written, since its chunk list would shrink to this one and hide committed bytes."""
        block_proto = sub_message(
            sub_message(body, "block", "putSmallFile"), "blockData", "putSmallFile.block"
        )
        block = block_from_proto(block_proto, "putSmallFile.block.blockData")
        self._block_id(request, block_proto.blockID, "putSmallFile.block.blockData.blockID")
        chunk = chunk_from_proto(sub_message(body, "chunkInfo", "putSmallFile"), "putSmallFile.chunkInfo")
        if chunk.offset != 0:
            raise ProtocolError(
                "putSmallFile.chunkInfo.offset", f"is {chunk.offset}: a small file starts at 0"
            )
        container = self._writable(request, block_proto.blockID.replicaIndex, index)
        _refuse_other_chunks(container, block.block_id, chunk)
        self.write(container, block.block_id, chunk, body.data)
        block = self._commit(container, replace(block, chunks=(chunk,)), index)
        length = committed_length(block.block_id, block.bcsid, block.size)
        return Response(putSmallFile=pb.PutSmallFileResponseProto(committedBlockLength=length))

    def _get_small_file(self, request: Request, body: pb.GetSmallFileRequestProto, index: int) -> Response:
        proto = sub_message(sub_message(body, "block", "getSmallFile"), "blockID", "getSmallFile.block")
        block_id = self._block_id(request, proto, "getSmallFile.block.blockID")
        container = self._container(request)
        block = container.get_block(block_id, proto.blockCommitSequenceId or None)
        if block.size > MAX_CHUNK_BYTES:
            raise Refused(pb.GET_SMALL_FILE_ERROR, f"{block_id} has {block.size} bytes; read it by chunks")
        data = b"".join(verified_read(container, block_id, c) for c in block.chunks)
        answer = pb.ReadChunkResponseProto(blockID=proto, data=data)
        if block.chunks:
            answer.chunkData.CopyFrom(chunk_to_proto(block.chunks[-1]))  # Ozone answers with the last chunk
        return Response(getSmallFile=pb.GetSmallFileResponseProto(data=answer))

    def _echo(self, request: Request, body: pb.EchoRequestProto, index: int) -> Response:
        """freon dne's round trip: payloadSizeResp zero bytes back, bounded as OM's echoRPC."""
        size = integer(body.payloadSizeResp, "echo.payloadSizeResp", 0, MAX_ECHO_PAYLOAD_BYTES)
        return Response(echo=pb.EchoResponseProto(payload=bytes(size)))


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
            pb.PUT_SMALL_FILE_ERROR,
            f"{block_id} is committed with {len(committed)} chunk(s) of {sum(c.length for c in committed)} "
            f"bytes: a small file is a whole new block",
        )


def _refuse_outside_log(request: Request, container: KeyValueContainer, index: int) -> None:
    """A RATIS container's replica (index 0, created through a pipeline) changes only through its pipeline's
    log: a write or close that names no pipeline is refused (UNSUPPORTED_REQUEST)."""
    here = container.data
    if not index and not request.pipelineID and here.replica_index == 0 and here.origin_pipeline_id:
        raise Refused(
            pb.UNSUPPORTED_REQUEST,
            f"container {container.container_id} is replicated by pipeline {here.origin_pipeline_id}: "
            f"{_type_name(request.cmdType)} goes through its pipeline's log, not to one replica",
        )


def _replica_index(request: Request) -> int:
    """The replica index a write names in its block id, or a create in its body (an EC one's is > 0)."""
    kind = request.cmdType
    if kind == pb.CreateContainer:
        return request.createContainer.replicaIndex
    if kind == pb.WriteChunk:
        return request.writeChunk.blockID.replicaIndex
    if kind == pb.PutBlock:
        return request.putBlock.blockData.blockID.replicaIndex
    if kind == pb.PutSmallFile:
        return request.putSmallFile.block.blockData.blockID.replicaIndex
    if kind == pb.FinalizeBlock:
        return request.finalizeBlock.blockID.replicaIndex
    return 0
