"""An EC cell stream on the datastream port (issue 14, contract 4): the header's replica index creates that
replica, the putBlock comes over gRPC straight to the datanode, and a datastream READ serves the cells."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from pyozone.datanode.datastream import DatastreamServer
from pyozone.datanode.datastream.sockets import recv_exact
from pyozone.datanode.xceiver import Dispatcher
from pyozone.hdds.checksum import ChecksumType, compute
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from pyozone.protocol import datastream as ds
from tests.unit.datanode.dns_helpers import BPC, Node, chunk, payload, put, results
from tests.unit.datanode.xceiver.test_dns_ec import EC_CLOSED, EC_OPEN, EC_PIPELINE, ec_request

CELL = 4096


@pytest.fixture
def port(dispatcher: Dispatcher) -> Iterator[int]:
    server = DatastreamServer(dispatcher, "127.0.0.1", 0, 5.0)
    yield server.start()
    server.stop()


def _stream(port: int, cid: int, index: int, cells: list[bytes], chain: tuple[ds.Hop, ...] = ()) -> ds.Ack:
    """Streams the cells as one block of replica `index`; the last ack (END's, or the refusal)."""
    header = ds.WriteHeader(cid, 1, EC_PIPELINE, ChecksumType.CRC32, BPC, chain, index)
    with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
        conn.sendall(ds.encode_header(header))
        offset = 0
        try:
            for cell in cells:
                sums = b"".join(compute(cell, ChecksumType.CRC32, BPC).checksums)
                conn.sendall(ds.encode_packet(ds.PacketKind.DATA, offset, len(cell), len(sums)) + sums + cell)
                offset += len(cell)
            conn.sendall(ds.encode_packet(ds.PacketKind.END, offset, 0, 0))
        except OSError:
            pass  # refused: its ack says why
        ack = ds.Ack(0, 0)
        for _ in range(len(cells) + 1):
            ack, length = ds.decode_ack_frame(recv_exact(conn, ds.ACK.size))
            if length:
                recv_exact(conn, length)
            if not ack.ok:
                break
        return ack


def _read(port: int, cid: int, length: int) -> tuple[int, bytes]:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
        conn.sendall(ds.encode_header(ds.ReadHeader(cid, 1, 0, 0, length)))
        result, size, message = ds.decode_read_reply(recv_exact(conn, ds.READ_REPLY.size))
        if message:
            recv_exact(conn, message)
        return result, bytes(recv_exact(conn, size)) if size else b""


def test_a_cell_stream_creates_its_replica_index_and_reads_back(
    port: int, dispatcher: Dispatcher, node_a: Node
) -> None:
    cells = [payload(n, CELL) for n in range(2)]
    ack = _stream(port, EC_OPEN, 3, cells)
    assert ack.ok and ack.acked == 2 * CELL
    container = node_a.containers.require(EC_OPEN)
    assert container.data.replica_index == 3
    chunks = [chunk(f"1_chunk_{n + 1}", n * CELL, c) for n, c in enumerate(cells)]
    answer = dispatcher.dispatch(ec_request(put(EC_OPEN, 1, chunks), 3))
    assert results([answer]) == ["SUCCESS"] and answer.logIndex == 0
    assert _read(port, EC_OPEN, 2 * CELL) == (pb.SUCCESS, b"".join(cells))


def test_a_cell_stream_scm_did_not_allocate_is_refused(port: int, node_a: Node) -> None:
    ack = _stream(port, EC_CLOSED, 1, [payload(1, CELL)])
    assert ack.result == pb.CLOSED_CONTAINER_IO and EC_CLOSED not in node_a.containers


def test_a_cell_stream_naming_a_chain_is_refused(port: int, node_a: Node) -> None:
    """Each replica index goes straight to its own datanode: an EC header with a chain is malformed."""
    hop = ds.Hop("00000000-0000-4000-8000-000000000009", "127.0.0.1", port)
    ack = _stream(port, EC_OPEN, 1, [payload(1, CELL)], chain=(hop,))
    assert ack.result == pb.MALFORMED_REQUEST and EC_OPEN not in node_a.containers


def test_a_second_stream_of_a_block_may_not_change_its_written_bytes(
    port: int, dispatcher: Dispatcher, node_a: Node
) -> None:
    """R16 D3: a stream's packet changing bytes already in the block file, committed or not, is refused
    (OVERWRITE_FLAG_REQUIRED) and writes nothing; the same bytes again (a resent stream) are taken. Ozone's
    stream opens the block file for writing and its writeChunk only warns of an overwrite not asked for; a
    replicated block's bytes are committed by a putBlock each member applies at its own time, so bytes
    changed under it would fail or split the pipeline."""
    cells = [payload(n, CELL) for n in range(2)]
    assert _stream(port, EC_OPEN, 3, cells).ok
    refused = _stream(port, EC_OPEN, 3, [payload(9, CELL)])
    assert refused.result == pb.OVERWRITE_FLAG_REQUIRED
    assert _stream(port, EC_OPEN, 3, cells).ok
    chunks = [chunk(f"1_chunk_{n + 1}", n * CELL, c) for n, c in enumerate(cells)]
    assert results([dispatcher.dispatch(ec_request(put(EC_OPEN, 1, chunks), 3))]) == ["SUCCESS"]
    assert _read(port, EC_OPEN, 2 * CELL) == (pb.SUCCESS, b"".join(cells))
