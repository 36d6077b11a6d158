"""SCMCommand <-> SCMCommandProto: each command class (pyozone.hdds.commands) as its typed message.

`scm_command_to_proto` picks the message by the command's class, `scm_command_from_proto` returns the class
`COMMAND_CLASSES` names for the message's commandType, with every field set (a field the message leaves
out takes the class's default). The envelope (term, deadline, id) travels in SCMCommandProto itself.

Building a message checks the command's fields as the converters in `common` check any dataclass (a
dataclass does not check its own types); a ProtocolError names the field as `command.<name>`, by its
wire-style name (`containerID`, `pipelineID`, `replicaIndex`, `priority`, ...) rather than the attribute's.

A deleteBlocks transaction's `count` (its retry count, deprecated in Ozone) is sent only when it is not 0.
A createPipelineCommand names its members by uuid: given `datanodes` (each member's details or None, in
the order of `nodes`) or a `resolve` function, the message carries the addresses it knows, and reading a
message with any address sets `datanodes`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from google.protobuf.message import Message

from pyozone.hdds.commands import (
    COMMAND_CLASSES,
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
from pyozone.hdds.datanode import LayoutVersion
from pyozone.hdds.errors import ProtocolError
from pyozone.hdds.ids import ReplicationConfig
from pyozone.hdds.states import NodeOperationalState, ReplicationFactor, ReplicationType, SCMCommandType
from pyozone.proto import ScmServerDatanodeHeartbeatProtocol_pb2 as pb
from pyozone.protocol.common import (
    Resolver,
    container_id,
    datanode_details_from_proto,
    datanode_details_to_proto,
    datanode_ref_from_proto,
    datanode_ref_to_proto,
    ec_config_from_proto,
    ec_config_to_proto,
    enum_from_proto,
    flag,
    guarded,
    int32,
    integer,
    is_reference,
    layout_version_from_proto,
    layout_version_to_proto,
    optional_message,
    pipeline_id_from_proto,
    pipeline_id_to_proto,
    sequence,
    sub_message,
    text,
)

V = TypeVar("V")
Envelope = dict[str, int]
"""term, deadline_epoch_ms and id, as read from SCMCommandProto: every decoder passes them on."""


def _instance(cls: type[V], value: Any, field: str) -> V:
    """`value` if it is a `cls` (an enum member, a dataclass): dataclasses do not check field types."""
    if not isinstance(value, cls):
        raise ProtocolError(field, f"expected a {cls.__name__}, got {value!r}")
    return value


# ------------------------------------------------------------------ encoders
def _reregister(_: ReregisterCommand, __: str, ___: Resolver | None) -> pb.ReregisterCommandProto:
    return pb.ReregisterCommandProto()


def _delete_blocks(c: DeleteBlocksCommand, field: str, _: Resolver | None) -> pb.DeleteBlocksCommandProto:
    proto = pb.DeleteBlocksCommandProto()
    for i, tx in enumerate(sequence(c.transactions, f"{field}.transactions")):
        path = f"{field}.transactions[{i}]"
        _instance(DeletedBlocksTransaction, tx, path)
        entry = proto.deletedBlocksTransactions.add(
            txID=integer(tx.tx_id, f"{path}.txID", 1),
            containerID=container_id(tx.container_id, f"{path}.containerID"),
            localID=[
                integer(v, f"{path}.localIDs[{j}]", 1)
                for j, v in enumerate(sequence(tx.local_ids, f"{path}.localIDs"))
            ],
        )
        count = int32(tx.count, f"{path}.count")
        if count:
            entry.count = count
    return proto


def _close_container(
    c: CloseContainerCommand, field: str, _: Resolver | None
) -> pb.CloseContainerCommandProto:
    proto = pb.CloseContainerCommandProto(
        containerID=container_id(c.container_id, f"{field}.containerID"),
        force=flag(c.force, f"{field}.force"),
    )
    if c.pipeline_id is not None:
        proto.pipelineID.CopyFrom(pipeline_id_to_proto(c.pipeline_id, f"{field}.pipelineID"))
    return proto


def _delete_container(
    c: DeleteContainerCommand, field: str, _: Resolver | None
) -> pb.DeleteContainerCommandProto:
    return pb.DeleteContainerCommandProto(
        containerID=container_id(c.container_id, f"{field}.containerID"),
        force=flag(c.force, f"{field}.force"),
        replicaIndex=int32(c.replica_index, f"{field}.replicaIndex"),
    )


_PRIORITIES = {ReplicationCommandPriority.NORMAL: pb.NORMAL, ReplicationCommandPriority.LOW: pb.LOW}


def _replicate_container(
    c: ReplicateContainerCommand, field: str, _: Resolver | None
) -> pb.ReplicateContainerCommandProto:
    if c.priority not in _PRIORITIES:
        raise ProtocolError(f"{field}.priority", f"expected NORMAL or LOW, got {c.priority!r}")
    proto = pb.ReplicateContainerCommandProto(
        containerID=container_id(c.container_id, f"{field}.containerID"),
        replicaIndex=int32(c.replica_index, f"{field}.replicaIndex"),
        priority=_PRIORITIES[c.priority],
    )
    if c.target is not None:
        proto.target.CopyFrom(datanode_details_to_proto(c.target, f"{field}.target"))
    for i, source in enumerate(sequence(c.sources, f"{field}.sources")):
        proto.sources.append(datanode_details_to_proto(source, f"{field}.sources[{i}]"))
    return proto


def _create_pipeline(
    c: CreatePipelineCommand, field: str, resolve: Resolver | None
) -> pb.CreatePipelineCommandProto:
    nodes = [text(n, f"{field}.nodes[{i}]") for i, n in enumerate(sequence(c.nodes, f"{field}.nodes"))]
    if not nodes:
        raise ProtocolError(f"{field}.nodes", "is empty")
    leader = c.suggested_leader
    if leader is not None and leader not in nodes:
        raise ProtocolError(f"{field}.suggestedLeader", f"{leader!r} is not one of the nodes")
    factor = integer(c.factor, f"{field}.factor", 1)
    if factor not in (f.value for f in ReplicationFactor):
        raise ProtocolError(f"{field}.factor", f"must be 1 or 3, got {factor}")
    proto = pb.CreatePipelineCommandProto(
        pipelineID=pipeline_id_to_proto(c.pipeline_id, f"{field}.pipelineID"),
        type=_instance(ReplicationType, c.replication_type, f"{field}.type").value,
        factor=factor,
        priority=[1 if n == leader else 0 for n in nodes],
    )
    if c.datanodes is None:
        for i, uuid in enumerate(nodes):
            proto.datanode.append(datanode_ref_to_proto(uuid, resolve, f"{field}.nodes[{i}]"))
        return proto
    datanodes = sequence(c.datanodes, f"{field}.datanodes")
    if len(datanodes) != len(nodes):
        raise ProtocolError(f"{field}.datanodes", f"has {len(datanodes)} entries for {len(nodes)} nodes")
    for i, (uuid, known) in enumerate(zip(nodes, datanodes, strict=True)):
        path = f"{field}.datanodes[{i}]"
        if known is None:
            proto.datanode.append(datanode_ref_to_proto(uuid, None, path))
        elif getattr(known, "uuid", None) != uuid:
            raise ProtocolError(path, f"must be the details of {uuid}, in the order of `nodes`")
        else:
            proto.datanode.append(datanode_details_to_proto(known, path))
    return proto


def _close_pipeline(c: ClosePipelineCommand, field: str, _: Resolver | None) -> pb.ClosePipelineCommandProto:
    return pb.ClosePipelineCommandProto(pipelineID=pipeline_id_to_proto(c.pipeline_id, f"{field}.pipelineID"))


def _set_node_operational_state(
    c: SetNodeOperationalStateCommand, field: str, _: Resolver | None
) -> pb.SetNodeOperationalStateCommandProto:
    return pb.SetNodeOperationalStateCommandProto(
        nodeOperationalState=_instance(NodeOperationalState, c.state, f"{field}.state").value,
        stateExpiryEpochSeconds=integer(c.expiry_epoch_s, f"{field}.expiry"),
    )


def _finalize_new_layout_version(
    c: FinalizeNewLayoutVersionCommand, field: str, _: Resolver | None
) -> pb.FinalizeNewLayoutVersionCommandProto:
    proto = pb.FinalizeNewLayoutVersionCommandProto(finalizeNewLayoutVersion=True)
    if c.layout is not None:
        layout = _instance(LayoutVersion, c.layout, f"{field}.layout")
        proto.dataNodeLayoutVersion.CopyFrom(layout_version_to_proto(layout, f"{field}.layout"))
    return proto


def _refresh_volume_usage(
    _: RefreshVolumeUsageCommand, __: str, ___: Resolver | None
) -> pb.RefreshVolumeUsageCommandProto:
    return pb.RefreshVolumeUsageCommandProto()


def _reconstruct_ec(
    c: ReconstructECContainersCommand, field: str, _: Resolver | None
) -> pb.ReconstructECContainersCommandProto:
    config = c.replication_config
    if not isinstance(config, ReplicationConfig) or config.type is not ReplicationType.EC:
        raise ProtocolError(f"{field}.replicationConfig", f"expected an EC ReplicationConfig, got {config!r}")
    missing = c.missing_indexes
    if not isinstance(missing, (bytes, bytearray)):
        raise ProtocolError(f"{field}.missingIndexes", f"expected bytes, got {missing!r}")
    proto = pb.ReconstructECContainersCommandProto(
        containerID=container_id(c.container_id, f"{field}.containerID"),
        missingContainerIndexes=bytes(missing),
        ecReplicationConfig=ec_config_to_proto(config, f"{field}.replicationConfig"),
    )
    for i, source in enumerate(sequence(c.sources, f"{field}.sources")):
        path = f"{field}.sources[{i}]"
        _instance(ReconstructionSource, source, path)
        proto.sources.add(
            datanodeDetails=datanode_details_to_proto(source.datanode, f"{path}.datanode"),
            replicaIndex=int32(source.replica_index, f"{path}.replicaIndex", 1),
        )
    for i, target in enumerate(sequence(c.targets, f"{field}.targets")):
        proto.targets.append(datanode_details_to_proto(target, f"{field}.targets[{i}]"))
    return proto


def _reconcile_container(
    c: ReconcileContainerCommand, field: str, _: Resolver | None
) -> pb.ReconcileContainerCommandProto:
    proto = pb.ReconcileContainerCommandProto(
        containerID=container_id(c.container_id, f"{field}.containerID")
    )
    for i, peer in enumerate(sequence(c.peers, f"{field}.peers")):
        proto.peers.append(datanode_details_to_proto(peer, f"{field}.peers[{i}]"))
    return proto


# ------------------------------------------------------------------ decoders
def _from_reregister(_: pb.ReregisterCommandProto, __: str, env: Envelope) -> ReregisterCommand:
    return ReregisterCommand(**env)


def _from_delete_blocks(m: pb.DeleteBlocksCommandProto, field: str, env: Envelope) -> DeleteBlocksCommand:
    transactions = []
    for i, tx in enumerate(m.deletedBlocksTransactions):
        path = f"{field}.deletedBlocksTransactions[{i}]"
        transactions.append(
            DeletedBlocksTransaction(
                integer(tx.txID, f"{path}.txID", 1),
                container_id(tx.containerID, f"{path}.containerID"),
                tuple(integer(v, f"{path}.localID[{j}]", 1) for j, v in enumerate(tx.localID)),
                integer(tx.count, f"{path}.count") if tx.HasField("count") else 0,
            )
        )
    return DeleteBlocksCommand(transactions=tuple(transactions), **env)


def _from_close_container(
    m: pb.CloseContainerCommandProto, field: str, env: Envelope
) -> CloseContainerCommand:
    return CloseContainerCommand(
        container_id=container_id(m.containerID, f"{field}.containerID"),
        pipeline_id=pipeline_id_from_proto(m, "pipelineID", field) if m.HasField("pipelineID") else None,
        force=m.force,
        **env,
    )


def _from_delete_container(
    m: pb.DeleteContainerCommandProto, field: str, env: Envelope
) -> DeleteContainerCommand:
    return DeleteContainerCommand(
        container_id=container_id(m.containerID, f"{field}.containerID"),
        force=m.force,
        replica_index=integer(m.replicaIndex, f"{field}.replicaIndex"),
        **env,
    )


def _from_replicate_container(
    m: pb.ReplicateContainerCommandProto, field: str, env: Envelope
) -> ReplicateContainerCommand:
    if m.priority == pb.REPLICATION_COMMAND_PRIORITY_UNSPECIFIED:
        priority = ReplicationCommandPriority.NORMAL
    elif m.priority in (pb.NORMAL, pb.LOW):
        priority = ReplicationCommandPriority[pb.ReplicationCommandPriority.Name(m.priority)]
    else:
        raise ProtocolError(f"{field}.priority", f"unknown priority {m.priority}")
    target = optional_message(m, "target")
    if target is None and not m.sources:
        raise ProtocolError(f"{field}.target", "is missing (and there are no sources)")
    return ReplicateContainerCommand(
        container_id=container_id(m.containerID, f"{field}.containerID"),
        target=None if target is None else datanode_details_from_proto(target, f"{field}.target"),
        sources=tuple(
            datanode_details_from_proto(s, f"{field}.sources[{i}]") for i, s in enumerate(m.sources)
        ),
        replica_index=integer(m.replicaIndex, f"{field}.replicaIndex"),
        priority=priority,
        **env,
    )


def _from_create_pipeline(
    m: pb.CreatePipelineCommandProto, field: str, env: Envelope
) -> CreatePipelineCommand:
    if not m.datanode:
        raise ProtocolError(f"{field}.datanode", "is empty")
    nodes = tuple(datanode_ref_from_proto(d, f"{field}.datanode[{i}]") for i, d in enumerate(m.datanode))
    if m.priority and len(m.priority) != len(nodes):
        raise ProtocolError(f"{field}.priority", f"has {len(m.priority)} entries for {len(nodes)} members")
    leaders = [n for n, p in zip(nodes, m.priority, strict=False) if p > 0]
    if len(leaders) > 1:
        raise ProtocolError(f"{field}.priority", "names more than one suggested leader")
    datanodes = None
    if not all(is_reference(d) for d in m.datanode):
        datanodes = tuple(
            None if is_reference(d) else datanode_details_from_proto(d, f"{field}.datanode[{i}]")
            for i, d in enumerate(m.datanode)
        )
    return CreatePipelineCommand(
        pipeline_id=pipeline_id_from_proto(m, "pipelineID", field),
        replication_type=enum_from_proto(ReplicationType, m.type, f"{field}.type"),
        factor=enum_from_proto(ReplicationFactor, m.factor, f"{field}.factor").value,
        nodes=nodes,
        suggested_leader=leaders[0] if leaders else None,
        datanodes=datanodes,
        **env,
    )


def _from_close_pipeline(m: pb.ClosePipelineCommandProto, field: str, env: Envelope) -> ClosePipelineCommand:
    return ClosePipelineCommand(pipeline_id=pipeline_id_from_proto(m, "pipelineID", field), **env)


def _from_set_node_operational_state(
    m: pb.SetNodeOperationalStateCommandProto, field: str, env: Envelope
) -> SetNodeOperationalStateCommand:
    return SetNodeOperationalStateCommand(
        state=enum_from_proto(NodeOperationalState, m.nodeOperationalState, f"{field}.nodeOperationalState"),
        expiry_epoch_s=integer(m.stateExpiryEpochSeconds, f"{field}.stateExpiryEpochSeconds"),
        **env,
    )


def _from_finalize_new_layout_version(
    m: pb.FinalizeNewLayoutVersionCommandProto, field: str, env: Envelope
) -> FinalizeNewLayoutVersionCommand:
    layout = optional_message(m, "dataNodeLayoutVersion")
    return FinalizeNewLayoutVersionCommand(
        layout=None
        if layout is None
        else layout_version_from_proto(layout, f"{field}.dataNodeLayoutVersion"),
        **env,
    )


def _from_refresh_volume_usage(
    _: pb.RefreshVolumeUsageCommandProto, __: str, env: Envelope
) -> RefreshVolumeUsageCommand:
    return RefreshVolumeUsageCommand(**env)


def _from_reconstruct_ec(
    m: pb.ReconstructECContainersCommandProto, field: str, env: Envelope
) -> ReconstructECContainersCommand:
    sources = []
    for i, s in enumerate(m.sources):
        path = f"{field}.sources[{i}]"
        details = datanode_details_from_proto(
            sub_message(s, "datanodeDetails", path), f"{path}.datanodeDetails"
        )
        sources.append(ReconstructionSource(details, integer(s.replicaIndex, f"{path}.replicaIndex", 1)))
    if not m.missingContainerIndexes:
        raise ProtocolError(f"{field}.missingContainerIndexes", "is missing")
    config = sub_message(m, "ecReplicationConfig", field)
    return ReconstructECContainersCommand(
        container_id=container_id(m.containerID, f"{field}.containerID"),
        sources=tuple(sources),
        targets=tuple(
            datanode_details_from_proto(t, f"{field}.targets[{i}]") for i, t in enumerate(m.targets)
        ),
        missing_indexes=bytes(m.missingContainerIndexes),
        replication_config=ec_config_from_proto(config, f"{field}.ecReplicationConfig"),
        **env,
    )


def _from_reconcile_container(
    m: pb.ReconcileContainerCommandProto, field: str, env: Envelope
) -> ReconcileContainerCommand:
    return ReconcileContainerCommand(
        container_id=container_id(m.containerID, f"{field}.containerID"),
        peers=tuple(datanode_details_from_proto(p, f"{field}.peers[{i}]") for i, p in enumerate(m.peers)),
        **env,
    )


_Encoder = Callable[[Any, str, Resolver | None], Message]
_Decoder = Callable[[Any, str, Envelope], SCMCommand]

_CODECS: dict[type[SCMCommand], tuple[str, _Encoder, _Decoder]] = {
    ReregisterCommand: ("reregisterCommandProto", _reregister, _from_reregister),
    DeleteBlocksCommand: ("deleteBlocksCommandProto", _delete_blocks, _from_delete_blocks),
    CloseContainerCommand: ("closeContainerCommandProto", _close_container, _from_close_container),
    DeleteContainerCommand: ("deleteContainerCommandProto", _delete_container, _from_delete_container),
    ReplicateContainerCommand: (
        "replicateContainerCommandProto",
        _replicate_container,
        _from_replicate_container,
    ),
    CreatePipelineCommand: ("createPipelineCommandProto", _create_pipeline, _from_create_pipeline),
    ClosePipelineCommand: ("closePipelineCommandProto", _close_pipeline, _from_close_pipeline),
    SetNodeOperationalStateCommand: (
        "setNodeOperationalStateCommandProto",
        _set_node_operational_state,
        _from_set_node_operational_state,
    ),
    FinalizeNewLayoutVersionCommand: (
        "finalizeNewLayoutVersionCommandProto",
        _finalize_new_layout_version,
        _from_finalize_new_layout_version,
    ),
    RefreshVolumeUsageCommand: (
        "refreshVolumeUsageCommandProto",
        _refresh_volume_usage,
        _from_refresh_volume_usage,
    ),
    ReconstructECContainersCommand: (
        "reconstructECContainersCommandProto",
        _reconstruct_ec,
        _from_reconstruct_ec,
    ),
    ReconcileContainerCommand: (
        "reconcileContainerCommandProto",
        _reconcile_container,
        _from_reconcile_container,
    ),
}


# ------------------------------------------------------------------ public
def scm_command_to_proto(
    command: SCMCommand, resolve: Resolver | None = None, field: str = "command"
) -> pb.SCMCommandProto:
    """The command as SCM sends it. `resolve` (uuid -> DatanodeDetails or None) lets a createPipelineCommand
    without `datanodes` name its members with their addresses."""
    return _to_proto(command, resolve, field)


@guarded("command")
def _to_proto(command: SCMCommand, resolve: Resolver | None, field: str) -> pb.SCMCommandProto:
    if not isinstance(command, SCMCommand):
        raise ProtocolError(field, f"expected an SCMCommand, got {command!r}")
    codec = _CODECS.get(type(command))
    if codec is None:
        raise ProtocolError(f"{field}.type", f"unknown command class {type(command).__name__}")
    name, encode, _ = codec
    message = encode(command, field, resolve)
    proto = pb.SCMCommandProto(
        commandType=command.type.value,
        term=integer(command.term, f"{field}.term"),
        deadlineMsSinceEpoch=integer(command.deadline_epoch_ms, f"{field}.deadline_epoch_ms"),
        cmdId=integer(command.id, f"{field}.id", 1),
    )
    getattr(proto, name).CopyFrom(message)
    return proto


def scm_command_from_proto(proto: pb.SCMCommandProto, field: str = "command") -> SCMCommand:
    """The command as a datanode runs it; the typed message must match commandType."""
    command_type = enum_from_proto(SCMCommandType, proto.commandType, f"{field}.commandType")
    name, _, decode = _CODECS[COMMAND_CLASSES[command_type]]
    present = proto.WhichOneof("command")
    if present != name:
        problem = "is missing" if present is None else f"is missing ({present} is set instead)"
        raise ProtocolError(f"{field}.{name}", f"{problem} for a {command_type.name}")
    envelope: Envelope = {
        "term": integer(proto.term, f"{field}.term"),
        "deadline_epoch_ms": integer(proto.deadlineMsSinceEpoch, f"{field}.deadlineMsSinceEpoch"),
        "id": integer(proto.cmdId, f"{field}.cmdId", 1),
    }
    return decode(getattr(proto, name), f"{field}.{name}", envelope)
