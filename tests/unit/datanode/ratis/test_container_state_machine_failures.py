"""ContainerStateMachine: a failure is one member's (an IO error at a data stage or an apply, bytes it
acknowledged and lost, an apply that raises, a snapshot it cannot install): that member reports its
pipeline failed and applies nothing after it, the others go on. Harness: csm_helpers.py."""

from __future__ import annotations

import asyncio

import pytest

from pyozone.datanode.storage import chunk_io
from pyozone.ratis.messages import RaftPeerId, TermIndex
from pyozone.ratis_server.member_api import DataWriteError
from tests.unit.datanode.dns_helpers import (
    PIPELINE,
    block_writes,
    chunk,
    payload,
    put,
    results,
    small_file,
    write,
)
from tests.unit.datanode.ratis.csm_helpers import CID, Member, datas, entries, feed, feed_all, io_error, run


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
        members[1].container().put_block = io_error("put block")  # type: ignore[method-assign]
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
        members[2].container().write_chunk = io_error("write chunk")  # type: ignore[method-assign]
        return answers + await feed_all(members, writes[1:], first=2)

    answers = run(scenario())
    assert answers[3] == answers[4] == ["SUCCESS"] * 3 and answers[5] == ["-"] * 3
    assert members[0].failures == members[1].failures == []
    assert members[2].failures and "IO_EXCEPTION" in members[2].failures[0][1]
    assert members[2].sm.failure is not None


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


def test_an_apply_that_raises_fails_the_member_and_is_not_applied(
    members: list[Member], monkeypatch: pytest.MonkeyPatch
) -> None:
    """R16 D1, generally (an exception result is an apply failure, never an entry applied): an exception out
    of the state machine's own apply steps fails the member for its group and answers
    CONTAINER_INTERNAL_ERROR; the applied point (and so a snapshot) stays before that entry, which the shell
    would otherwise have recorded as a result, the member healthy and its applied index past an entry it never
    applied."""
    member = members[0]
    data = payload(1, 100)
    writes = [write(CID, 1, chunk("1_chunk_0", 0, data), data)]
    assert results(run(feed(member, entries(writes), datas(writes)))) == ["SUCCESS"]
    chunk_io.block_file(member.container().chunks_dir, 1).unlink()
    monkeypatch.setattr(member.sm, "_acknowledged_bytes_gone", io_error("the check"))
    putting = [put(CID, 1, [chunk("1_chunk_0", 0, data)])]
    answers = results(run(feed(member, entries(putting, first=2), datas(putting))))
    assert answers == ["CONTAINER_INTERNAL_ERROR"]
    assert len(member.failures) == 1 and "entry 2 (PutBlock) raised" in member.failures[0][1]
    assert member.sm.applied == TermIndex(1, 1)


def test_a_snapshot_install_is_refused_and_fails_the_pipeline(members: list[Member]) -> None:
    """Ozone's datanode never installs a snapshot: the leader purged what this member needs, so the
    pipeline is reported failed (SCM closes it) and the shell is told nothing was installed."""
    installed = run(members[0].sm.install_snapshot(RaftPeerId("leader"), None, TermIndex(2, 500)))
    assert installed is None and members[0].sm.failure is not None
    assert members[0].failures and "installs no snapshot" in members[0].failures[0][1]
