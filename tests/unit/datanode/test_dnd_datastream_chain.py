"""Issue 28 defect 5 on three in-process datanodes: a datastream is forwarded only along its pipeline. A
client-crafted chain naming anything but the other members at their datastream addresses (a listening
socket of the test's, a closed port, an unresolvable host, a stranger, a member twice, the receiver itself)
is refused before any connection, with one answer whatever it named; the pipeline's own chain writes."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from pyozone.datanode.daemon import Datanode
from pyozone.datanode.datastream.sockets import recv_exact
from pyozone.hdds.checksum import ChecksumType, compute
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from pyozone.protocol import datastream as ds
from tests.unit.datanode.dnd_helpers import async_test
from tests.unit.datanode.test_dnd_pipeline_log import (
    CID,
    PID,
    _get_block,
    _ok,
    _send,
    _watch,
    three_datanodes,
)

BPC = 1024
DATA = b"v2" * 2048


def _hop(dn: Datanode) -> ds.Hop:
    return ds.Hop(dn.uuid, "127.0.0.1", dn.ports.datastream)


def _stream(dn: Datanode, chain: tuple[ds.Hop, ...]) -> list[tuple[ds.Ack, str]]:
    """Streams DATA as block CID/1 of the pipeline to `dn` along `chain`: every ack with its message."""
    header = ds.WriteHeader(CID, 1, PID, ChecksumType.CRC32, BPC, chain)
    sums = b"".join(compute(DATA, ChecksumType.CRC32, BPC).checksums)
    acks: list[tuple[ds.Ack, str]] = []
    with socket.create_connection(("127.0.0.1", dn.ports.datastream), timeout=10) as conn:
        with contextlib.suppress(OSError):  # a refused header closes the connection
            conn.sendall(ds.encode_header(header))
            conn.sendall(ds.encode_packet(ds.PacketKind.DATA, 0, len(DATA), len(sums)) + sums + DATA)
            conn.sendall(ds.encode_packet(ds.PacketKind.END, len(DATA), 0, 0))
        for _ in range(2):
            ack, length = ds.decode_ack_frame(recv_exact(conn, ds.ACK.size))
            acks.append((ack, recv_exact(conn, length).decode() if length else ""))
            if not ack.ok:
                break
    return acks


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    """A port of the test's own that nothing but a forwarding datanode would connect to."""
    with socket.create_server(("127.0.0.1", 0)) as sock:
        sock.setblocking(False)
        yield sock


def _closed_port() -> int:
    with socket.create_server(("127.0.0.1", 0)) as sock:
        return int(sock.getsockname()[1])


@async_test
async def test_a_chain_naming_anything_but_the_pipelines_members_is_refused_unreached(
    tmp_path: Path, listener: socket.socket
) -> None:
    async with three_datanodes(tmp_path) as cluster:
        first, second, third = cluster.dns
        port = int(listener.getsockname()[1])
        foreign = {
            "a listening socket": ds.Hop(second.uuid, "127.0.0.1", port),
            "a closed port": ds.Hop(second.uuid, "127.0.0.1", _closed_port()),
            "an unresolvable host": ds.Hop(second.uuid, "nowhere.invalid", second.ports.datastream),
            "a stranger at a member's address": ds.Hop("stranger", "127.0.0.1", second.ports.datastream),
        }
        chains = {why: (hop, _hop(third)) for why, hop in foreign.items()}
        chains["a member twice"] = (_hop(second), _hop(second))
        chains["the receiver itself"] = (_hop(first), _hop(second))
        answers = {}
        for why, chain in chains.items():
            [(ack, message)] = await asyncio.to_thread(_stream, first, chain)
            assert ack.result == pb.GROUP_MISMATCH and ack.member == 0, (why, ack, message)
            answers[why] = message
        assert len(set(answers.values())) == 1, answers  # open, closed, unresolvable: all alike
        assert "nothing was forwarded" in answers["a closed port"]
        assert "nowhere" not in answers["a closed port"] and str(port) not in answers["a closed port"]
        with pytest.raises(BlockingIOError):
            listener.accept()  # nobody connected to the test's socket
        acks = await asyncio.to_thread(_stream, first, (_hop(second), _hop(third)))
        assert [a.ok for a, _ in acks] == [True, True] and acks[-1][0].acked == len(DATA), acks


@async_test
async def test_a_datastream_put_block_must_name_the_checksums_of_the_bytes_streamed(tmp_path: Path) -> None:
    """Issue 28 (dn2 defect 2), write pipeline V2: the members that forward a packet write it unverified,
    and the putBlock comes later through the log. One naming checksums other than those of the bytes
    streamed is refused with CHECKSUM_MISMATCH by every member alike (each reads its bytes back), so nothing
    is committed that a read would take for damage, and the pipeline stays healthy."""
    async with three_datanodes(tmp_path) as cluster:
        first, second, third = cluster.dns
        acks = await asyncio.to_thread(_stream, first, (_hop(second), _hop(third)))
        assert [a.ok for a, _ in acks] == [True, True], acks
        sums = compute(DATA, ChecksumType.CRC32, BPC).checksums
        lying = [b"\0\0\0\0", *sums[1:]]
        answers = []
        for checksums in (lying, sums):
            chunk = pb.ChunkInfo(
                chunkName="1_chunk_1", offset=0, len=len(DATA),
                checksumData=pb.ChecksumData(type=pb.CRC32, bytesPerChecksum=BPC, checksums=checksums),
            )  # fmt: skip
            block = pb.BlockData(blockID=pb.DatanodeBlockID(containerID=CID, localID=1), chunks=[chunk])
            put = pb.ContainerCommandRequestProto(
                cmdType=pb.PutBlock, containerID=CID, pipelineID=PID,
                putBlock=pb.PutBlockRequestProto(blockData=block, eof=True),
            )  # fmt: skip
            (answer,) = await _send(first, [put])
            answers.append(answer)
        assert pb.Result.Name(answers[0].result) == "CHECKSUM_MISMATCH", answers[0].message
        _ok([answers[1]])
        _ok(await _send(first, [_watch(answers[1].logIndex)]))  # every member committed the honest one
        for dn in cluster.dns:
            (got,) = await _send(dn, [_get_block(1)])
            _ok([got])
            assert got.getBlock.blockData.size == len(DATA)
