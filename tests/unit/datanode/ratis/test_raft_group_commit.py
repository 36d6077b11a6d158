"""A pipeline's leader answers a write once the entry committed and it applied it, after waiting a little
for its last follower's commit (LAST_MEMBER_WAIT; a putSmallFile waits for every live member) so that its
client needs no watch, and never for a follower silent for an election timeout. Three in-process members,
each its datanode's PipelineGroups on its own RATIS port. (The log's group commit is the shell's:
tests/unit/ratis_server.)"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from pyozone.datanode.pipelines import Membership
from pyozone.datanode.ratis import PipelineGroups
from pyozone.datanode.ratis import groups as groups_module
from pyozone.datanode.xceiver import Dispatcher
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from tests.polling import wait_for_async
from tests.unit.datanode.dns_helpers import PIPELINE, block_writes, open_node, payload, pipeline_groups

CID = 3


@asynccontextmanager
async def three_members(tmp_path: Path) -> AsyncIterator[list[PipelineGroups]]:
    """PIPELINE on three datanodes, the first its suggested (and elected) leader."""
    with ThreadPoolExecutor(4) as executor:
        nodes = [
            open_node(tmp_path / f"dn{i}", f"{i}{i}{i}{i}0000-0000-4000-8000-00000000000{i}", "8MB")
            for i in range(3)
        ]
        members = [
            pipeline_groups(
                Dispatcher(n.containers, n.uuid, lambda _cid: None), tmp_path / f"ratis{i}", executor
            )
            for i, n in enumerate(nodes)
        ]
        try:
            for groups in members:
                await groups.divisions.start()
            uuids = tuple(n.uuid for n in nodes)
            addresses = tuple(sorted((g.self_id, str(g.divisions.address)) for g in members))
            for groups in members:
                await groups.join(
                    Membership(PIPELINE, uuids, uuids[0], groups.self_id == uuids[0], addresses)
                )
            await wait_for_async(
                lambda: all(g.get(PIPELINE).leader_id == uuids[0] for g in members),  # type: ignore[union-attr]
                15,
                "the suggested leader leads",
            )
            yield members
        finally:
            for groups in members:
                await groups.close()
            for n in nodes:
                n.close()


async def _write(
    leader: PipelineGroups, requests: list[pb.ContainerCommandRequestProto]
) -> pb.ContainerCommandResponseProto:
    answer = None
    for request in requests:
        request.pipelineID = PIPELINE
        routed = leader.route(request)
        assert routed is not None
        answer = await routed
        assert answer.result == pb.SUCCESS, answer.message
    assert answer is not None
    return answer


def _commits(answer: pb.ContainerCommandResponseProto) -> dict[str, int]:
    return {c.datanodeUuid: c.commitIndex for c in answer.commitInfos}


def _small_file(local_id: int) -> list[pb.ContainerCommandRequestProto]:
    requests, _ = block_writes(CID, local_id, payload(local_id, 1000), 1000)
    write, put = requests
    return [
        pb.ContainerCommandRequestProto(
            cmdType=pb.PutSmallFile,
            containerID=CID,
            putSmallFile=pb.PutSmallFileRequestProto(
                block=put.putBlock, chunkInfo=write.writeChunk.chunkData, data=write.writeChunk.data
            ),
        )
    ]


def test_the_leader_waits_for_the_last_follower_so_the_client_needs_no_watch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(groups_module, "LAST_MEMBER_WAIT", 1e6)  # as long as it takes
    monkeypatch.setattr(groups_module, "LAST_MEMBER_WAIT_MAX_S", 1e6)

    async def scenario() -> None:
        async with three_members(tmp_path) as members:
            requests, _ = block_writes(CID, 1, payload(1, 4000), 1000)
            answer = await _write(members[0], requests)
            assert set(_commits(answer)) == {g.self_id for g in members}
            assert all(i >= answer.logIndex for i in _commits(answer).values())

    asyncio.run(asyncio.wait_for(scenario(), 60))


def test_a_small_file_is_answered_once_every_member_committed_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A putSmallFile is a small key's whole block: where a putBlock is answered at the majority (no wait
    for the last member here), it waits for the last follower, so its answer shows every replica."""
    monkeypatch.setattr(groups_module, "LAST_MEMBER_WAIT", 0.0)

    async def scenario() -> None:
        async with three_members(tmp_path) as members:
            answer = await _write(members[0], _small_file(1))
            assert all(i >= answer.logIndex for i in _commits(answer).values()), _commits(answer)

    asyncio.run(asyncio.wait_for(scenario(), 60))


def test_a_small_file_is_not_held_for_a_silent_follower(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A follower silent for an election timeout is not waited for: the answer comes at once, its
    commitInfos show that follower behind (the client's watch fails and it rewrites elsewhere)."""
    monkeypatch.setattr(groups_module, "LAST_MEMBER_WAIT", 1e6)

    async def scenario() -> None:
        async with three_members(tmp_path) as members:
            leader, victim = members[0], members[2]
            await _write(leader, _small_file(1))
            await victim.close()
            group = leader.get(PIPELINE)
            assert group is not None
            await wait_for_async(
                lambda: group.member.silent_followers(group.config.election_timeout_ms), 15, "silence"
            )
            started = time.monotonic()
            answer = await _write(leader, _small_file(2))
            assert time.monotonic() - started < group.config.request_timeout_ms / 1000 / 2
            assert _commits(answer)[victim.self_id] < answer.logIndex

    asyncio.run(asyncio.wait_for(scenario(), 60))
