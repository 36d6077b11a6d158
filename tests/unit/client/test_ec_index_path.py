"""Which path an EC index's cells take, and what a datanode closing a paused datastream means.

An EC key takes the datanodes' datastream ports by the replicated keys' rule (ClientConfig.uses_datastream:
size known and at least the auto threshold), else gRPC writeChunks, which have no idle cut. A datastream the
datanode closes unasked (no packet for its idle timeout) ends the block as FailureKind.IDLE and excludes
nothing; a refused packet is still the container's failure, and a member's failure reported while the writer
paused is still that member's.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Iterator

import pytest

from pyozone.client.block_output import STREAM_IDLE, BlockFailure, FailureKind, classify
from pyozone.client.config import ClientConfig
from pyozone.client.datastream import BlockDataStreamOutput
from pyozone.client.ec_index import ECIndexOutput, _StreamIndex, index_output
from pyozone.client.ec_output import _Group
from pyozone.common.net import HostPort
from pyozone.framework.datanode import ChannelPool, DatanodeCallError
from pyozone.framework.om import OmEndpoint
from pyozone.hdds.checksum import ChecksumType
from pyozone.hdds.ids import ReplicationConfig
from pyozone.hdds.locations import DatanodeRef, KeyLocation, PipelineRef
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from pyozone.protocol import datastream as ds

RS = ReplicationConfig.parse("rs-3-2-1k")
CONFIG = ClientConfig(
    om_nodes=(OmEndpoint("", HostPort("127.0.0.1", 1)),),
    buffer_size=1024,
    flush_size=4096,
    max_size=8192,
    block_size=1 << 20,
    max_retries=3,
    retry_interval_s=0,
    read_max_retries=3,
    read_retry_interval_s=0,
    checksum_type=ChecksumType.CRC32,
    bytes_per_checksum=512,
    verify_checksum=True,
    exclude_expiry_s=60,
    watch_all=True,
    request_timeout_s=5,
)


def member(i: int, datastream_port: int | None = 9855) -> DatanodeRef:
    return DatanodeRef(f"00000000-0000-4000-8000-{i:012d}", "127.0.0.1", "127.0.0.1", 9859, datastream_port)


def group_location(members: tuple[DatanodeRef, ...]) -> KeyLocation:
    indexes = tuple(range(1, len(members) + 1))
    pipeline = PipelineRef("ec-pipeline", members, "", indexes, RS)
    return KeyLocation(7, 1, 0, 0, 0, pipeline)


def test_a_key_of_unknown_or_small_size_writes_cells_by_grpc() -> None:
    """uses_datastream is the one rule: 0 (unknown) and sizes below the threshold take gRPC."""
    assert not CONFIG.uses_datastream(0)
    assert not CONFIG.uses_datastream(CONFIG.datastream_threshold - 1)
    assert CONFIG.uses_datastream(CONFIG.datastream_threshold)
    loc = group_location((member(1),))
    pool = ChannelPool()
    assert type(index_output(loc, 1, member(1), CONFIG, pool, datastream=False)) is ECIndexOutput
    assert type(index_output(loc, 1, member(1), CONFIG, pool, datastream=True)) is _StreamIndex
    no_port = member(1, datastream_port=None)
    assert type(index_output(loc, 1, no_port, CONFIG, pool, datastream=True)) is ECIndexOutput


@pytest.mark.parametrize("datastream", [False, True])
def test_a_group_gives_every_index_the_keys_path(datastream: bool) -> None:
    members = tuple(member(i) for i in range(1, 6))
    group = _Group(group_location(members), CONFIG, ChannelPool(), datastream)
    group.open()
    kinds = {type(w) for w in group.writers.values()}
    assert kinds == {_StreamIndex if datastream else ECIndexOutput}


def test_an_idle_close_is_classified_apart_and_excludes_nothing() -> None:
    error = DatanodeCallError(member(1), STREAM_IDLE, "closed while idle")
    failure = classify(error, group_location((member(1),)))
    assert failure.kind is FailureKind.IDLE and failure.datanodes == ()


class _Datanode:
    """A datastream port that acks every DATA packet, then either refuses the next packet or, with
    nothing outstanding, closes the stream unasked after `idle_s` (as write.py does after its timeout), or
    with `next_dies` then reports the next member of the chain gone (as write.py's ack relay does)."""

    def __init__(self, refuse_after: int | None, idle_s: float = 0.2, next_dies: bool = False) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.refuse_after, self.idle_s, self.next_dies = refuse_after, idle_s, next_dies
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _recv(self, conn: socket.socket, n: int) -> bytes:
        out = b""
        while len(out) < n:
            part = conn.recv(n - len(out))
            if not part:
                raise ConnectionError("closed")
            out += part
        return out

    def _serve(self) -> None:
        conn, _ = self.server.accept()
        with conn:
            _, length = ds.decode_preamble(self._recv(conn, ds.PREAMBLE.size))
            self._recv(conn, length)
            written, packets = 0, 0
            conn.settimeout(self.idle_s)
            try:
                while True:
                    frame = self._recv(conn, ds.PACKET.size)
                    _, _, length, sums = ds.PACKET.unpack(frame)
                    self._recv(conn, sums + length)
                    packets += 1
                    if self.refuse_after is not None and packets > self.refuse_after:
                        conn.sendall(ds.encode_ack(pb.CONTAINER_INTERNAL_ERROR, written, 0, "disk broke"))
                        return
                    written += length
                    conn.sendall(ds.encode_ack(ds.SUCCESS, written))
            except TimeoutError:
                if self.next_dies:
                    gone = f"{member(2).uuid} at 127.0.0.1:9855: closed its stream"
                    conn.sendall(ds.encode_ack(pb.IO_EXCEPTION, written, 1, gone))
                else:
                    conn.sendall(ds.encode_ack(pb.CONTAINER_INTERNAL_ERROR, written, 0, "no packet for 0.2s"))

    def stop(self) -> None:
        self.server.close()
        self.thread.join(5)


@pytest.fixture
def idle_datanode() -> Iterator[_Datanode]:
    dn = _Datanode(refuse_after=None)
    yield dn
    dn.stop()


@pytest.fixture
def refusing_datanode() -> Iterator[_Datanode]:
    dn = _Datanode(refuse_after=1)
    yield dn
    dn.stop()


async def _write_two(dn: _Datanode, pause_s: float, replicated: bool = False) -> BlockFailure:
    """Two packets `pause_s` apart to `dn`: an EC index's stream, or `replicated` the first member's of a
    RATIS/THREE chain; the second packet's failure, classified."""
    ref = member(1, dn.port)
    if replicated:
        chain = (ref, member(2), member(3))
        location = KeyLocation(7, 1, 0, 0, 0, PipelineRef("ratis-pipeline", chain, ref.uuid))
        writer = BlockDataStreamOutput(location, CONFIG, ChannelPool(), chain)
    else:
        writer = BlockDataStreamOutput(group_location((ref,)), CONFIG, ChannelPool(), (ref,), replica_index=1)
    try:
        writer._write_chunk(b"x" * 1024)
        await writer._chunk_answers[-1]
        await asyncio.sleep(pause_s)
        writer._write_chunk(b"y" * 1024)
        with pytest.raises(DatanodeCallError) as raised:
            await writer._chunk_answers[-1]
        return classify(raised.value, writer.location)
    finally:
        await writer.close()


def test_a_stream_closed_while_idle_ends_the_block_as_idle(idle_datanode: _Datanode) -> None:
    failure = asyncio.run(_write_two(idle_datanode, pause_s=0.6))
    assert failure.kind is FailureKind.IDLE and failure.result == STREAM_IDLE
    assert "no packet for" in failure.message


def test_a_refused_packet_is_still_the_containers_failure(refusing_datanode: _Datanode) -> None:
    failure = asyncio.run(_write_two(refusing_datanode, pause_s=0))
    assert failure.kind is FailureKind.CONTAINER and failure.result == "CONTAINER_INTERNAL_ERROR"


def test_a_member_failing_while_the_writer_paused_is_excluded_with_the_pipeline() -> None:
    """slow-run-1 (kill-last): the last member of a V2 chain died while the writer paused between packets;
    the member before it reported it gone (IO_EXCEPTION) with no packet waiting, and the client took that
    for an idle close: the block ended, nothing was excluded. A refusal naming a failed member is its
    failure whenever it comes."""
    dn = _Datanode(refuse_after=None, next_dies=True)
    try:
        failure = asyncio.run(_write_two(dn, pause_s=0.6, replicated=True))
    finally:
        dn.stop()
    assert failure.kind is FailureKind.PIPELINE and failure.result == "IO_EXCEPTION"
    assert failure.datanodes == (member(2).uuid,)
