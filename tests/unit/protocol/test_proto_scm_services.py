"""SCM's services' requests and answers are built and read in pyozone.protocol, once for SCM's servers and
the framework's clients: what one side builds the other reads back equal, over the wire (issue 29: the wire
in one room)."""

from __future__ import annotations

import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pyozone.hdds.block import AllocatedBlock
from pyozone.hdds.container import ContainerInfo
from pyozone.hdds.errors import ProtocolError
from pyozone.hdds.ids import BlockID, ReplicationConfig
from pyozone.hdds.security.secret_key import ManagedSecretKey
from pyozone.hdds.security.x509 import CertRole
from pyozone.hdds.states import (
    LifeCycleState,
    NodeOperationalState,
    NodeState,
    ReplicationFactor,
    ReplicationType,
)
from pyozone.proto import ScmSecurityProtocol_pb2 as security_pb
from pyozone.protocol import admin, block, security, snapshot
from pyozone.protocol.admin import ContainerQuery, NodeQuery, ScmInfo
from pyozone.protocol.admin_records import ContainerView, PipelineView
from pyozone.protocol.block import DeleteResult, KeyBlocks, KeyBlocksResult
from pyozone.protocol.heartbeat import DATANODE_SERVICE
from pyozone.protocol.snapshot import SnapshotBatch, SnapshotInfo
from tests.unit.protocol.proto_strategies import container_infos, datanode_listings, pipelines, wire

RATIS_THREE = ReplicationConfig(ReplicationType.RATIS, 3)


def test_each_service_keeps_its_name_on_the_wire() -> None:
    """The rpc paths ("/package.Service/method") are the services' names: they must not change."""
    services = (admin.ADMIN_SERVICE, block.BLOCK_SERVICE, security.SECURITY_SERVICE, DATANODE_SERVICE)
    assert [s.name for s in services] == [
        "ScmAdminProtocolService",
        "ScmBlockLocationProtocolService",
        "SCMSecurityProtocolService",
        "StorageContainerDatanodeProtocolService",
    ]


@pytest.mark.parametrize("method", [m.name for m in admin.ADMIN_SERVICE.methods])
def test_every_admin_rpc_has_an_empty_request_and_answer(method: str) -> None:
    assert admin.empty_request(method).ListFields() == []
    assert admin.empty_response(method).ListFields() == []


def test_scm_info_survives_the_wire() -> None:
    info = ScmInfo("CID-1", "scm-uuid", True, False)
    assert admin.scm_info_from_proto(wire(admin.scm_info_to_proto(info))) == info


@pytest.mark.parametrize(
    "query",
    [
        NodeQuery(),
        NodeQuery(NodeState.STALE),
        NodeQuery(None, NodeOperationalState.DECOMMISSIONING),
        NodeQuery(NodeState.HEALTHY, NodeOperationalState.IN_SERVICE),
    ],
)
def test_a_node_query_keeps_which_filters_were_sent(query: NodeQuery) -> None:
    proto = admin.empty_request("queryNode")
    if query.health is not None:
        proto.state = query.health.value
    if query.operational_state is not None:
        proto.opState = query.operational_state.value
    assert admin.node_query_from_proto(wire(proto)) == query


def test_an_unknown_node_state_filter_is_named() -> None:
    proto = admin.empty_request("queryNode")
    proto.state = 99
    with pytest.raises(ProtocolError) as e:
        admin.node_query_from_proto(proto)
    assert e.value.field == "state"


@settings(max_examples=20)
@given(st.lists(datanode_listings, max_size=3))
def test_nodes_survive_the_wire(listings) -> None:
    assert admin.nodes_from_proto(wire(admin.nodes_to_proto(listings))) == listings


@pytest.mark.parametrize("method", ["decommissionNodes", "startMaintenanceNodes", "recommissionNodes"])
def test_failed_hosts_survive_the_wire(method: str) -> None:
    failed = [("dn1", "no such datanode"), ("dn2", "is DEAD")]
    answer = admin.failed_hosts_to_proto(method, failed)
    assert answer.DESCRIPTOR is admin.empty_response(method).DESCRIPTOR
    assert admin.failed_hosts_from_proto(wire(answer)) == dict(failed)


def test_node_admin_requests_carry_their_hosts() -> None:
    assert list(admin.decommission_request(["a", "b"]).hosts) == ["a", "b"]
    request = admin.maintenance_request(["a"], 6)
    assert (list(request.hosts), request.endInHours) == (["a"], 6)
    assert list(admin.recommission_request(["c"]).hosts) == ["c"]


@settings(max_examples=20)
@given(st.lists(pipelines(), max_size=3))
def test_pipelines_survive_the_wire(listed) -> None:
    views = [PipelineView(p, {}) for p in listed]
    assert admin.pipelines_from_proto(wire(admin.pipelines_to_proto(views))) == views


def test_a_create_pipeline_request_reads_back_its_replication() -> None:
    request = wire(admin.create_pipeline_request(RATIS_THREE))
    assert admin.create_pipeline_request_from_proto(request) == RATIS_THREE


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"pipelineID": "mine"}, "pipelineID: SCM chooses pipeline ids; leave it empty"),
        ({"replicationType": ReplicationType.EC}, "replicationType: EC pipelines are not created on request"),
    ],
)
def test_a_create_pipeline_request_scm_does_not_take_is_refused(change: dict, message: str) -> None:
    request = admin.create_pipeline_request(RATIS_THREE)
    for name, value in change.items():
        setattr(request, name, value)
    with pytest.raises(ProtocolError, match=message):
        admin.create_pipeline_request_from_proto(request)


@settings(max_examples=20)
@given(pipelines())
def test_a_created_pipeline_or_its_refusal_survives_the_wire(pipeline) -> None:
    view = PipelineView(pipeline, {})
    assert admin.created_pipeline_from_proto(wire(admin.created_pipeline_to_proto(view))) == view
    refused = admin.empty_response("createPipeline")
    refused.errorMessage = "no datanodes"
    assert admin.created_pipeline_from_proto(refused) == "no datanodes"


@pytest.mark.parametrize("method", ["closePipeline", "activatePipeline", "deactivatePipeline"])
def test_a_pipeline_request_names_its_pipeline(method: str) -> None:
    pid = str(uuid.uuid4())
    assert wire(admin.pipeline_id_request(method, pid)).pipelineID.id == pid


@pytest.mark.parametrize(
    "query",
    [
        ContainerQuery(0, 10),
        ContainerQuery(5, 1, LifeCycleState.CLOSED),
        ContainerQuery(1, 100, None, ReplicationType.RATIS, ReplicationFactor.ONE),
    ],
)
def test_a_container_query_survives_the_wire(query: ContainerQuery) -> None:
    assert admin.container_query_from_proto(wire(admin.container_query_to_proto(query))) == query


@settings(max_examples=20)
@given(st.lists(container_infos, max_size=3), st.integers(0, 1000))
def test_a_container_page_survives_the_wire(page: list[ContainerInfo], matching: int) -> None:
    assert admin.container_page_from_proto(wire(admin.container_page_to_proto(page, matching))) == (
        page,
        matching,
    )


@pytest.mark.parametrize("method", ["getContainer", "closeContainer"])
def test_a_container_request_names_its_container(method: str) -> None:
    assert wire(admin.container_id_request(method, 42)).containerID == 42


@settings(max_examples=20)
@given(container_infos)
def test_a_container_with_no_replicas_nor_pipeline_survives_the_wire(info: ContainerInfo) -> None:
    answer = admin.container_with_pipeline_to_proto(ContainerView(info, (), None), lambda _: None)
    read = admin.container_with_pipeline_from_proto(wire(answer))
    assert (read.info, read.replicas, read.located, read.pipeline) == (info, (), (), None)


def test_safe_mode_answers_survive_the_wire() -> None:
    assert admin.in_safe_mode_from_proto(wire(admin.safe_mode_to_proto(True, False))) is True
    assert admin.force_exit_from_proto(wire(admin.force_exit_to_proto(True))) is True
    assert admin.rm_status_from_proto(wire(admin.rm_status_to_proto(False))) is False


@pytest.mark.parametrize(
    "chunk",
    [SnapshotInfo("CID-1", 1_700, 3, {"nodes": 2, "keys": 0}), SnapshotBatch("nodes", b"ARROW\x00\x01")],
)
def test_a_snapshot_chunk_survives_the_wire(chunk) -> None:
    assert snapshot.snapshot_chunk_from_proto(wire(snapshot.snapshot_chunk_to_proto(chunk))) == chunk


def test_a_snapshot_chunk_that_carries_nothing_reads_as_none() -> None:
    assert snapshot.snapshot_chunk_from_proto(admin.empty_response("streamSnapshot")) is None
    assert wire(snapshot.snapshot_request(7)).batchRows == 7


@settings(max_examples=20)
@given(pipelines())
def test_allocated_blocks_survive_the_wire(pipeline) -> None:
    blocks = [AllocatedBlock(BlockID(1, i), pipeline, 1) for i in (1, 2)]
    read = block.allocate_response_from_proto(wire(block.allocate_response_to_proto(blocks)))
    assert [(b.block_id, b.pipeline) for b in read] == [(b.block_id, b.pipeline) for b in blocks]


def test_deleted_key_blocks_and_their_results_survive_the_wire() -> None:
    keys = [KeyBlocks("/v/b/k1", (BlockID(1, 1), BlockID(1, 2))), KeyBlocks("/v/b/k2", (BlockID(2, 1),))]
    assert block.delete_request_from_proto(wire(block.delete_request_to_proto(keys))) == keys
    results = [KeyBlocksResult(k.key, tuple((b, DeleteResult.safeMode) for b in k.blocks)) for k in keys]
    assert block.delete_response_from_proto(wire(block.delete_response_to_proto(results))) == results


def test_secret_key_answers_survive_the_wire() -> None:
    key = ManagedSecretKey.generate(1_000, 60_000)
    assert security.current_secret_key_from_proto(wire(security.current_secret_key_to_proto(key))) == key
    assert security.found_secret_key_from_proto(wire(security.found_secret_key_to_proto(key))) == key
    assert security.found_secret_key_from_proto(wire(security.found_secret_key_to_proto(None))) is None
    assert security.secret_keys_from_proto(wire(security.secret_keys_to_proto([key, key]))) == [key, key]
    assert wire(security.secret_key_request(key.id)).secretKeyId == str(key.id)


def test_security_requests_carry_their_fields() -> None:
    listing = wire(security.list_certificates_request(CertRole.OM, 5, 20, True))
    assert (listing.role, listing.startCertId, listing.count, listing.isRevoked) == (
        security.role_to_proto(CertRole.OM),
        5,
        20,
        True,
    )
    revoke = wire(security.revoke_request([7, 8], 1, ["om1"]))
    assert (list(revoke.certIds), revoke.reason, list(revoke.names)) == (["7", "8"], 1, ["om1"])
    assert wire(security.certificate_request(123)).certSerialId == "123"
    join = wire(security.join_token_request(CertRole.DATANODE, "dn1", "CSR", "uuid-1"))
    assert (join.name, join.CSR, join.datanode) == ("dn1", "CSR", "uuid-1")


def test_crl_and_revocation_answers_survive_the_wire() -> None:
    assert security.revoked_from_proto(wire(security.revoked_to_proto(12))) == 12
    pem = b"-----BEGIN X509 CRL-----\n...\n-----END X509 CRL-----\n"
    assert security.crl_from_proto(wire(security.crl_to_proto(3, pem))) == (3, pem)
    with pytest.raises(ProtocolError, match="x509CRL: is missing"):
        security.crl_from_proto(security_pb.SCMGetCrlResponseProto())
