"""SCMCommand <-> SCMCommandProto: each command type's payload dict as its typed message.

The payload dicts, as the SCM core builds them and as `scm_command_from_proto` returns them (every key is
present in what comes back; building, a missing optional key takes the default shown):

    reregisterCommand               {}
    deleteBlocksCommand             {"transactions": [{"txID", "containerID", "localIDs": [...], "count"?}]}
    closeContainerCommand           {"containerID", "pipelineID": str | None, "force": False}
    deleteContainerCommand          {"containerID", "force": False, "replicaIndex": 0}
    replicateContainerCommand       {"containerID", "target": DatanodeDetails | None, "sources": [],
                                     "replicaIndex": 0, "priority": "NORMAL" | "LOW"}
    createPipelineCommand           {"pipelineID", "type": "RATIS", "factor": 1 | 3, "nodes": [uuid, ...],
                                     "suggestedLeader": uuid | None,
                                     "datanodes"?: [DatanodeDetails | None, ...]}
    closePipelineCommand            {"pipelineID"}
    setNodeOperationalStateCommand  {"state": NodeOperationalState name, "expiry": epoch seconds}
    finalizeNewLayoutVersionCommand {"layout"?: LayoutVersion}
    refreshVolumeUsageInfo          {}
    reconstructECContainersCommand  {"containerID",
                                     "sources": [{"datanode": DatanodeDetails, "replicaIndex"}],
                                     "targets": [DatanodeDetails], "missingIndexes": bytes,
                                     "replicationConfig": ReplicationConfig (EC)}
    reconcileContainerCommand       {"containerID", "peers": [DatanodeDetails]}

"count" is the transaction's retry count, present only when set. createPipelineCommand names its members
by uuid; given "datanodes" (details or None, in the order of "nodes") or a `resolve` function, the message
carries the addresses it knows, and reading a message with any address adds "datanodes".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

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
    enum_by_name,
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
from pyozone.scm.node.commands import SCMCommand

Payload = dict[str, Any]
_Type = SCMCommandType


class _Reader:
    """Payload access with ProtocolErrors that name the key."""

    def __init__(self, payload: Mapping[str, Any], field: str) -> None:
        if not isinstance(payload, Mapping):
            raise ProtocolError(field, f"expected a dict, got {payload!r}")
        self.payload = payload
        self.field = field

    def path(self, key: str) -> str:
        return f"{self.field}[{key!r}]"

    def require(self, key: str) -> Any:
        if key not in self.payload:
            raise ProtocolError(self.path(key), "is missing")
        return self.payload[key]

    def get(self, key: str, default: Any) -> Any:
        return self.payload.get(key, default)


# ------------------------------------------------------------------ encoders
def _reregister(_: _Reader, __: Resolver | None) -> pb.ReregisterCommandProto:
    return pb.ReregisterCommandProto()


def _delete_blocks(r: _Reader, _: Resolver | None) -> pb.DeleteBlocksCommandProto:
    proto = pb.DeleteBlocksCommandProto()
    for i, tx in enumerate(sequence(r.require("transactions"), r.path("transactions"))):
        tr = _Reader(tx, f"{r.path('transactions')}[{i}]")
        entry = proto.deletedBlocksTransactions.add(
            txID=integer(tr.require("txID"), tr.path("txID"), 1),
            containerID=container_id(tr.require("containerID"), tr.path("containerID")),
            localID=[
                integer(v, f"{tr.path('localIDs')}[{j}]", 1)
                for j, v in enumerate(sequence(tr.require("localIDs"), tr.path("localIDs")))
            ],
        )
        if "count" in tx:
            entry.count = int32(tx["count"], tr.path("count"))
    return proto


def _close_container(r: _Reader, _: Resolver | None) -> pb.CloseContainerCommandProto:
    proto = pb.CloseContainerCommandProto(
        containerID=container_id(r.require("containerID"), r.path("containerID")),
        force=flag(r.get("force", False), r.path("force")),
    )
    pipeline_id = r.get("pipelineID", None)
    if pipeline_id is not None:
        proto.pipelineID.CopyFrom(pipeline_id_to_proto(pipeline_id, r.path("pipelineID")))
    return proto


def _delete_container(r: _Reader, _: Resolver | None) -> pb.DeleteContainerCommandProto:
    return pb.DeleteContainerCommandProto(
        containerID=container_id(r.require("containerID"), r.path("containerID")),
        force=flag(r.get("force", False), r.path("force")),
        replicaIndex=int32(r.get("replicaIndex", 0), r.path("replicaIndex")),
    )


_PRIORITIES = {"NORMAL": pb.NORMAL, "LOW": pb.LOW}


def _replicate_container(r: _Reader, _: Resolver | None) -> pb.ReplicateContainerCommandProto:
    priority = r.get("priority", "NORMAL")
    if priority not in _PRIORITIES:
        raise ProtocolError(r.path("priority"), f"expected NORMAL or LOW, got {priority!r}")
    proto = pb.ReplicateContainerCommandProto(
        containerID=container_id(r.require("containerID"), r.path("containerID")),
        replicaIndex=int32(r.get("replicaIndex", 0), r.path("replicaIndex")),
        priority=_PRIORITIES[priority],
    )
    target = r.get("target", None)
    if target is not None:
        proto.target.CopyFrom(datanode_details_to_proto(target, r.path("target")))
    for i, source in enumerate(sequence(r.get("sources", ()), r.path("sources"))):
        proto.sources.append(datanode_details_to_proto(source, f"{r.path('sources')}[{i}]"))
    return proto


def _create_pipeline(r: _Reader, resolve: Resolver | None) -> pb.CreatePipelineCommandProto:
    nodes = [
        text(n, f"{r.path('nodes')}[{i}]")
        for i, n in enumerate(sequence(r.require("nodes"), r.path("nodes")))
    ]
    if not nodes:
        raise ProtocolError(r.path("nodes"), "is empty")
    leader = r.get("suggestedLeader", None)
    if leader is not None and leader not in nodes:
        raise ProtocolError(r.path("suggestedLeader"), f"{leader!r} is not one of the nodes")
    factor = integer(r.require("factor"), r.path("factor"), 1)
    if factor not in (f.value for f in ReplicationFactor):
        raise ProtocolError(r.path("factor"), f"must be 1 or 3, got {factor}")
    proto = pb.CreatePipelineCommandProto(
        pipelineID=pipeline_id_to_proto(r.require("pipelineID"), r.path("pipelineID")),
        type=enum_by_name(ReplicationType, r.require("type"), r.path("type")).value,
        factor=factor,
        priority=[1 if n == leader else 0 for n in nodes],
    )
    datanodes = r.get("datanodes", None)
    if datanodes is None:
        for i, uuid in enumerate(nodes):
            proto.datanode.append(datanode_ref_to_proto(uuid, resolve, f"{r.path('nodes')}[{i}]"))
        return proto
    datanodes = sequence(datanodes, r.path("datanodes"))
    if len(datanodes) != len(nodes):
        raise ProtocolError(r.path("datanodes"), f"has {len(datanodes)} entries for {len(nodes)} nodes")
    for i, (uuid, known) in enumerate(zip(nodes, datanodes, strict=True)):
        path = f"{r.path('datanodes')}[{i}]"
        if known is None:
            proto.datanode.append(datanode_ref_to_proto(uuid, None, path))
        elif getattr(known, "uuid", None) != uuid:
            raise ProtocolError(path, f"must be the details of {uuid}, in the order of `nodes`")
        else:
            proto.datanode.append(datanode_details_to_proto(known, path))
    return proto


def _close_pipeline(r: _Reader, _: Resolver | None) -> pb.ClosePipelineCommandProto:
    return pb.ClosePipelineCommandProto(
        pipelineID=pipeline_id_to_proto(r.require("pipelineID"), r.path("pipelineID"))
    )


def _set_node_operational_state(r: _Reader, _: Resolver | None) -> pb.SetNodeOperationalStateCommandProto:
    return pb.SetNodeOperationalStateCommandProto(
        nodeOperationalState=enum_by_name(NodeOperationalState, r.require("state"), r.path("state")).value,
        stateExpiryEpochSeconds=integer(r.get("expiry", 0), r.path("expiry")),
    )


def _finalize_new_layout_version(r: _Reader, _: Resolver | None) -> pb.FinalizeNewLayoutVersionCommandProto:
    proto = pb.FinalizeNewLayoutVersionCommandProto(finalizeNewLayoutVersion=True)
    layout = r.get("layout", None)
    if layout is not None:
        if not isinstance(layout, LayoutVersion):
            raise ProtocolError(r.path("layout"), f"expected a LayoutVersion, got {layout!r}")
        proto.dataNodeLayoutVersion.CopyFrom(layout_version_to_proto(layout, r.path("layout")))
    return proto


def _refresh_volume_usage(_: _Reader, __: Resolver | None) -> pb.RefreshVolumeUsageCommandProto:
    return pb.RefreshVolumeUsageCommandProto()


def _reconstruct_ec(r: _Reader, _: Resolver | None) -> pb.ReconstructECContainersCommandProto:
    config = r.require("replicationConfig")
    if not isinstance(config, ReplicationConfig) or config.type is not ReplicationType.EC:
        raise ProtocolError(r.path("replicationConfig"), f"expected an EC ReplicationConfig, got {config!r}")
    missing = r.require("missingIndexes")
    if not isinstance(missing, (bytes, bytearray)):
        raise ProtocolError(r.path("missingIndexes"), f"expected bytes, got {missing!r}")
    proto = pb.ReconstructECContainersCommandProto(
        containerID=container_id(r.require("containerID"), r.path("containerID")),
        missingContainerIndexes=bytes(missing),
        ecReplicationConfig=ec_config_to_proto(config, r.path("replicationConfig")),
    )
    for i, source in enumerate(sequence(r.require("sources"), r.path("sources"))):
        sr = _Reader(source, f"{r.path('sources')}[{i}]")
        proto.sources.add(
            datanodeDetails=datanode_details_to_proto(sr.require("datanode"), sr.path("datanode")),
            replicaIndex=int32(sr.require("replicaIndex"), sr.path("replicaIndex"), 1),
        )
    for i, target in enumerate(sequence(r.require("targets"), r.path("targets"))):
        proto.targets.append(datanode_details_to_proto(target, f"{r.path('targets')}[{i}]"))
    return proto


def _reconcile_container(r: _Reader, _: Resolver | None) -> pb.ReconcileContainerCommandProto:
    proto = pb.ReconcileContainerCommandProto(
        containerID=container_id(r.require("containerID"), r.path("containerID"))
    )
    for i, peer in enumerate(sequence(r.get("peers", ()), r.path("peers"))):
        proto.peers.append(datanode_details_to_proto(peer, f"{r.path('peers')}[{i}]"))
    return proto


# ------------------------------------------------------------------ decoders
def _from_reregister(_: pb.ReregisterCommandProto, __: str) -> Payload:
    return {}


def _from_delete_blocks(m: pb.DeleteBlocksCommandProto, field: str) -> Payload:
    transactions = []
    for i, tx in enumerate(m.deletedBlocksTransactions):
        path = f"{field}.deletedBlocksTransactions[{i}]"
        entry: Payload = {
            "txID": integer(tx.txID, f"{path}.txID", 1),
            "containerID": container_id(tx.containerID, f"{path}.containerID"),
            "localIDs": [integer(v, f"{path}.localID[{j}]", 1) for j, v in enumerate(tx.localID)],
        }
        if tx.HasField("count"):
            entry["count"] = integer(tx.count, f"{path}.count")
        transactions.append(entry)
    return {"transactions": transactions}


def _from_close_container(m: pb.CloseContainerCommandProto, field: str) -> Payload:
    return {
        "containerID": container_id(m.containerID, f"{field}.containerID"),
        "pipelineID": pipeline_id_from_proto(m, "pipelineID", field) if m.HasField("pipelineID") else None,
        "force": m.force,
    }


def _from_delete_container(m: pb.DeleteContainerCommandProto, field: str) -> Payload:
    return {
        "containerID": container_id(m.containerID, f"{field}.containerID"),
        "force": m.force,
        "replicaIndex": integer(m.replicaIndex, f"{field}.replicaIndex"),
    }


def _from_replicate_container(m: pb.ReplicateContainerCommandProto, field: str) -> Payload:
    if m.priority == pb.REPLICATION_COMMAND_PRIORITY_UNSPECIFIED:
        priority = "NORMAL"
    elif m.priority in (pb.NORMAL, pb.LOW):
        priority = pb.ReplicationCommandPriority.Name(m.priority)
    else:
        raise ProtocolError(f"{field}.priority", f"unknown priority {m.priority}")
    target = optional_message(m, "target")
    if target is None and not m.sources:
        raise ProtocolError(f"{field}.target", "is missing (and there are no sources)")
    return {
        "containerID": container_id(m.containerID, f"{field}.containerID"),
        "target": None if target is None else datanode_details_from_proto(target, f"{field}.target"),
        "sources": [datanode_details_from_proto(s, f"{field}.sources[{i}]") for i, s in enumerate(m.sources)],
        "replicaIndex": integer(m.replicaIndex, f"{field}.replicaIndex"),
        "priority": priority,
    }


def _from_create_pipeline(m: pb.CreatePipelineCommandProto, field: str) -> Payload:
    if not m.datanode:
        raise ProtocolError(f"{field}.datanode", "is empty")
    nodes = [datanode_ref_from_proto(d, f"{field}.datanode[{i}]") for i, d in enumerate(m.datanode)]
    if m.priority and len(m.priority) != len(nodes):
        raise ProtocolError(f"{field}.priority", f"has {len(m.priority)} entries for {len(nodes)} members")
    leaders = [n for n, p in zip(nodes, m.priority, strict=False) if p > 0]
    if len(leaders) > 1:
        raise ProtocolError(f"{field}.priority", "names more than one suggested leader")
    factor = enum_from_proto(ReplicationFactor, m.factor, f"{field}.factor")
    payload: Payload = {
        "pipelineID": pipeline_id_from_proto(m, "pipelineID", field),
        "type": enum_from_proto(ReplicationType, m.type, f"{field}.type").name,
        "factor": factor.value,
        "nodes": nodes,
        "suggestedLeader": leaders[0] if leaders else None,
    }
    if not all(is_reference(d) for d in m.datanode):
        payload["datanodes"] = [
            None if is_reference(d) else datanode_details_from_proto(d, f"{field}.datanode[{i}]")
            for i, d in enumerate(m.datanode)
        ]
    return payload


def _from_close_pipeline(m: pb.ClosePipelineCommandProto, field: str) -> Payload:
    return {"pipelineID": pipeline_id_from_proto(m, "pipelineID", field)}


def _from_set_node_operational_state(m: pb.SetNodeOperationalStateCommandProto, field: str) -> Payload:
    state = enum_from_proto(NodeOperationalState, m.nodeOperationalState, f"{field}.nodeOperationalState")
    return {
        "state": state.name,
        "expiry": integer(m.stateExpiryEpochSeconds, f"{field}.stateExpiryEpochSeconds"),
    }


def _from_finalize_new_layout_version(m: pb.FinalizeNewLayoutVersionCommandProto, field: str) -> Payload:
    layout = optional_message(m, "dataNodeLayoutVersion")
    return (
        {}
        if layout is None
        else {"layout": layout_version_from_proto(layout, f"{field}.dataNodeLayoutVersion")}
    )


def _from_refresh_volume_usage(_: pb.RefreshVolumeUsageCommandProto, __: str) -> Payload:
    return {}


def _from_reconstruct_ec(m: pb.ReconstructECContainersCommandProto, field: str) -> Payload:
    sources = []
    for i, s in enumerate(m.sources):
        path = f"{field}.sources[{i}]"
        details = datanode_details_from_proto(
            sub_message(s, "datanodeDetails", path), f"{path}.datanodeDetails"
        )
        sources.append(
            {"datanode": details, "replicaIndex": integer(s.replicaIndex, f"{path}.replicaIndex", 1)}
        )
    if not m.missingContainerIndexes:
        raise ProtocolError(f"{field}.missingContainerIndexes", "is missing")
    config = sub_message(m, "ecReplicationConfig", field)
    return {
        "containerID": container_id(m.containerID, f"{field}.containerID"),
        "sources": sources,
        "targets": [datanode_details_from_proto(t, f"{field}.targets[{i}]") for i, t in enumerate(m.targets)],
        "missingIndexes": bytes(m.missingContainerIndexes),
        "replicationConfig": ec_config_from_proto(config, f"{field}.ecReplicationConfig"),
    }


def _from_reconcile_container(m: pb.ReconcileContainerCommandProto, field: str) -> Payload:
    return {
        "containerID": container_id(m.containerID, f"{field}.containerID"),
        "peers": [datanode_details_from_proto(p, f"{field}.peers[{i}]") for i, p in enumerate(m.peers)],
    }


_Encoder = Callable[[_Reader, Resolver | None], Any]
_Decoder = Callable[[Any, str], Payload]

_CODECS: dict[SCMCommandType, tuple[str, _Encoder, _Decoder]] = {
    _Type.reregisterCommand: ("reregisterCommandProto", _reregister, _from_reregister),
    _Type.deleteBlocksCommand: ("deleteBlocksCommandProto", _delete_blocks, _from_delete_blocks),
    _Type.closeContainerCommand: ("closeContainerCommandProto", _close_container, _from_close_container),
    _Type.deleteContainerCommand: ("deleteContainerCommandProto", _delete_container, _from_delete_container),
    _Type.replicateContainerCommand: (
        "replicateContainerCommandProto",
        _replicate_container,
        _from_replicate_container,
    ),
    _Type.createPipelineCommand: ("createPipelineCommandProto", _create_pipeline, _from_create_pipeline),
    _Type.closePipelineCommand: ("closePipelineCommandProto", _close_pipeline, _from_close_pipeline),
    _Type.setNodeOperationalStateCommand: (
        "setNodeOperationalStateCommandProto",
        _set_node_operational_state,
        _from_set_node_operational_state,
    ),
    _Type.finalizeNewLayoutVersionCommand: (
        "finalizeNewLayoutVersionCommandProto",
        _finalize_new_layout_version,
        _from_finalize_new_layout_version,
    ),
    _Type.refreshVolumeUsageInfo: (
        "refreshVolumeUsageCommandProto",
        _refresh_volume_usage,
        _from_refresh_volume_usage,
    ),
    _Type.reconstructECContainersCommand: (
        "reconstructECContainersCommandProto",
        _reconstruct_ec,
        _from_reconstruct_ec,
    ),
    _Type.reconcileContainerCommand: (
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
    without "datanodes" name its members with their addresses."""
    return _to_proto(command, resolve, field)


@guarded("command")
def _to_proto(command: SCMCommand, resolve: Resolver | None, field: str) -> pb.SCMCommandProto:
    if not isinstance(command, SCMCommand):
        raise ProtocolError(field, f"expected an SCMCommand, got {command!r}")
    if command.type not in _CODECS:
        raise ProtocolError(f"{field}.type", f"unknown command type {command.type!r}")
    name, encode, _ = _CODECS[command.type]
    message = encode(_Reader(command.payload, f"{field}.payload"), resolve)
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
    name, _, decode = _CODECS[command_type]
    present = proto.WhichOneof("command")
    if present != name:
        problem = "is missing" if present is None else f"is missing ({present} is set instead)"
        raise ProtocolError(f"{field}.{name}", f"{problem} for a {command_type.name}")
    return SCMCommand(
        type=command_type,
        payload=decode(getattr(proto, name), f"{field}.{name}"),
        term=integer(proto.term, f"{field}.term"),
        deadline_epoch_ms=integer(proto.deadlineMsSinceEpoch, f"{field}.deadlineMsSinceEpoch"),
        id=integer(proto.cmdId, f"{field}.cmdId", 1),
    )
