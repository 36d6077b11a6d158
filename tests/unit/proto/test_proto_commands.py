"""SCMCommand <-> SCMCommandProto, one test per command type with the payloads the SCM core builds."""

from __future__ import annotations

import pytest
from proto_strategies import wire

from pyozone.hdds.datanode import DatanodeDetails, LayoutVersion
from pyozone.hdds.ids import ReplicationConfig
from pyozone.hdds.states import NodeOperationalState, SCMCommandType
from pyozone.proto import ScmServerDatanodeHeartbeatProtocol_pb2 as pb
from pyozone.proto import hdds_pb2
from pyozone.protocol import ProtocolError, scm_command_from_proto, scm_command_to_proto
from pyozone.scm.node.commands import SCMCommand

T = SCMCommandType
DN1 = "00000000-0000-4000-8000-000000000001"
DN2 = "00000000-0000-4000-8000-000000000002"
DN3 = "00000000-0000-4000-8000-000000000003"
PIPELINE = "11111111-2222-4333-8444-555555555555"


def details(uuid: str, n: int) -> DatanodeDetails:
    return DatanodeDetails(
        uuid, f"dn{n}.example.com", f"10.0.0.{n}", (("RATIS", 9858), ("REPLICATION", 9886))
    )


def round_trip(command: SCMCommand, **kwargs) -> tuple[pb.SCMCommandProto, SCMCommand]:
    message = wire(scm_command_to_proto(command, **kwargs))
    return message, scm_command_from_proto(message)


def test_reregister() -> None:
    command = SCMCommand(T.reregisterCommand, term=4)
    message, back = round_trip(command)
    assert message.WhichOneof("command") == "reregisterCommandProto"
    assert message.commandType == pb.SCMCommandProto.reregisterCommand
    assert (back, message.cmdId, message.term) == (command, command.id, 4)


def test_delete_blocks() -> None:
    transactions = [
        {"txID": 7, "containerID": 3, "localIDs": [100, 101]},
        {"txID": 8, "containerID": 4, "localIDs": [200], "count": 2},
    ]
    command = SCMCommand(T.deleteBlocksCommand, {"transactions": transactions})
    message, back = round_trip(command)
    txs = message.deleteBlocksCommandProto.deletedBlocksTransactions
    assert [(t.txID, t.containerID, list(t.localID)) for t in txs] == [(7, 3, [100, 101]), (8, 4, [200])]
    assert not txs[0].HasField("count") and txs[1].count == 2
    assert back == command


@pytest.mark.parametrize("pipeline_id", [PIPELINE, None])
def test_close_container(pipeline_id: str | None) -> None:
    command = SCMCommand(
        T.closeContainerCommand, {"containerID": 12, "pipelineID": pipeline_id, "force": True}
    )
    message, back = round_trip(command)
    body = message.closeContainerCommandProto
    assert (body.containerID, body.force, body.HasField("pipelineID")) == (12, True, pipeline_id is not None)
    assert back == command


def test_delete_container() -> None:
    command = SCMCommand(T.deleteContainerCommand, {"containerID": 5, "force": False, "replicaIndex": 2})
    message, back = round_trip(command)
    assert message.deleteContainerCommandProto.replicaIndex == 2
    assert back == command


def test_replicate_container_push() -> None:
    payload = {
        "containerID": 9,
        "target": details(DN2, 2),
        "sources": [],
        "replicaIndex": 0,
        "priority": "LOW",
    }
    command = SCMCommand(T.replicateContainerCommand, payload, deadline_epoch_ms=1_700_000_000_000)
    message, back = round_trip(command)
    body = message.replicateContainerCommandProto
    assert (body.target.uuid, body.target.hostName, body.priority) == (DN2, "dn2.example.com", pb.LOW)
    assert message.deadlineMsSinceEpoch == 1_700_000_000_000
    assert back == command


def test_replicate_container_defaults_fill_in() -> None:
    command = SCMCommand(T.replicateContainerCommand, {"containerID": 9, "target": details(DN2, 2)})
    _, back = round_trip(command)
    assert back.payload == {
        "containerID": 9,
        "target": details(DN2, 2),
        "sources": [],
        "replicaIndex": 0,
        "priority": "NORMAL",
    }


def create_pipeline_payload(leader: str | None = DN2) -> dict:
    return {
        "pipelineID": PIPELINE,
        "type": "RATIS",
        "factor": 3,
        "nodes": [DN1, DN2, DN3],
        "suggestedLeader": leader,
    }


@pytest.mark.parametrize("leader", [DN2, None])
def test_create_pipeline(leader: str | None) -> None:
    command = SCMCommand(T.createPipelineCommand, create_pipeline_payload(leader))
    message, back = round_trip(command)
    body = message.createPipelineCommandProto
    assert [d.uuid for d in body.datanode] == [DN1, DN2, DN3]
    assert not any(d.ipAddress for d in body.datanode)
    assert list(body.priority) == [0, 1 if leader else 0, 0]
    assert (body.type, body.factor) == (hdds_pb2.RATIS, hdds_pb2.THREE)
    assert back == command


def test_create_pipeline_with_resolved_members() -> None:
    known = {DN1: details(DN1, 1), DN3: details(DN3, 3)}
    command = SCMCommand(T.createPipelineCommand, create_pipeline_payload())
    message, back = round_trip(command, resolve=known.get)
    assert [d.hostName for d in message.createPipelineCommandProto.datanode] == [
        "dn1.example.com",
        "",
        "dn3.example.com",
    ]
    assert back.payload["nodes"] == [DN1, DN2, DN3]
    assert back.payload["datanodes"] == [known[DN1], None, known[DN3]]


@pytest.mark.parametrize("second", [details(DN2, 2), None])
def test_create_pipeline_with_datanodes(second: DatanodeDetails | None) -> None:
    payload = create_pipeline_payload() | {"datanodes": [details(DN1, 1), second, details(DN3, 3)]}
    command = SCMCommand(T.createPipelineCommand, payload)
    _, back = round_trip(command)
    assert back == command


def test_create_pipeline_datanodes_must_match_nodes() -> None:
    payload = create_pipeline_payload() | {"datanodes": [details(DN2, 2), None, None]}
    with pytest.raises(ProtocolError, match=r"datanodes'\]\[0\]"):
        scm_command_to_proto(SCMCommand(T.createPipelineCommand, payload))


def test_close_pipeline() -> None:
    command = SCMCommand(T.closePipelineCommand, {"pipelineID": PIPELINE})
    message, back = round_trip(command)
    assert message.closePipelineCommandProto.pipelineID.id == PIPELINE
    assert back == command


def test_set_node_operational_state() -> None:
    command = SCMCommand(
        T.setNodeOperationalStateCommand, {"state": "IN_MAINTENANCE", "expiry": 1_800_000_000}
    )
    message, back = round_trip(command)
    body = message.setNodeOperationalStateCommandProto
    assert body.nodeOperationalState == NodeOperationalState.IN_MAINTENANCE.value
    assert body.stateExpiryEpochSeconds == 1_800_000_000
    assert back == command


def test_set_node_operational_state_accepts_the_enum() -> None:
    command = SCMCommand(T.setNodeOperationalStateCommand, {"state": NodeOperationalState.DECOMMISSIONING})
    _, back = round_trip(command)
    assert back.payload == {"state": "DECOMMISSIONING", "expiry": 0}


@pytest.mark.parametrize("payload", [{}, {"layout": LayoutVersion(8, 9)}])
def test_finalize_new_layout_version(payload: dict) -> None:
    command = SCMCommand(T.finalizeNewLayoutVersionCommand, payload)
    message, back = round_trip(command)
    assert message.finalizeNewLayoutVersionCommandProto.finalizeNewLayoutVersion
    assert back == command


def test_refresh_volume_usage() -> None:
    command = SCMCommand(T.refreshVolumeUsageInfo)
    message, back = round_trip(command)
    assert message.WhichOneof("command") == "refreshVolumeUsageCommandProto"
    assert back == command


def test_reconstruct_ec_containers() -> None:
    payload = {
        "containerID": 21,
        "sources": [
            {"datanode": details(DN1, 1), "replicaIndex": 1},
            {"datanode": details(DN2, 2), "replicaIndex": 3},
        ],
        "targets": [details(DN3, 3)],
        "missingIndexes": bytes([2]),
        "replicationConfig": ReplicationConfig.parse("EC/RS-3-2-1024k"),
    }
    command = SCMCommand(T.reconstructECContainersCommand, payload)
    message, back = round_trip(command)
    ec = message.reconstructECContainersCommandProto.ecReplicationConfig
    assert (ec.data, ec.parity, ec.codec, ec.ecChunkSize) == (3, 2, "RS", 1024 * 1024)
    assert back == command


def test_reconcile_container() -> None:
    command = SCMCommand(T.reconcileContainerCommand, {"containerID": 4, "peers": [details(DN2, 2)]})
    message, back = round_trip(command)
    assert message.commandType == 12
    assert back == command


def test_every_command_type_is_covered() -> None:
    names = {name for name, value in pb.SCMCommandProto.Type.items() if value}
    assert names == {t.name for t in SCMCommandType}
    assert dict(pb.SCMCommandProto.Type.items()) == {"unknownScmCommand": 0} | {t.name: t.value for t in T}


# ------------------------------------------------------------------ bad commands
def test_payload_missing_a_required_key() -> None:
    with pytest.raises(ProtocolError) as err:
        scm_command_to_proto(SCMCommand(T.closeContainerCommand, {"pipelineID": PIPELINE}))
    assert err.value.field == "command.payload['containerID']"


def test_negative_container_id_in_payload() -> None:
    with pytest.raises(ProtocolError, match="positive container id"):
        scm_command_to_proto(SCMCommand(T.deleteContainerCommand, {"containerID": -3}))


def test_suggested_leader_must_be_a_member() -> None:
    with pytest.raises(ProtocolError, match="suggestedLeader"):
        scm_command_to_proto(SCMCommand(T.createPipelineCommand, create_pipeline_payload("someone-else")))


def test_unknown_priority() -> None:
    payload = {"containerID": 9, "target": details(DN2, 2), "priority": "URGENT"}
    with pytest.raises(ProtocolError, match="priority"):
        scm_command_to_proto(SCMCommand(T.replicateContainerCommand, payload))


def test_typed_message_must_match_the_command_type() -> None:
    message = scm_command_to_proto(SCMCommand(T.closePipelineCommand, {"pipelineID": PIPELINE}))
    message.commandType = pb.SCMCommandProto.closeContainerCommand
    with pytest.raises(ProtocolError) as err:
        scm_command_from_proto(message)
    assert err.value.field == "command.closeContainerCommandProto"
    assert "closePipelineCommandProto is set instead" in str(err.value)


def test_unknown_command_type() -> None:
    message = pb.SCMCommandProto(commandType=99, cmdId=1)
    with pytest.raises(ProtocolError, match="unknown SCMCommandType value 99") as err:
        scm_command_from_proto(message)
    assert err.value.field == "command.commandType"


def test_command_without_type_or_id() -> None:
    with pytest.raises(ProtocolError, match=r"command\.commandType: is missing"):
        scm_command_from_proto(pb.SCMCommandProto())
    message = pb.SCMCommandProto(commandType=1, reregisterCommandProto=pb.ReregisterCommandProto())
    with pytest.raises(ProtocolError, match=r"command\.cmdId"):
        scm_command_from_proto(message)


def test_replicate_without_target_or_sources() -> None:
    message = pb.SCMCommandProto(commandType=5, cmdId=1)
    message.replicateContainerCommandProto.containerID = 3
    with pytest.raises(ProtocolError, match="target: is missing"):
        scm_command_from_proto(message)
