"""A pipeline group recovered after a restart: its log goes on from its end, unless entries were applied
past that end when the datanode stopped (entries of different containers apply in parallel, the log is
written in index order after them); then the member has failed and asks SCM to close the pipeline."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from test_raft_log import _write_chunk

from pyozone.datanode.pipelines import Membership
from pyozone.datanode.ratis.group import TERM, RaftGroup
from pyozone.datanode.ratis.log import RaftLog
from pyozone.proto import DatanodeClientProtocol_pb2 as pb

ME = "dn-self"
PID = "33333333-0000-4000-8000-000000000001"


def _applied(request: pb.ContainerCommandRequestProto, index: int) -> pb.ContainerCommandResponseProto:
    return pb.ContainerCommandResponseProto(cmdType=request.cmdType, result=pb.SUCCESS)


def _recover(tmp_path: Path, applied: int, failures: list[str], executor: ThreadPoolExecutor) -> RaftGroup:
    raft_log = RaftLog(tmp_path)  # two entries logged before the restart
    if raft_log.last_index == 0:
        for index in (1, 2):
            raft_log.append(TERM, index, _write_chunk(b"x"))
    membership = Membership(PID, (ME,), ME, True)
    return RaftGroup(
        membership, ME, raft_log, _applied, executor, lambda pid, why: failures.append(why), 5.0, 5.0, applied
    )


def test_a_group_whose_containers_are_not_ahead_of_its_log_goes_on(tmp_path: Path) -> None:
    failures: list[str] = []
    with ThreadPoolExecutor(2) as executor:
        group = _recover(tmp_path, 2, failures, executor)

        async def write() -> pb.ContainerCommandResponseProto:
            answer = await group.submit(_write_chunk(b"y"))
            await group.close()
            return answer

        answer = asyncio.run(write())
    assert failures == [] and answer.result == pb.SUCCESS and answer.logIndex == 3


def test_a_group_with_entries_applied_past_its_log_has_failed(tmp_path: Path) -> None:
    """Going on from index 3 would hand out indexes its containers already hold: a putBlock at such an
    index is ignored as a replay, and the client's block would be acknowledged without being there."""
    failures: list[str] = []
    with ThreadPoolExecutor(2) as executor:
        group = _recover(tmp_path, 4, failures, executor)

        async def write() -> pb.ContainerCommandResponseProto:
            answer = await group.submit(_write_chunk(b"y"))
            await group.close()
            return answer

        answer = asyncio.run(write())
    assert len(failures) == 1 and "entries up to 4 applied but its log ending at 2" in failures[0]
    assert answer.result == pb.RAFT_RETRY_FAILURE
