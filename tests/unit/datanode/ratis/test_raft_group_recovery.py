"""A pipeline group recovered after a restart: its log goes on from its end, unless entries were applied
past that end when the datanode stopped (entries of different containers apply in parallel, the log is
written in index order after them) or a data volume failed; then the member has failed and asks SCM to
close the pipeline. And how a leader judges its followers' answers."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import Executor, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from pyozone.datanode.pipelines import Membership
from pyozone.datanode.ratis.group import TERM, RaftGroup
from pyozone.datanode.ratis.log import RaftLog
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from pyozone.protocol.ratis import AppendReply
from tests.unit.datanode.ratis.test_raft_log import _write_chunk

ME = "dn-self"
PID = "33333333-0000-4000-8000-000000000001"


def _applied(request: pb.ContainerCommandRequestProto, index: int) -> pb.ContainerCommandResponseProto:
    return pb.ContainerCommandResponseProto(cmdType=request.cmdType, result=pb.SUCCESS)


def _args(executor: Executor, on_failure: Callable[[str, str], None]) -> dict[str, Any]:
    """A group's collaborators: entries applied as SUCCESS, timeouts of 5 s."""
    return {
        "apply": _applied,
        "executor": executor,
        "on_failure": on_failure,
        "watch_timeout_s": 5,
        "request_timeout_s": 5,
    }


def _recover_and_write(tmp_path: Path, applied: int) -> tuple[list[str], pb.ContainerCommandResponseProto]:
    """Reopens a log of two entries as a RATIS/ONE leader whose containers hold BCSID `applied`, and
    submits one write: (the failures it reported, the write's answer)."""
    raft_log = RaftLog(tmp_path)
    for index in (1, 2):
        raft_log.append(TERM, index, _write_chunk(b"x"))
    raft_log.close()
    failures: list[str] = []
    with ThreadPoolExecutor(2) as executor:
        membership = Membership(PID, (ME,), ME, True)
        group = RaftGroup(
            membership, ME, RaftLog(tmp_path), **_args(executor, lambda p, why: failures.append(why)),
            applied=applied,
        )  # fmt: skip

        async def write() -> pb.ContainerCommandResponseProto:
            answer = await group.submit(_write_chunk(b"y"))
            await group.close()
            return answer

        return failures, asyncio.run(write())


def test_a_group_whose_containers_are_not_ahead_of_its_log_goes_on(tmp_path: Path) -> None:
    failures, answer = _recover_and_write(tmp_path, 2)
    assert failures == [] and answer.result == pb.SUCCESS and answer.logIndex == 3


def test_a_group_with_entries_applied_past_its_log_has_failed(tmp_path: Path) -> None:
    """Going on from index 3 would hand out indexes its containers already hold: a putBlock at such an
    index is ignored as a replay, and the client's block would be acknowledged without being there."""
    failures, answer = _recover_and_write(tmp_path, 4)
    assert len(failures) == 1 and "entries up to 4 applied but its log ending at 2" in failures[0]
    assert answer.result == pb.RAFT_RETRY_FAILURE


def test_a_group_restarted_without_some_of_its_containers_has_failed(tmp_path: Path) -> None:
    """Containers that went with a volume while the datanode was down (ContainerSet.lost_from): this
    replica misses their earlier blocks, so it cannot take the pipeline's next entries."""
    failures: list[str] = []
    with ThreadPoolExecutor(2) as executor:
        raft_log = RaftLog(tmp_path / "with-history")
        raft_log.append(TERM, 1, _write_chunk(b"x"))
        membership = Membership(PID, (ME,), ME, True)

        def record(_: str, why: str) -> None:
            failures.append(why)

        args = _args(executor, record)
        RaftGroup(membership, ME, raft_log, **args, applied=1, lost=[7])
        RaftGroup(membership, ME, raft_log, **args, applied=1, lost=[])  # nothing lost
        # a failed volume nothing says the containers of: a log with history cannot go on, a new one can
        RaftGroup(membership, ME, raft_log, **args, applied=1, unrecorded_losses=True)
        RaftGroup(membership, ME, RaftLog(tmp_path / "new"), **args, applied=0, unrecorded_losses=True)
    assert failures == [
        "member dn-self failed: restarted without its containers [7], lost with a volume",
        "member dn-self failed: restarted with a failed data volume: containers may be gone",
    ]


def test_followers_are_judged_against_the_leaders_own_result(tmp_path: Path) -> None:
    """Where the leader applied an entry, a follower must have applied it too; where the leader's own
    copy refused it (here: went UNHEALTHY), a follower that applied it has not diverged."""
    failures: list[str] = []
    followers = ("dn-f1", "dn-f2")
    membership = Membership(PID, (ME, *followers), ME, True)
    with ThreadPoolExecutor(1) as executor:
        group = RaftGroup(
            membership, ME, RaftLog(tmp_path), **_args(executor, lambda p, w: failures.append(w))
        )
        group._outcomes.update({1: pb.CONTAINER_UNHEALTHY, 2: pb.SUCCESS})
        for follower in followers:
            group._follower_replied(follower, AppendReply(index=1, result=pb.SUCCESS))
        assert failures == [] and group.match == {ME: 0, "dn-f1": 1, "dn-f2": 1}
        group._follower_replied("dn-f1", AppendReply(index=2, result=pb.SUCCESS))
        group._follower_replied("dn-f2", AppendReply(index=2, result=pb.CONTAINER_UNHEALTHY))
        assert group.match["dn-f1"] == 2 and group.match["dn-f2"] == 1
        assert list(group.failed) == ["dn-f2"]
        assert "CONTAINER_UNHEALTHY where the leader had SUCCESS" in failures[0]


def test_a_follower_that_applied_what_the_leaders_healthy_replica_refused_has_failed(tmp_path: Path) -> None:
    """Issue 28 (dn3 defect 3): a refusal all members may share (CHECKSUM_MISMATCH of a putBlock) by the
    leader with a follower's SUCCESS left the block committed on the follower alone, silently: the
    leader applies in parallel with its followers, so that follower has failed."""
    failures: list[str] = []
    followers = ("dn-f1", "dn-f2")
    membership = Membership(PID, (ME, *followers), ME, True)
    with ThreadPoolExecutor(1) as executor:
        group = RaftGroup(
            membership, ME, RaftLog(tmp_path), **_args(executor, lambda p, w: failures.append(w))
        )
        group._outcomes.update({1: pb.CHECKSUM_MISMATCH})
        group._follower_replied("dn-f1", AppendReply(index=1, result=pb.CHECKSUM_MISMATCH))
        group._follower_replied("dn-f2", AppendReply(index=1, result=pb.SUCCESS))
        assert group.match["dn-f1"] == 1 and group.match["dn-f2"] == 0
        assert list(group.failed) == ["dn-f2"]
        assert "SUCCESS where the leader had CHECKSUM_MISMATCH" in failures[0]
