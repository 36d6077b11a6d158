"""SCMCommand <-> SCMCommandProto, one test per command class, built as the SCM core builds them."""

from __future__ import annotations

import pytest

from pyozone.hdds.commands import (
    CloseContainerCommand,
    ClosePipelineCommand,
    CreatePipelineCommand,
    DeleteBlocksCommand,
    DeleteContainerCommand,
    DeletedBlocksTransaction,
    FinalizeNewLayoutVersionCommand,
    ReconcileContainerCommand,
    ReconstructECContainersCommand,
    ReconstructionSource,
    RefreshVolumeUsageCommand,
    ReplicateContainerCommand,
    ReplicationCommandPriority,
    ReregisterCommand,
    SCMCommand,
    SetNodeOperationalStateCommand,
)
from pyozone.hdds.datanode import DatanodeDetails, LayoutVersion
from pyozone.hdds.ids import ReplicationConfig
from pyozone.hdds.states import NodeOperationalState, ReplicationType, SCMCommandType
from pyozone.proto import ScmServerDatanodeHeartbeatProtocol_pb2 as pb
from pyozone.proto import hdds_pb2
from pyozone.protocol import ProtocolError, scm_command_from_proto, scm_command_to_proto
from pyozone.protocol.heartbeat import heartbeat_commands_from_proto
from tests.unit.protocol.proto_strategies import wire

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
    command = ReregisterCommand(term=4)
    message, back = round_trip(command)
    assert message.WhichOneof("command") == "reregisterCommandProto"
    assert message.commandType == pb.SCMCommandProto.reregisterCommand
    assert (back, message.cmdId, message.term) == (command, command.id, 4)


def test_delete_blocks() -> None:
    transactions = (
        DeletedBlocksTransaction(7, 3, (100, 101)),
        DeletedBlocksTransaction(8, 4, (200,), count=2),
    )
    command = DeleteBlocksCommand(transactions=transactions)
    message, back = round_trip(command)
    txs = message.deleteBlocksCommandProto.deletedBlocksTransactions
    assert [(t.txID, t.containerID, list(t.localID)) for t in txs] == [(7, 3, [100, 101]), (8, 4, [200])]
    assert not txs[0].HasField("count") and txs[1].count == 2
    assert back == command


@pytest.mark.parametrize("pipeline_id", [PIPELINE, None])
def test_close_container(pipeline_id: str | None) -> None:
    command = CloseContainerCommand(container_id=12, pipeline_id=pipeline_id, force=True)
    message, back = round_trip(command)
    body = message.closeContainerCommandProto
    assert (body.containerID, body.force, body.HasField("pipelineID")) == (12, True, pipeline_id is not None)
    assert back == command


def test_delete_container() -> None:
    command = DeleteContainerCommand(container_id=5, force=False, replica_index=2)
    message, back = round_trip(command)
    assert message.deleteContainerCommandProto.replicaIndex == 2
    assert back == command


def test_replicate_container_push() -> None:
    command = ReplicateContainerCommand(
        container_id=9,
        target=details(DN2, 2),
        priority=ReplicationCommandPriority.LOW,
        deadline_epoch_ms=1_700_000_000_000,
    )
    message, back = round_trip(command)
    body = message.replicateContainerCommandProto
    assert (body.target.uuid, body.target.hostName, body.priority) == (DN2, "dn2.example.com", pb.LOW)
    assert message.deadlineMsSinceEpoch == 1_700_000_000_000
    assert back == command


def test_replicate_container_defaults_fill_in() -> None:
    command = ReplicateContainerCommand(container_id=9, target=details(DN2, 2))
    message, back = round_trip(command)
    assert message.replicateContainerCommandProto.priority == pb.NORMAL
    assert (back.sources, back.replica_index, back.priority) == ((), 0, ReplicationCommandPriority.NORMAL)
    assert back == command


def create_pipeline(leader: str | None = DN2, **fields) -> CreatePipelineCommand:
    return CreatePipelineCommand(
        pipeline_id=PIPELINE,
        replication_type=ReplicationType.RATIS,
        factor=3,
        nodes=(DN1, DN2, DN3),
        suggested_leader=leader,
        **fields,
    )


@pytest.mark.parametrize("leader", [DN2, None])
def test_create_pipeline(leader: str | None) -> None:
    command = create_pipeline(leader)
    message, back = round_trip(command)
    body = message.createPipelineCommandProto
    assert [d.uuid for d in body.datanode] == [DN1, DN2, DN3]
    assert not any(d.ipAddress for d in body.datanode)
    assert list(body.priority) == [0, 1 if leader else 0, 0]
    assert (body.type, body.factor) == (hdds_pb2.RATIS, hdds_pb2.THREE)
    assert back == command


def test_create_pipeline_with_resolved_members() -> None:
    known = {DN1: details(DN1, 1), DN3: details(DN3, 3)}
    command = create_pipeline()
    message, back = round_trip(command, resolve=known.get)
    assert [d.hostName for d in message.createPipelineCommandProto.datanode] == [
        "dn1.example.com",
        "",
        "dn3.example.com",
    ]
    assert back.nodes == (DN1, DN2, DN3)
    assert back.datanodes == (known[DN1], None, known[DN3])


@pytest.mark.parametrize("second", [details(DN2, 2), None])
def test_create_pipeline_with_datanodes(second: DatanodeDetails | None) -> None:
    command = create_pipeline(datanodes=(details(DN1, 1), second, details(DN3, 3)))
    _, back = round_trip(command)
    assert back == command


def test_create_pipeline_datanodes_must_match_nodes() -> None:
    command = create_pipeline(datanodes=(details(DN2, 2), None, None))
    with pytest.raises(ProtocolError, match=r"datanodes\[0\]"):
        scm_command_to_proto(command)


def test_close_pipeline() -> None:
    command = ClosePipelineCommand(pipeline_id=PIPELINE)
    message, back = round_trip(command)
    assert message.closePipelineCommandProto.pipelineID.id == PIPELINE
    assert back == command


def test_set_node_operational_state() -> None:
    command = SetNodeOperationalStateCommand(
        state=NodeOperationalState.IN_MAINTENANCE, expiry_epoch_s=1_800_000_000
    )
    message, back = round_trip(command)
    body = message.setNodeOperationalStateCommandProto
    assert body.nodeOperationalState == NodeOperationalState.IN_MAINTENANCE.value
    assert body.stateExpiryEpochSeconds == 1_800_000_000
    assert back == command


def test_set_node_operational_state_expiry_defaults_to_zero() -> None:
    command = SetNodeOperationalStateCommand(state=NodeOperationalState.DECOMMISSIONING)
    _, back = round_trip(command)
    assert (back.state, back.expiry_epoch_s) == (NodeOperationalState.DECOMMISSIONING, 0)


@pytest.mark.parametrize("layout", [None, LayoutVersion(8, 9)])
def test_finalize_new_layout_version(layout: LayoutVersion | None) -> None:
    command = FinalizeNewLayoutVersionCommand(layout=layout)
    message, back = round_trip(command)
    assert message.finalizeNewLayoutVersionCommandProto.finalizeNewLayoutVersion
    assert back == command


def test_refresh_volume_usage() -> None:
    command = RefreshVolumeUsageCommand()
    message, back = round_trip(command)
    assert message.WhichOneof("command") == "refreshVolumeUsageCommandProto"
    assert back == command


def test_reconstruct_ec_containers() -> None:
    command = ReconstructECContainersCommand(
        container_id=21,
        sources=(ReconstructionSource(details(DN1, 1), 1), ReconstructionSource(details(DN2, 2), 3)),
        targets=(details(DN3, 3),),
        missing_indexes=bytes([2]),
        replication_config=ReplicationConfig.parse("EC/RS-3-2-1024k"),
    )
    message, back = round_trip(command)
    ec = message.reconstructECContainersCommandProto.ecReplicationConfig
    # Ozone writes the codec in lower case
    assert (ec.data, ec.parity, ec.codec, ec.ecChunkSize) == (3, 2, "rs", 1024 * 1024)
    assert back == command


def test_reconcile_container() -> None:
    command = ReconcileContainerCommand(container_id=4, peers=(details(DN2, 2),))
    message, back = round_trip(command)
    assert message.commandType == 12
    assert back == command


def test_every_command_type_is_covered() -> None:
    names = {name for name, value in pb.SCMCommandProto.Type.items() if value}
    assert names == {t.name for t in SCMCommandType}
    assert dict(pb.SCMCommandProto.Type.items()) == {"unknownScmCommand": 0} | {t.name: t.value for t in T}


# ------------------------------------------------------------------ bad commands
def test_unset_container_id() -> None:
    with pytest.raises(ProtocolError) as err:
        scm_command_to_proto(CloseContainerCommand(container_id=0, pipeline_id=PIPELINE))
    assert err.value.field == "command.containerID"
    assert "is missing" in str(err.value)


def test_negative_container_id() -> None:
    with pytest.raises(ProtocolError, match="positive container id"):
        scm_command_to_proto(DeleteContainerCommand(container_id=-3))


def test_suggested_leader_must_be_a_member() -> None:
    with pytest.raises(ProtocolError, match="suggestedLeader"):
        scm_command_to_proto(create_pipeline("someone-else"))


def test_unknown_priority() -> None:
    command = ReplicateContainerCommand(container_id=9, target=details(DN2, 2), priority="URGENT")  # type: ignore[arg-type]
    with pytest.raises(ProtocolError, match="priority") as err:
        scm_command_to_proto(command)
    assert err.value.field == "command.priority"


def test_the_bare_envelope_is_not_a_command() -> None:
    with pytest.raises(ProtocolError, match="unknown command class SCMCommand"):
        scm_command_to_proto(SCMCommand())


def test_typed_message_must_match_the_command_type() -> None:
    message = scm_command_to_proto(ClosePipelineCommand(pipeline_id=PIPELINE))
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


def test_a_heartbeat_answer_s_unreadable_command_is_reported_and_the_others_kept() -> None:
    close = scm_command_to_proto(CloseContainerCommand(container_id=5, term=3))
    proto = pb.SCMHeartbeatResponseProto(term=2, commands=[pb.SCMCommandProto(commandType=99), close])
    response, unreadable = heartbeat_commands_from_proto(proto)
    assert [c.container_id for c in response.commands] == [5] and response.term == 2
    assert len(unreadable) == 1 and "commands[0]" in str(unreadable[0])
