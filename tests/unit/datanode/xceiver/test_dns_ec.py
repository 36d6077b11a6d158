"""EC replicas on the data path (issue 14, contracts 3, 4, 5 and 7): writes that name an EC pipeline, the
replica index a replica takes, putBlock without a pipeline log, RECOVERING replicas of a reconstruction."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from pyozone.datanode.pipelines import PipelineSet
from pyozone.datanode.ratis.groups import PipelineGroups
from pyozone.datanode.xceiver import Dispatcher, XceiverService
from pyozone.datanode.xceiver.allocations import ContainerAllocations
from pyozone.hdds.container import ContainerInfo
from pyozone.hdds.ids import RATIS_THREE, ReplicationConfig
from pyozone.hdds.states import LifeCycleState, ReplicaState
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from tests.unit.datanode.dnd_helpers import async_test
from tests.unit.datanode.dns_helpers import (
    PIPELINE,
    Node,
    block_writes,
    lead_alone,
    payload,
    pipeline_groups,
    read,
    request,
    results,
)
from tests.unit.datanode.xceiver.test_dns_allocations import FakeScmContainers

EC_PIPELINE = "ec-pipeline-1"
RS_3_2 = ReplicationConfig.parse("rs-3-2-1024k")
EC_OPEN, EC_CLOSED, EC_DELETING, RATIS_OPEN, EC_SPARE = 21, 22, 23, 24, 25


@pytest.fixture
def scm(node_a: Node) -> FakeScmContainers:
    """SCM's EC containers; their pipeline places every replica index on node_a (one datanode under
    test takes each index; test_dns_ec_members.py places them elsewhere)."""
    fake = FakeScmContainers()
    fake.records.update(
        {
            EC_OPEN: ContainerInfo(EC_OPEN, LifeCycleState.OPEN, 0, EC_PIPELINE, RS_3_2, "om"),
            EC_CLOSED: ContainerInfo(EC_CLOSED, LifeCycleState.CLOSED, 0, EC_PIPELINE, RS_3_2, "om"),
            EC_DELETING: ContainerInfo(EC_DELETING, LifeCycleState.DELETING, 0, EC_PIPELINE, RS_3_2, "om"),
            RATIS_OPEN: ContainerInfo(RATIS_OPEN, LifeCycleState.OPEN, 0, EC_PIPELINE, RATIS_THREE, "om"),
            EC_SPARE: ContainerInfo(EC_SPARE, LifeCycleState.OPEN, 0, EC_PIPELINE, RS_3_2, "om"),
        }
    )
    fake.holders = {cid: {i: node_a.uuid for i in range(1, 6)} for cid in fake.records}
    return fake


@pytest.fixture
def dispatcher(node_a: Node, scm: FakeScmContainers, tmp_path: Path) -> Dispatcher:
    pipelines = PipelineSet(tmp_path, node_a.uuid)
    pipelines.add(PIPELINE, (node_a.uuid,), node_a.uuid)
    return Dispatcher(
        node_a.containers, node_a.uuid, node_a.full.append, allocations=ContainerAllocations(scm, pipelines)
    )


def ec_request(
    req: pb.ContainerCommandRequestProto, index: int, pipeline: str = EC_PIPELINE
) -> pb.ContainerCommandRequestProto:
    """The request as an EC client sends it: the EC pipeline, the replica index in its block id."""
    req.pipelineID = pipeline
    if req.cmdType == pb.WriteChunk:
        req.writeChunk.blockID.replicaIndex = index
    elif req.cmdType == pb.PutBlock:
        req.putBlock.blockData.blockID.replicaIndex = index
        group_length = pb.KeyValue(key="blockGroupLen", value="12288")
        req.putBlock.blockData.metadata.append(group_length)
    return req


def _cells(
    cid: int, index: int, lid: int = 1, pipeline: str = EC_PIPELINE
) -> list[pb.ContainerCommandRequestProto]:
    requests, _ = block_writes(cid, lid, payload(index, 2 * 4096), 4096)
    return [ec_request(r, index, pipeline) for r in requests]


def _dispatch(dispatcher: Dispatcher, requests: list[pb.ContainerCommandRequestProto]) -> list[str]:
    return results(dispatcher.dispatch(r) for r in requests)


# --- writes (contract 5)


def test_an_ec_write_naming_a_pipeline_this_datanode_is_not_in_creates_the_replica_with_its_index(
    dispatcher: Dispatcher, node_a: Node, scm: FakeScmContainers
) -> None:
    assert _dispatch(dispatcher, _cells(EC_OPEN, 4)) == ["SUCCESS"] * 3
    container = node_a.containers.require(EC_OPEN)
    assert container.data.replica_index == 4 and container.data.origin_pipeline_id == EC_PIPELINE
    assert scm.asked == [EC_OPEN]
    assert [(r.container_id, r.state, r.replica_index) for r in node_a.reports] == [
        (EC_OPEN, ReplicaState.OPEN, 4)
    ]


@pytest.mark.parametrize(
    ("cid", "index", "pipeline", "result"),
    [
        (EC_CLOSED, 1, EC_PIPELINE, "CLOSED_CONTAINER_IO"),  # SCM closed it: the client takes another block
        (EC_DELETING, 1, EC_PIPELINE, "CONTAINER_NOT_FOUND"),
        (RATIS_OPEN, 1, EC_PIPELINE, "CONTAINER_NOT_FOUND"),  # not EC: no replica index 1
        (EC_OPEN, 6, EC_PIPELINE, "CONTAINER_NOT_FOUND"),  # rs-3-2 has indexes 1..5
        (EC_OPEN, 1, "another-pipeline", "CONTAINER_NOT_FOUND"),  # allocated on another pipeline
        (4242, 1, EC_PIPELINE, "CONTAINER_NOT_FOUND"),  # SCM has no such container
    ],
)
def test_an_ec_write_scm_did_not_allocate_there_creates_nothing(
    dispatcher: Dispatcher, node_a: Node, cid: int, index: int, pipeline: str, result: str
) -> None:
    assert _dispatch(dispatcher, _cells(cid, index, pipeline=pipeline)) == [result] * 3
    assert cid not in node_a.containers


def test_a_write_with_another_replica_index_to_the_same_container_is_refused(
    dispatcher: Dispatcher, node_a: Node
) -> None:
    assert _dispatch(dispatcher, _cells(EC_OPEN, 2)) == ["SUCCESS"] * 3
    assert _dispatch(dispatcher, _cells(EC_OPEN, 3, lid=2)) == ["CONTAINER_NOT_FOUND"] * 3
    assert [b.block_id.local_id for b in node_a.containers.require(EC_OPEN).list_blocks()] == [1]


def test_an_ec_put_block_commits_at_once_and_get_block_returns_its_group_length(
    dispatcher: Dispatcher,
) -> None:
    answers = [dispatcher.dispatch(r) for r in _cells(EC_OPEN, 5)]
    assert results(answers) == ["SUCCESS"] * 3
    put = answers[-1]
    assert put.logIndex == 0  # no pipeline log ordered it
    assert put.putBlock.committedBlockLength.blockLength == 2 * 4096
    get = request(pb.GetBlock, EC_OPEN, getBlock=pb.GetBlockRequestProto(blockID=pb.DatanodeBlockID(
        containerID=EC_OPEN, localID=1, replicaIndex=5)))  # fmt: skip
    block = dispatcher.dispatch(get).getBlock.blockData
    assert block.blockID.replicaIndex == 5 and block.size == 2 * 4096
    assert [(kv.key, kv.value) for kv in block.metadata] == [("blockGroupLen", "12288")]
    data = payload(5, 2 * 4096)
    [info] = [c for c in block.chunks if c.offset == 4096]
    answer = dispatcher.dispatch(read(EC_OPEN, 1, info))
    assert results([answer]) == ["SUCCESS"] and answer.readChunk.data == data[4096:]
    get.getBlock.blockID.replicaIndex = 3
    assert results([dispatcher.dispatch(get)]) == ["CONTAINER_NOT_FOUND"]


def test_an_ec_put_block_cannot_set_the_replicas_bcsid(dispatcher: Dispatcher, node_a: Node) -> None:
    """Issue 28 defect 1: an EC putBlock (no log orders it) commits at the replica's next BCSID whatever
    BCSID the client claims (Ozone's KeyValueHandler never reads the request's)."""
    for lid in (1, 2):
        cells = _cells(EC_OPEN, 3, lid=lid)
        cells[-1].putBlock.blockData.blockID.blockCommitSequenceId = 1 << 62
        answers = [dispatcher.dispatch(r) for r in cells]
        assert results(answers) == ["SUCCESS"] * 3
        assert answers[-1].putBlock.committedBlockLength.blockID.blockCommitSequenceId == lid
    assert node_a.containers.require(EC_OPEN).bcsid == 2


def test_a_ratis_write_outside_this_datanodes_pipelines_is_still_refused_without_asking_scm(
    dispatcher: Dispatcher, scm: FakeScmContainers
) -> None:
    """Replica index 0 is no EC write: the pipeline check of issue 11 stands as it was."""
    requests, _ = block_writes(EC_OPEN, 1, payload(1, 4096), 4096)
    for r in requests:
        r.pipelineID = EC_PIPELINE
    assert _dispatch(dispatcher, requests) == ["CONTAINER_NOT_FOUND"] * 2
    assert scm.asked == []


# --- through the gRPC service with a pipeline log beside it, as the daemon serves it


@pytest.fixture
def groups(dispatcher: Dispatcher, tmp_path: Path) -> Iterator[PipelineGroups]:
    executor = ThreadPoolExecutor(2)
    yield pipeline_groups(dispatcher, tmp_path / "ratis", executor)
    executor.shutdown()


@async_test
async def test_the_service_dispatches_ec_writes_at_once_and_ratis_ones_through_their_log(
    dispatcher: Dispatcher, groups: PipelineGroups, executor: ThreadPoolExecutor, node_a: Node
) -> None:
    await lead_alone(groups)
    service = XceiverService(dispatcher, executor, groups=groups)

    async def send(requests: list[pb.ContainerCommandRequestProto]) -> list[pb.ContainerCommandResponseProto]:
        async def stream():  # type: ignore[no-untyped-def]
            for r in requests:
                yield r

        return [answer async for answer in service.send(stream(), None)]  # type: ignore[arg-type]

    ec = await send(_cells(EC_OPEN, 1))
    assert results(ec) == ["SUCCESS"] * 3 and ec[-1].logIndex == 0
    ratis_requests, _ = block_writes(7, 1, payload(1, 4096), 4096)
    ratis = await send(ratis_requests)
    assert results(ratis) == ["SUCCESS"] * 2 and ratis[-1].logIndex > 0  # ordered by the pipeline log
    stray = await send(
        [ec_request(r, 0, "not-a-member") for r in block_writes(EC_OPEN, 2, b"x" * 10, 10)[0][:1]]
    )
    assert results(stray) == ["CONTAINER_NOT_FOUND"]  # an EC replica here, no pipeline log: direct
    create = request(
        pb.CreateContainer, EC_SPARE, createContainer=pb.CreateContainerRequestProto(replicaIndex=5)
    )
    create.pipelineID = EC_PIPELINE
    assert results(await send([create])) == ["SUCCESS"]
    assert node_a.containers.require(EC_SPARE).data.replica_index == 5
    await groups.close()


# --- RECOVERING replicas of a reconstruction (contract 7)


def _create_recovering(cid: int, index: int) -> pb.ContainerCommandRequestProto:
    body = pb.CreateContainerRequestProto(state=pb.ContainerDataProto.RECOVERING, replicaIndex=index)
    req = request(pb.CreateContainer, cid, createContainer=body)
    req.ClearField("pipelineID")
    return req


def _no_pipeline(requests: list[pb.ContainerCommandRequestProto]) -> list[pb.ContainerCommandRequestProto]:
    for r in requests:
        r.ClearField("pipelineID")
    return requests


def _close(cid: int) -> pb.ContainerCommandRequestProto:
    req = request(pb.CloseContainer, cid, closeContainer=pb.CloseContainerRequestProto())
    req.ClearField("pipelineID")
    return req


def test_a_reconstruction_creates_writes_and_closes_a_recovering_replica(
    dispatcher: Dispatcher, node_a: Node
) -> None:
    assert _dispatch(dispatcher, [_create_recovering(EC_CLOSED, 3)]) == ["SUCCESS"]
    container = node_a.containers.require(EC_CLOSED)
    assert container.state is ReplicaState.RECOVERING and container.data.replica_index == 3
    assert _dispatch(dispatcher, _no_pipeline(_cells(EC_CLOSED, 3))) == ["SUCCESS"] * 3
    assert node_a.reports == [] and node_a.containers.replica_reports() == []  # SCM hears nothing yet
    assert _dispatch(dispatcher, [_close(EC_CLOSED)]) == ["SUCCESS"]
    assert container.state is ReplicaState.CLOSED
    [report] = node_a.reports  # at once, and the first SCM hears of it
    assert (report.container_id, report.state, report.replica_index, report.key_count) == (
        EC_CLOSED, ReplicaState.CLOSED, 3, 1,
    )  # fmt: skip
    assert [r.container_id for r in node_a.containers.replica_reports()] == [EC_CLOSED]


def test_a_write_naming_a_pipeline_does_not_reach_a_recovering_replica(dispatcher: Dispatcher) -> None:
    assert _dispatch(dispatcher, [_create_recovering(EC_CLOSED, 3)]) == ["SUCCESS"]
    assert _dispatch(dispatcher, _cells(EC_CLOSED, 3)) == ["CONTAINER_NOT_FOUND"] * 3


@pytest.mark.parametrize(
    ("cid", "index", "result"),
    [
        (RATIS_OPEN, 1, "CONTAINER_NOT_FOUND"),  # not EC
        (EC_DELETING, 1, "CONTAINER_NOT_FOUND"),
        (4242, 1, "CONTAINER_NOT_FOUND"),
        (EC_CLOSED, 6, "CONTAINER_NOT_FOUND"),
        (EC_CLOSED, 0, "MALFORMED_REQUEST"),  # a RECOVERING replica is an EC one: it names its index
    ],
)
def test_a_recovering_replica_needs_an_ec_container_scm_keeps(
    dispatcher: Dispatcher, node_a: Node, cid: int, index: int, result: str
) -> None:
    assert _dispatch(dispatcher, [_create_recovering(cid, index)]) == [result]
    assert cid not in node_a.containers


def test_a_failed_reconstruction_force_deletes_its_recovering_replica_unreported(
    dispatcher: Dispatcher, node_a: Node
) -> None:
    assert _dispatch(dispatcher, [_create_recovering(EC_CLOSED, 2)]) == ["SUCCESS"]
    assert _dispatch(dispatcher, _no_pipeline(_cells(EC_CLOSED, 2))) == ["SUCCESS"] * 3
    delete = request(
        pb.DeleteContainer, EC_CLOSED, deleteContainer=pb.DeleteContainerRequestProto(forceDelete=True)
    )
    assert _dispatch(dispatcher, [delete]) == ["SUCCESS"]
    assert EC_CLOSED not in node_a.containers and node_a.reports == []


def test_scm_away_refuses_a_recovering_replica(
    dispatcher: Dispatcher, node_a: Node, scm: FakeScmContainers
) -> None:
    scm.down = True
    assert _dispatch(dispatcher, [_create_recovering(EC_CLOSED, 2)]) == ["CONTAINER_INTERNAL_ERROR"]
    assert EC_CLOSED not in node_a.containers


def test_a_full_recovering_replica_asks_scm_for_nothing(dispatcher: Dispatcher, node_a: Node) -> None:
    """SCM does not know it yet (and the container is closed there): its reconstruction closes it."""
    big = payload(9, 960 * 1024)  # past 90% of the 1 MB containers
    assert _dispatch(dispatcher, [_create_recovering(EC_CLOSED, 1)]) == ["SUCCESS"]
    recovering, _ = block_writes(EC_CLOSED, 1, big, len(big))
    assert _dispatch(dispatcher, _no_pipeline(recovering)) == ["SUCCESS"] * 2
    assert node_a.full == []
    open_writes, _ = block_writes(EC_OPEN, 1, big, len(big))
    assert _dispatch(dispatcher, [ec_request(r, 1) for r in open_writes]) == ["SUCCESS"] * 2
    assert node_a.full == [EC_OPEN]
