"""push_container: the source side of replicateContainer (SCM sends the command to the source, which
pushes the closed replica's archive to the target's upload).

The archive is read from disk in the executor one piece at a time while the RPC layer sends: a piece is
written only when the connection takes more (and the target stops reading it while its importer is behind),
so a replica of any size is pushed in bounded memory.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from concurrent.futures import Executor
from typing import TYPE_CHECKING

from pyozone import rpc
from pyozone.common.net import HostPort
from pyozone.common.tls import TlsStore
from pyozone.datanode.replication.service import INTRA_DATANODE
from pyozone.datanode.replication.worker import SerialWorker, export_pieces
from pyozone.datanode.storage import ContainerError, ContainerSet, ExportStream
from pyozone.datanode.xceiver.tokens import TOKEN_METADATA, TokenSigner
from pyozone.hdds.limits import MAX_DATA_MESSAGE_BYTES, REPLICATION_CHUNK_BYTES
from pyozone.hdds.security.x509 import CertRole
from pyozone.protocol.replication import upload_piece

if TYPE_CHECKING:
    from pyozone.proto.DatanodeClientProtocol_pb2 import SendContainerRequest

log = logging.getLogger(__name__)


class ReplicationError(Exception):
    """A push that did not complete; the target keeps nothing of it."""


async def push_container(
    containers: ContainerSet,
    container_id: int,
    target: HostPort,
    executor: Executor,
    replica_index: int = 0,
    timeout_s: float = 600,
    tls: TlsStore | None = None,
    tokens: TokenSigner | None = None,
) -> int:
    """Pushes a CLOSED or QUASI_CLOSED replica to `target`; returns the bytes sent. `tls`: this
    datanode's certificate, when hdds.grpc.tls.enabled; `tokens`: this datanode's signer, whose container
    token for the replica the push carries when container tokens are required."""
    what = f"push of container {container_id} to {target}"
    container = containers.get(container_id)
    if container is None:
        raise ReplicationError(f"{what}: no such container on this datanode")
    try:
        stream = ExportStream(container, REPLICATION_CHUNK_BYTES)
    except ContainerError as e:
        raise ReplicationError(f"{what}: {e}") from None
    read_errors: list[Exception] = []
    sent = 0

    async def requests() -> AsyncIterator[SendContainerRequest]:
        nonlocal sent
        try:
            async for piece, offset, last in export_pieces(stream, SerialWorker(executor)):
                sha256 = bytes.fromhex(stream.sha256 or "") if last else None
                sent = offset + len(piece)
                yield upload_piece(container_id, offset, piece, replica_index, sha256)
        except Exception as e:
            # Raising here would only cancel the call; ending the stream without its eof piece makes the
            # target abort the import and refuse the stream, and the cause is reported from here.
            read_errors.append(e)

    settings = rpc.ChannelSettings(max_message_bytes=MAX_DATA_MESSAGE_BYTES)
    async with rpc.Channel(target, settings, tls, peer=CertRole.DATANODE) as channel:
        try:
            answer = await rpc.Stub(channel, INTRA_DATANODE).upload(
                requests(), timeout=timeout_s, metadata=await _token_metadata(tokens, container_id, executor)
            )
        except rpc.RpcError as e:
            if read_errors:
                raise ReplicationError(f"{what}: reading the replica failed: {read_errors[0]}") from None
            raise ReplicationError(f"{what} failed: {e.code().name}: {e.details()}") from None
    if answer.containerID != container_id or answer.bytesReceived != sent:
        raise ReplicationError(
            f"{what}: the target acknowledged container {answer.containerID} with {answer.bytesReceived} "
            f"bytes; {sent} were sent"
        )
    log.info("pushed container %d to %s (%d bytes)", container_id, target, sent)
    return sent


async def _token_metadata(
    tokens: TokenSigner | None, container_id: int, executor: Executor
) -> tuple[tuple[str, str], ...] | None:
    if tokens is None:
        return None
    token = await asyncio.get_running_loop().run_in_executor(executor, tokens.container_token, container_id)
    return ((TOKEN_METADATA, token),) if token else None
