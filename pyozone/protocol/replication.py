"""Container replication's wire: IntraDatanodeProtocolService, a closed replica's archive in pieces of at
most REPLICATION_CHUNK_BYTES (pyozone.hdds.limits), pushed (upload, Ozone's SendContainerRequest) or pulled
(download, CopyContainerRequestProto/ResponseProto).

The last piece of either stream sets eof and carries the whole archive's size and SHA-256, which the
receiver verifies before it imports. The service reads the plain fields of the pieces it is handed
(containerID, offset, data, ...): converting each piece would only add a copy of its data.
"""

from __future__ import annotations

from google.protobuf.descriptor import ServiceDescriptor

from pyozone.proto import DatanodeClientProtocol_pb2 as pb

INTRA_DATANODE_SERVICE: ServiceDescriptor = pb.DESCRIPTOR.services_by_name["IntraDatanodeProtocolService"]
"""Datanode to datanode, on the datanode's REPLICATION port (rpc.ServiceSpec.of makes the server's and the
stub's)."""

_UNCOMPRESSED = frozenset({pb.COMPRESSION_UNSPECIFIED, pb.NO_COMPRESSION})


def uncompressed(compression: int) -> bool:
    """A piece's or a download's CopyContainerCompressProto names no compression (unspecified reads as
    NO_COMPRESSION); pyozone compresses no archive."""
    return compression in _UNCOMPRESSED


def upload_piece(
    container_id: int, offset: int, data: bytes, replica_index: int, archive_sha256: bytes | None = None
) -> pb.SendContainerRequest:
    """One piece of a push at `offset` of the archive; `archive_sha256` (the whole archive's) marks the
    last."""
    request = pb.SendContainerRequest(
        containerID=container_id, offset=offset, data=data, replicaIndex=replica_index,
        compression=pb.NO_COMPRESSION,
    )  # fmt: skip
    if archive_sha256 is not None:
        request.eof, request.archiveSize, request.archiveSha256 = True, offset + len(data), archive_sha256
    return request


def upload_answer(container_id: int, received: int) -> pb.SendContainerResponse:
    """What the target received and imported."""
    return pb.SendContainerResponse(containerID=container_id, bytesReceived=received)


def download_piece(
    container_id: int, offset: int, data: bytes, archive_sha256: bytes | None = None
) -> pb.CopyContainerResponseProto:
    """One piece of a download at `offset` of the archive; `archive_sha256` (the whole archive's) marks the
    last."""
    answer = pb.CopyContainerResponseProto(
        containerID=container_id, readOffset=offset, len=len(data), data=data
    )
    if archive_sha256 is not None:
        answer.eof, answer.archiveSize, answer.archiveSha256 = True, offset + len(data), archive_sha256
    return answer
