"""The records the admin protocol carries (Ozone's StorageContainerLocationProtocol messages): pipelines,
containers, replicas, datanodes, safe-mode rules and the Replication Manager's report as `pyozone admin`
lists them, each converted here once for SCM, the framework's ScmAdminClient and the heartbeat protocol
alike (the calls that carry them: admin.py)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pyozone.hdds.container import ContainerInfo, ContainerReplica
from pyozone.hdds.datanode import DatanodeDetails, DatanodeInfo, LayoutVersion
from pyozone.hdds.errors import ProtocolError
from pyozone.hdds.ids import DatanodeID, ReplicationConfig
from pyozone.hdds.pipeline import Pipeline
from pyozone.hdds.replication_report import ReplicationManagerReport
from pyozone.hdds.safemode_status import RuleStatus
from pyozone.hdds.states import (
    LifeCycleState,
    NodeOperationalState,
    NodeState,
    PipelineState,
    ReplicaState,
    ReplicationType,
)
from pyozone.proto import ScmAdminProtocol_pb2 as admin_pb2
from pyozone.proto import hdds_pb2
from pyozone.protocol.common import (
    Resolver,
    container_id,
    datanode_details_from_proto,
    datanode_details_to_proto,
    datanode_ref_from_proto,
    datanode_ref_to_proto,
    enum_from_proto,
    enum_to_proto,
    flag,
    guarded,
    integer,
    optional_message,
    pipeline_id_from_proto,
    pipeline_id_to_proto,
    replication_from_proto,
    replication_to_proto,
    text,
    uint32,
    uint64,
)


# ------------------------------------------------------------------ pipelines
@guarded("Pipeline")
def pipeline_to_proto(
    pipeline: Pipeline, resolve: Resolver | None = None, replica_indexes: Sequence[int] | None = None
) -> hdds_pb2.Pipeline:
    """A pipeline as SCM lists it; `resolve` names its members with their addresses (else by uuid).

    An EC pipeline carries `ecReplicationConfig` and `memberReplicaIndexes`, parallel to `members`:
    `replica_indexes` when given (a read pipeline built from replicas), else SCM's EC pipeline rule,
    member i holds index i + 1. A replicated pipeline carries neither."""
    config = pipeline.replication_config
    rtype, factor, ec = replication_to_proto(config, "replication_config")
    proto = hdds_pb2.Pipeline(
        id=pipeline_id_to_proto(pipeline.id, "id"),
        state=enum_to_proto(PipelineState, pipeline.state, "state"),
        type=rtype,
        factor=factor,
        leaderID=text(pipeline.leader or "", "leader", required=False),
        suggestedLeaderID=text(pipeline.suggested_leader or "", "suggested_leader", required=False),
        creationTimeStamp=uint64(pipeline.created_ms, "created_ms"),
        stateEnterTime=uint64(pipeline.state_entered_ms, "state_entered_ms"),
    )
    for i, node in enumerate(pipeline.nodes):
        proto.members.append(datanode_ref_to_proto(node, resolve, f"nodes[{i}]"))
    if ec is not None:
        proto.ecReplicationConfig.CopyFrom(ec)
        indexes = range(1, len(pipeline.nodes) + 1) if replica_indexes is None else replica_indexes
        proto.memberReplicaIndexes.extend(
            _replica_indexes(indexes, len(pipeline.nodes), config, "replica_indexes")
        )
    elif replica_indexes is not None:
        raise ProtocolError("replica_indexes", f"only EC pipelines have replica indexes, not {config}")
    return proto


def pipeline_from_proto(proto: hdds_pb2.Pipeline, field: str = "pipeline") -> Pipeline:
    """The Pipeline record; members come back as uuids (their details, if sent, see pipeline_members;
    an EC pipeline's replica indexes, pipeline_replica_indexes)."""
    pipeline = Pipeline(
        id=pipeline_id_from_proto(proto, "id", field),
        replication_config=replication_from_proto(
            proto.type, proto.factor, optional_message(proto, "ecReplicationConfig"), field, "type", "factor"
        ),
        state=enum_from_proto(PipelineState, proto.state, f"{field}.state"),
        nodes=tuple(datanode_ref_from_proto(m, f"{field}.members[{i}]") for i, m in enumerate(proto.members)),
        created_ms=proto.creationTimeStamp,
        state_entered_ms=proto.stateEnterTime,
        suggested_leader=proto.suggestedLeaderID or None,
        leader=proto.leaderID or None,
    )
    pipeline_replica_indexes(proto, field, pipeline.replication_config)
    return pipeline


def pipeline_replica_indexes(
    proto: hdds_pb2.Pipeline, field: str = "pipeline", config: ReplicationConfig | None = None
) -> tuple[int, ...]:
    """An EC pipeline's `memberReplicaIndexes`, parallel to its members, each 1..data+parity (a read
    pipeline may name an index twice: two copies of it); empty for a replicated pipeline (Ozone may
    send zeros there, which mean nothing)."""
    if config is None:
        config = replication_from_proto(
            proto.type, proto.factor, optional_message(proto, "ecReplicationConfig"), field, "type", "factor"
        )
    if config.type is not ReplicationType.EC:
        return ()
    return _replica_indexes(
        proto.memberReplicaIndexes, len(proto.members), config, f"{field}.memberReplicaIndexes"
    )


def _replica_indexes(
    indexes: Iterable[int], members: int, config: ReplicationConfig, field: str
) -> tuple[int, ...]:
    result = tuple(indexes)
    if len(result) != members:
        raise ProtocolError(field, f"has {len(result)} indexes for {members} members")
    for i, index in enumerate(result):
        integer(index, f"{field}[{i}]", 1, config.required_nodes)
    return result


@dataclass(frozen=True, slots=True)
class PipelineView:
    """A pipeline as `pyozone admin pipeline` shows it: with its members' details where SCM knows them."""

    pipeline: Pipeline
    members: dict[DatanodeID, DatanodeDetails]

    @property
    def is_ec(self) -> bool:
        """Member i of an EC pipeline holds replica index i + 1."""
        return self.pipeline.replication_config.type is ReplicationType.EC


@dataclass(frozen=True, slots=True)
class ContainerView:
    """A container as `pyozone admin container info` shows it: its replicas and its write pipeline."""

    info: ContainerInfo
    replicas: tuple[ContainerReplica, ...]
    pipeline: PipelineView | None


def pipeline_members(proto: hdds_pb2.Pipeline, field: str = "pipeline") -> dict[DatanodeID, DatanodeDetails]:
    """The members a pipeline message names in full, by uuid."""
    return {
        m.uuid: datanode_details_from_proto(m, f"{field}.members[{i}]")
        for i, m in enumerate(proto.members)
        if m.ipAddress or m.hostName
    }


# ------------------------------------------------------------------ containers
@guarded("ContainerInfo")
def container_info_to_proto(info: ContainerInfo) -> hdds_pb2.ContainerInfoProto:
    rtype, factor, ec = replication_to_proto(info.replication_config, "replication_config")
    proto = hdds_pb2.ContainerInfoProto(
        containerID=container_id(info.container_id, "container_id"),
        state=enum_to_proto(LifeCycleState, info.state, "state"),
        usedBytes=uint64(info.used_bytes, "used_bytes"),
        numberOfKeys=uint64(info.number_of_keys, "number_of_keys"),
        stateEnterTime=integer(info.state_entered_ms, "state_entered_ms"),
        owner=text(info.owner, "owner", required=False),
        sequenceId=integer(info.sequence_id, "sequence_id"),
        replicationType=rtype,
        replicationFactor=factor,
        suppressed=flag(info.suppressed, "suppressed"),
    )
    if ec is not None:
        proto.ecReplicationConfig.CopyFrom(ec)
    if info.pipeline_id is not None:
        proto.pipelineID.CopyFrom(pipeline_id_to_proto(info.pipeline_id, "pipeline_id"))
    return proto


def container_info_from_proto(
    proto: hdds_pb2.ContainerInfoProto, field: str = "containerInfo"
) -> ContainerInfo:
    return ContainerInfo(
        container_id=container_id(proto.containerID, f"{field}.containerID"),
        state=enum_from_proto(LifeCycleState, proto.state, f"{field}.state"),
        state_entered_ms=integer(proto.stateEnterTime, f"{field}.stateEnterTime"),
        pipeline_id=pipeline_id_from_proto(proto, "pipelineID", field)
        if proto.HasField("pipelineID")
        else None,
        replication_config=replication_from_proto(
            proto.replicationType,
            proto.replicationFactor,
            optional_message(proto, "ecReplicationConfig"),
            field,
            "replicationType",
            "replicationFactor",
        ),
        owner=proto.owner,
        used_bytes=proto.usedBytes,
        number_of_keys=proto.numberOfKeys,
        sequence_id=integer(proto.sequenceId, f"{field}.sequenceId"),
        suppressed=proto.suppressed,
    )


@guarded("ContainerReplica")
def container_replica_info_to_proto(
    replica: ContainerReplica, details: DatanodeDetails | None = None
) -> admin_pb2.SCMContainerReplicaProto:
    """One replica as `container info` shows it; `details` names its datanode in full (else by uuid)."""
    if details is not None and details.uuid != replica.datanode:
        raise ProtocolError(
            "details", f"are of {details.uuid}, not of the replica's datanode {replica.datanode}"
        )
    return admin_pb2.SCMContainerReplicaProto(
        containerID=container_id(replica.container_id, "container_id"),
        state=ReplicaState(replica.state).name,
        datanodeDetails=(
            datanode_details_to_proto(details, "details")
            if details is not None
            else datanode_ref_to_proto(replica.datanode, None, "datanode")
        ),
        placeOfBirth=text(replica.origin_node_id, "origin_node_id", required=False),
        sequenceID=integer(replica.sequence_id, "sequence_id"),
        keyCount=integer(replica.key_count, "key_count"),
        bytesUsed=integer(replica.bytes_used, "bytes_used"),
        replicaIndex=integer(replica.replica_index, "replica_index"),
        isEmpty=flag(replica.is_empty, "is_empty"),
        dataChecksum=uint64(replica.data_checksum, "data_checksum"),
    )


def container_replica_info_from_proto(
    proto: admin_pb2.SCMContainerReplicaProto, field: str = "replica"
) -> ContainerReplica:
    if proto.state not in ReplicaState.__members__:
        raise ProtocolError(
            f"{field}.state", "is missing" if not proto.state else f"unknown state {proto.state!r}"
        )
    return ContainerReplica(
        container_id=container_id(proto.containerID, f"{field}.containerID"),
        datanode=datanode_ref_from_proto(proto.datanodeDetails, f"{field}.datanodeDetails"),
        state=ReplicaState[proto.state],
        origin_node_id=proto.placeOfBirth,
        sequence_id=integer(proto.sequenceID, f"{field}.sequenceID"),
        key_count=integer(proto.keyCount, f"{field}.keyCount"),
        bytes_used=integer(proto.bytesUsed, f"{field}.bytesUsed"),
        replica_index=integer(proto.replicaIndex, f"{field}.replicaIndex"),
        is_empty=proto.isEmpty,
        data_checksum=proto.dataChecksum,
    )


# ------------------------------------------------------------------ datanodes
_NO_LAYOUT = LayoutVersion(0, 0)


@dataclass(frozen=True, slots=True)
class DatanodeAdminProgress:
    """How far a node leaving service has got (the admin monitor's per-node gauges): it may finish only
    when no container on it is under-replicated or unclosed any more (DatanodeAdminMonitorImpl)."""

    under_replicated: int = 0
    unclosed: int = 0
    sufficiently_replicated: int = 0
    pipelines_waiting_to_close: int = 0

    @property
    def containers_left(self) -> int:
        return self.under_replicated + self.unclosed


@guarded("DatanodeAdminProgress")
def admin_progress_to_proto(progress: DatanodeAdminProgress) -> admin_pb2.DatanodeAdminProgressProto:
    return admin_pb2.DatanodeAdminProgressProto(
        containersLeft=uint64(progress.containers_left, "containers_left"),
        underReplicatedContainers=uint64(progress.under_replicated, "under_replicated"),
        unclosedContainers=uint64(progress.unclosed, "unclosed"),
        sufficientlyReplicatedContainers=uint64(progress.sufficiently_replicated, "sufficiently_replicated"),
        pipelinesWaitingToClose=uint32(progress.pipelines_waiting_to_close, "pipelines_waiting_to_close"),
    )


def admin_progress_from_proto(
    proto: admin_pb2.DatanodeAdminProgressProto, field: str = "adminProgress"
) -> DatanodeAdminProgress:
    progress = DatanodeAdminProgress(
        proto.underReplicatedContainers,
        proto.unclosedContainers,
        proto.sufficientlyReplicatedContainers,
        proto.pipelinesWaitingToClose,
    )
    if proto.containersLeft != progress.containers_left:
        raise ProtocolError(
            f"{field}.containersLeft",
            f"is {proto.containersLeft}, not underReplicated + unclosed = {progress.containers_left}",
        )
    return progress


@dataclass(frozen=True, slots=True)
class DatanodeListing:
    """One row of `pyozone admin datanode list`: a datanode as the admin protocol's Node carries it."""

    details: DatanodeDetails
    health: NodeState
    operational_state: NodeOperationalState
    op_state_expiry_epoch_sec: int = 0
    last_heartbeat_wall_ms: int = 0
    pipeline_count: int = 0
    container_count: int = 0
    capacity: int = 0
    used: int = 0
    remaining: int = 0
    healthy_volumes: int = 0
    failed_volumes: int = 0
    layout: LayoutVersion = _NO_LAYOUT
    admin_progress: DatanodeAdminProgress | None = None

    @classmethod
    def of(
        cls,
        info: DatanodeInfo,
        pipeline_count: int = 0,
        container_count: int = 0,
        admin_progress: DatanodeAdminProgress | None = None,
    ) -> DatanodeListing:
        """What NodeManager knows of a node, plus the counts the pipeline and container managers keep
        and, for a node leaving service, the admin monitor's progress."""
        return cls(
            details=info.details,
            health=info.status.health,
            operational_state=info.status.operational_state,
            op_state_expiry_epoch_sec=info.status.op_state_expiry_epoch_sec,
            last_heartbeat_wall_ms=info.last_heartbeat_wall_ms,
            pipeline_count=pipeline_count,
            container_count=container_count,
            capacity=info.capacity(),
            used=info.used(),
            remaining=info.remaining(),
            healthy_volumes=info.healthy_volume_count(),
            failed_volumes=info.failed_volume_count(),
            layout=info.layout,
            admin_progress=admin_progress,
        )


@guarded("DatanodeListing")
def node_to_proto(node: DatanodeListing) -> admin_pb2.Node:
    proto = admin_pb2.Node(
        nodeID=datanode_details_to_proto(node.details, "details"),
        nodeStates=[enum_to_proto(NodeState, node.health, "health")],
        nodeOperationalStates=[
            enum_to_proto(NodeOperationalState, node.operational_state, "operational_state")
        ],
        opStateExpiryEpochSeconds=integer(node.op_state_expiry_epoch_sec, "op_state_expiry_epoch_sec"),
        lastHeartbeatTime=integer(node.last_heartbeat_wall_ms, "last_heartbeat_wall_ms"),
        pipelineCount=uint32(node.pipeline_count, "pipeline_count"),
        containerCount=uint64(node.container_count, "container_count"),
        capacity=uint64(node.capacity, "capacity"),
        used=uint64(node.used, "used"),
        remaining=uint64(node.remaining, "remaining"),
        healthyVolumeCount=uint32(node.healthy_volumes, "healthy_volumes"),
        failedVolumeCount=uint32(node.failed_volumes, "failed_volumes"),
        metadataLayoutVersion=uint32(node.layout.metadata_layout_version, "layout.metadata_layout_version"),
        softwareLayoutVersion=uint32(node.layout.software_layout_version, "layout.software_layout_version"),
    )
    if node.admin_progress is not None:
        proto.adminProgress.CopyFrom(admin_progress_to_proto(node.admin_progress))
    return proto


def node_from_proto(proto: admin_pb2.Node, field: str = "node") -> DatanodeListing:
    if len(proto.nodeStates) != 1:
        raise ProtocolError(f"{field}.nodeStates", f"must hold one state, has {len(proto.nodeStates)}")
    if len(proto.nodeOperationalStates) != 1:
        raise ProtocolError(
            f"{field}.nodeOperationalStates", f"must hold one state, has {len(proto.nodeOperationalStates)}"
        )
    if not proto.HasField("nodeID"):
        raise ProtocolError(f"{field}.nodeID", "is missing")
    return DatanodeListing(
        details=datanode_details_from_proto(proto.nodeID, f"{field}.nodeID"),
        health=enum_from_proto(NodeState, proto.nodeStates[0], f"{field}.nodeStates[0]"),
        operational_state=enum_from_proto(
            NodeOperationalState, proto.nodeOperationalStates[0], f"{field}.nodeOperationalStates[0]"
        ),
        op_state_expiry_epoch_sec=integer(
            proto.opStateExpiryEpochSeconds, f"{field}.opStateExpiryEpochSeconds"
        ),
        last_heartbeat_wall_ms=integer(proto.lastHeartbeatTime, f"{field}.lastHeartbeatTime"),
        pipeline_count=proto.pipelineCount,
        container_count=proto.containerCount,
        capacity=proto.capacity,
        used=proto.used,
        remaining=proto.remaining,
        healthy_volumes=proto.healthyVolumeCount,
        failed_volumes=proto.failedVolumeCount,
        layout=LayoutVersion(proto.metadataLayoutVersion, proto.softwareLayoutVersion),
        admin_progress=admin_progress_from_proto(proto.adminProgress, f"{field}.adminProgress")
        if proto.HasField("adminProgress")
        else None,
    )


# ------------------------------------------------------------------ safe mode
@guarded("RuleStatus")
def rule_status_to_proto(status: RuleStatus) -> admin_pb2.SafeModeRuleStatusProto:
    return admin_pb2.SafeModeRuleStatusProto(
        ruleName=text(status.name, "name"),
        validate=flag(status.validated, "validated"),
        statusText=text(status.status_text, "status_text", required=False),
        preCheck=flag(status.pre_check, "pre_check"),
    )


def rule_status_from_proto(proto: admin_pb2.SafeModeRuleStatusProto, field: str = "rule") -> RuleStatus:
    return RuleStatus(
        text(proto.ruleName, f"{field}.ruleName"), proto.validate, proto.preCheck, proto.statusText
    )


# ------------------------------------------------------------------ replication manager
@guarded("ReplicationManagerReport")
def rm_report_to_proto(report: ReplicationManagerReport) -> admin_pb2.ReplicationManagerReportProto:
    """Every stat (all lifecycle and health states, zeros included) and every non-empty sample."""
    data = report.to_dict()
    proto = admin_pb2.ReplicationManagerReportProto(
        timestamp=integer(data["reportTimeStamp"], "timestamp"),
        sampleLimit=uint32(data["sampleLimit"], "sample_limit"),
    )
    for name, count in data["stats"].items():
        proto.stat.append(admin_pb2.KeyIntValue(key=name, value=integer(count, f"stats[{name}]")))
    for name, ids in data["samples"].items():
        proto.statSample.append(
            admin_pb2.KeyContainerIDList(
                key=name, containerID=[container_id(i, f"samples[{name}]") for i in ids]
            )
        )
    return proto


def rm_report_from_proto(
    proto: admin_pb2.ReplicationManagerReportProto, field: str = "report"
) -> ReplicationManagerReport:
    """Stats and samples of states this version does not know are dropped (a newer SCM may add some),
    as ReplicationManagerReport.from_dict does; malformed counts and ids are refused."""
    stats = {s.key: integer(s.value, f"{field}.stat[{s.key}]") for s in proto.stat}
    samples = {
        s.key: [container_id(i, f"{field}.statSample[{s.key}]") for i in s.containerID]
        for s in proto.statSample
    }
    data = {
        "reportTimeStamp": integer(proto.timestamp, f"{field}.timestamp"),
        "sampleLimit": proto.sampleLimit,
        "stats": stats,
        "samples": samples,
    }
    return ReplicationManagerReport.from_dict(data)
