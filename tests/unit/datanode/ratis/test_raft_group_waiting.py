"""Requests to a pipeline member that knows no leader (R14's findings D3, D4): they wait together, each
at most one election wait from its own arrival, in a bounded queue, and cancelling one never cancels
another's turn. One member of a three-member pipeline whose other members are down."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from pathlib import Path

from pyozone.datanode.pipelines import Membership
from pyozone.datanode.ratis import PipelineGroups
from pyozone.datanode.xceiver import Dispatcher
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from tests.unit.datanode.dns_helpers import PIPELINE, block_writes, open_node, payload, pipeline_groups

CID = 3
OTHERS = ("22220000-0000-4000-8000-000000000002", "33330000-0000-4000-8000-000000000003")
LEADER_WAIT_S = 1.0
"""2 x (election 300 ms + 200 ms spread): pipeline_groups' settings."""


@asynccontextmanager
async def leaderless(tmp_path: Path) -> AsyncIterator[PipelineGroups]:
    """A member whose suggested leader and other member are down (nothing listens at port 1)."""
    with ThreadPoolExecutor(2) as executor:
        node = open_node(tmp_path / "dn", "11110000-0000-4000-8000-000000000001", "8MB")
        groups = pipeline_groups(
            Dispatcher(node.containers, node.uuid, lambda _c: None), tmp_path / "r", executor
        )
        try:
            await groups.divisions.start()
            addresses = tuple(
                sorted([(node.uuid, str(groups.divisions.address)), *((o, "127.0.0.1:1") for o in OTHERS)])
            )
            await groups.join(Membership(PIPELINE, (node.uuid, *OTHERS), OTHERS[0], False, addresses))
            yield groups
        finally:
            await groups.close()
            node.close()


def _writes(count: int) -> list[pb.ContainerCommandRequestProto]:
    requests = []
    for lid in range(1, count + 1):
        request = block_writes(CID, lid, payload(lid, 1000), 1000)[0][0]
        request.pipelineID = PIPELINE
        requests.append(request)
    return requests


def test_requests_without_a_leader_wait_together_one_wait_each(tmp_path: Path) -> None:
    """R14 D4 (r1_noleader_serial.py): with no leader, the k-th request was answered after k leader
    waits (each polled every 10 ms, after the previous request's). Now every waiter awaits the same leader
    change and each is answered NOT_LEADER within one wait of its own arrival."""

    async def scenario() -> list[tuple[str, float]]:
        async with leaderless(tmp_path) as groups:
            start = time.monotonic()

            async def timed(request: pb.ContainerCommandRequestProto) -> tuple[str, float]:
                routed = groups.route(request)
                assert routed is not None
                answer = await routed
                return pb.Result.Name(answer.result), time.monotonic() - start

            return await asyncio.gather(*(timed(r) for r in _writes(6)))

    answers = asyncio.run(asyncio.wait_for(scenario(), 60))
    assert {result for result, _ in answers} == {"NOT_LEADER"}
    assert max(took for _, took in answers) < LEADER_WAIT_S + 0.8, answers


def test_the_requests_waiting_for_a_leader_are_bounded_by_the_element_limit(tmp_path: Path) -> None:
    """R14 D4: the queue of requests waiting for a leader (each holding its chunk data) is bounded by
    hdds.ratis.raft.server.write.element-limit: one more is refused at once, RAFT_RETRY_FAILURE."""

    async def scenario() -> list[str]:
        async with leaderless(tmp_path) as groups:
            groups.config = dataclasses.replace(groups.config, write_element_limit=2)
            routed = [groups.route(r) for r in _writes(3)]
            assert all(r is not None for r in routed)
            assert routed[2] is not None and routed[2].done()
            return [pb.Result.Name((await r).result) for r in routed if r is not None]

    assert asyncio.run(asyncio.wait_for(scenario(), 60)) == ["NOT_LEADER", "NOT_LEADER", "RAFT_RETRY_FAILURE"]


def test_cancelling_a_request_never_cancels_the_turn_of_the_one_before(tmp_path: Path) -> None:
    """R14 D3 (r5_cancel_chained.py): a request chained behind another awaited the other's turn bare, so
    cancelling it (its client went away) cancelled that turn, and the earlier request died with
    InvalidStateError instead of its answer; its stream then failed and cancelled its own requests."""

    async def scenario() -> list[str]:
        async with leaderless(tmp_path) as groups:
            first, second, third = (groups.route(r) for r in _writes(3))
            assert first is not None and second is not None and third is not None
            await asyncio.sleep(0)  # the chained requests start waiting
            second.cancel()
            return [pb.Result.Name((await first).result), pb.Result.Name((await third).result)]

    assert asyncio.run(asyncio.wait_for(scenario(), 60)) == ["NOT_LEADER", "NOT_LEADER"]
