"""ContainerStateMachine (issue 30, design step S5): three members over three temporary datanodes are fed the
same committed log, as the Raft shell feeds them: `write_data` for each entry that carries data (at append),
then `apply_async` in log order (after commit). Each member may run its data stages at another point of its
applies (`Feed`): every healthy member must still answer every entry alike and end with the same replicas."""

from __future__ import annotations

import asyncio
import hashlib
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

import pytest

from pyozone.datanode.ratis import blocks_in_logs
from pyozone.datanode.ratis.state_machine import SNAPSHOT_FILE, ContainerStateMachine, read_snapshot
from pyozone.datanode.storage import (
    ChecksumType,
    ChunkInfo,
    ContainerError,
    ContainerScanner,
    KeyValueContainer,
    Result,
    chunk_io,
    compute,
)
from pyozone.datanode.storage.archive import ExportStream
from pyozone.datanode.storage.archive_import import import_container
from pyozone.datanode.xceiver import Dispatcher
from pyozone.hdds.ids import BlockID
from pyozone.hdds.states import ReplicaState
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from pyozone.protocol.data import finalize_block_request
from pyozone.protocol.ratis import entry_data, entry_payload, held_chunks, refused_alike, succeeded
from pyozone.ratis.messages import LogEntry, RaftPeerId, TermIndex
from pyozone.ratis.outputs import Persist
from pyozone.ratis_server.member_api import DataWriteError
from pyozone.ratis_server.segmented_log import SegmentedRaftLog
from tests.unit.datanode.dns_helpers import (
    BPC,
    PIPELINE,
    Node,
    block_id,
    block_writes,
    chunk,
    close,
    flip_byte,
    get,
    get_small_file,
    open_node,
    payload,
    put,
    read,
    request,
    results,
    small_file,
    write,
)
from tests.unit.datanode.storage.dn_helpers import chunk_for

CID, OTHER = 5, 6
UUIDS = tuple(f"{n}{n}{n}{n}0000-0000-4000-8000-00000000000{n}" for n in (1, 2, 3))


class Feed(Enum):
    ALL_DATA_FIRST = "every data stage, then every apply"
    EACH_IN_TURN = "each entry's data stage after the previous entry was applied"


@dataclass
class Member:
    node: Node
    dispatcher: Dispatcher
    sm: ContainerStateMachine
    failures: list[tuple[str, str]] = field(default_factory=list)
    write_failed: str | None = None

    def container(self, cid: int = CID) -> KeyValueContainer:
        found = self.node.containers.get(cid)
        assert found is not None, f"container {cid} is not on {self.node.uuid}"
        return found

    def ask(self, req: pb.ContainerCommandRequestProto) -> pb.ContainerCommandResponseProto:
        """A read as a client sends it (not through the log)."""
        return self.dispatcher.dispatch(req)


@pytest.fixture
def executor() -> Iterator[ThreadPoolExecutor]:
    with ThreadPoolExecutor(4, thread_name_prefix="csm-test") as pool:
        yield pool


def make_member(root: Path, uuid: str, executor: ThreadPoolExecutor, **settings: Any) -> Member:
    node = open_node(root / "dn", uuid, container_size="4MB")
    dispatcher = Dispatcher(node.containers, uuid, lambda _cid: None)
    failures: list[tuple[str, str]] = []
    sm = ContainerStateMachine(
        PIPELINE, dispatcher, executor, root / "ratis" / PIPELINE,
        lambda pipeline, reason: failures.append((pipeline, reason)), **settings,
    )  # fmt: skip
    return Member(node, dispatcher, sm, failures)


@pytest.fixture
def members(tmp_path: Path, executor: ThreadPoolExecutor) -> Iterator[list[Member]]:
    made = [make_member(tmp_path / f"m{n}", uuid, executor) for n, uuid in enumerate(UUIDS)]
    yield made
    for member in made:
        member.node.close()


def entries(
    requests: Sequence[pb.ContainerCommandRequestProto], first: int = 1, term: int = 1
) -> list[LogEntry]:
    """The log entries the leader makes of `requests` (payload without data, data_size beside it)."""
    return [
        LogEntry(term, index, entry_payload(r), data_size=len(entry_data(r)))
        for index, r in enumerate(requests, first)
    ]


def datas(requests: Sequence[pb.ContainerCommandRequestProto]) -> list[bytes]:
    return [entry_data(r) for r in requests]


async def feed(
    member: Member, log: Sequence[LogEntry], data: Sequence[bytes], how: Feed = Feed.ALL_DATA_FIRST
) -> list[pb.ContainerCommandResponseProto | None]:
    """What the shell does on one member: data stages at append (a failed one fails the member for the
    group: nothing after it is acknowledged or applied), applies after commit, in log order."""
    answers: list[Any] = []

    async def write(entry: LogEntry, blob: bytes) -> bool:
        if not entry.data_size or member.write_failed:
            return not member.write_failed
        try:
            await member.sm.write_data(entry, memoryview(blob))
        except DataWriteError as e:
            member.write_failed = str(e)
            member.sm.notify_failed(str(e))
            return False
        return True

    if how is Feed.ALL_DATA_FIRST:
        for entry, blob in zip(log, data, strict=True):
            await write(entry, blob)
        if member.write_failed:
            return [None] * len(log)
        return list(await asyncio.gather(*(member.sm.apply_async(e) for e in log)))
    for entry, blob in zip(log, data, strict=True):
        if not await write(entry, blob):
            break
        answers.append(await member.sm.apply_async(entry))
    return answers + [None] * (len(log) - len(answers))


async def feed_all(
    members: Sequence[Member],
    requests: Sequence[pb.ContainerCommandRequestProto],
    hows: Sequence[Feed] = (Feed.ALL_DATA_FIRST, Feed.EACH_IN_TURN, Feed.ALL_DATA_FIRST),
    first: int = 1,
) -> list[list[str]]:
    """Every member fed the same log; each member's answers' Result names."""
    log, data = entries(requests, first), datas(requests)
    answers = [await feed(m, log, data, how) for m, how in zip(members, hows, strict=True)]
    return [[pb.Result.Name(a.result) if a is not None else "-" for a in mine] for mine in answers]


def replica(
    member: Member, cid: int = CID
) -> tuple[ReplicaState, int, list[tuple[int, int, tuple[str, ...]]]]:
    """What must be equal on every member: state, BCSID and committed blocks (id, BCSID, chunk names)."""
    c = member.container(cid)
    blocks = [(b.block_id.local_id, b.bcsid, tuple(ch.name for ch in b.chunks)) for b in c.list_blocks()]
    return c.state, c.bcsid, blocks


def run(coroutine: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coroutine, 60))


def finalize(lid: int, cid: int = CID) -> pb.ContainerCommandRequestProto:
    return finalize_block_request(BlockID(cid, lid), PIPELINE, "leader")


def piggybacked(cid: int, lid: int, data: bytes) -> pb.ContainerCommandRequestProto:
    """A writeChunk that commits its block too (Ozone's writeChunk with a putBlock)."""
    info = chunk(f"{lid}_chunk_0", 0, data)
    body = pb.WriteChunkRequestProto(
        blockID=block_id(cid, lid), chunkData=info, data=data,
        block=pb.PutBlockRequestProto(blockData=pb.BlockData(blockID=block_id(cid, lid), chunks=[info])),
    )  # fmt: skip
    return request(pb.WriteChunk, cid, writeChunk=body)


def bad_checksum(cid: int, lid: int, offset: int, data: bytes) -> pb.ContainerCommandRequestProto:
    info = chunk(f"{lid}_bad", offset, data)
    return write(cid, lid, info, bytes([data[0] ^ 1]) + data[1:])


# ------------------------------------------------------------------ the log's outcomes, alike on every member


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


# ------------------------------------------------------------------ failures are one member's


def _io_error(what: str) -> Callable[..., Any]:
    def fail(*_args: Any, **_kwargs: Any) -> Any:
        raise ContainerError(Result.IO_EXCEPTION, f"{what}: injected")

    return fail


def test_an_io_error_at_apply_fails_only_that_member(members: list[Member]) -> None:
    """The second member's putBlock hits an IO error: its on_failure alone is called, once, and it applies
    nothing after it (RAFT_RETRY_FAILURE); the other two go on."""
    writes, _ = block_writes(CID, 1, payload(1, 3000), 1024)

    async def scenario() -> list[list[str]]:
        log, data = entries(writes), datas(writes)
        for member in members:  # every data stage: the container now exists everywhere
            for entry, blob in zip(log, data, strict=True):
                if entry.data_size:
                    await member.sm.write_data(entry, memoryview(blob))
        members[1].container().put_block = _io_error("put block")  # type: ignore[method-assign]
        later = [small_file(CID, 2, payload(2, 100))]
        late_log, late_data = entries(later, len(writes) + 1), datas(later)
        for member in members:
            await member.sm.write_data(late_log[0], memoryview(late_data[0]))
        return [
            results(await asyncio.gather(*(m.sm.apply_async(e) for e in [*log, *late_log]))) for m in members
        ]

    answers = run(scenario())
    assert answers[0] == answers[2] == ["SUCCESS"] * 5
    assert answers[1] == ["SUCCESS"] * 3 + ["IO_EXCEPTION", "RAFT_RETRY_FAILURE"]
    assert members[0].failures == members[2].failures == []
    assert len(members[1].failures) == 1 and members[1].failures[0][0] == PIPELINE
    assert "IO_EXCEPTION" in members[1].failures[0][1]
    with pytest.raises(RuntimeError, match="unhealthy"):
        run(members[1].sm.take_snapshot())
    more = [small_file(CID, 3, payload(3, 10))]
    with pytest.raises(DataWriteError, match="failed here"):  # no more acknowledgements either
        run(members[1].sm.write_data(entries(more, 9)[0], memoryview(datas(more)[0])))


def test_an_io_error_at_a_data_write_fails_only_that_member(members: list[Member]) -> None:
    """A data stage that fails for another reason than the entry's content raises DataWriteError (the shell
    then fails the member for the group: no ack, no apply) and reports the pipeline failed."""
    writes, _ = block_writes(CID, 1, payload(1, 3000), 1024)

    async def scenario() -> list[list[str]]:
        answers = await feed_all(members, writes[:1])
        members[2].container().write_chunk = _io_error("write chunk")  # type: ignore[method-assign]
        return answers + await feed_all(members, writes[1:], first=2)

    answers = run(scenario())
    assert answers[3] == answers[4] == ["SUCCESS"] * 3 and answers[5] == ["-"] * 3
    assert members[0].failures == members[1].failures == []
    assert members[2].failures and "IO_EXCEPTION" in members[2].failures[0][1]
    assert members[2].sm.failure is not None


# ------------------------------------------------------------------ idempotence (design section 1)


def _twice(members: list[Member], requests: list[pb.ContainerCommandRequestProto], resend: list[int]) -> None:
    """The entries applied, then applied again at the same indexes (a replay after a restart, without the
    data stages: the data were written before the member acknowledged them), then the requests at
    `resend` positions sent again by the client and logged at new indexes (its retry after a leader
    change)."""

    async def scenario(member: Member, how: Feed) -> None:
        log = entries(requests)
        await feed(member, log, datas(requests), how)
        before = replica(member)
        replayed = await asyncio.gather(*(member.sm.apply_async(e) for e in log))
        # a write replayed after its block's finalize or its container's close is refused alike: no change
        assert all(succeeded(a.result) or refused_alike(a.result) for a in replayed)
        assert replica(member) == before, "a replay at the same indexes changed the replica"
        assert member.failures == []
        again = [requests[i] for i in resend]
        answers = await feed(member, entries(again, len(log) + 1), datas(again), how)
        assert [a.result if a else None for a in answers] == [pb.SUCCESS] * len(again)

    for member, how in zip(
        members, (Feed.ALL_DATA_FIRST, Feed.EACH_IN_TURN, Feed.ALL_DATA_FIRST), strict=True
    ):
        run(scenario(member, how))
    assert replica(members[0]) == replica(members[1]) == replica(members[2])


def test_a_write_chunk_twice_is_once(members: list[Member]) -> None:
    """The same chunk bytes again pass the overwrite check, committed or not."""
    writes, _ = block_writes(CID, 1, payload(1, 2048), 1024)
    _twice(members, writes, [0, 1])
    _, bcsid, blocks = replica(members[0])
    assert (bcsid, blocks) == (3, [(1, 3, ("1_chunk_0", "1_chunk_1"))])
    answer = members[0].ask(read(CID, 1, writes[1].writeChunk.chunkData))
    assert answer.readChunk.data == payload(1, 2048)[1024:]


def test_a_put_block_twice_is_once(members: list[Member]) -> None:
    """Replayed at its index: a no-op; resent: the same block again, at the higher BCSID."""
    writes, _ = block_writes(CID, 1, payload(1, 2048), 1024)
    _twice(members, writes, [2])
    assert replica(members[0])[1:] == (4, [(1, 4, ("1_chunk_0", "1_chunk_1"))])


def test_a_piggybacked_write_chunk_twice_is_once(members: list[Member]) -> None:
    _twice(members, [piggybacked(CID, 1, payload(1, 800))], [0])
    assert replica(members[0])[1:] == (2, [(1, 2, ("1_chunk_0",))])


def test_a_put_small_file_twice_is_once(members: list[Member]) -> None:
    """The same chunk again passes `_refuse_other_chunks` and commits the same block."""
    _twice(members, [small_file(CID, 1, payload(1, 300))], [0])
    assert replica(members[0])[1:] == (2, [(1, 2, ("1_chunk",))])
    assert members[0].ask(get_small_file(CID, 1)).getSmallFile.data.data == payload(1, 300)


def test_a_finalize_block_twice_is_once(members: list[Member]) -> None:
    _twice(members, [small_file(CID, 1, payload(1, 300)), finalize(1)], [1])
    assert members[0].container().get_block(BlockID(CID, 1)).finalized


def test_a_close_container_twice_is_once(members: list[Member]) -> None:
    _twice(members, [small_file(CID, 1, payload(1, 300)), close(CID)], [1])
    assert replica(members[0])[:2] == (ReplicaState.CLOSED, 1)


# ------------------------------------------------------------------ what the data stage leaves behind


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


def _streamed(member: Member, data: bytes) -> None:
    """Block CID/1 written as a V2 datastream writes it on one member: outside the log, checked."""
    container = member.dispatcher.writable(CID, PIPELINE)
    sums = compute(data, ChecksumType.CRC32, BPC)
    chunk = ChunkInfo("1_chunk_1", 0, len(data), sums)
    member.dispatcher.write(container, BlockID(CID, 1), chunk, data, streamed=True)


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
        _streamed(member, data)
    lying = put(CID, 1, [chunk("1_chunk_1", 0, evil)])
    check = leader.dispatcher.held_by_stream(lying)
    assert check is not None
    with pytest.raises(ContainerError) as refused:
        check()
    assert refused.value.result is Result.CHECKSUM_MISMATCH  # the leader's own bytes: nothing logged
    honest = put(CID, 1, [chunk("1_chunk_1", 0, good)])
    check = leader.dispatcher.held_by_stream(honest)
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
    assert leader.dispatcher.held_by_stream(writes[-1]) is None  # its bytes went through the log


def test_a_put_block_over_streamed_bytes_on_an_unhealthy_replica_is_refused_alike(
    members: list[Member],
) -> None:
    """A member whose replica went UNHEALTHY (its bytes damaged, found by the scanner) refuses the putBlock
    alike at apply, CONTAINER_UNHEALTHY, as any entry (SCM replaces that replica): its data stage checks
    no bytes of a replica that takes no writes, and the pipeline stays healthy."""
    data = payload(1, 3000)
    for member in members:
        _streamed(member, data)
    damaged = members[1].container()
    flip_byte(chunk_io.block_file(damaged.chunks_dir, 1), 10)
    damaged.mark_unhealthy("the scanner found block 1 damaged")
    honest = put(CID, 1, [chunk("1_chunk_1", 0, data)])
    check = members[0].dispatcher.held_by_stream(honest)
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
        _streamed(member, data)
    honest = put(CID, 1, [chunk("1_chunk_1", 0, data)])
    check = members[0].dispatcher.held_by_stream(honest)
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


# ------------------------------------------------------------------ snapshots, the apply bound, restarts


def test_snapshot_every_threshold_entries_syncs_block_files_first(
    tmp_path: Path, executor: ThreadPoolExecutor, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`sm-snapshot` holds the applied prefix's last entry and the pipeline's containers' BCSIDs, written
    after the block files written since the last snapshot were synced; a new state machine over the same
    directory starts from it (latest_snapshot)."""
    synced: list[str] = []
    real_sync = chunk_io.sync_file
    monkeypatch.setattr(chunk_io, "sync_file", lambda p: (synced.append(p.name), real_sync(p)))
    taken: list[TermIndex] = []
    member = make_member(tmp_path, UUIDS[0], executor, snapshot_threshold=4, on_snapshot=taken.append)
    try:
        one, _ = block_writes(CID, 1, payload(1, 2000), 1024)
        requests = [*one, write(OTHER, 3, chunk("3_c", 0, payload(2, 10)), payload(2, 10)), close(CID)]

        async def scenario() -> None:
            await feed(member, entries(requests, term=3), datas(requests))
            while member.sm._snapshotting is not None:  # the snapshot the 4th apply started
                await asyncio.sleep(0.01)

        run(scenario())
        assert taken == [TermIndex(3, 4)]
        snapshot = read_snapshot(member.sm.directory)
        assert snapshot is not None and snapshot.term_index == TermIndex(3, 4)
        assert snapshot.bcsids == {CID: 3, OTHER: 0}
        assert sorted(synced).count("1.block") >= 1 and "3.block" in synced
        again = ContainerStateMachine(
            PIPELINE, member.dispatcher, executor, member.sm.directory, lambda *_: None
        )
        assert again.latest_snapshot() == TermIndex(3, 4)
        assert run(member.sm.take_snapshot()) == TermIndex(3, 5)
        assert (member.sm.directory / SNAPSHOT_FILE).exists()
    finally:
        member.node.close()


def test_applies_on_the_executor_are_bounded(tmp_path: Path, executor: ThreadPoolExecutor) -> None:
    """dfs.container.ratis.statemachine.max.pending.apply-transactions = 1: entries of different
    containers, free to apply in parallel, run one at a time."""
    member = make_member(tmp_path, UUIDS[0], executor, max_pending_apply=1)
    running, most = [0], [0]
    apply_entry = member.dispatcher.apply_entry

    def counted(*args: Any) -> Any:
        running[0] += 1
        most[0] = max(most[0], running[0])
        try:
            return apply_entry(*args)
        finally:
            running[0] -= 1

    member.dispatcher.apply_entry = counted  # type: ignore[method-assign]
    try:
        requests = [small_file(cid, 1, payload(cid, 5000)) for cid in range(1, 9)]
        assert results(run(feed(member, entries(requests), datas(requests)))) == ["SUCCESS"] * 8
        assert most[0] == 1
    finally:
        member.node.close()


def test_a_snapshot_install_is_refused_and_fails_the_pipeline(members: list[Member]) -> None:
    """Ozone's datanode never installs a snapshot: the leader purged what this member needs, so the
    pipeline is reported failed (SCM closes it) and the shell is told nothing was installed."""
    installed = run(members[0].sm.install_snapshot(RaftPeerId("leader"), None, TermIndex(2, 500)))
    assert installed is None and members[0].sm.failure is not None
    assert members[0].failures and "installs no snapshot" in members[0].failures[0][1]


def test_restart_checks_fail_the_pipeline(members: list[Member]) -> None:
    """Containers ahead of the log, containers lost with a volume, or a failed volume with unknown losses
    under a log with history: the member cannot go on (on_failure), as group.py's restart checks."""
    run(feed(members[0], entries([small_file(CID, 1, payload(1, 10))], 4), [payload(1, 10)]))
    members[0].sm.check_restart(log_last_index=3, lost=(), unrecorded_losses=False)
    assert "applied" in members[0].failures[0][1]
    members[1].sm.check_restart(log_last_index=0, lost=[CID], unrecorded_losses=False)
    assert "lost with a volume" in members[1].failures[0][1]
    members[2].sm.check_restart(log_last_index=9, lost=(), unrecorded_losses=True)
    assert "failed data volume" in members[2].failures[0][1]
    healthy = members[0]
    healthy.failures.clear()
    healthy.sm.failure = None
    healthy.sm.check_restart(log_last_index=4, lost=(), unrecorded_losses=False)
    assert healthy.failures == []


# ------------------------------------------------- two claims of the design that its rules alone did not keep


def test_a_data_stage_over_bytes_an_earlier_entry_commits_is_refused_alike(members: list[Member]) -> None:
    """Design section 2.4 says content-determined refusals are the same on every member and the commit
    stage re-decides the state's; not enough on its own: a data stage runs at append, before the entries
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


def test_a_replayed_put_block_whose_bytes_were_lost_fails_the_pipeline(
    members: list[Member], executor: ThreadPoolExecutor
) -> None:
    """Design section 4, data-loss path 1 says a power loss after a follower's ack can lose its bytes and
    its replay then fails the putBlock (UNABLE_TO_FIND_CHUNK/CHECKSUM_MISMATCH) and closes the pipeline; by
    the apply rule alone it would not: both are refusals every member may reach alike (a client's putBlock
    naming bytes it did not write), so the member would stay, quietly without a block the others committed.
    A replayed entry (up to the log's end at start, `check_restart`) refused so fails the pipeline; the
    same refusal outside a replay stays alike (test_a_checksum_mismatch_is_refused_alike_...)."""
    member = members[0]
    writes, _ = block_writes(CID, 1, payload(1, 2048), 1024)
    log = entries(writes)

    async def scenario() -> list[str]:
        for entry, blob in zip(log, datas(writes), strict=True):  # acknowledged: data written, not synced
            if entry.data_size:
                await member.sm.write_data(entry, memoryview(blob))
        path = chunk_io.block_file(member.container().chunks_dir, 1)
        with open(path, "r+b") as f:  # the power cut takes the unsynced second chunk
            f.truncate(1024)
        restarted = ContainerStateMachine(
            PIPELINE,
            member.dispatcher,
            executor,
            member.sm.directory,
            lambda p, r: member.failures.append((p, r)),
        )
        restarted.check_restart(log_last_index=len(log), lost=(), unrecorded_losses=False)
        assert member.failures == []
        return results(await asyncio.gather(*(restarted.apply_async(e) for e in log)))  # no data stages

    assert run(scenario()) == ["SUCCESS", "SUCCESS", "UNABLE_TO_FIND_CHUNK"]
    assert len(member.failures) == 1 and "replayed after a restart" in member.failures[0][1]


# ------------------------------------------------- R13's findings (D1, D2, D4)


def _restarted(member: Member, executor: ThreadPoolExecutor, log_last_index: int) -> ContainerStateMachine:
    """A new state machine over the member's replicas and directory, as after a restart."""
    again = ContainerStateMachine(
        PIPELINE, member.dispatcher, executor, member.sm.directory,
        lambda p, r: member.failures.append((p, r)),
    )  # fmt: skip
    again.check_restart(log_last_index=log_last_index, lost=(), unrecorded_losses=False)
    return again


@pytest.mark.parametrize("waiting", [True, False], ids=["while-waiting", "before-it-started"])
def test_an_apply_cancelled_before_it_ran_is_not_applied_nor_snapshotted(
    tmp_path: Path, executor: ThreadPoolExecutor, waiting: bool
) -> None:
    """R13 D1: the shell's stop cancels the applies under way. An entry cancelled while it waited for the
    previous entry of its container (or before its task even started) never ran: the applied point stays
    before it, and the snapshot the threshold then takes does not cover it (a restart resumes after the
    snapshot: the entry would never be applied on this replica); a later entry of that container is not
    applied either (before, it waited forever when its predecessor was cancelled before it started)."""
    member = make_member(tmp_path, UUIDS[0], executor, snapshot_threshold=1)
    release = threading.Event()
    apply_entry = member.dispatcher.apply_entry

    def held(request: Any, index: int, written: Any = None) -> Any:
        if index == 1:
            release.wait(10)
        return apply_entry(request, index, written)

    member.dispatcher.apply_entry = held  # type: ignore[method-assign]
    try:
        requests = [small_file(CID, n, payload(n, 10)) for n in (1, 2, 3)]
        log = entries(requests)

        async def scenario() -> list[Any]:
            for entry, blob in zip(log, datas(requests), strict=True):
                await member.sm.write_data(entry, memoryview(blob))
            first, second, third = (member.sm.apply_async(e) for e in log)
            if waiting:
                await asyncio.sleep(0)
            second.cancel()  # the member stops while entry 2 waits for entry 1
            release.set()
            answers = await asyncio.gather(first, second, third, return_exceptions=True)
            while member.sm._snapshotting is not None:
                await asyncio.sleep(0.01)
            return answers

        answers = run(scenario())
        assert answers[0].result == pb.SUCCESS
        assert all(isinstance(a, asyncio.CancelledError) for a in answers[1:])
        assert member.sm.applied == TermIndex(1, 1)
        snapshot = read_snapshot(member.sm.directory)
        assert snapshot is not None and snapshot.index == 1
        assert member.ask(get(CID, 2)).result == pb.NO_SUCH_BLOCK
    finally:
        release.set()
        member.node.close()


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


def test_a_replay_does_not_fail_the_pipeline_for_entries_every_member_refused(
    members: list[Member], executor: ThreadPoolExecutor
) -> None:
    """R13 D4: entries every member refused alike in their first run, replayed after a restart (no later
    putBlock moved the BCSID past them): a putSmallFile refused at its data stage (its refusal was kept,
    so the replay answers it again) and a putBlock naming a chunk no entry wrote (the chunk it names that
    a replayed write acknowledged is intact). Neither fails the pipeline, which before it did ("bytes this
    member acknowledged are gone"): a restart of any member closed it."""
    member = members[0]
    good = payload(1, 100)
    requests = [
        small_file(CID, 1, payload(1, 10)),
        small_file(CID, 2, payload(3, 10), chunk("2_chunk", 0, payload(4, 10))),  # checksums of other bytes
        write(CID, 3, chunk("3_chunk_0", 0, good), good),
        put(CID, 3, [chunk("3_chunk_0", 0, good), chunk("3_chunk_1", 100, payload(2, 100))]),
    ]
    log = entries(requests)
    first_life = ["SUCCESS", "CHECKSUM_MISMATCH", "SUCCESS", "UNABLE_TO_FIND_CHUNK"]
    assert results(run(feed(member, log, datas(requests)))) == first_life
    assert member.failures == []

    async def replay() -> list[str]:
        again = _restarted(member, executor, len(log))
        return results(await asyncio.gather(*(again.apply_async(e) for e in log)))

    assert run(replay()) == first_life
    assert member.failures == []


def test_a_replayed_put_small_file_whose_bytes_were_lost_fails_the_pipeline(
    members: list[Member], executor: ThreadPoolExecutor
) -> None:
    """The other side of R13 D4: a putSmallFile this member acknowledged (its data stage wrote it, no
    refusal kept) whose bytes a power cut took still fails the pipeline when it is replayed."""
    member = members[0]
    requests = [small_file(CID, 1, payload(1, 10)), small_file(CID, 2, payload(2, 10))]
    log = entries(requests)

    async def scenario() -> list[str]:
        for entry, blob in zip(log, datas(requests), strict=True):
            await member.sm.write_data(entry, memoryview(blob))
        chunk_io.block_file(member.container().chunks_dir, 2).unlink()  # never synced: a power cut
        again = _restarted(member, executor, len(log))
        return results(await asyncio.gather(*(again.apply_async(e) for e in log)))

    assert run(scenario()) == ["SUCCESS", "UNABLE_TO_FIND_CHUNK"]
    assert len(member.failures) == 1 and "entry 2 (PutSmallFile) replayed" in member.failures[0][1]


# ------------------------------------------------- R14's findings (D1)


@pytest.mark.parametrize("damage", ["missing", "cut short"])
def test_a_put_block_over_bytes_this_member_wrote_and_lost_fails_the_pipeline(
    members: list[Member], damage: str
) -> None:
    """R14 D1 (r4_putblock_missing_on_follower.py): a member whose writeChunk entry was applied SUCCESS
    here, and whose bytes of that chunk are then gone or damaged on its disk, refuses the putBlock
    naming it (UNABLE_TO_FIND_CHUNK / CHECKSUM_MISMATCH) while the others apply it: that is this
    replica's failure, not a refusal alike (it stayed healthy and quietly without the block). It fails
    the pipeline (Ozone's applyTransaction failure: pipeline action CLOSE); a putBlock over a chunk no
    entry wrote stays refused alike (test_a_replay_does_not_fail_the_pipeline_for_entries_...)."""
    member = members[0]
    data = payload(1, 100)
    writes = [write(CID, 1, chunk("1_chunk_0", 0, data), data)]
    log = entries(writes)
    assert results(run(feed(member, log, datas(writes)))) == ["SUCCESS"]
    path = chunk_io.block_file(member.container().chunks_dir, 1)
    if damage == "missing":
        path.unlink()
    else:
        with open(path, "r+b") as f:
            f.truncate(60)
    putting = [put(CID, 1, [chunk("1_chunk_0", 0, data)])]
    answers = results(run(feed(member, entries(putting, first=2), datas(putting))))
    assert answers == ["UNABLE_TO_FIND_CHUNK"]
    assert len(member.failures) == 1 and "bytes this member acknowledged are gone" in member.failures[0][1]
    assert member.sm.failure is not None


# ------------------------------------------------- R16's findings (D1, D2)


def test_a_replayed_put_block_over_damaged_acknowledged_bytes_fails_the_pipeline(
    members: list[Member], executor: ThreadPoolExecutor
) -> None:
    """R16 D1 (test_r16_damaged_replay.py): after a power cut an allocated but unwritten extent reads back
    as zeros; the replayed putBlock over bytes this member acknowledged is refused CHECKSUM_MISMATCH and
    the check of its own bytes meets ChecksumMismatch (damaged, not missing): bytes gone, the pipeline
    fails here (the check raised, and the member stayed healthy and applied past a block it lacks)."""
    member = members[0]
    writes, _ = block_writes(CID, 1, payload(1, 2048), 1024)
    log = entries(writes)

    async def scenario() -> tuple[list[str], ContainerStateMachine]:
        for entry, blob in zip(log, datas(writes), strict=True):  # acknowledged: written, not synced
            if entry.data_size:
                await member.sm.write_data(entry, memoryview(blob))
        with open(chunk_io.block_file(member.container().chunks_dir, 1), "r+b") as f:
            f.seek(1024)
            f.write(b"\0" * 1024)  # the power cut: the second chunk's extent reads back as zeros
        member.container()._forget_all()  # a restart keeps no checksums in memory
        again = _restarted(member, executor, len(log))
        return results(await asyncio.gather(*(again.apply_async(e) for e in log))), again

    answers, again = run(scenario())
    assert answers == ["SUCCESS", "SUCCESS", "CHECKSUM_MISMATCH"]
    assert len(member.failures) == 1 and "bytes this member acknowledged are gone" in member.failures[0][1]
    assert again.failure is not None and replica(member)[1:] == (0, [])


def test_an_apply_that_raises_fails_the_member_and_is_not_applied(
    members: list[Member], monkeypatch: pytest.MonkeyPatch
) -> None:
    """R16 D1, generally (design 2.2.3: an exception result is an apply failure): an exception out of the
    state machine's own apply steps fails the member for its group and answers CONTAINER_INTERNAL_ERROR;
    the applied point (and so a snapshot) stays before that entry, which the shell would otherwise have
    recorded as a result, the member healthy and its applied index past an entry it never applied."""
    member = members[0]
    data = payload(1, 100)
    writes = [write(CID, 1, chunk("1_chunk_0", 0, data), data)]
    assert results(run(feed(member, entries(writes), datas(writes)))) == ["SUCCESS"]
    chunk_io.block_file(member.container().chunks_dir, 1).unlink()
    monkeypatch.setattr(member.sm, "_acknowledged_bytes_gone", _io_error("the check"))
    putting = [put(CID, 1, [chunk("1_chunk_0", 0, data)])]
    answers = results(run(feed(member, entries(putting, first=2), datas(putting))))
    assert answers == ["CONTAINER_INTERNAL_ERROR"]
    assert len(member.failures) == 1 and "entry 2 (PutBlock) raised" in member.failures[0][1]
    assert member.sm.applied == TermIndex(1, 1)


def test_a_restart_keeps_the_bytes_of_a_block_its_log_names_and_the_replay_commits_it(
    tmp_path: Path, executor: ThreadPoolExecutor
) -> None:
    """R16 D2 (test_r16_restart_orphans.py): a member killed (kill -9: the page cache survives) while a
    block's writeChunks are in its log and acknowledged but its putBlock is not applied. At start only
    uncommitted block files no pipeline log names are orphans (a datastream cut off); this block's bytes
    stay, and the replay commits it (they were removed, and the replay failed the pipeline over them)."""
    member = make_member(tmp_path / "m0", UUIDS[0], executor)
    writes, _ = block_writes(CID, 1, payload(1, 2048), 1024)  # writeChunk, writeChunk, putBlock
    log = entries(writes)
    storage = SegmentedRaftLog(tmp_path / "m0" / "ratis" / PIPELINE)
    storage.load()
    storage.write(Persist(1, 1, None, tuple(log)))
    storage.flush()
    storage.close()

    async def before_the_kill() -> None:
        for entry, blob in zip(log, datas(writes), strict=True):
            if entry.data_size:
                await member.sm.write_data(entry, memoryview(blob))

    run(before_the_kill())
    stray = BlockID(CID, 9)  # a stream's bytes no log names
    member.container().write_chunk(stray, chunk_for(b"x" * 100, "9_chunk_1"), b"x" * 100)
    member.node.close()
    logged = blocks_in_logs(tmp_path / "m0" / "ratis")
    node = open_node(tmp_path / "m0" / "dn", UUIDS[0], container_size="4MB", logged=logged)
    try:
        chunks = node.containers.require(CID).chunks_dir
        assert chunk_io.block_file(chunks, 1).exists() and not chunk_io.block_file(chunks, 9).exists()
        again = Member(node, Dispatcher(node.containers, UUIDS[0], lambda _cid: None), member.sm)
        machine = _restarted(again, executor, len(log))

        async def replay() -> list[str]:
            return results(await asyncio.gather(*(machine.apply_async(e) for e in log)))

        assert run(replay()) == ["SUCCESS", "SUCCESS", "SUCCESS"]
        assert again.failures == [] and machine.failure is None
        assert replica(again)[1:] == (3, [(1, 3, ("1_chunk_0", "1_chunk_1"))])
    finally:
        node.close()


def test_blocks_in_logs_keeps_every_block_when_a_log_cannot_be_read(tmp_path: Path) -> None:
    """A damaged log says nothing of its blocks: no uncommitted block file is removed at start (its member
    will not start; the pipeline closes and the replica is judged at its close)."""
    ratis = tmp_path / "ratis"
    storage = SegmentedRaftLog(ratis / PIPELINE)
    storage.load()
    data = b"a" * 10
    storage.write(Persist(1, 1, None, tuple(entries([write(CID, 1, chunk("1_chunk_0", 0, data), data)]))))
    storage.flush()
    storage.close()
    assert blocks_in_logs(ratis)(BlockID(CID, 1)) and not blocks_in_logs(ratis)(BlockID(CID, 2))
    (ratis / "other" / "current").mkdir(parents=True)
    (ratis / "other" / "current" / "raft-meta").write_bytes(b"damaged")
    assert blocks_in_logs(ratis)(BlockID(CID, 2))
    assert not blocks_in_logs(tmp_path / "none")(BlockID(CID, 1))


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
        _streamed(member, good)
    honest = put(CID, 1, [chunk("1_chunk_1", 0, good)])
    check = members[0].dispatcher.held_by_stream(honest)
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
                _streamed(member, payload(9, 3000))
            assert refused.value.result is Result.OVERWRITE_FLAG_REQUIRED
        rest = members[len(first) :]
        return results([*first, *await asyncio.gather(*(m.sm.apply_async(entry) for m in rest))])

    assert run(scenario()) == ["SUCCESS"] * 3
    assert not any(m.failures for m in members)
    assert [replica(m)[1:] for m in members] == [(1, [(1, 1, ("1_chunk_1",))])] * 3
    _streamed(members[1], good)  # the same bytes again (a resent packet) are fine
