"""Issue 11 defect 7: a datanode writes only to containers SCM allocated on an open pipeline it is in.

12 WriteChunks of 32 MB to a made-up container id used to create it and store 384 MB SCM knew nothing of.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import pytest

from pyozone.config import OzoneConfiguration
from pyozone.datanode.daemon import scm_lookup_nodes
from pyozone.datanode.pipelines import PipelineSet, StreamAddress
from pyozone.datanode.ratis.groups import PipelineGroups
from pyozone.datanode.xceiver import Dispatcher
from pyozone.datanode.xceiver.allocations import (
    LOOKUP_FAILOVER_S,
    ContainerAllocations,
    ScmContainer,
    ScmUnreachable,
)
from pyozone.hdds.container import ContainerInfo
from pyozone.hdds.ids import RATIS_THREE
from pyozone.hdds.states import LifeCycleState
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from pyozone.protocol.datastream import Hop
from tests.unit.datanode.dnd_helpers import async_test
from tests.unit.datanode.dns_helpers import (
    PIPELINE,
    Node,
    block_writes,
    create,
    lead_alone,
    payload,
    pipeline_groups,
    results,
)

ALLOCATED, CLOSED, ELSEWHERE = 7, 8, 9


class FakeScmContainers:
    """SCM's container records (with, for an EC container, the datanode holding each replica index of
    its pipeline), and how often it was asked."""

    def __init__(self) -> None:
        self.records = {
            ALLOCATED: ContainerInfo(ALLOCATED, LifeCycleState.OPEN, 0, PIPELINE, RATIS_THREE, "om"),
            CLOSED: ContainerInfo(CLOSED, LifeCycleState.CLOSED, 0, PIPELINE, RATIS_THREE, "om"),
            ELSEWHERE: ContainerInfo(ELSEWHERE, LifeCycleState.OPEN, 0, "other-pipeline", RATIS_THREE, "om"),
        }
        self.holders: dict[int, dict[int, str]] = {}
        self.asked: list[int] = []
        self.down = False

    def __call__(self, container_id: int) -> ScmContainer | None:
        self.asked.append(container_id)
        if self.down:
            raise ScmUnreachable("down")
        info = self.records.get(container_id)
        return None if info is None else ScmContainer(info, self.holders.get(container_id, {}))


@pytest.fixture
def scm() -> FakeScmContainers:
    return FakeScmContainers()


@pytest.fixture
def dispatcher(node_a: Node, scm: FakeScmContainers, tmp_path: Path) -> Dispatcher:
    pipelines = PipelineSet(tmp_path, node_a.uuid)
    pipelines.add(PIPELINE, (node_a.uuid,), node_a.uuid)
    allocations = ContainerAllocations(scm, pipelines)
    return Dispatcher(node_a.containers, node_a.uuid, node_a.full.append, allocations=allocations)


def _write_block(dispatcher: Dispatcher, cid: int, index: int = 0) -> list[str]:
    requests, _ = block_writes(cid, 1, payload(1, 3 * 4096), 4096)
    return results(dispatcher.dispatch(r, index) for r in requests)


def _stored_bytes(node: Node) -> int:
    return sum(c.used_bytes for c in node.containers)


def test_writes_to_a_made_up_container_are_refused_and_store_nothing(
    dispatcher: Dispatcher, node_a: Node
) -> None:
    assert _write_block(dispatcher, 4242) == ["CONTAINER_NOT_FOUND"] * 4
    assert results([dispatcher.dispatch(create(4243))]) == ["CONTAINER_NOT_FOUND"]
    assert 4242 not in node_a.containers and 4243 not in node_a.containers
    assert _stored_bytes(node_a) == 0


def test_a_write_to_an_allocated_container_creates_it_after_one_question_to_scm(
    dispatcher: Dispatcher, node_a: Node, scm: FakeScmContainers
) -> None:
    assert _write_block(dispatcher, ALLOCATED) == ["SUCCESS"] * 4
    assert _write_block(dispatcher, ALLOCATED) == ["SUCCESS"] * 4
    assert scm.asked == [ALLOCATED] and _stored_bytes(node_a) == 3 * 4096


@pytest.mark.parametrize(
    ("cid", "result"), [(CLOSED, "CLOSED_CONTAINER_IO"), (ELSEWHERE, "CONTAINER_NOT_FOUND")]
)
def test_a_container_closed_or_on_another_pipeline_is_not_created_by_a_client_write(
    dispatcher: Dispatcher, node_a: Node, cid: int, result: str
) -> None:
    """A container SCM closed is refused as a closed replica is, so the client asks for another block."""
    assert _write_block(dispatcher, cid) == [result] * 4
    assert cid not in node_a.containers


def test_a_log_entry_is_applied_without_asking_scm(
    dispatcher: Dispatcher, node_a: Node, scm: FakeScmContainers
) -> None:
    """The pipeline's leader asked SCM before it ordered the entry (check_writable); its members apply
    the log as it is, so a close since then, or SCM being away, does not fail the pipeline."""
    scm.down = True
    assert _write_block(dispatcher, CLOSED, index=5)[0] == "SUCCESS"
    assert scm.asked == []


def test_a_write_outside_this_datanodes_pipelines_is_refused_without_asking_scm(
    dispatcher: Dispatcher, scm: FakeScmContainers
) -> None:
    requests, _ = block_writes(ALLOCATED, 1, payload(1, 4096), 4096)
    for r in requests:
        r.pipelineID = "not-a-member"
    assert results(dispatcher.dispatch(r) for r in requests) == ["CONTAINER_NOT_FOUND"] * 2
    requests[0].ClearField("pipelineID")
    assert results([dispatcher.dispatch(requests[0])]) == ["CONTAINER_NOT_FOUND"]
    assert scm.asked == []


def test_an_unreachable_scm_refuses_the_write(
    dispatcher: Dispatcher, node_a: Node, scm: FakeScmContainers
) -> None:
    scm.down = True
    assert _write_block(dispatcher, ALLOCATED)[0] == pb.Result.Name(pb.CONTAINER_INTERNAL_ERROR)
    assert ALLOCATED not in node_a.containers


# --- through the pipeline's leader, as the daemon runs it (reviewer's findings on the first version)


@pytest.fixture
def groups(dispatcher: Dispatcher, tmp_path: Path) -> Iterator[tuple[PipelineGroups, list[str]]]:
    failures: list[str] = []
    executor = ThreadPoolExecutor(2)
    groups = pipeline_groups(
        dispatcher, tmp_path / "ratis", executor, lambda pipeline, reason: failures.append(reason)
    )
    yield groups, failures
    executor.shutdown()


async def _through_leader(groups: PipelineGroups, cid: int) -> list[str]:
    requests, _ = block_writes(cid, 1, payload(1, 4096), 4096)
    answers = []
    for r in requests:
        r.pipelineID = PIPELINE
        answer = groups.route(r)
        assert answer is not None
        answers.append(pb.Result.Name((await answer).result))
    return answers


@async_test
async def test_a_clients_write_through_the_leader_needs_the_container_open_in_scm(
    groups: tuple[PipelineGroups, list[str]], node_a: Node
) -> None:
    leader, failures = groups
    await lead_alone(leader)
    assert await _through_leader(leader, CLOSED) == ["CLOSED_CONTAINER_IO"] * 2
    assert CLOSED not in node_a.containers and failures == []
    await leader.close()


@async_test
async def test_scm_away_refuses_the_write_and_leaves_the_pipeline_healthy(
    groups: tuple[PipelineGroups, list[str]], scm: FakeScmContainers
) -> None:
    leader, failures = groups
    await lead_alone(leader)
    scm.down = True
    assert await _through_leader(leader, ALLOCATED) == ["CONTAINER_INTERNAL_ERROR"] * 2
    scm.down = False
    assert await _through_leader(leader, ALLOCATED) == ["SUCCESS"] * 2
    assert failures == []
    await leader.close()


@async_test
async def test_a_container_deleted_here_is_asked_about_again(
    groups: tuple[PipelineGroups, list[str]], node_a: Node, scm: FakeScmContainers
) -> None:
    leader, _ = groups
    await lead_alone(leader)
    assert await _through_leader(leader, ALLOCATED) == ["SUCCESS"] * 2
    container = node_a.containers.require(ALLOCATED)
    container.mark_closing()
    container.close()
    node_a.containers.delete(ALLOCATED, force=True)
    scm.records[ALLOCATED] = replace(scm.records[ALLOCATED], state=LifeCycleState.DELETED)
    assert await _through_leader(leader, ALLOCATED) == ["CONTAINER_NOT_FOUND"] * 2
    assert ALLOCATED not in node_a.containers
    await leader.close()


def test_a_chain_is_checked_against_the_members_datastream_addresses_kept_across_a_restart(
    node_a: Node, scm: FakeScmContainers, tmp_path: Path
) -> None:
    """Issue 28 defect 5: the datastream addresses createPipeline gave are what a chain may name; they
    survive a restart (pipelines.json)."""
    streams = {"b": StreamAddress("10.0.0.2", "dn-b", 9855), "c": StreamAddress("10.0.0.3", "dn-c", 9855)}
    PipelineSet(tmp_path, node_a.uuid).add(PIPELINE, (node_a.uuid, "b", "c"), node_a.uuid, None, streams)
    allocations = ContainerAllocations(scm, PipelineSet(tmp_path, node_a.uuid))  # read back from disk
    b, c = Hop("b", "10.0.0.2", 9855), Hop("c", "dn-c", 9855)  # by IP or by host name
    assert allocations.chain_refusal(PIPELINE, (b, c)) == allocations.chain_refusal(PIPELINE, ()) == ""
    wrong = [(replace(b, port=9856),), (replace(b, host="10.0.0.9"),), (b, b), (Hop(node_a.uuid, "x", 1),)]
    assert all("nothing was forwarded" in allocations.chain_refusal(PIPELINE, chain) for chain in wrong)
    assert "is not in pipeline other" in allocations.chain_refusal("other", (b,))
    assert allocations.chain_refusal(PIPELINE, (c, b), from_client=True) == ""  # a client's: every member
    for partial in [(b,), (c,), ()]:
        assert "names every other member" in allocations.chain_refusal(PIPELINE, partial, from_client=True)


def test_a_lookup_waits_for_a_leader_of_the_service_at_most_lookup_failover_s() -> None:
    """A write holds a dispatcher thread while it waits (review R21 D4): not Ozone's 10-minute default of
    hdds.scmclient.max.retry.timeout, and never longer than a shorter configured one."""
    values = {
        "ozone.scm.service.ids": "svc",
        "ozone.scm.nodes.svc": "a,b",
        "ozone.scm.address.svc.a": "127.0.0.1",
        "ozone.scm.address.svc.b": "127.0.0.2",
    }
    nodes = scm_lookup_nodes(OzoneConfiguration(values))
    assert nodes.service and nodes.policy.max_retry_timeout_s == LOOKUP_FAILOVER_S
    shorter = scm_lookup_nodes(OzoneConfiguration({**values, "hdds.scmclient.max.retry.timeout": "5s"}))
    assert shorter.policy.max_retry_timeout_s == 5.0
