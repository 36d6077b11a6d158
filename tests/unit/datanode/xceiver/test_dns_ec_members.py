"""An EC write creates a replica only on the datanode SCM's EC pipeline places that replica index on
(review 14b): SCM's getContainer sends the container's pipeline, and a datanode outside it, or holding
another index of it, is refused, so no two datanodes take the same index."""

from __future__ import annotations

from pathlib import Path

import pytest

from pyozone.datanode.pipelines import PipelineSet
from pyozone.datanode.xceiver import Dispatcher
from pyozone.datanode.xceiver.allocations import ContainerAllocations, _scm_container
from pyozone.hdds.container import ContainerInfo
from pyozone.hdds.ids import RATIS_THREE, ReplicationConfig
from pyozone.hdds.pipeline import Pipeline
from pyozone.hdds.states import LifeCycleState, PipelineState
from pyozone.proto import ScmAdminProtocol_pb2 as admin
from pyozone.protocol.admin import container_with_pipeline_from_proto
from pyozone.protocol.admin_records import container_info_to_proto, pipeline_to_proto
from tests.unit.datanode.dns_helpers import Node, block_writes, payload, results
from tests.unit.datanode.xceiver.test_dns_allocations import FakeScmContainers
from tests.unit.datanode.xceiver.test_dns_ec import ec_request

RS_3_2 = ReplicationConfig.parse("rs-3-2-1024k")
EC_PIPELINE = "ec-pipeline-of-dn-1-to-5"
CID = 31
MEMBERS = tuple(f"00000000-0000-4000-8000-00000000000{n}" for n in range(1, 6))


@pytest.fixture
def scm() -> FakeScmContainers:
    fake = FakeScmContainers()
    fake.records[CID] = ContainerInfo(CID, LifeCycleState.OPEN, 0, EC_PIPELINE, RS_3_2, "om")
    fake.holders[CID] = {i: uuid for i, uuid in enumerate(MEMBERS, start=1)}
    return fake


def _dispatcher(node: Node, scm: FakeScmContainers, tmp_path: Path) -> Dispatcher:
    allocations = ContainerAllocations(scm, PipelineSet(tmp_path / node.uuid, node.uuid))
    return Dispatcher(node.containers, node.uuid, node.full.append, allocations=allocations)


def _write(dispatcher: Dispatcher, index: int) -> list[str]:
    requests, _ = block_writes(CID, 1, payload(index, 2 * 4096), 4096)
    return results(dispatcher.dispatch(ec_request(r, index, EC_PIPELINE)) for r in requests)


def test_datanodes_outside_the_pipeline_cannot_take_an_index(
    node_a: Node, node_b: Node, scm: FakeScmContainers, tmp_path: Path
) -> None:
    for node in (node_a, node_b):
        assert node.uuid not in MEMBERS
        assert _write(_dispatcher(node, scm, tmp_path), 4) == ["CONTAINER_NOT_FOUND"] * 3
        assert CID not in node.containers and node.containers.replica_reports() == []


def test_a_member_takes_its_own_index_only(node_a: Node, scm: FakeScmContainers, tmp_path: Path) -> None:
    scm.holders[CID][2] = node_a.uuid
    dispatcher = _dispatcher(node_a, scm, tmp_path)
    assert _write(dispatcher, 4) == ["CONTAINER_NOT_FOUND"] * 3
    assert CID not in node_a.containers
    assert _write(dispatcher, 2) == ["SUCCESS"] * 3
    assert node_a.containers.require(CID).data.replica_index == 2


def test_an_ec_write_is_refused_when_scm_sent_no_pipeline(
    node_a: Node, scm: FakeScmContainers, tmp_path: Path
) -> None:
    """SCM no longer has the pipeline (it closed and was removed): nobody can show it holds the index."""
    scm.holders[CID] = {}
    assert _write(_dispatcher(node_a, scm, tmp_path), 1) == ["CONTAINER_NOT_FOUND"] * 3


def _response(info: ContainerInfo, pipeline: Pipeline | None) -> admin.GetContainerResponseProto:
    response = admin.GetContainerResponseProto(containerInfo=container_info_to_proto(info))
    if pipeline is not None:
        response.pipeline.CopyFrom(pipeline_to_proto(pipeline))
    return response


def test_scms_answer_names_the_holder_of_each_index_of_an_ec_pipeline() -> None:
    info = ContainerInfo(CID, LifeCycleState.OPEN, 0, EC_PIPELINE, RS_3_2, "om")
    pipeline = Pipeline(EC_PIPELINE, RS_3_2, PipelineState.OPEN, MEMBERS, 0, 0)
    answer = _scm_container(container_with_pipeline_from_proto(_response(info, pipeline)))
    assert answer.info == info and answer.holders == dict(enumerate(MEMBERS, start=1))
    assert _scm_container(container_with_pipeline_from_proto(_response(info, None))).holders == {}
    ratis = ContainerInfo(CID, LifeCycleState.OPEN, 0, "p", RATIS_THREE, "om")
    three = Pipeline("p", RATIS_THREE, PipelineState.OPEN, MEMBERS[:3], 0, 0)
    assert _scm_container(container_with_pipeline_from_proto(_response(ratis, three))).holders == {}
