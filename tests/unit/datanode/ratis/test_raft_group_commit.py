"""A pipeline group's log fsync shared by the entries that arrive together (group commit), and a leader
that waits a little for its last follower so that its client needs no watch."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from pyozone.datanode.pipelines import Membership
from pyozone.datanode.ratis import group as group_module
from pyozone.datanode.ratis.group import RaftGroup
from pyozone.datanode.ratis.log import RaftLog
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from pyozone.protocol.ratis import AppendReply
from tests.polling import wait_for_async
from tests.unit.datanode.ratis.test_raft_group_recovery import PID, _args
from tests.unit.datanode.ratis.test_raft_log import _write_chunk

Answer = asyncio.Future[pb.ContainerCommandResponseProto]
ME = "dn-self"
FOLLOWERS = ("dn-f1", "dn-f2")


def _put_block(container_id: int, local_id: int) -> pb.ContainerCommandRequestProto:
    """A putBlock: an entry after which the log must be on disk before it is answered."""
    block = pb.BlockData(blockID=pb.DatanodeBlockID(containerID=container_id, localID=local_id))
    return pb.ContainerCommandRequestProto(
        cmdType=pb.PutBlock, containerID=container_id, putBlock=pb.PutBlockRequestProto(blockData=block)
    )


class _Syncs:
    """RaftLog.sync, counted; the first call waits until the test releases it (or fails, if told to)."""

    def __init__(self, raft_log: RaftLog, error: OSError | None = None) -> None:
        self.calls = 0
        self.release = threading.Event()
        self._sync = raft_log.sync
        self._error = error
        raft_log.sync = self  # type: ignore[method-assign]

    def __call__(self) -> None:
        self.calls += 1
        if self.calls == 1:
            assert self.release.wait(10), "the test never released the first fsync"
        if self._error is not None:
            raise self._error
        self._sync()


def test_entries_written_during_an_fsync_share_the_next_one(tmp_path: Path) -> None:
    """Five putBlocks of ONE container while the first entry's fsync is held: the other four apply and
    are logged meanwhile (a container's entries wait for each other's apply, not for each other's
    fsync), none is answered before an fsync covers it, and one more fsync covers all four."""
    raft_log = RaftLog(tmp_path)
    syncs = _Syncs(raft_log)
    with ThreadPoolExecutor(4) as executor:
        group = RaftGroup(Membership(PID, (ME,), ME, True), ME, raft_log, **_args(executor, _no_failure))

        async def scenario() -> list[pb.ContainerCommandResponseProto]:
            answers = [group.submit(_put_block(1, lid)) for lid in range(1, 6)]
            await wait_for_async(lambda: raft_log.last_index == 5, what="all five entries logged")
            assert syncs.calls == 1 and not any(a.done() for a in answers)
            syncs.release.set()
            done = await asyncio.gather(*answers)
            await group.close()
            return done

        answers = asyncio.run(scenario())
    assert [(a.result, a.logIndex) for a in answers] == [(pb.SUCCESS, i) for i in range(1, 6)]
    assert syncs.calls == 2


def test_a_failed_log_fsync_fails_the_member_and_every_entry_waiting_for_it(tmp_path: Path) -> None:
    raft_log = RaftLog(tmp_path)
    syncs = _Syncs(raft_log, OSError(5, "Input/output error"))
    failures: list[str] = []
    with ThreadPoolExecutor(4) as executor:
        group = RaftGroup(
            Membership(PID, (ME,), ME, True), ME, raft_log, **_args(executor, lambda p, w: failures.append(w))
        )

        async def scenario() -> list[pb.ContainerCommandResponseProto]:
            answers = [group.submit(_put_block(cid, 1)) for cid in (1, 2, 3)]
            await wait_for_async(lambda: raft_log.last_index == 3, what="all three entries logged")
            syncs.release.set()
            done = await asyncio.gather(*answers)
            later = await group.submit(_put_block(4, 1))
            await group.close()
            return [*done, later]

        answers = asyncio.run(scenario())
    assert [a.result for a in answers] == [pb.IO_EXCEPTION] * 3 + [pb.RAFT_RETRY_FAILURE]
    assert len(failures) == 1 and "log write failed" in failures[0]


class _Appender:
    """A follower's stream that only records what the leader sent; the test plays the replies."""

    def __init__(self) -> None:
        self.sent: list[int] = []

    def send(self, index: int, entry: bytes) -> None:
        self.sent.append(index)

    def close(self) -> None:
        pass

    async def wait_closed(self) -> None:
        pass


def _leader_of_three(raft_log: RaftLog, executor: ThreadPoolExecutor, failures: list[str]) -> RaftGroup:
    """A leader whose followers' streams only record what it sent (the test plays their replies); the
    failures it reports go to `failures`."""
    membership = Membership(PID, (ME, *FOLLOWERS), ME, True)
    group = RaftGroup(membership, ME, raft_log, **_args(executor, lambda p, w: failures.append(w)))
    group._appenders = {f: _Appender() for f in FOLLOWERS}  # type: ignore[assignment]
    return group


def _leader_answer(
    tmp_path: Path,
    then: Callable[[RaftGroup, Answer], None],
    entry: pb.ContainerCommandRequestProto | None = None,
) -> tuple[pb.ContainerCommandResponseProto, list[str]]:
    """A leader of three submits one entry (a putBlock unless `entry`); dn-f1 applies it (a majority);
    `then(group, answer)` plays the rest. Returns the client's answer and the failures the leader
    reported."""
    failures: list[str] = []
    with ThreadPoolExecutor(2) as executor:
        group = _leader_of_three(RaftLog(tmp_path), executor, failures)

        async def scenario() -> pb.ContainerCommandResponseProto:
            answer = group.submit(entry or _put_block(1, 1))
            await wait_for_async(lambda: group.match[ME] == 1, what="the leader applied the entry")
            group._follower_replied("dn-f1", AppendReply(index=1, result=pb.SUCCESS))
            for _ in range(20):  # the answer task runs past the majority
                await asyncio.sleep(0)
            then(group, answer)
            done = await answer
            await group.close()
            return done

        return asyncio.run(scenario()), failures


def test_the_leader_waits_for_the_last_follower_so_the_client_needs_no_watch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(group_module, "LAST_MEMBER_WAIT", 1e6)  # as long as it takes

    def last_follower_applies(
        group: RaftGroup, answer: asyncio.Future[pb.ContainerCommandResponseProto]
    ) -> None:
        assert not answer.done()
        group._follower_replied("dn-f2", AppendReply(index=1, result=pb.SUCCESS))

    answer, failures = _leader_answer(tmp_path, last_follower_applies)
    assert answer.result == pb.SUCCESS and failures == []
    assert {c.datanodeUuid: c.commitIndex for c in answer.commitInfos} == {ME: 1, "dn-f1": 1, "dn-f2": 1}


def test_the_leader_does_not_wait_for_a_failed_follower(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(group_module, "LAST_MEMBER_WAIT", 1e6)

    def last_follower_fails(
        group: RaftGroup, answer: asyncio.Future[pb.ContainerCommandResponseProto]
    ) -> None:
        assert not answer.done()
        group._member_failed("dn-f2", "its stream broke")

    answer, failures = _leader_answer(tmp_path, last_follower_fails)
    assert answer.result == pb.SUCCESS and len(failures) == 1
    assert {c.datanodeUuid: c.commitIndex for c in answer.commitInfos}[
        "dn-f2"
    ] == 0  # the client's watch fails


def test_without_a_wait_the_leader_answers_at_the_majority(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(group_module, "LAST_MEMBER_WAIT", 0.0)

    def nothing_more(group: RaftGroup, answer: Answer) -> None:
        assert answer.done()

    answer, _ = _leader_answer(tmp_path, nothing_more)
    assert answer.result == pb.SUCCESS
    assert {c.datanodeUuid: c.commitIndex for c in answer.commitInfos} == {ME: 1, "dn-f1": 1, "dn-f2": 0}


def _small_file(container_id: int, local_id: int) -> pb.ContainerCommandRequestProto:
    block = pb.BlockData(blockID=pb.DatanodeBlockID(containerID=container_id, localID=local_id))
    return pb.ContainerCommandRequestProto(
        cmdType=pb.PutSmallFile,
        containerID=container_id,
        putSmallFile=pb.PutSmallFileRequestProto(block=pb.PutBlockRequestProto(blockData=block)),
    )


def test_a_small_file_is_answered_once_every_replica_applied_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A putSmallFile is a small key's whole block: where a putBlock is answered at the majority (no wait
    for the last member here), it waits for the last follower, so its answer shows every replica."""
    monkeypatch.setattr(group_module, "LAST_MEMBER_WAIT", 0.0)

    def last_follower_applies(group: RaftGroup, answer: Answer) -> None:
        assert not answer.done()
        group._follower_replied("dn-f2", AppendReply(index=1, result=pb.SUCCESS))

    answer, failures = _leader_answer(tmp_path, last_follower_applies, _small_file(1, 1))
    assert answer.result == pb.SUCCESS and failures == []
    assert {c.datanodeUuid: c.commitIndex for c in answer.commitInfos} == {ME: 1, "dn-f1": 1, "dn-f2": 1}


def test_a_small_file_is_not_held_for_a_failed_follower(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(group_module, "LAST_MEMBER_WAIT", 0.0)

    def last_follower_fails(group: RaftGroup, answer: Answer) -> None:
        assert not answer.done()
        group._member_failed("dn-f2", "its stream broke")

    answer, failures = _leader_answer(tmp_path, last_follower_fails, _small_file(1, 1))
    assert answer.result == pb.SUCCESS and len(failures) == 1
    assert {c.datanodeUuid: c.commitIndex for c in answer.commitInfos}[
        "dn-f2"
    ] == 0  # the client's watch fails


def _no_failure(pipeline_id: str, why: str) -> None:
    raise AssertionError(f"pipeline {pipeline_id} failed: {why}")


def test_an_entry_whose_fsync_would_run_on_a_closed_log_is_not_acknowledged(tmp_path: Path) -> None:
    """The group closes (datanode shutdown) while entry 2 waits for the fsync after entry 1's: that fsync
    finds the log closed, so entry 2 is refused, never answered SUCCESS unsynced."""
    raft_log = RaftLog(tmp_path)
    original = raft_log.sync
    release = threading.Event()
    calls = 0

    def sync() -> None:
        nonlocal calls
        calls += 1
        if calls == 1:
            original()  # entry 1 is on disk; entry 2 needs the next fsync
            assert release.wait(10)
            return
        original()

    raft_log.sync = sync  # type: ignore[method-assign]
    with ThreadPoolExecutor(4) as executor:
        membership = Membership(PID, (ME,), ME, True)
        group = RaftGroup(membership, ME, raft_log, **_args(executor, lambda p, w: None))

        async def scenario() -> list[pb.ContainerCommandResponseProto]:
            first = group.submit(_put_block(1, 1))
            await wait_for_async(lambda: calls == 1, what="first fsync started")
            second = group.submit(_put_block(1, 2))
            await wait_for_async(lambda: raft_log.last_index == 2, what="entry 2 logged")
            closing = asyncio.ensure_future(group.close())
            await wait_for_async(lambda: raft_log._fd == -1, what="log closed")
            release.set()
            answers = await asyncio.gather(first, second)
            await closing
            return answers

        answers = asyncio.run(scenario())
    assert answers[1].result != pb.SUCCESS


def test_a_follower_refusal_is_judged_before_its_later_success_advances_it(tmp_path: Path) -> None:
    """Entry 1 (a putBlock) waits for the leader's fsync; entry 2 (a chunk of another container) needs
    none. dn-f1 answers, in order, IO_EXCEPTION for 1 and SUCCESS for 2. Its refusal of 1 is judged
    first, even while the leader's fsync of entry 1 is held: dn-f1 fails, and never counts as having
    applied entry 1."""
    raft_log = RaftLog(tmp_path)
    syncs = _Syncs(raft_log)
    failures: list[str] = []
    with ThreadPoolExecutor(4) as executor:
        group = _leader_of_three(raft_log, executor, failures)

        async def scenario() -> None:
            answers = [group.submit(_put_block(1, 1)), group.submit(_write_chunk(b"x"))]
            await wait_for_async(lambda: raft_log.last_index == 2, what="both entries logged")
            assert syncs.calls == 1  # entry 1's fsync is held
            group._follower_replied("dn-f1", AppendReply(index=1, result=pb.IO_EXCEPTION))
            group._follower_replied("dn-f1", AppendReply(index=2, result=pb.SUCCESS))
            assert "dn-f1" in group.failed and group.match["dn-f1"] == 0
            syncs.release.set()
            for reply in (1, 2):
                group._follower_replied("dn-f2", AppendReply(index=reply, result=pb.SUCCESS))
            await asyncio.gather(*answers)
            await group.close()

        asyncio.run(scenario())
    assert len(failures) == 1 and "entry 1: IO_EXCEPTION" in failures[0]


def test_a_follower_answer_with_an_unknown_result_fails_that_follower(tmp_path: Path) -> None:
    """dn-f1 answers entry 1, before the leader logged it, with a Result this build has no name for: the
    follower has failed, not the leader's log, and the entry still commits with dn-f2."""
    failures: list[str] = []
    with ThreadPoolExecutor(4) as executor:
        group = _leader_of_three(RaftLog(tmp_path), executor, failures)

        async def scenario() -> pb.ContainerCommandResponseProto:
            answer = group.submit(_write_chunk(b"x"))
            group._follower_replied("dn-f1", AppendReply(index=1, result=127))
            group._follower_replied("dn-f2", AppendReply(index=1, result=pb.SUCCESS))
            done = await answer
            await group.close()
            return done

        answer = asyncio.run(scenario())
    assert answer.result == pb.SUCCESS
    assert list(group.failed) == ["dn-f1"] and "RESULT_127" in failures[0]


def test_a_write_waiting_for_its_majority_when_the_pipeline_closes_is_refused_for_the_pipeline(
    tmp_path: Path,
) -> None:
    """SCM closes a pipeline while a putBlock waits for its followers: the client is answered with a
    refusal of the pipeline (RAFT_RETRY_FAILURE: it writes elsewhere, excluding the pipeline), not a
    cancelled call (the RPC layer would end it INTERNAL, a failure of the leader it would then exclude)."""
    failures: list[str] = []
    with ThreadPoolExecutor(2) as executor:
        group = _leader_of_three(RaftLog(tmp_path), executor, failures)

        async def scenario() -> pb.ContainerCommandResponseProto:
            answer = group.submit(_put_block(1, 1))
            await wait_for_async(lambda: group.match[ME] == 1, what="the leader applied the entry")
            await group.close()  # the followers never replied
            return await answer

        response = asyncio.run(scenario())
    assert pb.Result.Name(response.result) == "RAFT_RETRY_FAILURE", response
    assert "before the pipeline closed" in response.message


def test_a_request_reaching_a_closed_pipeline_is_refused_at_once(tmp_path: Path) -> None:
    """slow-run-2 (double failure): a write that reached the leader while its pipeline was closing waited
    for a majority that could no longer come, for the whole request timeout (60 s, the client's retry
    deadline too), since close() had woken only the waits it found. A closed group starts no wait."""
    failures: list[str] = []
    with ThreadPoolExecutor(2) as executor:
        group = _leader_of_three(RaftLog(tmp_path), executor, failures)

        async def scenario() -> pb.ContainerCommandResponseProto:
            await group.close()
            put = await asyncio.wait_for(group.submit(_put_block(1, 2)), 2)
            assert await asyncio.wait_for(group._wait_until(lambda: False, 60), 2) is False
            return put

        put = asyncio.run(scenario())
    assert pb.Result.Name(put.result) == "RAFT_RETRY_FAILURE" and "closed" in put.message, put
