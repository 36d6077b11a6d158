"""ContainerStateMachine: what every member decides alike from the same committed log, whatever point
of its applies its data stages ran at (`Feed`), and what a data stage leaves behind (stray bytes of
truncated entries, the bytes `read_data` sends a follower). Harness: csm_helpers.py."""

from __future__ import annotations

import asyncio
import hashlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from pyozone.datanode.storage import ContainerScanner, chunk_io
from pyozone.datanode.storage.archive import ExportStream
from pyozone.datanode.storage.archive_import import import_container
from pyozone.hdds.ids import BlockID
from pyozone.hdds.states import ReplicaState
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from pyozone.ratis.messages import TermIndex
from tests.unit.datanode.dns_helpers import (
    block_writes,
    chunk,
    close,
    get,
    get_small_file,
    open_node,
    payload,
    put,
    read,
    results,
    small_file,
    write,
)
from tests.unit.datanode.ratis.csm_helpers import (
    CID,
    OTHER,
    Feed,
    Member,
    bad_checksum,
    datas,
    entries,
    feed,
    feed_all,
    finalize,
    piggybacked,
    replica,
    run,
)


def test_three_members_close_at_one_bcsid(members: list[Member]) -> None:
    """Two blocks of one container, one of another interleaved (containers apply in parallel), a block
    committed by its writeChunk (piggybacked putBlock), the close, and a write after the close: every
    member answers every entry alike (the write after the close CLOSED_CONTAINER_IO, though a member whose
    data stages all ran first wrote its bytes) and closes at the BCSID of the last putBlock before it."""
    one, _ = block_writes(CID, 1, payload(1, 5000), 2048)
    two, _ = block_writes(OTHER, 1, payload(2, 3000), 2048)
    log = [*one[:2], *two, one[2], one[3], piggybacked(CID, 2, payload(3, 700)), close(CID)]
    log += [write(CID, 3, chunk("3_chunk_0", 0, payload(4, 100)), payload(4, 100)), close(OTHER)]
    answers = run(feed_all(members, log))
    assert answers[0] == answers[1] == answers[2]
    assert answers[0] == ["SUCCESS"] * (len(log) - 2) + ["CLOSED_CONTAINER_IO", "SUCCESS"]
    piggyback_index = log.index(log[-4]) + 1
    for member in members:
        assert member.failures == []
        assert replica(member) == replica(members[0])
        state, bcsid, blocks = replica(member)
        assert state is ReplicaState.CLOSED and bcsid == piggyback_index
        assert [b[0] for b in blocks] == [1, 2] and blocks[1][1] == piggyback_index
        assert replica(member, OTHER) == (
            ReplicaState.CLOSED,
            len(two) + 2,
            [(1, 5, ("1_chunk_0", "1_chunk_1"))],
        )
        assert member.ask(get(CID, 3)).result == pb.NO_SUCH_BLOCK  # the late write's bytes: no block


def test_finalize_block_refuses_later_writes_alike(members: list[Member]) -> None:
    """A write to a finalized block: a member that applied the finalize before the write's data stage
    refuses it at append, the others write its bytes; the commit stage refuses it alike everywhere."""
    writes, chunks = block_writes(CID, 1, payload(1, 3000), 1024)
    late = write(CID, 1, chunk("1_late", 3000, payload(2, 500)), payload(2, 500))
    again = put(CID, 1, [*chunks, late.writeChunk.chunkData])
    log = [*writes, finalize(1), late, again, finalize(1)]
    answers = run(feed_all(members, log, (Feed.EACH_IN_TURN, Feed.ALL_DATA_FIRST, Feed.EACH_IN_TURN)))
    assert answers[0] == answers[1] == answers[2]
    assert answers[0] == ["SUCCESS"] * 5 + ["BLOCK_ALREADY_FINALIZED"] * 2 + ["SUCCESS"]
    for member in members:
        assert member.failures == [] and replica(member) == replica(members[0])
        block = member.container().get_block(BlockID(CID, 1))
        assert block.finalized and block.size == 3000


def test_put_small_file_alike_and_read_back(members: list[Member]) -> None:
    """Small files commit at their entry's index on every member and read back whole; one that would
    replace a block committed with other chunks (its client had the putBlock's answer) is refused alike
    (PUT_SMALL_FILE_ERROR)."""
    writes, _ = block_writes(CID, 3, payload(3, 2500), 1024)
    log = [small_file(CID, 1, payload(1, 900)), small_file(CID, 2, payload(2, 1)), *writes]

    async def scenario() -> list[list[str]]:
        answers = await feed_all(members, log)
        late = await feed_all(members, [small_file(CID, 3, payload(4, 100))], first=len(log) + 1)
        return [mine + more for mine, more in zip(answers, late, strict=True)]

    answers = run(scenario())
    assert answers[0] == answers[1] == answers[2] == ["SUCCESS"] * 6 + ["PUT_SMALL_FILE_ERROR"]
    for member in members:
        assert member.failures == [] and replica(member) == replica(members[0])
        assert replica(member)[1] == 6
        for lid, data, bcsid in ((1, payload(1, 900), 1), (2, payload(2, 1), 2)):
            answer = member.ask(get_small_file(CID, lid, bcsid))
            assert answer.result == pb.SUCCESS and answer.getSmallFile.data.data == data


def test_a_checksum_mismatch_is_refused_alike_and_the_pipeline_stays_healthy(members: list[Member]) -> None:
    """A writeChunk whose bytes do not match its checksums is refused by every data stage (nothing
    written) and answered so by every commit stage; so is a putBlock naming checksums of bytes not written.
    Neither is a failure: the entries after them apply."""
    good = payload(1, 2048)
    first = chunk("1_chunk_0", 0, good)
    lying = chunk("1_chunk_0", 0, payload(9, 2048))  # checksums of other bytes than those written
    log = [
        write(CID, 1, first, good),
        bad_checksum(CID, 1, 2048, payload(2, 1024)),
        put(CID, 1, [lying]),
        small_file(CID, 2, payload(3, 10), chunk("2_chunk", 0, payload(4, 10))),
        put(CID, 1, [first]),
    ]
    answers = run(feed_all(members, log))
    expected = ["SUCCESS", "CHECKSUM_MISMATCH", "CHECKSUM_MISMATCH", "CHECKSUM_MISMATCH", "SUCCESS"]
    assert answers == [expected] * 3
    for member in members:
        assert member.failures == [] and member.sm.failure is None
        assert replica(member) == (ReplicaState.OPEN, 5, [(1, 5, ("1_chunk_0",))])


def test_a_data_stage_over_bytes_an_earlier_entry_commits_is_refused_alike(members: list[Member]) -> None:
    """A refusal decided by the request's content is the same on every member, and the commit stage
    decides the state's again; not enough on its own: a data stage runs at append, before the entries
    ahead of it are applied, and a write over bytes an earlier, not yet applied putBlock commits (a client
    sending a putSmallFile, or a writeChunk of other bytes, into a block whose putBlock it has not had the
    answer for) would change what that putBlock verifies on the members whose data stage ran first only:
    they would refuse the putBlock and commit the small file, the others the reverse, both healthy. So a
    data stage changes no byte already in the block file (OVERWRITE_FLAG_REQUIRED; the same bytes again
    pass), which every member decides alike: the file holds the block's earlier data stages, run in log
    order everywhere. (Ozone's FilePerBlock overwrites, and its putBlock does not verify.)"""
    writes, _ = block_writes(CID, 3, payload(3, 2500), 1024)
    other = write(CID, 3, chunk("3_other", 0, payload(5, 1024)), payload(5, 1024))
    log = [*writes[:3], other, writes[3], small_file(CID, 3, payload(4, 100))]
    answers = run(feed_all(members, log, (Feed.EACH_IN_TURN, Feed.ALL_DATA_FIRST, Feed.ALL_DATA_FIRST)))
    assert answers == [["SUCCESS"] * 3 + ["OVERWRITE_FLAG_REQUIRED", "SUCCESS", "PUT_SMALL_FILE_ERROR"]] * 3
    for member in members:
        assert member.failures == [] and replica(member) == replica(members[0])
        assert member.container().get_block(BlockID(CID, 3)).size == 2500


def test_stray_bytes_of_a_truncated_entry_are_invisible(members: list[Member], tmp_path: Path) -> None:
    """Entries 3-6 of term 1 are appended and their data written, then truncated by a new leader: a chunk
    its client resends to the new leader, a chunk past the block's end it never resends, a write refused
    for its checksum (its remembered refusal must not answer the new entry 5) and a first write of another
    block. The new leader's entries commit the resent chunk over its own stray bytes; the other stray bytes
    lie beyond every committed length: reads, the scanner and an export (imported on another datanode)
    see only committed chunks."""
    member = members[0]
    first, second, tail = payload(1, 1024), payload(2, 1024), payload(6, 512)
    c0, c1 = chunk("1_chunk_0", 0, first), chunk("1_chunk_1", 1024, second)
    committed = [write(CID, 1, c0, first), put(CID, 1, [c0])]
    truncated = [
        write(CID, 1, c1, second),
        write(CID, 1, chunk("1_chunk_2", 2048, tail), tail),
        bad_checksum(CID, 7, 0, payload(5, 100)),
        write(CID, 2, chunk("2_chunk_0", 0, payload(4, 100)), payload(4, 100)),
    ]

    async def scenario() -> None:
        await feed(member, entries(committed), datas(committed))
        for entry, blob in zip(entries(truncated, 3), datas(truncated), strict=True):
            await member.sm.write_data(entry, memoryview(blob))
        after = [put(CID, 1, [c0]), write(CID, 1, c1, second), put(CID, 1, [c0, c1])]
        assert results(await feed(member, entries(after, 3, term=2), datas(after))) == ["SUCCESS"] * 3
        # Left: a client that sends other bytes over its own truncated ones is refused by the member that
        # holds them (OVERWRITE_FLAG_REQUIRED) where one without them takes the write.
        other = [write(CID, 2, chunk("2_chunk_0", 0, payload(7, 100)), payload(7, 100)), close(CID)]
        answers = await feed(member, entries(other, 6, term=2), datas(other))
        assert results(answers) == ["OVERWRITE_FLAG_REQUIRED", "SUCCESS"]

    run(scenario())
    container = member.container()
    assert (
        chunk_io.block_file(container.chunks_dir, 2).exists()
        and member.ask(get(CID, 2)).result == pb.NO_SUCH_BLOCK
    )
    block = container.get_block(BlockID(CID, 1))
    assert block.size == 2048 and block.bcsid == 5
    assert chunk_io.file_size(chunk_io.block_file(container.chunks_dir, 1)) == 2048 + len(tail)
    answer = member.ask(get(CID, 1))
    assert answer.getBlock.blockData.size == 2048 and len(answer.getBlock.blockData.chunks) == 2
    assert member.ask(read(CID, 1, c1)).readChunk.data == second
    assert [r.healthy for r in ContainerScanner(member.node.containers).scan_all()] == [True]
    stream = ExportStream(container)
    pieces = list(stream)
    assert stream.sha256 == hashlib.sha256(b"".join(pieces)).hexdigest()
    target = open_node(tmp_path / "target", "99999999-0000-4000-8000-000000000009", container_size="4MB")
    try:
        copy = import_container(target.containers, iter(pieces), stream.sha256)
        assert copy.bcsid == 5 and [b.size for b in copy.list_blocks()] == [2048]
        assert copy.read_chunk(BlockID(CID, 1), block.chunks[1]) == second
        assert [r.healthy for r in ContainerScanner(target.containers).scan_all()] == [True]
    finally:
        target.close()


def test_read_data_returns_the_chunk_bytes_committed_or_not(members: list[Member]) -> None:
    member = members[0]
    writes, _ = block_writes(CID, 1, payload(1, 3000), 1024)
    requests = [*writes, small_file(CID, 2, payload(2, 77))]
    log = entries(requests)

    async def scenario() -> list[bytes]:
        for entry, blob in zip(log, datas(requests), strict=True):
            if entry.data_size:
                await member.sm.write_data(entry, memoryview(blob))
        uncommitted = await member.sm.read_data(log[1])
        await asyncio.gather(*(member.sm.apply_async(e) for e in log))
        return [uncommitted, await member.sm.read_data(log[2]), await member.sm.read_data(log[4])]

    assert run(scenario()) == [payload(1, 3000)[1024:2048], payload(1, 3000)[2048:], payload(2, 77)]


def test_a_leader_reads_back_an_entry_its_data_stage_refused_and_a_follower_refuses_it_alike(
    members: list[Member], executor: ThreadPoolExecutor
) -> None:
    """R13 D2: an entry refused at its data stage (a checksum mismatch: nothing goes to the block file)
    keeps its data beside the refusal, so the leader reads it back for a follower it no longer caches it
    for (before: FileNotFoundError, the follower stuck for good); the follower refuses it alike. The kept
    refusal goes once a snapshot covers its entry."""
    leader, follower = members[0], members[1]
    good = payload(1, 64)
    requests = [small_file(CID, 1, payload(1, 10)), bad_checksum(CID, 2, 0, good)]
    log = entries(requests)
    answers = run(feed(leader, log, datas(requests)))
    assert results(answers) == ["SUCCESS", "CHECKSUM_MISMATCH"]
    sent = [run(leader.sm.read_data(e)) for e in log]
    assert sent == datas(requests)
    assert results(run(feed(follower, log, sent))) == ["SUCCESS", "CHECKSUM_MISMATCH"]
    assert follower.failures == [] and replica(follower) == replica(leader)
    assert run(leader.sm.take_snapshot()) == TermIndex(1, 2)
    assert not any((leader.sm.directory / "refused").iterdir())
