"""Write pipeline V2 (the datastream port) end to end on a live cluster of 3 datanodes, 4 MB blocks.

Keys around the auto threshold (4 MB) read back bit-identical, written by V1 below it and by V2 at and above
it unless `datastream` forces the path; a V2 key crosses a container close (between keys and mid-key);
malformed streams on a datanode's RATIS_DATASTREAM port, sent over a raw socket, are each answered with a
failure ack and closed, leave no block behind, and the datanode goes on serving.

The tests share one cluster and run in file order.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from pyozone.client import OzoneClient
from pyozone.cluster.layout import HOST
from pyozone.hdds.checksum import ChecksumType, compute
from pyozone.hdds.ids import RATIS_THREE
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from pyozone.protocol import datastream as ds
from pyozone.protocol.block import BlockLocation
from tests.e2e.cluster.cluster_helpers import (
    LiveCluster,
    MiB,
    all_block_files,
    all_running,
    allocate,
    block_files,
    member_client,
    ozone_client,
    wait_container_closed,
)
from tests.e2e.cluster.keys_cluster import BLOCK, BUCKET, VOL, keys_cluster
from tests.e2e.cluster.xceiver_client import BYTES_PER_CHECKSUM, XceiverError, chunk_info
from tests.polling import wait_for

THRESHOLD = 4 * MiB  # ozone.fs.datastream.auto.threshold's default
assert BLOCK == THRESHOLD  # the boundary sizes below are block boundaries too
SIZES = {
    "empty": 0,
    "one-byte": 1,
    "threshold-minus-1": THRESHOLD - 1,
    "threshold": THRESHOLD,
    "threshold-plus-1": THRESHOLD + 1,
    "several-blocks": 3 * BLOCK + 12345,
}
PACKET = 256 * 1024  # what the raw streams send per packet


@pytest.fixture(scope="module")
def cluster(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveCluster]:
    with keys_cluster(request, tmp_path_factory, "write-v2") as c:
        yield c


@pytest.fixture(scope="module")
def client(cluster: LiveCluster) -> Iterator[OzoneClient]:
    with ozone_client(cluster) as c:
        yield c


def reads_back(client: OzoneClient, key: str, data: bytes) -> None:
    with client.read_key(VOL, BUCKET, key) as reader:
        got = reader.readall()
    assert len(got) == len(data) and got == data, key


# ---------------------------------------------------------------------- a. sizes and the write path
@pytest.mark.parametrize(("name", "size"), SIZES.items())
def test_sizes_round_trip_on_the_path_the_threshold_picks(client: OzoneClient, name: str, size: int) -> None:
    data = os.urandom(size)
    info = client.put_key(VOL, BUCKET, f"sizes/{name}", data)
    assert info.data_size == size
    assert info.write_path == ("V2" if size >= THRESHOLD else "V1"), name
    reads_back(client, f"sizes/{name}", data)
    blocks = client.key_info(VOL, BUCKET, f"sizes/{name}").locations
    assert sum(loc.length for loc in blocks) == size
    assert len(blocks) == -(-size // BLOCK), [(loc.container_id, loc.length) for loc in blocks]


@pytest.mark.parametrize("kind", list(ChecksumType))
@pytest.mark.parametrize("datastream", [False, True], ids=["V1", "V2"])
def test_every_checksum_type_round_trips_on_both_paths(
    cluster: LiveCluster, kind: ChecksumType, datastream: bool
) -> None:
    """Each `ozone.client.checksum.type` writes chunks every replica verifies and reads back whole
    (issue 35: CRC32 stays the default; the others work end to end, docs/differences.md)."""
    data = os.urandom(BLOCK + 40_000)  # two blocks, the second's last piece short
    key = f"checksums/{kind.name}-{datastream}"
    with ozone_client(cluster, **{"ozone.client.checksum.type": kind.name}) as typed:
        info = typed.put_key(VOL, BUCKET, key, data, datastream=datastream)
        assert info.write_path == ("V2" if datastream else "V1")
        reads_back(typed, key, data)


@pytest.mark.parametrize(
    ("name", "size", "datastream", "path"),
    [
        ("v2-empty", 0, True, "V2"),
        ("v2-small", 1000, True, "V2"),
        ("v2-below", THRESHOLD - 1, True, "V2"),
        ("v1-above", THRESHOLD + 1, False, "V1"),
        ("v1-blocks", 2 * BLOCK + 7, False, "V1"),
    ],
)
def test_datastream_flag_forces_the_path(
    client: OzoneClient, name: str, size: int, datastream: bool, path: str
) -> None:
    data = os.urandom(size)
    info = client.put_key(VOL, BUCKET, f"forced/{name}", data, datastream=datastream)
    assert info.write_path == path and info.data_size == size
    reads_back(client, f"forced/{name}", data)


def test_datastream_disabled_writes_big_keys_by_v1(cluster: LiveCluster) -> None:
    data = os.urandom(THRESHOLD + 1)
    with ozone_client(cluster, **{"ozone.fs.datastream.enabled": "false"}) as client:
        assert client.put_key(VOL, BUCKET, "disabled/big", data).write_path == "V1"
        reads_back(client, "disabled/big", data)


# ---------------------------------------------------------------------- b. container close
@pytest.mark.slow
def test_300_mb_key_by_v2_over_many_blocks_and_containers(client: OzoneClient, cluster: LiveCluster) -> None:
    """75 blocks of 4 MB over 16 MB containers that fill and close while the key is written.

    How many containers is not fixed: SCM counts only the bytes datanodes report (Ozone's
    ContainerStateManagerImpl.getMatchingContainer; BlockManagerImpl counts no block it hands out), so the
    64 blocks openKey pre-allocates all go to the pipeline's open containers before any of them reports a
    byte, and a container reported full keeps taking the writes into its blocks while it is CLOSING (Ozone's
    CloseContainerEventHandler lease, ozone.scm.close.container.wait.duration). One container can hold
    several times its size (22 of the 64 blocks in one run); the blocks allocated after the datanodes reported
    their containers full go to new ones."""
    data = os.urandom(300 * MiB)
    info = client.put_key(VOL, BUCKET, "big/300mb", data)
    assert info.write_path == "V2" and info.data_size == len(data)
    locations = client.key_info(VOL, BUCKET, "big/300mb").locations
    states = {loc.container_id: loc.container_state for loc in locations}
    assert len(locations) >= 75 and len(states) > 1, states
    assert any(state != "OPEN" for state in states.values()), states
    reads_back(client, "big/300mb", data)


def close_container(cluster: LiveCluster, container_id: int) -> None:
    closed = cluster.admin("container", "close", str(container_id))
    assert closed.code == 0 or "INVALID_CONTAINER_STATE" in closed.err, closed  # closing already
    wait_container_closed(cluster, container_id)


def test_v2_keys_either_side_of_a_container_close(client: OzoneClient, cluster: LiveCluster) -> None:
    first = os.urandom(THRESHOLD + 1000)
    assert client.put_key(VOL, BUCKET, "close/before", first).write_path == "V2"
    containers = {loc.container_id for loc in client.key_info(VOL, BUCKET, "close/before").locations}
    for cid in containers:
        close_container(cluster, cid)
    second = os.urandom(THRESHOLD + 2000)
    assert client.put_key(VOL, BUCKET, "close/after", second).write_path == "V2"
    after = {loc.container_id for loc in client.key_info(VOL, BUCKET, "close/after").locations}
    assert not after & containers, (containers, after)
    reads_back(client, "close/before", first)
    reads_back(client, "close/after", second)


def test_v2_key_crosses_a_container_closed_mid_key(client: OzoneClient, cluster: LiveCluster) -> None:
    """The container of the block being streamed closes under it: the next packet is refused, the block
    (never committed) is dropped on every member and the key's bytes go to a block elsewhere."""
    data = os.urandom(2 * BLOCK - 100)
    head = 5 * MiB // 2  # two 1 MB packets go out; the rest stays in the client's buffer
    before = all_block_files(cluster)
    writer = client.create_key(VOL, BUCKET, "close/mid", len(data), datastream=True)
    with writer:
        writer.write(data[:head])
        streamed = wait_for(
            lambda: {(cid, lid) for _, cid, lid in all_block_files(cluster) - before},
            30,
            "the key's first block file on the datanodes",
        )
        assert len(streamed) == 1, streamed
        ((cid, lid),) = streamed
        wait_for(lambda: len(block_files(cluster, cid, lid)) == 3, 30, "the block file on the 3 members")
        close_container(cluster, cid)
        writer.write(data[head:])
        info = writer.close()
    assert info.write_path == "V2" and info.data_size == len(data)
    reads_back(client, "close/mid", data)
    locations = client.key_info(VOL, BUCKET, "close/mid").locations
    assert any(loc.container_id != cid for loc in locations), locations
    wait_for(lambda: not block_files(cluster, cid, lid), 30, f"the dropped block {cid}/{lid} removed")


# ---------------------------------------------------------------------- c. malformed streams
@dataclass
class Stream:
    """A block SCM allocated, with the header a writer sends its pipeline's first member."""

    location: BlockLocation
    header: ds.WriteHeader
    first: tuple[str, int]


def datastream_address(location: BlockLocation, dn: str) -> tuple[str, int]:
    details = location.members[dn]
    port = details.port("RATIS_DATASTREAM")
    assert port, details
    return details.ip_address, port


def new_stream(cluster: LiveCluster) -> Stream:
    location = allocate(cluster, RATIS_THREE)
    first, *rest = location.pipeline.nodes
    hops = tuple(ds.Hop(dn, *datastream_address(location, dn)) for dn in rest)
    block = location.block_id
    header = ds.WriteHeader(
        block.container_id, block.local_id, location.pipeline.id, ChecksumType.CRC32, BYTES_PER_CHECKSUM, hops
    )
    return Stream(location, header, datastream_address(location, first))


def packet(offset: int, data: bytes, sums: bytes | None = None) -> bytes:
    """A DATA packet; its checksums as the header says (CRC32 per 16 KiB) unless `sums` is given."""
    if sums is None:
        sums = b"".join(compute(data, ChecksumType.CRC32, BYTES_PER_CHECKSUM).checksums)
    return ds.encode_packet(ds.PacketKind.DATA, offset, len(data), len(sums)) + sums + data


def exchange(address: tuple[str, int], sent: bytes) -> list[tuple[ds.Ack, str]]:
    """Sends `sent` on a new connection and reads ack frames (read replies, for a READ) until the datanode
    closes it (bounded by the socket timeout: a datanode that neither answers nor closes fails the test)."""
    acks: list[tuple[ds.Ack, str]] = []
    reading = sent[: ds.PREAMBLE.size][5:6] == bytes([ds.Op.READ])
    with socket.create_connection(address, timeout=15) as sock:
        sock.sendall(sent)
        reader = sock.makefile("rb")
        while reading and (frame := reader.read(ds.READ_REPLY.size)):
            result, _, length = ds.decode_read_reply(frame)
            acks.append((ds.Ack(result, 0), reader.read(length).decode("utf-8", "replace")))
        while frame := reader.read(ds.ACK.size):
            assert len(frame) == ds.ACK.size, f"the stream ended inside an ack frame: {frame!r}"
            ack, length = ds.decode_ack_frame(frame)
            message = reader.read(length)
            assert len(message) == length
            acks.append((ack, message.decode("utf-8", "replace")))
    return acks


def refused(acks: list[tuple[ds.Ack, str]], result: int, problem: str) -> ds.Ack:
    """The stream ended with one failure ack of `result` naming `problem`, after only successes."""
    assert acks, "the datanode closed the stream without an answer"
    *good, (last, message) = acks
    assert all(ack.ok for ack, _ in good), acks
    assert last.result == result, (pb.Result.Name(last.result), message)
    assert problem in message, message
    return last


def uncommitted(cluster: LiveCluster, stream: Stream) -> None:
    """No member kept the broken stream's block: no block file, and GetBlock fails."""
    block = stream.location.block_id
    wait_for(
        lambda: not block_files(cluster, block.container_id, block.local_id),
        15,
        lambda: (
            f"the block files of {block} removed: {block_files(cluster, block.container_id, block.local_id)}"
        ),
    )
    for dn in stream.location.pipeline.nodes:
        with member_client(stream.location, dn) as dn_client, pytest.raises(XceiverError):
            dn_client.get_block(block)


@pytest.mark.parametrize(
    ("sent", "problem"),
    [
        (b"GET / HT", "not a datastream connection"),
        (b"\x00" * ds.PREAMBLE.size, "not a datastream connection"),
        (ds.PREAMBLE.pack(ds.MAGIC, 9, ds.Op.WRITE, 10), "version 9 is not supported"),
        (ds.PREAMBLE.pack(ds.MAGIC, ds.VERSION, 7, 10), "unknown op 7"),
        (ds.PREAMBLE.pack(ds.MAGIC, ds.VERSION, ds.Op.WRITE, 0), "header length 0"),
        (ds.PREAMBLE.pack(ds.MAGIC, ds.VERSION, ds.Op.WRITE, 5) + b"{nope", "header is not JSON"),
        (ds.PREAMBLE.pack(ds.MAGIC, ds.VERSION, ds.Op.READ, 2) + b"[]", "header is not a JSON object"),
        (ds.PREAMBLE.pack(ds.MAGIC, ds.VERSION, ds.Op.WRITE, 2) + b"{}", "header.checksum None"),
        (
            ds.PREAMBLE.pack(ds.MAGIC, ds.VERSION, ds.Op.WRITE, 16) + b'{"checksum": []}',
            "is not a checksum type",
        ),
        (
            ds.PREAMBLE.pack(ds.MAGIC, ds.VERSION, ds.Op.WRITE, ds.MAX_HEADER_BYTES)
            + b"[" * ds.MAX_HEADER_BYTES,
            "header is not JSON",
        ),
    ],
    ids=[
        "http",
        "zeros",
        "version",
        "op",
        "empty-header",
        "bad-json",
        "json-array",
        "json-fields",
        "checksum-array",
        "deep-json",
    ],
)
def test_malformed_opening_is_answered_and_closed(cluster: LiveCluster, sent: bytes, problem: str) -> None:
    refused(exchange((HOST, cluster.port("dn1", "datastream")), sent), pb.MALFORMED_REQUEST, problem)


def test_header_cut_short_by_its_length(cluster: LiveCluster) -> None:
    """The preamble announces fewer bytes than the JSON header has: it reads as broken JSON."""
    stream = new_stream(cluster)
    raw = ds.encode_header(stream.header)
    cut = ds.PREAMBLE.pack(ds.MAGIC, ds.VERSION, ds.Op.WRITE, len(raw) - ds.PREAMBLE.size - 10)
    sent = cut + raw[ds.PREAMBLE.size : -10]
    refused(exchange(stream.first, sent), pb.MALFORMED_REQUEST, "header is not JSON")
    uncommitted(cluster, stream)


def test_stream_that_ends_inside_its_header_is_refused(cluster: LiveCluster) -> None:
    """The writer closes its side halfway through the header: it still hears why (MALFORMED_REQUEST)."""
    stream = new_stream(cluster)
    raw = ds.encode_header(stream.header)
    with socket.create_connection(stream.first, timeout=15) as sock:
        sock.sendall(raw[: len(raw) // 2])
        sock.shutdown(socket.SHUT_WR)
        answer = sock.makefile("rb").read()
    ack, _ = ds.decode_ack_frame(answer[: ds.ACK.size])
    assert ack.result == pb.MALFORMED_REQUEST and b"truncated" in answer, answer
    uncommitted(cluster, stream)


def test_packet_with_the_wrong_checksum_byte_count(cluster: LiveCluster) -> None:
    stream = new_stream(cluster)
    good = os.urandom(PACKET)
    bad = ds.encode_packet(ds.PacketKind.DATA, PACKET, PACKET, 4)  # 16 pieces need 64 checksum bytes
    sent = ds.encode_header(stream.header) + packet(0, good) + bad
    last = refused(exchange(stream.first, sent), pb.MALFORMED_REQUEST, "carries 4 checksum bytes, not 64")
    assert last.acked == PACKET and last.member == 0
    uncommitted(cluster, stream)


def test_packet_whose_data_does_not_match_its_checksums(cluster: LiveCluster) -> None:
    stream = new_stream(cluster)
    good, second = os.urandom(PACKET), bytearray(os.urandom(PACKET))
    sums = b"".join(compute(second, ChecksumType.CRC32, BYTES_PER_CHECKSUM).checksums)
    second[PACKET // 2] ^= 0xFF  # one bit flipped on the way
    sent = ds.encode_header(stream.header) + packet(0, good) + packet(PACKET, bytes(second), sums)
    last = refused(exchange(stream.first, sent), pb.CHECKSUM_MISMATCH, "")
    assert last.acked == PACKET
    uncommitted(cluster, stream)


def test_packet_at_the_wrong_offset_and_end_with_data(cluster: LiveCluster) -> None:
    for tail, problem in [
        (packet(PACKET + 1, os.urandom(100)), f"packet at offset {PACKET + 1}; the block has {PACKET}"),
        (ds.encode_packet(ds.PacketKind.END, PACKET, 1, 0), "an END packet carries no data"),
    ]:
        stream = new_stream(cluster)
        sent = ds.encode_header(stream.header) + packet(0, os.urandom(PACKET)) + tail
        refused(exchange(stream.first, sent), pb.MALFORMED_REQUEST, problem)
        uncommitted(cluster, stream)


def test_raw_stream_of_good_packets_commits_through_the_pipeline(cluster: LiveCluster) -> None:
    """The control for the malformed streams: the same framing, well formed, is acked packet by packet
    and END; a putBlock through the pipeline's leader then commits exactly these bytes on every member."""
    stream = new_stream(cluster)
    data = os.urandom(2 * PACKET + 999)
    pieces = [data[i : i + PACKET] for i in range(0, len(data), PACKET)]
    sent = ds.encode_header(stream.header) + b"".join(packet(i * PACKET, p) for i, p in enumerate(pieces))
    acks = exchange(stream.first, sent + ds.encode_packet(ds.PacketKind.END, len(data), 0, 0))
    assert [(ack.result, ack.acked) for ack, _ in acks] == [
        (ds.SUCCESS, PACKET),
        (ds.SUCCESS, 2 * PACKET),
        (ds.SUCCESS, len(data)),
        (ds.SUCCESS, len(data)),
    ], acks
    location = stream.location
    block = location.block_id
    chunks = [chunk_info(f"{block.local_id}_chunk_{i + 1}", i * PACKET, p) for i, p in enumerate(pieces)]
    leader = location.pipeline.leader or location.pipeline.suggested_leader or location.pipeline.nodes[0]
    with member_client(location, leader) as leader_client:
        answer = leader_client.call(leader_client.put_block_request(block, chunks))
        watch = pb.WatchForCommitRequestProto(index=answer.logIndex, replication=pb.ALL_COMMITTED)
        leader_client.call(leader_client.request(pb.WatchForCommit, block.container_id, watchForCommit=watch))
    for dn in location.pipeline.nodes:
        with member_client(location, dn) as dn_client:
            assert dn_client.read_block(block) == data, dn


def test_datanodes_still_serve_after_the_malformed_streams(cluster: LiveCluster, client: OzoneClient) -> None:
    data = os.urandom(THRESHOLD + 4321)
    assert client.put_key(VOL, BUCKET, "after/malformed", data).write_path == "V2"
    reads_back(client, "after/malformed", data)
    all_running(cluster)
