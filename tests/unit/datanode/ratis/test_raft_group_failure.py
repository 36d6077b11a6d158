"""A pipeline's member that failed here (R14's findings): it stops for the group, so the healthy members
go on without it and close through their log. Three in-process members (test_raft_group_commit's)."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from pyozone.datanode.pipelines import PipelineSet
from pyozone.datanode.ratis import PipelineGroups
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from pyozone.ratis_server.segmented_log import CURRENT_DIR
from tests.polling import wait_for_async
from tests.unit.datanode.dns_helpers import PIPELINE, block_writes, close, payload, pipeline_groups
from tests.unit.datanode.ratis.test_raft_group_commit import three_members

CID = 3


async def _route(
    groups: PipelineGroups, request: pb.ContainerCommandRequestProto
) -> pb.ContainerCommandResponseProto:
    request.pipelineID = PIPELINE
    routed = groups.route(request)
    assert routed is not None
    return await routed


def test_a_leader_whose_state_machine_failed_stops_and_the_healthy_two_close(tmp_path: Path) -> None:
    """R14 D5 (r3_failed_leader_keeps_lead.py): a leader whose state machine failed (a failed volume)
    kept leading, refusing everything RAFT_RETRY_FAILURE, SCM's closeContainer included, while the healthy
    followers answered NOT_LEADER naming it: the container could not close through the log. Now it stops
    its member of the group, the healthy two elect one of them, and the close reaches both."""

    async def scenario() -> None:
        async with three_members(tmp_path) as members:
            a, b, c = members
            requests, _ = block_writes(CID, 1, payload(1, 1000), 1000)
            for request in requests:
                assert (await _route(a, request)).result == pb.SUCCESS
            a.fail([PIPELINE], "volume failed")
            group_a = a.get(PIPELINE)
            assert group_a is not None
            await wait_for_async(lambda: not group_a.member.running, 10, "the failed member stops")
            await wait_for_async(
                lambda: any(g.leading(PIPELINE) for g in (b, c)), 15, "a healthy member leads"
            )
            leader = b if b.leading(PIPELINE) else c
            answer = await _route(leader, close(CID))
            assert answer.result == pb.SUCCESS, answer.message
            await wait_for_async(
                lambda: all(g.dispatcher.containers.require(CID).state.name == "CLOSED" for g in (b, c)),
                10,
                "the healthy replicas close",
            )
            bcsids = {g.dispatcher.containers.require(CID).bcsid for g in (b, c)}
            assert len(bcsids) == 1
            refused = await _route(a, close(CID))
            assert pb.Result.Name(refused.result) == "RAFT_RETRY_FAILURE"

    asyncio.run(asyncio.wait_for(scenario(), 90))


@pytest.mark.parametrize("loss", ["missing", "empty"])
def test_a_member_whose_raft_log_is_gone_at_restart_does_not_rejoin_as_a_blank_voter(
    tmp_path: Path, loss: str
) -> None:
    """R14 D2 (r2_lost_ratis_dir.py): a member of a pipeline in pipelines.json whose Raft log directory
    is gone (or empty) at its restart came back as a blank voter, term 0 and no vote, its acknowledged
    entries forgotten (with B down, a write committed on {A, C} was lost once A failed). It now reports
    the pipeline failed (CLOSE) and starts no member of it: its requests are refused."""

    async def scenario() -> None:
        failures: list[tuple[str, str]] = []
        async with three_members(tmp_path) as members:
            a, _, c = members
            requests, _ = block_writes(CID, 1, payload(1, 1000), 1000)
            assert (await _route(a, requests[0])).result == pb.SUCCESS
            group = c.get(PIPELINE)
            assert group is not None
            await c.close()
            group_dir = c.directory / PIPELINE
            shutil.rmtree(group_dir)
            if loss == "empty":
                (group_dir / CURRENT_DIR).mkdir(parents=True)
            again = pipeline_groups(
                c.dispatcher, c.directory, c.executor, lambda p, why: failures.append((p, why))
            )
            await again.divisions.start()
            try:
                assert await again.join(group.membership, rejoin=True) is None
                assert again.get(PIPELINE) is None
                assert len(failures) == 1 and failures[0][0] == PIPELINE
                assert "missing or empty" in failures[0][1]
                assert not (loss == "missing" and group_dir.exists())
                refused = await _route(again, requests[1])
                assert pb.Result.Name(refused.result) == "RAFT_RETRY_FAILURE"
            finally:
                await again.close()

    asyncio.run(asyncio.wait_for(scenario(), 90))


def test_a_leader_change_reports_the_pipeline_at_once_with_the_elected_role(tmp_path: Path) -> None:
    """Issue 30 (Ozone's handleLeaderChangedNotification → sendPipelineReport): when the leader stops, each
    healthy member hears of the change (the daemon then sends its pipeline report at once) and its report
    carries its elected role: exactly the new leader reports itself leader, though SCM suggested the old
    one."""

    async def scenario() -> None:
        async with three_members(tmp_path) as members:
            a, b, c = members
            changed: list[str] = []
            reports = {}
            for groups in (b, c):
                groups.on_leader_changed = lambda pid, me=groups.self_id: changed.append(f"{me} {pid}")
                directory = tmp_path / f"set-{groups.self_id}"
                directory.mkdir()
                memberships = PipelineSet(directory, groups.self_id)
                memberships.add(PIPELINE, a.get(PIPELINE).members, a.self_id)  # type: ignore[union-attr]
                memberships.leading = groups.leading
                reports[groups.self_id] = memberships
            assert [r.is_leader for s in reports.values() for r in s.reports()] == [False, False]
            a.fail([PIPELINE], "volume failed")
            await wait_for_async(
                lambda: any(g.leading(PIPELINE) for g in (b, c)), 15, "a healthy member leads"
            )
            leader = b if b.leading(PIPELINE) else c
            await wait_for_async(
                lambda: {f"{g.self_id} {PIPELINE}" for g in (b, c)} <= set(changed), 10, "both hear of it"
            )
            led = {me for me, s in reports.items() for r in s.reports() if r.is_leader}
            assert led == {leader.self_id}

    asyncio.run(asyncio.wait_for(scenario(), 90))
