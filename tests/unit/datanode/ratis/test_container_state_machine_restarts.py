"""ContainerStateMachine: snapshots, the apply bound, and restarts (the checks at start, the replay of the
log, the bytes kept for it). Harness: csm_helpers.py."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from pyozone.datanode.ratis import blocks_in_logs
from pyozone.datanode.ratis.state_machine import SNAPSHOT_FILE, ContainerStateMachine, read_snapshot
from pyozone.datanode.storage import chunk_io
from pyozone.datanode.xceiver import Dispatcher
from pyozone.hdds.ids import BlockID
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from pyozone.ratis.messages import TermIndex
from pyozone.ratis.outputs import Persist
from pyozone.ratis_server.segmented_log import SegmentedRaftLog
from tests.unit.datanode.dns_helpers import (
    PIPELINE,
    block_writes,
    chunk,
    close,
    get,
    open_node,
    payload,
    put,
    results,
    small_file,
    write,
)
from tests.unit.datanode.ratis.csm_helpers import (
    CID,
    OTHER,
    UUIDS,
    Member,
    datas,
    entries,
    feed,
    make_member,
    piggybacked,
    replica,
    restarted,
    run,
)
from tests.unit.datanode.storage.dn_helpers import chunk_for


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

    def counted(apply: Callable[..., Any]) -> Callable[..., Any]:
        def run(*args: Any) -> Any:
            running[0] += 1
            most[0] = max(most[0], running[0])
            try:
                return apply(*args)
            finally:
                running[0] -= 1

        return run

    member.dispatcher.apply_entry = counted(member.dispatcher.apply_entry)  # type: ignore[method-assign]
    member.dispatcher.apply_small_files = counted(member.dispatcher.apply_small_files)  # type: ignore[method-assign]
    try:
        requests = [small_file(cid, 1, payload(cid, 5000)) for cid in range(1, 9)]
        assert results(run(feed(member, entries(requests), datas(requests)))) == ["SUCCESS"] * 8
        assert most[0] == 1
    finally:
        member.node.close()


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


def test_a_replayed_put_block_whose_bytes_were_lost_fails_the_pipeline(
    members: list[Member], executor: ThreadPoolExecutor
) -> None:
    """A power loss after a follower's ack can lose its bytes (chunk writes are not synced) and
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
        # entry 1 a writeChunk with its putBlock, not a small file: entries 2 and 3 are small files of one
        # batch (`_SmallFiles`), whose first, entry 2, waits for entry 1
        requests = [piggybacked(CID, 1, payload(1, 10))]
        requests += [small_file(CID, n, payload(n, 10)) for n in (2, 3)]
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
        again = restarted(member, executor, len(log))
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
        again = restarted(member, executor, len(log))
        return results(await asyncio.gather(*(again.apply_async(e) for e in log)))

    assert run(scenario()) == ["SUCCESS", "UNABLE_TO_FIND_CHUNK"]
    assert len(member.failures) == 1 and "entry 2 (PutSmallFile) replayed" in member.failures[0][1]


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
        again = restarted(member, executor, len(log))
        return results(await asyncio.gather(*(again.apply_async(e) for e in log))), again

    answers, again = run(scenario())
    assert answers == ["SUCCESS", "SUCCESS", "CHECKSUM_MISMATCH"]
    assert len(member.failures) == 1 and "bytes this member acknowledged are gone" in member.failures[0][1]
    assert again.failure is not None and replica(member)[1:] == (0, [])


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
        machine = restarted(again, executor, len(log))

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
