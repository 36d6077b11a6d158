"""ContainerStateMachine, write pipeline V2: a putBlock over bytes each member wrote outside the log (a
datastream), checked against the leader's own bytes before it is logged and against each member's at
append (`xceiver/vouching.py` `held_by_stream`). Harness: csm_helpers.py."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

import pytest

from pyozone.datanode.storage import ContainerError, Result, chunk_io
from pyozone.datanode.xceiver.dispatcher import Refusal, Refused
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from pyozone.protocol import container as wire
from pyozone.protocol.container import result_code
from pyozone.protocol.ratis import entry_payload, held_chunks
from pyozone.ratis.messages import LogEntry
from tests.unit.datanode.dns_helpers import (
    block_id,
    block_writes,
    chunk,
    flip_byte,
    payload,
    put,
    request,
    results,
    write,
)
from tests.unit.datanode.ratis.csm_helpers import (
    CID,
    Member,
    bad_checksum,
    datas,
    entries,
    feed,
    held_by_stream,
    replica,
    restarted,
    run,
    streamed,
)


def test_a_put_block_over_streamed_bytes_checks_each_members_own_bytes_at_append(
    members: list[Member],
) -> None:
    """Issue 30 (V2 on the Raft core): the leader checks its own streamed bytes before it logs a putBlock
    and attaches the chunks it holds as the entry's data; a member whose bytes differ fails that data
    stage (no refusal alike: it never applies the putBlock, and asks SCM to close the pipeline), the
    others commit. A follower needing the entry again gets the same data (`read_data`); a putBlock of
    bytes the log carried attaches nothing."""
    good, evil = payload(1, 3000), payload(9, 3000)
    leader = members[0]
    for member, data in zip(members, (good, evil, good), strict=True):
        streamed(member, data)
    lying = put(CID, 1, [chunk("1_chunk_1", 0, evil)])
    check = held_by_stream(leader, lying)
    assert check is not None
    with pytest.raises(ContainerError) as refused:
        check()
    assert refused.value.result is Result.CHECKSUM_MISMATCH  # the leader's own bytes: nothing logged
    honest = put(CID, 1, [chunk("1_chunk_1", 0, good)])
    check = held_by_stream(leader, honest)
    assert check is not None
    held = check()
    assert held == held_chunks(honest)
    log = [LogEntry(1, 1, entry_payload(honest), data_size=len(held))]
    answers = [run(feed(m, log, [held]))[0] for m in members]
    assert [pb.Result.Name(a.result) if a else "-" for a in answers] == ["SUCCESS", "-", "SUCCESS"]
    assert members[1].write_failed is not None and "not the leader's" in members[1].write_failed
    assert [reason for _, reason in members[1].failures] == [members[1].write_failed]
    assert not leader.failures and not members[2].failures
    assert [replica(m)[1] for m in members] == [1, 0, 1]
    assert run(leader.sm.read_data(log[0])) == held
    writes, _ = block_writes(CID, 2, payload(2, 2048), 1024)
    run(feed(leader, entries(writes, first=2), datas(writes)))
    assert held_by_stream(leader, writes[-1]) is None  # its bytes went through the log


def test_a_put_block_over_streamed_bytes_on_an_unhealthy_replica_is_refused_alike(
    members: list[Member],
) -> None:
    """A member whose replica went UNHEALTHY (its bytes damaged, found by the scanner) refuses the putBlock
    alike at apply, CONTAINER_UNHEALTHY, as any entry (SCM replaces that replica): its data stage checks
    no bytes of a replica that takes no writes, and the pipeline stays healthy."""
    data = payload(1, 3000)
    for member in members:
        streamed(member, data)
    damaged = members[1].container()
    flip_byte(chunk_io.block_file(damaged.chunks_dir, 1), 10)
    damaged.mark_unhealthy("the scanner found block 1 damaged")
    honest = put(CID, 1, [chunk("1_chunk_1", 0, data)])
    check = held_by_stream(members[0], honest)
    assert check is not None
    held = check()
    log = [LogEntry(1, 1, entry_payload(honest), data_size=len(held))]
    answers = [run(feed(m, log, [held]))[0] for m in members]
    assert [pb.Result.Name(a.result) for a in answers] == ["SUCCESS", "CONTAINER_UNHEALTHY", "SUCCESS"]
    assert not any(m.failures for m in members)


def test_streamed_bytes_lost_after_the_put_blocks_data_stage_fail_the_pipeline_at_apply(
    members: list[Member],
) -> None:
    """R14 D1 (V2): a member whose data stage found the leader's chunks acknowledged the putBlock for them;
    losing them before its apply (a disk, a power cut and a replay) is no refusal alike: that apply's
    UNABLE_TO_FIND_CHUNK fails the pipeline there, while the others commit."""
    data = payload(1, 3000)
    for member in members:
        streamed(member, data)
    honest = put(CID, 1, [chunk("1_chunk_1", 0, data)])
    check = held_by_stream(members[0], honest)
    assert check is not None
    held = check()
    (entry,) = entries([honest])
    entry = LogEntry(entry.term, entry.index, entry.payload, data_size=len(held))

    async def scenario() -> list[pb.ContainerCommandResponseProto]:
        for member in members:
            await member.sm.write_data(entry, memoryview(held))
        chunk_io.block_file(members[2].container().chunks_dir, 1).unlink()
        return [await member.sm.apply_async(entry) for member in members]

    answers = run(scenario())
    assert [pb.Result.Name(a.result) for a in answers] == ["SUCCESS", "SUCCESS", "UNABLE_TO_FIND_CHUNK"]
    assert not members[0].failures and not members[1].failures
    [(_, reason)] = members[2].failures
    assert "bytes this member acknowledged are gone" in reason, reason


@pytest.mark.parametrize("when", ["before any apply", "after the leader's apply"])
def test_a_second_stream_may_not_change_streamed_bytes_a_logged_put_block_commits(
    members: list[Member], when: str
) -> None:
    """R16 D3 (test_r16_v2_overwrite.py): a second V2 stream of the block (same token, full chain) with
    other bytes at offset 0, after the putBlock over the first stream's bytes is logged: each member's
    stream path refuses it (OVERWRITE_FLAG_REQUIRED, as a data stage refuses changed bytes), whether or not
    that member applied the putBlock yet (the leader's hop forwards before it writes). Every member then
    commits the block: it neither failed the pipeline (CHECKSUM_MISMATCH at apply over acknowledged bytes)
    nor stayed on the leader alone."""
    good = payload(1, 3000)
    for member in members:
        streamed(member, good)
    honest = put(CID, 1, [chunk("1_chunk_1", 0, good)])
    check = held_by_stream(members[0], honest)
    assert check is not None
    held = check()
    (logged,) = entries([honest])
    entry = LogEntry(logged.term, logged.index, logged.payload, data_size=len(held))

    async def scenario() -> list[str]:
        for member in members:
            await member.sm.write_data(entry, memoryview(held))
        first = [await members[0].sm.apply_async(entry)] if when == "after the leader's apply" else []
        for member in members:
            with pytest.raises(ContainerError) as refused:
                streamed(member, payload(9, 3000))
            assert refused.value.result is Result.OVERWRITE_FLAG_REQUIRED
        rest = members[len(first) :]
        return results([*first, *await asyncio.gather(*(m.sm.apply_async(entry) for m in rest))])

    assert run(scenario()) == ["SUCCESS"] * 3
    assert not any(m.failures for m in members)
    assert [replica(m)[1:] for m in members] == [(1, [(1, 1, ("1_chunk_1",))])] * 3
    streamed(members[1], good)  # the same bytes again (a resent packet) are fine


def test_a_restarted_leader_vouches_for_streamed_bytes_its_log_did_not_carry(members: list[Member]) -> None:
    """R16 D4 (a) (test_r16_no_mark.py): the leader restarted after the stream (its in-memory mark of the
    block's streamed bytes is gone) and a follower lost its unsynced bytes. The leader still checks its
    own bytes and attaches the chunks it holds, as no entry of its log carried them: the follower without
    them fails that data stage (its pipeline closes) instead of refusing alike while the others commit
    (before: the putBlock was logged without data, answered SUCCESS, SUCCESS, UNABLE_TO_FIND_CHUNK and
    nothing failed)."""
    data = payload(1, 3000)
    for member in members:
        streamed(member, data)
    leader = members[0]
    leader.container()._forget_all()  # a restart keeps no mark in memory
    chunk_io.block_file(members[2].container().chunks_dir, 1).unlink()  # C lost its unsynced bytes
    honest = put(CID, 1, [chunk("1_chunk_1", 0, data)])
    check = held_by_stream(leader, honest)
    assert check is not None
    held = check()
    assert held == held_chunks(honest)
    log = [LogEntry(1, 5, entry_payload(honest), data_size=len(held))]
    answers = [run(feed(m, log, [held]))[0] for m in members]
    assert [pb.Result.Name(a.result) if a else "-" for a in answers] == ["SUCCESS", "SUCCESS", "-"]
    assert members[2].write_failed is not None and "not the leader's" in members[2].write_failed
    assert not leader.failures and not members[1].failures and members[2].failures
    assert [replica(m)[1] for m in members] == [5, 5, 0]


@pytest.mark.parametrize("leader_replica", ["here", "missing"])
def test_a_leader_left_out_of_a_plaintext_chain_refuses_the_put_block(
    members: list[Member], leader_replica: str
) -> None:
    """R16 D4 (b): without TLS a client's chain can leave the leader out (`chain_refusal` knows a client
    only by its certificate): the followers hold the streamed bytes, the leader none. Its check of its own
    bytes refuses the putBlock before anything is logged (UNABLE_TO_FIND_CHUNK; CONTAINER_NOT_FOUND when
    it has no replica at all), as Ozone's leader logs a stream's putBlock only for a stream it took part
    in (ContainerStateMachine.link); before, the followers committed a block the leader refused."""
    data = payload(1, 3000)
    leader = members[0]
    if leader_replica == "here":
        other = [write(CID, 2, chunk("2_c", 0, payload(3, 1024)), payload(3, 1024))]
        assert results(run(feed(leader, entries(other), datas(other)))) == ["SUCCESS"]
    for member in members[1:]:
        streamed(member, data)
    honest = put(CID, 1, [chunk("1_chunk_1", 0, data)])
    with pytest.raises(ContainerError) as refused:
        check = held_by_stream(leader, honest)
        assert check is not None
        check()
    expected = Result.UNABLE_TO_FIND_CHUNK if leader_replica == "here" else Result.CONTAINER_NOT_FOUND
    assert refused.value.result is expected


def test_a_put_block_after_writes_the_leader_is_logging_needs_no_vouching(members: list[Member]) -> None:
    """V1 on the Raft core: a client sends a block's putBlock without waiting for its writeChunks' answers,
    so their data stages may not have run on the leader yet. The putBlock waits for those data stages here
    (`ContainerStateMachine.logging`); their chunks then count as carried by the log, and once applied:
    the putBlock is logged without data, as before. Once a logged write is over unwritten (refused, or
    its leader stepped down), its chunk is not carried, and the leader vouches for it (here: it holds no
    bytes of it). A chunk is known by its offset and length: the log's bytes there are every member's,
    and a putBlock naming other checksums for them is refused alike at apply."""
    leader = members[0]
    writes, _ = block_writes(CID, 1, payload(1, 2048), 1024)  # writeChunk, writeChunk, putBlock
    log = entries(writes[:2])

    async def data_stages() -> None:
        waits = leader.sm.logging(writes[2])
        assert len(waits) == 2 and not any(w.done() for w in waits)
        for entry, data in zip(log, datas(writes[:2]), strict=True):
            await leader.sm.write_data(entry, memoryview(data))
        assert all(w.done() for w in waits) and not leader.sm.logging(writes[2])

    done = [leader.sm.logging_write(w) for w in writes[:2]]
    done[1]()  # over before its data stage here
    with pytest.raises(ContainerError) as refused:
        check = held_by_stream(leader, writes[2])
        assert check is not None
        check()
    assert refused.value.result is Result.CONTAINER_NOT_FOUND
    done[1] = leader.sm.logging_write(writes[1])
    run(data_stages())
    assert held_by_stream(leader, writes[2]) is None  # written here by the log, not applied yet
    assert results(run(feed(leader, log, datas(writes[:2])))) == ["SUCCESS"] * 2
    for over in done:
        over()
    assert held_by_stream(leader, writes[2]) is None  # applied here: carried by the log
    lying = put(CID, 1, [chunk("1_chunk_0", 0, payload(9, 1024))])  # the log's bytes: refused alike at apply
    assert held_by_stream(leader, lying) is None
    longer = put(CID, 1, [chunk("1_chunk_2", 2048, payload(3, 100))])  # bytes no entry carried
    check = held_by_stream(leader, longer)
    assert check is not None
    with pytest.raises(ContainerError) as refused:
        check()
    assert refused.value.result is Result.UNABLE_TO_FIND_CHUNK


def test_a_put_block_after_a_write_the_leader_then_refuses_is_vouched_for(members: list[Member]) -> None:
    """R20 D3: a putBlock arriving while the leader logs a writeChunk of one of its chunks used to count
    that chunk as carried by the log; the write's data stage then refused it (its bytes are not its
    checksums), and the putBlock, logged without data, was committed by the followers holding streamed
    bytes there (a plaintext chain that left the leader out) and refused by the leader. It now waits for
    that data stage here, and the leader vouches for the chunk: it holds none of its bytes, so the
    putBlock is refused before anything is logged."""
    leader = members[0]
    other = [write(CID, 2, chunk("2_c", 0, payload(3, 1024)), payload(3, 1024))]
    assert results(run(feed(leader, entries(other), datas(other)))) == [
        "SUCCESS"
    ]  # the leader has the container
    data = payload(1, 3000)
    for member in members[1:]:
        streamed(member, data)
    refused_write = bad_checksum(CID, 1, 0, data)  # chunk (0, 3000): its bytes are not its checksums
    putting = put(CID, 1, [chunk("1_chunk_1", 0, data)])
    done = leader.sm.logging_write(refused_write)
    log = entries([refused_write], first=2)

    async def data_stage() -> None:
        waits = leader.sm.logging(putting)
        assert len(waits) == 1
        await leader.sm.write_data(log[0], memoryview(datas([refused_write])[0]))
        await asyncio.wait(waits)

    run(data_stage())
    check = held_by_stream(leader, putting)
    assert check is not None
    with pytest.raises(ContainerError) as refused:
        check()
    assert refused.value.result is Result.UNABLE_TO_FIND_CHUNK  # nothing logged: no member commits it
    done()


def test_the_leader_decides_its_vouching_without_parsing_checksums(
    members: list[Member], monkeypatch: pytest.MonkeyPatch
) -> None:
    """R20 D5: which chunks of a putBlock the leader's log carried is decided on the event loop for every
    putBlock (and every write it logs is noted there): it reads their offsets and lengths off the request,
    without building each chunk's checksums (2.6 ms for a putBlock of 64 chunks of 256 checksums)."""
    leader = members[0]
    writes, _ = block_writes(CID, 1, payload(1, 2048), 1024)  # writeChunk, writeChunk, putBlock

    def parsed(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("a request's checksums were parsed")

    monkeypatch.setattr(wire, "put_block_from_proto", parsed)
    monkeypatch.setattr(wire, "write_chunk_from_proto", parsed)
    done = [leader.sm.logging_write(w) for w in writes[:2]]
    assert leader.sm.uncarried(writes[2]) == {(0, 1024), (1024, 1024)}  # their data stages: not yet
    for over in done:
        over()


def _piggybacking(lid: int, chunks: list[pb.ChunkInfo], data: bytes) -> pb.ContainerCommandRequestProto:
    """A writeChunk of the last of `chunks` (`data`) that commits its block with all of them."""
    block = pb.PutBlockRequestProto(blockData=pb.BlockData(blockID=block_id(CID, lid), chunks=chunks))
    body = pb.WriteChunkRequestProto(blockID=block_id(CID, lid), chunkData=chunks[-1], data=data, block=block)
    return request(pb.WriteChunk, CID, writeChunk=body)


@pytest.mark.parametrize("streams", ["to every member", "leaving the leader out"])
def test_a_write_chunk_committing_its_block_over_chunks_the_log_did_not_carry_is_refused(
    members: list[Member], executor: ThreadPoolExecutor, streams: str
) -> None:
    """R20 D2: a writeChunk that commits its block with it (Ozone's putBlock piggybacking) over a streamed
    chunk was logged without the leader vouching for it: each member judged its own bytes at apply, a
    follower that lost them (or the leader, left out of a plaintext chain) refusing alike while the others
    commit. Its data are its own bytes, with nowhere for the leader's chunks: it is refused before it is
    logged (UNSUPPORTED_REQUEST), unless every other chunk it names was carried by the log or is committed
    as it is (after a restart the log no longer notes it). pyozone's client sends its putBlocks apart."""
    leader = members[0]
    data, tail = payload(1, 3000), payload(2, 100)
    if streams == "to every member":
        for member in members:
            streamed(member, data)
    else:
        other = [write(CID, 2, chunk("2_c", 0, payload(3, 1024)), payload(3, 1024))]
        assert results(run(feed(leader, entries(other), datas(other)))) == ["SUCCESS"]
        for member in members[1:]:
            streamed(member, data)
    first, last = chunk("1_chunk_1", 0, data), chunk("1_chunk_2", 3000, tail)
    check = held_by_stream(leader, _piggybacking(1, [first, last], tail))
    assert check is not None
    with pytest.raises(Refused) as refused:
        check()
    assert refused.value.result == result_code(Refusal.UNSUPPORTED_REQUEST)
    assert "send its putBlock apart" in str(refused.value)
    if streams == "leaving the leader out":
        return
    committing = put(CID, 1, [first])  # vouched for: the entry carries the leader's chunks
    vouched = held_by_stream(leader, committing)
    assert vouched is not None
    held = vouched()
    log = [LogEntry(1, 1, entry_payload(committing), data_size=len(held))]
    assert results(run(feed(leader, log, [held]))) == ["SUCCESS"]
    assert held_by_stream(leader, _piggybacking(1, [first, last], tail)) is None  # carried by the log now
    leader.sm = restarted(leader, executor, log_last_index=1)  # the log no longer notes the chunk
    check = held_by_stream(leader, _piggybacking(1, [first, last], tail))
    assert check is not None and check() == b""  # committed as it is here, so on every member
    assert not leader.failures
