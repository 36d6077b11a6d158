"""Every converter round-trips: dataclass -> proto -> bytes -> proto -> dataclass == the original."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pyozone import protocol as p
from pyozone.hdds.container import ContainerReplica
from pyozone.hdds.datanode import DatanodeDetails
from pyozone.hdds.ids import BlockID
from pyozone.hdds.messages import ContainerReplicaReport, Heartbeat
from pyozone.hdds.states import ReplicaState
from pyozone.proto import ScmServerDatanodeHeartbeatProtocol_pb2 as pb
from tests.unit.protocol.proto_strategies import (
    block_ids,
    command_statuses,
    container_actions,
    container_infos,
    container_replicas,
    datanode_details,
    datanode_listings,
    heartbeat_responses,
    heartbeats,
    layouts,
    metadata_storage_reports,
    node_reports,
    pipeline_actions,
    pipeline_reports,
    pipelines,
    queue_reports,
    register_requests,
    register_responses,
    replica_reports,
    rule_statuses,
    scm_commands,
    storage_reports,
    version_responses,
    wire,
)

PROTO = settings(max_examples=150)
"""More examples than the default for the codecs, which are cheap and see every shape of input."""


@PROTO
@given(datanode_details())
def test_datanode_details(details: DatanodeDetails) -> None:
    assert p.datanode_details_from_proto(wire(p.datanode_details_to_proto(details))) == details


@PROTO
@given(layouts)
def test_layout_version(layout) -> None:
    assert p.layout_version_from_proto(wire(p.layout_version_to_proto(layout))) == layout


@PROTO
@given(storage_reports)
def test_storage_report(report) -> None:
    assert p.storage_report_from_proto(wire(p.storage_report_to_proto(report))) == report


@PROTO
@given(metadata_storage_reports)
def test_metadata_storage_report(report) -> None:
    assert p.metadata_storage_report_from_proto(wire(p.metadata_storage_report_to_proto(report))) == report


@PROTO
@given(node_reports)
def test_node_report(report) -> None:
    assert p.node_report_from_proto(wire(p.node_report_to_proto(report))) == report


@PROTO
@given(replica_reports)
def test_container_replica_report(report: ContainerReplicaReport) -> None:
    assert p.container_replica_from_proto(wire(p.container_replica_to_proto(report))) == report


@PROTO
@given(container_actions)
def test_container_action(action) -> None:
    assert p.container_action_from_proto(wire(p.container_action_to_proto(action))) == action


@PROTO
@given(pipeline_reports)
def test_pipeline_report(report) -> None:
    assert p.pipeline_report_from_proto(wire(p.pipeline_report_to_proto(report))) == report


@PROTO
@given(pipeline_actions)
def test_pipeline_action(action) -> None:
    assert p.pipeline_action_from_proto(wire(p.pipeline_action_to_proto(action))) == action


@PROTO
@given(command_statuses)
def test_command_status_report(report) -> None:
    assert p.command_status_from_proto(wire(p.command_status_to_proto(report, "dn-1"))) == report


@PROTO
@given(queue_reports)
def test_command_queue_report(counts) -> None:
    assert p.command_queue_report_from_proto(wire(p.command_queue_report_to_proto(counts))) == counts


@PROTO
@given(heartbeats())
def test_heartbeat(hb: Heartbeat) -> None:
    assert p.heartbeat_from_proto(wire(p.heartbeat_to_proto(hb))) == hb


@PROTO
@given(scm_commands())
def test_scm_command(command) -> None:
    assert p.scm_command_from_proto(wire(p.scm_command_to_proto(command))) == command


@PROTO
@given(heartbeat_responses)
def test_heartbeat_response(response) -> None:
    assert p.heartbeat_response_from_proto(wire(p.heartbeat_response_to_proto(response))) == response


@PROTO
@given(register_requests)
def test_register_request(request) -> None:
    assert p.register_request_from_proto(wire(p.register_request_to_proto(request))) == request


@PROTO
@given(register_responses)
def test_register_response(response) -> None:
    assert p.register_response_from_proto(wire(p.register_response_to_proto(response))) == response


@PROTO
@given(version_responses)
def test_version_response(response) -> None:
    assert p.version_response_from_proto(wire(p.version_response_to_proto(response))) == response


@PROTO
@given(pipelines())
def test_pipeline(pipeline) -> None:
    assert p.pipeline_from_proto(wire(p.pipeline_to_proto(pipeline))) == pipeline


@PROTO
@given(pipelines(), st.data())
def test_pipeline_with_resolved_members(pipeline, data) -> None:
    known = {n: data.draw(datanode_details()) for n in pipeline.nodes[::2]}
    known = {n: DatanodeDetails(n, d.hostname, d.ip_address, d.ports) for n, d in known.items()}
    message = wire(p.pipeline_to_proto(pipeline, resolve=known.get))
    assert p.pipeline_from_proto(message) == pipeline
    assert p.pipeline_members(message) == known


@PROTO
@given(container_infos)
def test_container_info(info) -> None:
    assert p.container_info_from_proto(wire(p.container_info_to_proto(info))) == info


@PROTO
@given(container_replicas, st.booleans())
def test_container_replica_info(replica: ContainerReplica, with_details: bool) -> None:
    details = DatanodeDetails(replica.datanode, "dn1.example.com", "10.0.0.1") if with_details else None
    message = wire(p.container_replica_info_to_proto(replica, details))
    assert p.container_replica_info_from_proto(message) == replica
    assert message.state == ReplicaState(replica.state).name


@PROTO
@given(datanode_listings)
def test_node(listing) -> None:
    assert p.node_from_proto(wire(p.node_to_proto(listing))) == listing


@PROTO
@given(rule_statuses)
def test_safe_mode_rule_status(status) -> None:
    assert p.rule_status_from_proto(wire(p.rule_status_to_proto(status))) == status


@PROTO
@given(block_ids)
def test_block_id(block: BlockID) -> None:
    assert p.block_id_from_proto(wire(p.block_id_to_proto(block, 7, 2))) == block


@PROTO
@given(heartbeats())
def test_heartbeat_has_seed_001_fields(hb: Heartbeat) -> None:
    """Reports that were not sent stay unset on the wire (proto presence), empty repeated ones are absent."""
    message = wire(p.heartbeat_to_proto(hb))
    assert message.HasField("nodeReport") == (hb.node_report is not None)
    assert message.HasField("containerReport") == (hb.container_report is not None)
    assert message.HasField("pipelineReports") == (hb.pipeline_reports is not None)
    assert message.HasField("dataNodeLayoutVersion") == (hb.layout is not None)
    assert message.HasField("commandQueueReport") == (hb.command_queue_report is not None)
    assert len(message.incrementalContainerReport) == (1 if hb.incremental_container_reports else 0)


def test_seed_001_field_numbers() -> None:
    fields = {f.name: f.number for f in pb.SCMHeartbeatRequestProto.DESCRIPTOR.fields}
    assert fields == {
        "datanodeDetails": 1,
        "nodeReport": 2,
        "containerReport": 3,
        "incrementalContainerReport": 4,
        "commandStatusReports": 5,
        "containerActions": 6,
        "pipelineActions": 7,
        "pipelineReports": 8,
        "dataNodeLayoutVersion": 9,
        "commandQueueReport": 10,
    }
