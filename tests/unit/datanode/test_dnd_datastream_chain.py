"""Issue 28 defect 5 on three in-process datanodes: a datastream is forwarded only along its pipeline. A
client-crafted chain naming anything but the other members at their datastream addresses (a listening
socket of the test's, a closed port, an unresolvable host, a stranger, a member twice, the receiver itself)
is refused before any connection, with one answer whatever it named; the pipeline's own chain writes."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from pyozone.datanode.daemon import Datanode
from pyozone.datanode.datastream.sockets import recv_exact
from pyozone.datanode.datastream.write import ChainWriter
from pyozone.datanode.storage import chunk_io
from pyozone.hdds.checksum import ChecksumType, compute
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from pyozone.protocol import datastream as ds
from tests.unit.datanode.dnd_helpers import async_test, wait_for_beat
from tests.unit.datanode.test_dnd_pipeline_log import (
    CID,
    PID,
    _applied_everywhere,
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


def _stream(
    dn: Datanode, chain: tuple[ds.Hop, ...], data: bytes = DATA, sums_of: bytes | None = None
) -> list[tuple[ds.Ack, str]]:
    """Streams `data` (with the checksums of `sums_of`, by default its own) as block CID/1 of the
    pipeline to `dn` along `chain`: every ack with its message."""
    header = ds.WriteHeader(CID, 1, PID, ChecksumType.CRC32, BPC, chain)
    sums = b"".join(compute(data if sums_of is None else sums_of, ChecksumType.CRC32, BPC).checksums)
    acks: list[tuple[ds.Ack, str]] = []
    with socket.create_connection(("127.0.0.1", dn.ports.datastream), timeout=10) as conn:
        with contextlib.suppress(OSError):  # a refused header closes the connection
            conn.sendall(ds.encode_header(header))
            conn.sendall(ds.encode_packet(ds.PacketKind.DATA, 0, len(data), len(sums)) + sums + data)
            conn.sendall(ds.encode_packet(ds.PacketKind.END, len(data), 0, 0))
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
    """Issue 28 (dn2 defect 2), write pipeline V2: the putBlock comes after the stream, through the log.
    One naming checksums other than those of the bytes streamed is refused with CHECKSUM_MISMATCH by every
    member alike, so nothing is committed that a read would take for damage, and the pipeline stays
    healthy."""
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
        await _applied_everywhere(cluster.dns, answers[1].logIndex)
        for dn in cluster.dns:
            (got,) = await _send(dn, [_get_block(1)])
            _ok([got])
            assert got.getBlock.blockData.size == len(DATA)


def _put_block(data: bytes) -> pb.ContainerCommandRequestProto:
    """The putBlock of block CID/1 as one chunk with the checksums of `data`."""
    sums = compute(data, ChecksumType.CRC32, BPC).checksums
    chunk = pb.ChunkInfo(
        chunkName="1_chunk_1", offset=0, len=len(data),
        checksumData=pb.ChecksumData(type=pb.CRC32, bytesPerChecksum=BPC, checksums=sums),
    )  # fmt: skip
    block = pb.BlockData(blockID=pb.DatanodeBlockID(containerID=CID, localID=1), chunks=[chunk])
    return pb.ContainerCommandRequestProto(
        cmdType=pb.PutBlock, containerID=CID, pipelineID=PID,
        putBlock=pb.PutBlockRequestProto(blockData=block, eof=True),
    )  # fmt: skip


@async_test
async def test_a_packet_whose_bytes_do_not_match_its_checksums_is_written_by_no_member(
    tmp_path: Path,
) -> None:
    """Issue 28 (dn3 defect 3): only the chain's last member verified a packet; the others wrote it
    unverified. A client that put the leader last sent bytes with another's checksums: the followers
    wrote them, the leader refused, and the putBlock that followed then failed the followers (the pipeline
    closed by one writer) or, naming the bytes' own checksums, was refused by the leader alone while the
    followers committed it. Every member verifies before it writes: the first refuses, none holds the
    bytes, and every later putBlock gets one answer on every member."""
    evil = b"ev" * (len(DATA) // 2)
    async with three_datanodes(tmp_path) as cluster:
        leader, f1, f2 = cluster.dns
        acks = await asyncio.to_thread(_stream, leader, (_hop(f1), _hop(f2)))
        assert [a.ok for a, _ in acks] == [True, True], acks
        [(ack, message)] = await asyncio.to_thread(_stream, f1, (_hop(f2), _hop(leader)), evil, DATA)
        assert ack.result == pb.CHECKSUM_MISMATCH and ack.member == 0, (ack, message)
        (refused,) = await _send(leader, [_put_block(evil)])
        assert pb.Result.Name(refused.result) == "CHECKSUM_MISMATCH", refused.message
        (put,) = await _send(leader, [_put_block(DATA)])
        _ok([put])
        _ok(await _send(leader, [_watch(put.logIndex)]))  # every member committed the honest bytes
        await _applied_everywhere(cluster.dns, put.logIndex)
        for dn in cluster.dns:
            (got,) = await _send(dn, [_get_block(1)])
            _ok([got])
            assert got.getBlock.blockData.size == len(DATA)


@async_test
async def test_a_bad_packet_the_next_member_refused_first_is_still_the_senders_fault(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A member forwards a packet before it verifies it, so the next member may refuse a bad packet first:
    that refusal (the next member's, CHECKSUM_MISMATCH) went up as the answer, and the client excluded a
    healthy datanode. A member whose next one refused a packet for its checksums waits for its own
    verdict on it, and its own refusal (member 0: the sender's bytes) is the answer."""
    evil = b"ev" * (len(DATA) // 2)
    async with three_datanodes(tmp_path) as cluster:
        leader, f1, f2 = cluster.dns
        write, own_verdict = f1.dispatcher.write, ChainWriter._own_verdict
        next_refused = threading.Event()

        def waiting_verdict(self: ChainWriter, offset: int) -> bool:
            if self.dispatcher is f1.dispatcher:
                next_refused.set()
            return own_verdict(self, offset)

        def late_write(*args: object, **kwargs: object) -> None:
            # f1 writes (and so verifies) only once the next member's refusal has reached it
            assert next_refused.wait(30), "the next member's refusal never reached f1"
            write(*args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(ChainWriter, "_own_verdict", waiting_verdict)
        monkeypatch.setattr(f1.dispatcher, "write", late_write)
        [(ack, message)] = await asyncio.to_thread(_stream, f1, (_hop(f2), _hop(leader)), evil, DATA)
        assert ack.result == pb.CHECKSUM_MISMATCH and ack.member == 0, (ack, message)


def _stream_alone(dns: list[Datanode], datas: list[bytes]) -> None:
    """Streams block CID/1 to each member alone (no chain: a plaintext cluster allows it), each its own
    bytes with their own checksums, so that each member verifies and holds what it was sent."""
    for dn, data in zip(dns, datas, strict=True):
        acks = _stream(dn, (), data)
        assert [a.ok for a, _ in acks] == [True, True], (dn.uuid, acks)


def _last_index(dn: Datanode) -> int:
    group = dn.groups.get(PID)
    assert group is not None
    return group.member.status().last_index


async def _has_block(dn: Datanode) -> bool:
    (got,) = await _send(dn, [_get_block(1)])
    return got.result == pb.SUCCESS


@async_test
async def test_a_follower_committing_what_the_leader_refused_has_failed(tmp_path: Path) -> None:
    """Issue 28 (dn3 defect 3), issue 30: members that hold different bytes (each streamed alone,
    which only a plaintext cluster allows) took a putBlock differently, and on the Raft core no leader
    judges its followers' applies: a follower committed what its leader did not hold. The putBlock's entry
    carries the chunks the leader holds (their lengths and checksums, checked on the leader before it
    logged it); a follower whose own bytes differ fails that entry's data stage at append: it never
    applies the putBlock, stops for the group, and SCM is asked to close the pipeline; the leader and the
    follower that holds its bytes commit it."""
    evil = b"ev" * (len(DATA) // 2)
    async with three_datanodes(tmp_path) as cluster:
        leader, f1, f2 = cluster.dns
        await asyncio.to_thread(_stream_alone, [leader, f1, f2], [DATA, evil, DATA])
        (put,) = await _send(leader, [_put_block(DATA)])
        _ok([put])
        beat = await wait_for_beat(cluster.scms[1], lambda hb: hb.pipeline_actions)
        reason = beat.pipeline_actions[0].reason
        assert "this member's bytes are not the leader's" in reason and "CHECKSUM_MISMATCH" in reason, reason
        await _applied_everywhere([leader, f2], put.logIndex)
        assert await _has_block(leader) and await _has_block(f2)
        assert not await _has_block(f1)  # never applied
        group = f1.groups.get(PID)
        assert group is not None and group.failure is not None
        assert f1.containers.require(CID).bcsid < put.logIndex


@async_test
async def test_equal_streamed_bytes_commit_on_every_member_and_keep_the_pipeline(tmp_path: Path) -> None:
    """The putBlock over bytes each member streamed alone, the same bytes: every member's data stage finds
    the leader's chunks, every member commits, no member fails."""
    async with three_datanodes(tmp_path) as cluster:
        dns = cluster.dns
        await asyncio.to_thread(_stream_alone, dns, [DATA, DATA, DATA])
        (put,) = await _send(dns[0], [_put_block(DATA)])
        _ok([put])
        _ok(await _send(dns[0], [_watch(put.logIndex)]))  # ALL_COMMITTED: every member acknowledged it
        await _applied_everywhere(dns, put.logIndex)
        for dn in dns:
            assert await _has_block(dn)
            group = dn.groups.get(PID)
            assert group is not None and group.failure is None
        assert not any(hb.pipeline_actions for scm in cluster.scms for hb in scm.beats())


@async_test
async def test_a_leader_whose_streamed_bytes_differ_refuses_the_put_block_before_logging_it(
    tmp_path: Path,
) -> None:
    """The leader checks its own streamed bytes against the putBlock before it logs it: bytes other than
    the ones named are refused CHECKSUM_MISMATCH with no log entry made, so no follower commits what the
    leader does not hold, and the pipeline stays healthy."""
    evil = b"ev" * (len(DATA) // 2)
    async with three_datanodes(tmp_path) as cluster:
        leader, f1, f2 = cluster.dns
        await asyncio.to_thread(_stream_alone, [leader, f1, f2], [evil, DATA, DATA])
        before = _last_index(leader)
        (refused,) = await _send(leader, [_put_block(DATA)])
        assert pb.Result.Name(refused.result) == "CHECKSUM_MISMATCH", refused.message
        assert "names checksums that are not those of the bytes written" in refused.message
        assert _last_index(leader) == before  # nothing logged
        for dn in (leader, f1, f2):
            assert not await _has_block(dn)
            group = dn.groups.get(PID)
            assert group is not None and group.failure is None


@async_test
async def test_a_write_chunk_committing_its_block_over_streamed_bytes_is_refused_before_logging_it(
    tmp_path: Path,
) -> None:
    """R20 D2: a writeChunk that commits its block with it (Ozone's putBlock piggybacking) over streamed
    bytes cannot carry the leader's chunks (its data are its own bytes), so each member would judge its
    own streamed bytes alone at apply: it is refused UNSUPPORTED_REQUEST before anything is logged."""
    async with three_datanodes(tmp_path) as cluster:
        leader, f1, f2 = cluster.dns
        acks = await asyncio.to_thread(_stream, leader, (_hop(f1), _hop(f2)))
        assert [a.ok for a, _ in acks] == [True, True], acks
        streamed_chunk = _put_block(DATA).putBlock.blockData.chunks[0]
        tail = b"t" * 100
        sums = compute(tail, ChecksumType.CRC32, BPC).checksums
        last = pb.ChunkInfo(
            chunkName="1_chunk_2", offset=len(DATA), len=len(tail),
            checksumData=pb.ChecksumData(type=pb.CRC32, bytesPerChecksum=BPC, checksums=sums),
        )  # fmt: skip
        block_id = pb.DatanodeBlockID(containerID=CID, localID=1)
        block = pb.BlockData(blockID=block_id, chunks=[streamed_chunk, last])
        piggybacking = pb.ContainerCommandRequestProto(
            cmdType=pb.WriteChunk, containerID=CID, pipelineID=PID,
            writeChunk=pb.WriteChunkRequestProto(
                blockID=block_id, chunkData=last, data=tail, block=pb.PutBlockRequestProto(blockData=block)
            ),
        )  # fmt: skip
        before = _last_index(leader)
        (refused,) = await _send(leader, [piggybacking])
        assert pb.Result.Name(refused.result) == "UNSUPPORTED_REQUEST", refused.message
        assert "send its putBlock apart" in refused.message
        assert _last_index(leader) == before  # nothing logged
        for dn in (leader, f1, f2):
            assert not await _has_block(dn)


@async_test
async def test_a_follower_that_lost_its_streamed_bytes_fails_at_the_put_block(tmp_path: Path) -> None:
    """R14 D1 (V2): a member lost the block file the stream wrote (a disk, a power cut) before the
    putBlock: its data stage finds the leader's chunks missing, so it fails for the group (SCM closes the
    pipeline) rather than refuse alike UNABLE_TO_FIND_CHUNK while the others commit."""
    async with three_datanodes(tmp_path) as cluster:
        leader, f1, f2 = cluster.dns
        acks = await asyncio.to_thread(_stream, leader, (_hop(f1), _hop(f2)))
        assert [a.ok for a, _ in acks] == [True, True], acks
        lost = chunk_io.block_file(f2.containers.require(CID).chunks_dir, 1)
        lost.unlink()
        (put,) = await _send(leader, [_put_block(DATA)])
        _ok([put])
        beat = await wait_for_beat(cluster.scms[2], lambda hb: hb.pipeline_actions)
        reason = beat.pipeline_actions[0].reason
        assert "UNABLE_TO_FIND_CHUNK" in reason and "not the leader's" in reason, reason
        await _applied_everywhere([leader, f1], put.logIndex)
        assert not await _has_block(f2)
        group = f2.groups.get(PID)
        assert group is not None and group.failure is not None
