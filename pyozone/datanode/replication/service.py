"""ReplicationService: the datanode's IntraDatanodeProtocolService, the two ends of container replication.

upload is the target of a push (Ozone's replicateContainerCommand goes to the source, which pushes): the
archive is parsed and staged as it arrives, then verified (the stream's SHA-256 and every chunk's
checksums) and installed in one step, so the replica appears in the ContainerSet complete or not at all
(the set's listener then sends the incremental report). Any failure aborts the import and leaves nothing
behind. download streams a CLOSED or QUASI_CLOSED replica's archive to a puller.

Status codes (gRPC's): INVALID_ARGUMENT for a stream that breaks the protocol or fails verification,
ALREADY_EXISTS when the container is here or being imported, RESOURCE_EXHAUSTED above max_bytes or
without disk space, NOT_FOUND / FAILED_PRECONDITION for a download of a missing / not closed replica,
PERMISSION_DENIED for a caller that is not a datanode (mutual TLS) or a call without a container token
for its container (hdds.container.token.enabled; the source signs one, Ozone's TokenHelper).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from concurrent.futures import Executor
from typing import TYPE_CHECKING

from pyozone import rpc
from pyozone.datanode.replication.worker import SerialWorker, export_pieces
from pyozone.datanode.storage import ContainerError, ContainerImporter, ContainerSet, ExportStream, Result
from pyozone.datanode.storage.archive import EXPORTABLE
from pyozone.datanode.xceiver.tokens import TokenVerifier, call_token, intra_datanode_refusal
from pyozone.hdds.errors import ProtocolError
from pyozone.hdds.limits import MAX_DATA_MESSAGE_BYTES, REPLICATION_CHUNK_BYTES
from pyozone.hdds.security.block_token import BlockTokenError
from pyozone.protocol.common import container_id
from pyozone.protocol.replication import (
    INTRA_DATANODE_SERVICE,
    download_piece,
    uncompressed,
    upload_answer,
)

if TYPE_CHECKING:
    from pyozone.proto.DatanodeClientProtocol_pb2 import (
        CopyContainerRequestProto,
        CopyContainerResponseProto,
        SendContainerRequest,
        SendContainerResponse,
    )

log = logging.getLogger(__name__)

INTRA_DATANODE = rpc.ServiceSpec.of(INTRA_DATANODE_SERVICE)
SERVER_SETTINGS = rpc.ServerSettings(max_message_bytes=MAX_DATA_MESSAGE_BYTES, stream_queue=4)
"""The REPLICATION port's server: an upload's importer takes one piece (REPLICATION_CHUNK_BYTES) at a time,
so a few buffered ahead keep it busy; more would only hold memory for every concurrent upload."""

_CODES = {
    Result.CONTAINER_EXISTS: rpc.StatusCode.ALREADY_EXISTS,
    Result.DISK_OUT_OF_SPACE: rpc.StatusCode.RESOURCE_EXHAUSTED,
    Result.MALFORMED_REQUEST: rpc.StatusCode.INVALID_ARGUMENT,
    Result.CHECKSUM_MISMATCH: rpc.StatusCode.INVALID_ARGUMENT,
}


class Refused(Exception):
    """Ends an RPC with this status code and message."""

    def __init__(self, code: rpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code

    @classmethod
    def of(cls, error: ContainerError) -> Refused:
        return cls(_CODES.get(error.result, rpc.StatusCode.INTERNAL), str(error))


def _bad(message: str) -> Refused:
    return Refused(rpc.StatusCode.INVALID_ARGUMENT, message)


def _container_id(value: int) -> int:
    try:
        return container_id(value, "containerID")
    except ProtocolError as e:
        raise _bad(str(e)) from None


class ReplicationService:
    def __init__(
        self,
        containers: ContainerSet,
        executor: Executor,
        max_bytes: int | None = None,
        tokens: TokenVerifier | None = None,
    ) -> None:
        """`max_bytes` caps one uploaded archive (default: the importer's, twice the container size
        plus room for metadata). `tokens`: with container tokens required, a call carries one for its
        container (TOKEN_METADATA)."""
        self.containers = containers
        self.executor = executor
        self.max_bytes = max_bytes
        self.tokens = tokens
        self._importing: set[int] = set()

    # --- upload: the target of a push

    async def upload(
        self, request_iterator: AsyncIterator[SendContainerRequest], context: rpc.CallContext
    ) -> SendContainerResponse:
        try:
            self._check_caller(context)
            return await self._upload(request_iterator, call_token(context))
        except Refused as e:
            log.warning("container upload refused: %s: %s", e.code.name, e)
            await context.abort(e.code, str(e))  # raises

    async def _upload(
        self, requests: AsyncIterator[SendContainerRequest], token: str
    ) -> SendContainerResponse:
        worker, importer, cid, received = SerialWorker(self.executor), None, 0, 0
        try:
            async for piece in requests:
                if importer is None:
                    await self._check_token(token, _container_id(piece.containerID))
                    cid = self._reserve(piece)
                    importer = await self._start_import(worker, cid)
                self._check_piece(piece, cid, received, importer.max_bytes)
                received += len(piece.data)
                if piece.data:
                    await worker.run(importer.feed, piece.data)
                if piece.eof:
                    return await self._finish(worker, importer, piece, received)
            raise _bad("the stream ended before its last (eof) piece")
        except ContainerError as e:
            raise Refused.of(e) from None
        finally:
            if importer is not None:
                await worker.cleanup(importer.abort)  # a no-op after a successful finish
            self._importing.discard(cid)

    def _reserve(self, first: SendContainerRequest) -> int:
        """One import per container at a time: two would both stage it and one would fail at the end."""
        cid = _container_id(first.containerID)
        if cid in self._importing:
            raise Refused(rpc.StatusCode.ALREADY_EXISTS, f"container {cid} is being imported already")
        self._importing.add(cid)
        return cid

    async def _start_import(self, worker: SerialWorker, cid: int) -> ContainerImporter:
        return await worker.run(lambda: ContainerImporter(self.containers, cid, self.max_bytes))

    @staticmethod
    def _check_piece(piece: SendContainerRequest, cid: int, received: int, max_bytes: int) -> None:
        if piece.containerID != cid:
            raise _bad(f"a piece of container {cid}'s stream names container {piece.containerID}")
        if piece.offset != received:
            raise _bad(f"piece at offset {piece.offset}; {received} bytes were received")
        if not uncompressed(piece.compression):
            raise _bad(f"compression {piece.compression} is not supported (only NO_COMPRESSION)")
        if received + len(piece.data) > max_bytes:
            raise Refused(
                rpc.StatusCode.RESOURCE_EXHAUSTED, f"container {cid}'s archive exceeds {max_bytes} bytes"
            )

    async def _finish(
        self, worker: SerialWorker, importer: ContainerImporter, last: SendContainerRequest, received: int
    ) -> SendContainerResponse:
        cid = last.containerID
        if last.archiveSize != received:
            raise _bad(f"the archive has {last.archiveSize} bytes; {received} were received")
        if len(last.archiveSha256) != 32:
            raise _bad("the last piece carries no SHA-256 of the archive")
        container = await worker.run(importer.finish, last.archiveSha256.hex(), last.replicaIndex)
        log.info("imported container %d (%d bytes, BCSID %d)", cid, received, container.bcsid)
        return upload_answer(cid, received)

    # --- who may call

    @staticmethod
    def _check_caller(context: rpc.CallContext) -> None:
        refusal = intra_datanode_refusal(context)
        if refusal is not None:
            raise Refused(rpc.StatusCode.PERMISSION_DENIED, refusal)

    async def _check_token(self, token: str, cid: int) -> None:
        """The call's container token, when container tokens are required (off the loop: the secret key
        may come from SCM)."""
        if self.tokens is None:
            return
        try:
            await asyncio.get_running_loop().run_in_executor(
                self.executor, self.tokens.check_container, token, cid
            )
        except BlockTokenError as e:
            raise Refused(rpc.StatusCode.PERMISSION_DENIED, f"BLOCK_TOKEN_VERIFICATION_FAILED: {e}") from None

    # --- download: a puller reads a closed replica

    async def download(
        self, request: CopyContainerRequestProto, context: rpc.CallContext
    ) -> AsyncIterator[CopyContainerResponseProto]:
        try:
            self._check_caller(context)
            await self._check_token(call_token(context), _container_id(request.containerID))
            stream = self._export(request)
            async for piece in self._pieces(stream, request.containerID):
                yield piece
        except ContainerError as e:
            log.warning("download of container %d failed: %s", request.containerID, e)
            await context.abort(rpc.StatusCode.INTERNAL, str(e))
        except Refused as e:
            await context.abort(e.code, str(e))

    def _export(self, request: CopyContainerRequestProto) -> ExportStream:
        cid = _container_id(request.containerID)
        if request.readOffset:
            raise _bad("a download starts at offset 0")
        if not uncompressed(request.compression):
            raise _bad(f"compression {request.compression} is not supported (only NO_COMPRESSION)")
        container = self.containers.get(cid)
        if container is None:
            raise Refused(rpc.StatusCode.NOT_FOUND, f"no container {cid} on this datanode")
        if container.state not in EXPORTABLE:
            raise Refused(
                rpc.StatusCode.FAILED_PRECONDITION,
                f"container {cid} is {container.state.name}; only CLOSED or QUASI_CLOSED ones are copied",
            )
        return ExportStream(container, REPLICATION_CHUNK_BYTES)

    async def _pieces(self, stream: ExportStream, cid: int) -> AsyncIterator[CopyContainerResponseProto]:
        """The archive's pieces; the last one has eof, the archive's size and SHA-256."""
        async for piece, offset, last in export_pieces(stream, SerialWorker(self.executor)):
            sha256 = bytes.fromhex(stream.sha256 or "") if last else None
            yield download_piece(cid, offset, piece, sha256)


def add_replication_service(server: rpc.Server, service: ReplicationService) -> None:
    """Mounts the service; create the server with SERVER_SETTINGS."""
    server.add_service(INTRA_DATANODE, service)
