"""A pipeline's member after a restart: it rejoins from its log and goes on, unless its containers are
ahead of that log (entries applied that the log lost): then it reports the pipeline failed and takes no
write. (The other restart checks, containers lost with a volume and a failed volume, are the state
machine's: test_container_state_machine_restarts.py::test_restart_checks_fail_the_pipeline.)"""

from __future__ import annotations

import asyncio
import shutil
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

from pyozone.datanode.pipelines import Membership
from pyozone.datanode.ratis import PipelineGroups
from pyozone.datanode.xceiver import Dispatcher
from pyozone.hdds.ids import BlockID
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from tests.polling import wait_for_async
from tests.unit.datanode.dns_helpers import (
    PIPELINE,
    Node,
    block_writes,
    chunk,
    lead_alone,
    open_node,
    payload,
    pipeline_groups,
    put,
    write,
)

CID = 3


async def _write(groups: PipelineGroups, local_id: int) -> pb.ContainerCommandResponseProto:
    requests, _ = block_writes(CID, local_id, payload(local_id, 2000), 1000)
    answer = None
    for request in requests:
        request.pipelineID = PIPELINE
        routed = groups.route(request)
        assert routed is not None
        answer = await routed
    assert answer is not None
    return answer


def _restart(node: Node, tmp_path: Path, failures: list[str], lose_log: bool) -> tuple[int, int, str]:
    """Writes a block, stops the member, restarts it (from its log, or without it when `lose_log`) and
    writes another: (the first answer's index, the second's, the second's Result name)."""
    with ThreadPoolExecutor(2) as executor:

        def groups() -> PipelineGroups:
            dispatcher = Dispatcher(node.containers, node.uuid, lambda _cid: None)
            return pipeline_groups(
                dispatcher, tmp_path / "ratis", executor, lambda p, why: failures.append(why)
            )

        async def scenario() -> tuple[int, int, str]:
            first = groups()
            await lead_alone(first)
            before = await _write(first, 1)
            assert before.result == pb.SUCCESS, before.message
            await first.close()
            if lose_log:
                shutil.rmtree(tmp_path / "ratis" / PIPELINE)
            second = groups()
            if lose_log:
                await _join(second)
            else:
                await lead_alone(second)
            after = await _write(second, 2)
            await second.close()
            return before.logIndex, after.logIndex, pb.Result.Name(after.result)

        return asyncio.run(asyncio.wait_for(scenario(), 60))


async def _join(groups: PipelineGroups) -> None:
    """Starts the RATIS port and joins PIPELINE (its member fails at start: no wait for a leader)."""
    await groups.divisions.start()
    me = groups.self_id
    await groups.join(Membership(PIPELINE, (me,), me, True))


def test_a_restarted_member_rejoins_from_its_log_and_goes_on(tmp_path: Path) -> None:
    node = open_node(tmp_path / "dn", "11110000-0000-4000-8000-000000000001", "8MB")
    failures: list[str] = []
    first, second, result = _restart(node, tmp_path, failures, lose_log=False)
    node.close()
    assert result == "SUCCESS" and failures == []
    assert second > first  # the log went on from its end
    assert node.containers.require(CID).bcsid == second


def test_a_member_whose_containers_are_ahead_of_its_log_has_failed(tmp_path: Path) -> None:
    """Going on from a lost log would hand out indexes its containers already hold: a putBlock at such an
    index is ignored as a replay, and the client's block would be acknowledged without being there."""
    node = open_node(tmp_path / "dn", "11110000-0000-4000-8000-000000000001", "8MB")
    failures: list[str] = []
    first, _, result = _restart(node, tmp_path, failures, lose_log=True)
    node.close()
    assert result == "RAFT_RETRY_FAILURE"
    assert len(failures) == 1 and f"entries up to {first} applied but its log ending at 0" in failures[0]


def test_a_v1_put_block_after_a_restart_is_not_refused_for_the_chunk_still_being_written(
    tmp_path: Path,
) -> None:
    """R20 D1: after a restart the leader's log no longer notes a chunk its snapshot covers, so it vouches
    for the block's next putBlock; it checks only that chunk, not the one whose writeChunk it is still
    logging (a V1 client sends the putBlock without waiting for it: its data stage may not have run), which
    used to refuse the putBlock UNABLE_TO_FIND_CHUNK although both writes succeed."""
    node = open_node(tmp_path / "dn", "11110000-0000-4000-8000-000000000001", "64MB")
    dispatcher = Dispatcher(node.containers, node.uuid, lambda _cid: None)
    data = [payload(1, 1 << 20), payload(2, 1 << 20)]
    chunks = [chunk(f"1_chunk_{n}", n << 20, d) for n, d in enumerate(data)]

    def routed(groups: PipelineGroups, request: pb.ContainerCommandRequestProto) -> asyncio.Future:
        request.pipelineID = PIPELINE
        answer = groups.route(request)
        assert answer is not None
        return answer

    async def scenario(executor: ThreadPoolExecutor) -> list[str]:
        groups = pipeline_groups(dispatcher, tmp_path / "ratis", executor)
        groups.config = replace(groups.config, snapshot_threshold=1)
        group = await lead_alone(groups)
        first = await routed(groups, write(CID, 1, chunks[0], data[0]))
        assert first.result == pb.SUCCESS, first.message
        await wait_for_async(lambda: group.machine.latest_snapshot() is not None, 10, "a snapshot")
        await groups.close()
        groups = pipeline_groups(dispatcher, tmp_path / "ratis", executor)
        group = await lead_alone(groups)
        assert group.machine.uncarried(put(CID, 1, chunks[:1])) == {(0, 1 << 20)}  # snapshotted
        answers = [routed(groups, write(CID, 1, chunks[1], data[1])), routed(groups, put(CID, 1, chunks))]
        names = [pb.Result.Name((await a).result) for a in answers]
        await groups.close()
        return names

    with ThreadPoolExecutor(4) as executor:
        names = asyncio.run(asyncio.wait_for(scenario(executor), 60))
    assert names == ["SUCCESS", "SUCCESS"]
    block = node.containers.require(CID).get_block(BlockID(CID, 1))
    assert [c.name for c in block.chunks] == ["1_chunk_0", "1_chunk_1"]
    node.close()
