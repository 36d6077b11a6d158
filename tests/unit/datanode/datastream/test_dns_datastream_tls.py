"""Mutual TLS on the datastream port (issue 15 item 2), on real sockets: a chain written through TLS (by a
raw client and by the client's V2 writer) and read back by the client's reader, the refusals (a plaintext
peer, a self-made certificate, another CA's; a next member or a datanode of another CA), the handshake
deadline, and one TLS connection received on while another thread sends on it."""

from __future__ import annotations

import asyncio
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pyozone.client.config import ClientConfig
from pyozone.client.datastream import BlockDataStreamOutput
from pyozone.client.datastream_read import DatastreamReader
from pyozone.common.net import HostPort
from pyozone.common.tls import TlsStore
from pyozone.datanode.datastream import DatastreamServer
from pyozone.datanode.datastream.sockets import recv_exact, recv_into_exact
from pyozone.datanode.datastream.tls import DatastreamTls, DuplexTlsSocket
from pyozone.datanode.pipelines import PipelineSet, StreamAddress
from pyozone.datanode.storage import chunk_io
from pyozone.datanode.xceiver import Dispatcher
from pyozone.datanode.xceiver.allocations import ContainerAllocations
from pyozone.framework.datanode import ChannelPool, DatanodeCallError
from pyozone.framework.om import OmEndpoint
from pyozone.hdds.checksum import ChecksumType, compute
from pyozone.hdds.locations import DatanodeRef, KeyLocation, PipelineRef
from pyozone.hdds.security import x509 as X
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from pyozone.protocol import datastream as ds
from tests.tls_certs import CertAuthority, self_signed
from tests.unit.datanode.dnd_helpers import allocated_on
from tests.unit.datanode.dns_helpers import BPC, PIPELINE, Node, chunk, payload, put

DN = X.Identity(X.CertRole.DATANODE, "dn", "127.0.0.1")
ALICE = X.Identity(X.CertRole.USER, "alice")
PACKET = 512 * 1024
CID = 7


@pytest.fixture(scope="module")
def ca(tmp_path_factory: pytest.TempPathFactory) -> CertAuthority:
    return CertAuthority(tmp_path_factory.mktemp("ca"))


@pytest.fixture(scope="module")
def alice(ca: CertAuthority) -> TlsStore:
    return ca.store("alice", ALICE)


def _serve(node: Node, tls: TlsStore | None, handshake_timeout_s: float = 5.0) -> DatastreamServer:
    dispatcher = Dispatcher(node.containers, node.uuid, node.full.append)
    return DatastreamServer(dispatcher, "127.0.0.1", 0, 5.0, tls, handshake_timeout_s)


@pytest.fixture
def chain(node_a: Node, node_b: Node, ca: CertAuthority) -> Iterator[tuple[int, int]]:
    """Two datanodes' TLS datastream ports, each with its own CA-signed certificate."""
    a, b = _serve(node_a, ca.store("dn-a", DN)), _serve(node_b, ca.store("dn-b", DN))
    yield a.start(), b.start()
    a.stop()
    b.stop()


def _connect(port: int, tls: TlsStore | None) -> socket.socket:
    conn = socket.create_connection(("127.0.0.1", port), timeout=5)
    if tls is None:
        return conn
    try:
        return tls.client_context().wrap_socket(conn, server_hostname="127.0.0.1")
    except BaseException:
        conn.close()
        raise


def _stream(conn: socket.socket, data: bytes, chain: tuple[ds.Hop, ...]) -> list[tuple[ds.Ack, str]]:
    """Streams `data` in packets as block CID/1; every ack with its message (END's last, or the
    refusal)."""
    conn.sendall(ds.encode_header(ds.WriteHeader(CID, 1, PIPELINE, ChecksumType.CRC32, BPC, chain)))
    offsets = range(0, len(data), PACKET)
    for offset in offsets:
        piece = data[offset : offset + PACKET]
        sums = b"".join(compute(piece, ChecksumType.CRC32, BPC).checksums)
        conn.sendall(ds.encode_packet(ds.PacketKind.DATA, offset, len(piece), len(sums)) + sums + piece)
    conn.sendall(ds.encode_packet(ds.PacketKind.END, len(data), 0, 0))
    acks: list[tuple[ds.Ack, str]] = []
    for _ in range(len(offsets) + 1):
        ack, length = ds.decode_ack_frame(recv_exact(conn, ds.ACK.size))
        acks.append((ack, recv_exact(conn, length).decode() if length else ""))
        if not ack.ok:
            break
    return acks


def _answer(conn: socket.socket) -> bytes:
    """The first byte the peer answers (b"" when it closes or resets the connection)."""
    try:
        return conn.recv(1)
    except ConnectionResetError:
        return b""


def _commit(node: Node, data: bytes) -> None:
    chunks = [
        chunk(f"1_chunk_{n + 1}", o, data[o : o + PACKET]) for n, o in enumerate(range(0, len(data), PACKET))
    ]
    answer = Dispatcher(node.containers, node.uuid, node.full.append).dispatch(put(CID, 1, chunks), 1)
    assert answer.result == pb.SUCCESS, answer.message


def test_a_chain_writes_and_a_reader_reads_back_through_tls(
    chain: tuple[int, int], node_a: Node, node_b: Node, alice: TlsStore
) -> None:
    data = payload(15, 3 * PACKET + 1000)  # more than one file buffer (1 MiB) per read
    port_a, port_b = chain
    with _connect(port_a, alice) as conn:
        acks = _stream(conn, data, (ds.Hop(node_b.uuid, "127.0.0.1", port_b),))
    assert all(a.ok for a, _ in acks) and acks[-1][0].acked == len(data), acks
    for node in (node_a, node_b):
        _commit(node, data)

    async def read_back() -> tuple[bytes, bytes]:
        ref = DatanodeRef(node_b.uuid, "127.0.0.1", "127.0.0.1", None, port_b)
        reader = DatastreamReader(ref, 5.0, alice)
        try:  # two reads on one connection
            whole = bytes(await reader.read(CID, 1, 0, 0, len(data)))
            part = bytes(await reader.read(CID, 1, 0, PACKET, 2 * BPC))
        finally:
            reader.close()
        return whole, part

    whole, part = asyncio.run(read_back())
    assert whole == data and part == data[PACKET : PACKET + 2 * BPC]


def _config(tls: TlsStore) -> ClientConfig:
    return ClientConfig(
        (OmEndpoint("", HostPort("127.0.0.1", 1)),), PACKET, 4 * PACKET, 8 * PACKET, 64 * PACKET, 3, 0,
        3, 0, ChecksumType.CRC32, BPC, True, 60, True, request_timeout_s=5, tls=tls,
    )  # fmt: skip


async def _write_packets(tls: TlsStore, chain: tuple[DatanodeRef, ...], pieces: list[bytes]) -> None:
    """The client's V2 writer sends `pieces` and END along `chain` and waits for every ack (the putBlock
    through the pipeline log is not part of this test)."""
    location = KeyLocation(CID, 1, 0, 0, 0, PipelineRef(PIPELINE, chain, chain[0].uuid))
    writer = BlockDataStreamOutput(location, _config(tls), ChannelPool(), chain)
    try:
        for piece in pieces:
            writer._write_chunk(piece)
        writer._chunk_answers.append(writer._packet(ds.PacketKind.END, b"", b""))
        for answer in writer._chunk_answers:
            await answer
    finally:
        await writer.close()


def test_the_clients_v2_writer_streams_a_chain_through_tls(
    chain: tuple[int, int], node_a: Node, node_b: Node, alice: TlsStore
) -> None:
    pieces = [payload(n, PACKET) for n in range(3)]
    members = tuple(
        DatanodeRef(n.uuid, "127.0.0.1", "127.0.0.1", None, port)
        for n, port in zip((node_a, node_b), chain, strict=True)
    )
    asyncio.run(_write_packets(alice, members, pieces))
    for node in (node_a, node_b):
        block = chunk_io.block_file(node.containers.require(CID).chunks_dir, 1)
        assert block.read_bytes() == b"".join(pieces)


def test_the_clients_v2_writer_refuses_a_datanode_of_another_ca(
    node_a: Node, alice: TlsStore, tmp_path: Path, ca: CertAuthority
) -> None:
    server = _serve(node_a, CertAuthority(tmp_path / "other").store("dn-a", DN, trust=ca.cert))
    ref = DatanodeRef(node_a.uuid, "127.0.0.1", "127.0.0.1", None, server.start())
    try:
        with pytest.raises(DatanodeCallError) as refused:
            asyncio.run(_write_packets(alice, (ref,), [payload(1, PACKET)]))
        assert refused.value.unreachable and "CERTIFICATE_VERIFY_FAILED" in str(refused.value)
    finally:
        server.stop()


@pytest.mark.parametrize("who", ["plaintext", "self-made certificate", "another CA's certificate"])
def test_a_peer_without_a_certificate_of_the_cluster_fails_the_handshake(
    who: str, chain: tuple[int, int], node_a: Node, ca: CertAuthority, alice: TlsStore, tmp_path: Path
) -> None:
    port = chain[0]
    if who == "plaintext":
        with _connect(port, None) as conn:
            conn.sendall(ds.encode_header(ds.ReadHeader(CID, 1, 0, 0, 10)))
            assert _answer(conn) in (b"", b"\x15")  # no read reply: at most a TLS alert, then the end
    else:
        stranger = (
            self_signed(tmp_path, "self", ALICE, trust=ca.cert)
            if who.startswith("self")
            else CertAuthority(tmp_path / "other").store("mallory", ALICE, trust=ca.cert)
        )
        # TLS 1.3: the client's handshake ends before the server checks its certificate; it learns at
        # its first read
        with (
            pytest.raises((ssl.SSLError, ConnectionResetError, BrokenPipeError)),
            _connect(port, stranger) as conn,
        ):
            conn.sendall(ds.encode_header(ds.ReadHeader(CID, 1, 0, 0, 10)))
            conn.recv(64)
    assert CID not in node_a.containers
    with _connect(port, alice) as conn:  # and the port goes on serving the cluster's peers
        conn.sendall(ds.encode_header(ds.ReadHeader(CID, 1, 0, 0, 10)))
        result, _, _ = ds.decode_read_reply(recv_exact(conn, ds.READ_REPLY.size))
        assert result == pb.CONTAINER_NOT_FOUND


def test_a_silent_peer_is_cut_at_the_handshake_deadline(node_a: Node, ca: CertAuthority) -> None:
    server = _serve(node_a, ca.store("dn-a", DN), handshake_timeout_s=0.5)
    port = server.start()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
            start = time.monotonic()
            assert conn.recv(64) == b""
            waited = time.monotonic() - start
        assert 0.4 < waited < 3.0, waited
    finally:
        server.stop()


def test_a_next_member_with_a_foreign_certificate_is_named_as_failed(
    node_a: Node, node_b: Node, ca: CertAuthority, alice: TlsStore, tmp_path: Path
) -> None:
    a = _serve(node_a, ca.store("dn-a", DN))
    b = _serve(node_b, CertAuthority(tmp_path / "other").store("dn-b", DN, trust=ca.cert))
    port_a, port_b = a.start(), b.start()
    try:
        with _connect(port_a, alice) as conn:
            acks = _stream(conn, payload(3, PACKET), (ds.Hop(node_b.uuid, "127.0.0.1", port_b),))
        refusal, message = acks[-1]
        assert refusal.result == pb.IO_EXCEPTION and refusal.member == 1, acks
        assert message.startswith(f"TLS with {node_b.uuid}"), message
        assert CID not in node_b.containers
    finally:
        a.stop()
        b.stop()


def test_one_thread_receives_while_another_sends_on_each_end(ca: CertAuthority) -> None:
    """Both ends send and receive 8 MiB at once, each direction on its own thread (as a chain member
    relays acks up while it receives), then a shutdown from a third thread ends a blocked receive."""
    size = 8 << 20
    listener = socket.create_server(("127.0.0.1", 0))
    server_tls, client_tls = (DatastreamTls(ca.store(n, DN), 5.0) for n in ("dn-x", "dn-y"))
    ends: list[DuplexTlsSocket] = []

    def accept() -> None:
        conn, _ = listener.accept()
        conn.settimeout(5)
        tls = server_tls.wrap_accepted(conn)
        tls.handshake(5)
        ends.append(tls)

    accepting = threading.Thread(target=accept)
    accepting.start()
    client = client_tls.connect(
        socket.create_connection(("127.0.0.1", listener.getsockname()[1]), 5), "127.0.0.1"
    )
    accepting.join(10)
    server = ends[0]
    data = {end: payload(n, size) for n, end in enumerate((client, server))}
    got: dict[DuplexTlsSocket, bytearray] = {end: bytearray(size) for end in data}

    def receive(end: DuplexTlsSocket) -> None:
        recv_into_exact(end, memoryview(got[end]))

    threads = [threading.Thread(target=end.sendall, args=(data[end],)) for end in data]
    threads += [threading.Thread(target=receive, args=(end,)) for end in data]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert got[server] == data[client] and got[client] == data[server]

    ended: list[object] = []
    waiting = threading.Thread(target=lambda: ended.append(_receive_or_error(server)))
    waiting.start()
    time.sleep(0.2)  # it is inside its wait for the socket
    server.shutdown(socket.SHUT_RDWR)
    waiting.join(5)
    assert ended in ([0], [OSError]), ended
    for end in data:
        end.close()
    listener.close()


def _receive_or_error(end: DuplexTlsSocket) -> object:
    try:
        return end.recv_into(memoryview(bytearray(16)))
    except OSError:
        return OSError


def test_a_clients_stream_names_every_other_member(
    node_a: Node, node_b: Node, ca: CertAuthority, alice: TlsStore, tmp_path: Path
) -> None:
    """Issue 28 (dn2 defect 2, V2): a client that streamed other bytes to each member, or to one alone,
    had the others refuse the putBlock the leader committed, which failed the pipeline. Over mutual TLS a
    member that receives a stream from a client (no datanode certificate) refuses a chain that leaves a
    member out, before anything is written; a member receiving it from another member takes the rest of
    the chain."""
    servers = []
    for node, name in ((node_a, "dn-a"), (node_b, "dn-b")):
        pipelines = PipelineSet(tmp_path / name, node.uuid)
        allocations = ContainerAllocations(allocated_on(PIPELINE), pipelines)
        dispatcher = Dispatcher(node.containers, node.uuid, node.full.append, allocations=allocations)
        server = DatastreamServer(dispatcher, "127.0.0.1", 0, 5.0, ca.store(name, DN))
        servers.append((server, server.start(), pipelines))
    try:
        members = (node_a.uuid, node_b.uuid)
        ports = [port for _, port, _ in servers]
        streams = {u: StreamAddress("127.0.0.1", "127.0.0.1", p) for u, p in zip(members, ports, strict=True)}
        for _, _, pipelines in servers:
            pipelines.add(PIPELINE, members, node_a.uuid, None, streams)
        (_, port_a, _), (_, port_b, _) = servers
        data = payload(16, PACKET + 100)
        for port in (port_a, port_b):  # to one member alone: refused at the header
            with _connect(port, alice) as conn:
                conn.sendall(ds.encode_header(ds.WriteHeader(CID, 1, PIPELINE, ChecksumType.CRC32, BPC, ())))
                ack, length = ds.decode_ack_frame(recv_exact(conn, ds.ACK.size))
                message = recv_exact(conn, length).decode()
            assert ack.result == pb.GROUP_MISMATCH and "names every other member" in message, message
        assert CID not in node_a.containers and CID not in node_b.containers
        with _connect(port_b, alice) as conn:  # the nearest member first, then the rest of the pipeline
            acks = _stream(conn, data, (ds.Hop(node_a.uuid, "127.0.0.1", port_a),))
        assert all(a.ok for a, _ in acks) and acks[-1][0].acked == len(data), acks
    finally:
        for server, _, _ in servers:
            server.stop()
