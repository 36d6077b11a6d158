"""Bad messages raise ProtocolError (a ValueError) naming the field, never anything else."""

from __future__ import annotations

import contextlib
import re
from dataclasses import replace

import pytest
from google.protobuf.message import DecodeError
from hypothesis import given, settings
from hypothesis import strategies as st

from pyozone import protocol as p
from pyozone.hdds.datanode import DatanodeDetails, LayoutVersion, StorageReport
from pyozone.hdds.ids import ReplicationConfig
from pyozone.hdds.messages import CommandStatusReport, ContainerReplicaReport, Heartbeat
from pyozone.hdds.states import NodeOperationalState, ReplicaState, SCMCommandType
from pyozone.proto import DatanodeClientProtocol_pb2 as data_pb2
from pyozone.proto import ScmAdminProtocol_pb2 as admin_pb2
from pyozone.proto import ScmServerDatanodeHeartbeatProtocol_pb2 as pb
from pyozone.proto import hdds_pb2
from pyozone.protocol import ProtocolError
from tests.unit.protocol.proto_strategies import heartbeats, wire

DN = DatanodeDetails("00000000-0000-4000-8000-000000000001", "dn1.example.com", "10.0.0.1")


def heartbeat_message() -> pb.SCMHeartbeatRequestProto:
    hb = Heartbeat(DN, container_report=(ContainerReplicaReport(1, ReplicaState.OPEN),))
    return p.heartbeat_to_proto(hb)


def raises_at(field: str):
    return pytest.raises(ProtocolError, match=f"^{re.escape(field)}: ")


def test_protocol_error_is_a_value_error() -> None:
    error = ProtocolError("containerReport.reports[0].containerID", "is missing")
    assert isinstance(error, ValueError)
    assert (error.field, error.problem) == ("containerReport.reports[0].containerID", "is missing")
    assert str(error) == "containerReport.reports[0].containerID: is missing"


def test_heartbeat_without_datanode_details() -> None:
    with raises_at("datanodeDetails"):
        p.heartbeat_from_proto(pb.SCMHeartbeatRequestProto())


@pytest.mark.parametrize("name", ["uuid", "ipAddress", "hostName"])
def test_datanode_details_required_fields(name: str) -> None:
    message = heartbeat_message()
    message.datanodeDetails.ClearField(name)
    with raises_at(f"datanodeDetails.{name}"):
        p.heartbeat_from_proto(message)


def test_unknown_operational_state() -> None:
    message = heartbeat_message()
    message.datanodeDetails.persistedOpState = 42
    with pytest.raises(ProtocolError, match="unknown NodeOperationalState value 42") as err:
        p.heartbeat_from_proto(wire(message))
    assert err.value.field == "datanodeDetails.persistedOpState"


def test_port_out_of_range() -> None:
    message = heartbeat_message()
    message.datanodeDetails.ports.add(name="RATIS", value=70000)
    with raises_at("datanodeDetails.ports[0].value"):
        p.heartbeat_from_proto(message)


def test_negative_container_id() -> None:
    message = heartbeat_message()
    message.containerReport.reports[0].containerID = -5
    with pytest.raises(ProtocolError, match="positive container id, got -5") as err:
        p.heartbeat_from_proto(wire(message))
    assert err.value.field == "containerReport.reports[0].containerID"


def test_missing_container_id_in_an_incremental_report() -> None:
    message = heartbeat_message()
    message.incrementalContainerReport.add().report.add(state=pb.ContainerReplicaProto.CLOSED)
    with raises_at("incrementalContainerReport[0].report[0].containerID"):
        p.heartbeat_from_proto(message)


@pytest.mark.parametrize("state", [0, 9, 99])
def test_unknown_replica_state(state: int) -> None:
    message = heartbeat_message()
    message.containerReport.reports[0].state = state
    with raises_at("containerReport.reports[0].state"):
        p.heartbeat_from_proto(wire(message))


def test_negative_key_count() -> None:
    message = heartbeat_message()
    message.containerReport.reports[0].keyCount = -1
    with raises_at("containerReport.reports[0].keyCount"):
        p.heartbeat_from_proto(message)


def test_container_action_without_reason() -> None:
    message = heartbeat_message()
    message.containerActions.containerActions.add(containerID=3, action=pb.ContainerAction.CLOSE)
    with raises_at("containerActions.containerActions[0].reason"):
        p.heartbeat_from_proto(message)


def test_pipeline_action_without_pipeline() -> None:
    message = heartbeat_message()
    message.pipelineActions.pipelineActions.add(action=pb.PipelineAction.CLOSE)
    with raises_at("pipelineActions.pipelineActions[0].closePipeline"):
        p.heartbeat_from_proto(message)


def test_pipeline_report_without_id() -> None:
    message = heartbeat_message()
    message.pipelineReports.pipelineReport.add(pipelineID=hdds_pb2.PipelineID(), isLeader=True)
    with raises_at("pipelineReports.pipelineReport[0].pipelineID.id"):
        p.heartbeat_from_proto(message)


def test_command_status_of_unknown_type() -> None:
    message = heartbeat_message()
    message.commandStatusReports.add().cmdStatus.add(cmdId=4, status=pb.CommandStatus.EXECUTED, type=77)
    with raises_at("commandStatusReports[0].cmdStatus[0].type"):
        p.heartbeat_from_proto(wire(message))


def test_command_queue_report_with_mismatched_lists() -> None:
    message = heartbeat_message()
    message.commandQueueReport.command.extend([1, 2])
    message.commandQueueReport.count.append(3)
    with raises_at("commandQueueReport.count"):
        p.heartbeat_from_proto(message)


def test_command_queue_report_listing_a_type_twice() -> None:
    message = heartbeat_message()
    message.commandQueueReport.command.extend([2, 2])
    message.commandQueueReport.count.extend([1, 1])
    with raises_at("commandQueueReport.command[1]"):
        p.heartbeat_from_proto(message)


def test_storage_report_without_location() -> None:
    message = heartbeat_message()
    message.nodeReport.storageReport.add(storageUuid="disk-1")
    with raises_at("nodeReport.storageReport[0].storageLocation"):
        p.heartbeat_from_proto(message)


def test_register_without_details() -> None:
    with raises_at("extendedDatanodeDetails"):
        p.register_request_from_proto(pb.SCMRegisterRequestProto())
    message = pb.SCMRegisterRequestProto()
    message.extendedDatanodeDetails.SetInParent()
    with raises_at("extendedDatanodeDetails.datanodeDetails"):
        p.register_request_from_proto(message)


def test_register_response_error_code() -> None:
    with raises_at("errorCode"):
        p.register_response_from_proto(pb.SCMRegisteredResponseProto(clusterID="c", datanodeUUID="d"))
    refused = p.register_response_to_proto(p.RegisterResponse("c", "d", error="cluster ID c2 is not c"))
    assert refused.errorCode == pb.SCMRegisteredResponseProto.errorNodeNotPermitted
    assert not p.register_response_from_proto(wire(refused)).success


def test_version_response_without_layout() -> None:
    with raises_at("scmLayoutVersion"):
        p.version_response_from_proto(pb.SCMVersionResponseProto(clusterID="c", scmUuid="s"))


# ------------------------------------------------------------------ building messages from bad values
def test_heartbeat_op_state_must_agree_with_details() -> None:
    decommissioning = replace(DN, persisted_op_state=NodeOperationalState.DECOMMISSIONING)
    with raises_at("persisted_op_state"):
        p.heartbeat_to_proto(Heartbeat(decommissioning, persisted_op_state=NodeOperationalState.IN_SERVICE))
    with raises_at("persisted_op_state"):
        p.heartbeat_to_proto(Heartbeat(decommissioning))


def test_building_with_out_of_range_values() -> None:
    with raises_at("container_report[0].container_id"):
        p.heartbeat_to_proto(Heartbeat(DN, container_report=(ContainerReplicaReport(-1, ReplicaState.OPEN),)))
    with raises_at("StorageReport.capacity"):
        p.storage_report_to_proto(StorageReport("u", "/data", -1, 0, 0))
    with raises_at("LayoutVersion.metadata_layout_version"):
        p.layout_version_to_proto(LayoutVersion(2**40, 1))
    with raises_at("layout.software_layout_version"):
        p.heartbeat_to_proto(Heartbeat(DN, layout=LayoutVersion(1, -1)))
    big = ContainerReplicaReport(1, ReplicaState.OPEN, key_count=2**63)
    with raises_at("incremental_container_reports[0].key_count"):
        p.heartbeat_to_proto(Heartbeat(DN, incremental_container_reports=(big,)))
    with raises_at("CommandStatusReport.command_id"):
        p.command_status_to_proto(CommandStatusReport(0, SCMCommandType.deleteBlocksCommand, 2))


def test_building_details_without_address() -> None:
    with raises_at("DatanodeDetails.ip_address"):
        p.datanode_details_to_proto(replace(DN, ip_address=""))


# ------------------------------------------------------------------ admin and data messages
def test_pipeline_without_replication_type() -> None:
    message = hdds_pb2.Pipeline(id=hdds_pb2.PipelineID(id="p1"), state=hdds_pb2.PIPELINE_OPEN)
    with raises_at("pipeline.type"):
        p.pipeline_from_proto(message)


def test_ec_pipeline_without_ec_config() -> None:
    message = hdds_pb2.Pipeline(
        id=hdds_pb2.PipelineID(id="p1"), state=hdds_pb2.PIPELINE_OPEN, type=hdds_pb2.EC
    )
    with raises_at("pipeline.ecReplicationConfig"):
        p.pipeline_from_proto(message)


def test_ratis_factor_must_be_one_or_three() -> None:
    message = hdds_pb2.ContainerInfoProto(
        containerID=1, state=hdds_pb2.OPEN, replicationType=hdds_pb2.RATIS, replicationFactor=2
    )
    with raises_at("containerInfo.replicationFactor"):
        p.container_info_from_proto(wire(message))


def test_ec_chunk_size_must_be_whole_kib() -> None:
    message = hdds_pb2.ContainerInfoProto(containerID=1, state=hdds_pb2.OPEN, replicationType=hdds_pb2.EC)
    message.ecReplicationConfig.CopyFrom(
        hdds_pb2.ECReplicationConfig(data=3, parity=2, codec="RS", ecChunkSize=1000)
    )
    with raises_at("containerInfo.ecReplicationConfig.ecChunkSize"):
        p.container_info_from_proto(message)


def test_replication_config_round_trips_ozone_names() -> None:
    assert p.replication_to_proto(ReplicationConfig.parse("RATIS/THREE"), "rc") == (1, 3, None)
    rtype, factor, ec = p.replication_to_proto(ReplicationConfig.parse("EC/RS-6-3-1024k"), "rc")
    assert (rtype, factor, ec.data, ec.parity, ec.ecChunkSize) == (4, 0, 6, 3, 1 << 20)


def test_replica_with_unknown_state_name() -> None:
    message = admin_pb2.SCMContainerReplicaProto(containerID=1, state="BROKEN")
    message.datanodeDetails.uuid = "d"
    with raises_at("replica.state"):
        p.container_replica_info_from_proto(message)


def test_node_listing_needs_one_health_state() -> None:
    with raises_at("node.nodeStates"):
        p.node_from_proto(admin_pb2.Node())


def test_block_id_without_local_id() -> None:
    with raises_at("blockID.localID"):
        p.block_id_from_proto(data_pb2.DatanodeBlockID(containerID=3))


@settings(max_examples=100, deadline=None)
@given(heartbeats(), st.data())
def test_corrupted_heartbeats_raise_only_protocol_errors(hb: Heartbeat, data: st.DataObject) -> None:
    """Flip bytes of a valid heartbeat: parsing may fail (DecodeError), converting raises ProtocolError or
    succeeds; nothing else escapes."""
    raw = bytearray(p.heartbeat_to_proto(hb).SerializeToString())
    for _ in range(data.draw(st.integers(1, 4))):
        if raw:
            raw[data.draw(st.integers(0, len(raw) - 1))] = data.draw(st.integers(0, 255))
    try:
        message = pb.SCMHeartbeatRequestProto.FromString(bytes(raw))
    except DecodeError:  # the server answers INVALID_ARGUMENT to this too
        return
    with contextlib.suppress(ProtocolError):
        p.heartbeat_from_proto(message)
