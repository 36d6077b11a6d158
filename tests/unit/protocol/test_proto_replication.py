"""protocol/replication.py: container replication's pieces and answers."""

from __future__ import annotations

from pyozone import rpc
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from pyozone.protocol.replication import (
    INTRA_DATANODE_SERVICE,
    download_piece,
    uncompressed,
    upload_answer,
    upload_piece,
)


def test_only_the_last_piece_carries_eof_size_and_sha256() -> None:
    first = upload_piece(7, 0, b"abc", 2)
    assert first == pb.SendContainerRequest(
        containerID=7, offset=0, data=b"abc", replicaIndex=2, compression=pb.NO_COMPRESSION
    )
    last = upload_piece(7, 3, b"de", 2, b"\x01" * 32)
    assert (last.eof, last.archiveSize, last.archiveSha256) == (True, 5, b"\x01" * 32)
    piece = download_piece(7, 3, b"de", b"\x01" * 32)
    assert (piece.readOffset, piece.len, piece.eof, piece.archiveSize) == (3, 2, True, 5)
    assert not download_piece(7, 0, b"abc").eof
    assert upload_answer(7, 5) == pb.SendContainerResponse(containerID=7, bytesReceived=5)


def test_only_no_compression_is_taken() -> None:
    assert uncompressed(pb.COMPRESSION_UNSPECIFIED) and uncompressed(pb.NO_COMPRESSION)
    assert not uncompressed(pb.GZIP)


def test_the_service_has_both_ends() -> None:
    assert set(rpc.ServiceSpec.of(INTRA_DATANODE_SERVICE).methods) == {"download", "upload"}
