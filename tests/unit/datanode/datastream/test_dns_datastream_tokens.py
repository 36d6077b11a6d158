"""Issue 28 defect 2 on the datastream port: with block tokens required, a stream's packets keep to its
token's maxLength; the packet that would pass it is refused (BLOCK_TOKEN_VERIFICATION_FAILED, naming the
limit) before it is written or forwarded."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from pyozone.datanode.datastream import DatastreamServer
from pyozone.datanode.datastream.sockets import recv_exact
from pyozone.datanode.storage import chunk_io
from pyozone.datanode.xceiver import Dispatcher
from pyozone.datanode.xceiver.tokens import TokenVerifier
from pyozone.hdds.checksum import ChecksumType, compute
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from pyozone.protocol import datastream as ds
from tests.unit.datanode.dns_helpers import BPC, PIPELINE, Node, payload
from tests.unit.datanode.xceiver.test_dns_tokens import CLOCK, FakeKeys, token

PACKET = 4 * BPC
CID = 7


@pytest.fixture
def keys() -> FakeKeys:
    return FakeKeys()


@pytest.fixture
def port(node_a: Node, keys: FakeKeys) -> Iterator[int]:
    tokens = TokenVerifier(keys, block_tokens=True, container_tokens=False, clock=CLOCK)
    server = DatastreamServer(Dispatcher(node_a.containers, node_a.uuid, node_a.full.append, tokens=tokens),
                              "127.0.0.1", 0, 5.0)  # fmt: skip
    yield server.start()
    server.stop()


def _stream(port: int, encoded: str, data: bytes) -> list[tuple[ds.Ack, str]]:
    """Streams `data` in packets as block CID/1; every ack with its message, up to END's or a refusal."""
    header = ds.WriteHeader(CID, 1, PIPELINE, ChecksumType.CRC32, BPC, (), 0, encoded)
    acks: list[tuple[ds.Ack, str]] = []
    with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
        conn.sendall(ds.encode_header(header))
        for offset in range(0, len(data), PACKET):
            piece = data[offset : offset + PACKET]
            sums = b"".join(compute(piece, ChecksumType.CRC32, BPC).checksums)
            conn.sendall(ds.encode_packet(ds.PacketKind.DATA, offset, len(piece), len(sums)) + sums + piece)
            ack, length = ds.decode_ack_frame(recv_exact(conn, ds.ACK.size))
            acks.append((ack, recv_exact(conn, length).decode() if length else ""))
            if not ack.ok:
                return acks
        conn.sendall(ds.encode_packet(ds.PacketKind.END, len(data), 0, 0))
        ack, length = ds.decode_ack_frame(recv_exact(conn, ds.ACK.size))
        acks.append((ack, recv_exact(conn, length).decode() if length else ""))
    return acks


def test_a_packet_beyond_the_tokens_max_length_is_refused_unwritten(
    port: int, node_a: Node, keys: FakeKeys
) -> None:
    data = payload(3, 2 * PACKET)
    acks = _stream(port, token(keys, CID, 1, max_length=PACKET), data)
    assert [a.ok for a, _ in acks] == [True, False], acks
    refused, message = acks[-1]
    assert refused.result == pb.BLOCK_TOKEN_VERIFICATION_FAILED and refused.acked == PACKET
    assert message.startswith(f"beyond maxLength: a datastream packet reaches byte {2 * PACKET} of ")
    assert f"allows {PACKET} bytes (maxLength)" in message
    block_file = chunk_io.block_file(node_a.containers.require(CID).chunks_dir, 1)
    assert chunk_io.file_size(block_file) == PACKET  # the refused packet was not written
    assert [a.ok for a, _ in _stream(port, token(keys, CID, 1, max_length=2 * PACKET), data)] == [True] * 3
