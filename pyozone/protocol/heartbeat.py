"""Converters for the datanode -> SCM protocol: reports, the heartbeat, registration and version.

Every `*_from_proto` checks the message and raises ProtocolError naming the bad field; every `*_to_proto`
checks the dataclass the same way. For any valid value v, `x_from_proto(x_to_proto(v)) == v`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from google.protobuf.descriptor import ServiceDescriptor

from pyozone.hdds.commands import SCMCommand
from pyozone.hdds.datanode import DatanodeDetails, LayoutVersion, NodeReport, StorageReport
from pyozone.hdds.errors import ProtocolError
from pyozone.hdds.messages import (
    CommandStatusReport,
    ContainerAction,
    ContainerActionReason,
    ContainerReplicaReport,
    DeleteBlockTransactionResult,
    Heartbeat,
    PipelineAction,
    PipelineReport,
)
from pyozone.hdds.states import (
    CommandStatus,
    NodeOperationalState,
    ReplicaState,
    SCMCommandType,
)
from pyozone.proto import ScmServerDatanodeHeartbeatProtocol_pb2 as pb
from pyozone.protocol.commands import scm_command_from_proto, scm_command_to_proto
from pyozone.protocol.common import (
    Resolver,
    container_id,
    datanode_details_from_proto,
    datanode_details_to_proto,
    enum_from_proto,
    enum_to_proto,
    flag,
    guarded,
    int32,
    integer,
    layout_version_from_proto,
    layout_version_to_proto,
    optional_message,
    pipeline_id_from_proto,
    pipeline_id_to_proto,
    sub_message,
    text,
    uint32,
    uint64,
)


# ------------------------------------------------------------------ node report
@guarded("StorageReport")
def storage_report_to_proto(report: StorageReport, field: str = "StorageReport") -> pb.StorageReportProto:
    return pb.StorageReportProto(
        storageUuid=text(report.storage_uuid, f"{field}.storage_uuid"),
        storageLocation=text(report.location, f"{field}.location"),
        capacity=uint64(report.capacity, f"{field}.capacity"),
        scmUsed=uint64(report.used, f"{field}.used"),
        remaining=uint64(report.remaining, f"{field}.remaining"),
        failed=flag(report.failed, f"{field}.failed"),
        committed=uint64(report.committed, f"{field}.committed"),
        freeSpaceToSpare=uint64(report.free_space_to_spare, f"{field}.free_space_to_spare"),
    )


def storage_report_from_proto(proto: pb.StorageReportProto, field: str = "storageReport") -> StorageReport:
    return StorageReport(
        storage_uuid=text(proto.storageUuid, f"{field}.storageUuid"),
        location=text(proto.storageLocation, f"{field}.storageLocation"),
        capacity=proto.capacity,
        used=proto.scmUsed,
        remaining=proto.remaining,
        failed=proto.failed,
        committed=proto.committed,
        free_space_to_spare=proto.freeSpaceToSpare,
    )


@guarded("StorageReport")
def metadata_storage_report_to_proto(
    report: StorageReport, field: str = "StorageReport"
) -> pb.MetadataStorageReportProto:
    return pb.MetadataStorageReportProto(
        storageUuid=text(report.storage_uuid, f"{field}.storage_uuid", required=False),
        storageLocation=text(report.location, f"{field}.location"),
        capacity=uint64(report.capacity, f"{field}.capacity"),
        scmUsed=uint64(report.used, f"{field}.used"),
        remaining=uint64(report.remaining, f"{field}.remaining"),
        failed=flag(report.failed, f"{field}.failed"),
    )


def metadata_storage_report_from_proto(
    proto: pb.MetadataStorageReportProto, field: str = "metadataStorageReport"
) -> StorageReport:
    return StorageReport(
        storage_uuid=proto.storageUuid,
        location=text(proto.storageLocation, f"{field}.storageLocation"),
        capacity=proto.capacity,
        used=proto.scmUsed,
        remaining=proto.remaining,
        failed=proto.failed,
    )


def node_report_to_proto(report: NodeReport, field: str = "NodeReport") -> pb.NodeReportProto:
    proto = pb.NodeReportProto()
    for i, storage in enumerate(report.storage):
        proto.storageReport.append(storage_report_to_proto(storage, f"{field}.storage[{i}]"))
    for i, storage in enumerate(report.metadata_storage):
        proto.metadataStorageReport.append(
            metadata_storage_report_to_proto(storage, f"{field}.metadata_storage[{i}]")
        )
    return proto


def node_report_from_proto(proto: pb.NodeReportProto, field: str = "nodeReport") -> NodeReport:
    return NodeReport(
        storage=tuple(
            storage_report_from_proto(s, f"{field}.storageReport[{i}]")
            for i, s in enumerate(proto.storageReport)
        ),
        metadata_storage=tuple(
            metadata_storage_report_from_proto(s, f"{field}.metadataStorageReport[{i}]")
            for i, s in enumerate(proto.metadataStorageReport)
        ),
    )


# ------------------------------------------------------------------ replicas
@guarded("ContainerReplicaReport")
def container_replica_to_proto(
    report: ContainerReplicaReport, field: str = "ContainerReplicaReport"
) -> pb.ContainerReplicaProto:
    return pb.ContainerReplicaProto(
        containerID=container_id(report.container_id, f"{field}.container_id"),
        state=enum_to_proto(ReplicaState, report.state, f"{field}.state"),
        used=integer(report.used_bytes, f"{field}.used_bytes"),
        keyCount=integer(report.key_count, f"{field}.key_count"),
        blockCommitSequenceId=uint64(report.sequence_id, f"{field}.sequence_id"),
        originNodeId=text(report.origin_node_id, f"{field}.origin_node_id", required=False),
        replicaIndex=int32(report.replica_index, f"{field}.replica_index"),
        isEmpty=flag(report.is_empty, f"{field}.is_empty"),
        dataChecksum=uint64(report.data_checksum, f"{field}.data_checksum"),
    )


def container_replica_from_proto(
    proto: pb.ContainerReplicaProto, field: str = "containerReplica"
) -> ContainerReplicaReport:
    return ContainerReplicaReport(
        container_id=container_id(proto.containerID, f"{field}.containerID"),
        state=enum_from_proto(ReplicaState, proto.state, f"{field}.state"),
        sequence_id=proto.blockCommitSequenceId,
        origin_node_id=proto.originNodeId,
        key_count=integer(proto.keyCount, f"{field}.keyCount"),
        used_bytes=integer(proto.used, f"{field}.used"),
        replica_index=integer(proto.replicaIndex, f"{field}.replicaIndex"),
        is_empty=proto.isEmpty,
        data_checksum=proto.dataChecksum,
    )


def _replicas_to_proto(reports: Sequence[ContainerReplicaReport], target: Any, field: str) -> None:
    for i, report in enumerate(reports):
        target.append(container_replica_to_proto(report, f"{field}[{i}]"))


def _replicas_from_proto(protos: Sequence[Any], field: str) -> tuple[ContainerReplicaReport, ...]:
    return tuple(container_replica_from_proto(p, f"{field}[{i}]") for i, p in enumerate(protos))


# ------------------------------------------------------------------ actions
@guarded("ContainerAction")
def container_action_to_proto(action: ContainerAction, field: str = "ContainerAction") -> pb.ContainerAction:
    if not isinstance(action.reason, ContainerActionReason):
        raise ProtocolError(f"{field}.reason", f"expected a ContainerActionReason, got {action.reason!r}")
    return pb.ContainerAction(
        containerID=container_id(action.container_id, f"{field}.container_id"),
        action=pb.ContainerAction.CLOSE,
        reason=action.reason.value,
    )


def container_action_from_proto(proto: pb.ContainerAction, field: str = "containerAction") -> ContainerAction:
    if proto.action != pb.ContainerAction.CLOSE:
        _bad_action(proto.action, f"{field}.action")
    try:
        reason = ContainerActionReason(proto.reason)
    except ValueError:
        problem = "is missing" if proto.reason == 0 else f"unknown reason {proto.reason}"
        raise ProtocolError(f"{field}.reason", problem) from None
    return ContainerAction(container_id(proto.containerID, f"{field}.containerID"), reason)


@guarded("PipelineAction")
def pipeline_action_to_proto(action: PipelineAction, field: str = "PipelineAction") -> pb.PipelineAction:
    return pb.PipelineAction(
        action=pb.PipelineAction.CLOSE,
        closePipeline=pb.ClosePipelineInfo(
            pipelineID=pipeline_id_to_proto(action.pipeline_id, f"{field}.pipeline_id"),
            reason=pb.ClosePipelineInfo.PIPELINE_FAILED,
            detailedReason=text(action.reason, f"{field}.reason", required=False),
        ),
    )


def pipeline_action_from_proto(proto: pb.PipelineAction, field: str = "pipelineAction") -> PipelineAction:
    """A CLOSE action; its detailedReason becomes the reason (the reason enum says little more)."""
    if proto.action != pb.PipelineAction.CLOSE:
        _bad_action(proto.action, f"{field}.action")
    info = sub_message(proto, "closePipeline", field)
    path = f"{field}.closePipeline"
    if proto.closePipeline.reason not in pb.ClosePipelineInfo.Reason.values():
        raise ProtocolError(f"{path}.reason", f"unknown reason {proto.closePipeline.reason}")
    return PipelineAction(pipeline_id_from_proto(info, "pipelineID", path), info.detailedReason)


def _bad_action(value: int, field: str) -> None:
    raise ProtocolError(field, "is missing" if value == 0 else f"unknown action {value} (only CLOSE exists)")


# ------------------------------------------------------------------ pipeline reports
@guarded("PipelineReport")
def pipeline_report_to_proto(report: PipelineReport, field: str = "PipelineReport") -> pb.PipelineReport:
    return pb.PipelineReport(
        pipelineID=pipeline_id_to_proto(report.pipeline_id, f"{field}.pipeline_id"),
        isLeader=flag(report.is_leader, f"{field}.is_leader"),
        bytesWritten=uint64(report.bytes_written, f"{field}.bytes_written"),
    )


def pipeline_report_from_proto(proto: pb.PipelineReport, field: str = "pipelineReport") -> PipelineReport:
    return PipelineReport(
        pipeline_id_from_proto(proto, "pipelineID", field), proto.isLeader, proto.bytesWritten
    )


def _pipeline_reports_to_proto(reports: Sequence[PipelineReport], field: str) -> pb.PipelineReportsProto:
    proto = pb.PipelineReportsProto()
    for i, report in enumerate(reports):
        proto.pipelineReport.append(pipeline_report_to_proto(report, f"{field}[{i}]"))
    return proto


def _pipeline_reports_from_proto(proto: pb.PipelineReportsProto, field: str) -> tuple[PipelineReport, ...]:
    return tuple(
        pipeline_report_from_proto(r, f"{field}.pipelineReport[{i}]")
        for i, r in enumerate(proto.pipelineReport)
    )


# ------------------------------------------------------------------ command status
@guarded("CommandStatusReport")
def command_status_to_proto(
    report: CommandStatusReport, datanode_uuid: str = "", field: str = "CommandStatusReport"
) -> pb.CommandStatus:
    """A command's status; a deleteBlocksCommand's carries its per-transaction ACKs (from `datanode_uuid`)."""
    proto = pb.CommandStatus(
        cmdId=integer(report.command_id, f"{field}.command_id", 1),
        status=enum_to_proto(CommandStatus, report.status, f"{field}.status"),
        type=enum_to_proto(SCMCommandType, report.type, f"{field}.type"),
    )
    if report.block_deletion_results or report.type is SCMCommandType.deleteBlocksCommand:
        ack = proto.blockDeletionAck
        ack.dnId = datanode_uuid
        for i, result in enumerate(report.block_deletion_results):
            path = f"{field}.block_deletion_results[{i}]"
            ack.results.add(
                txID=integer(result.tx_id, f"{path}.tx_id", 1),
                containerID=container_id(result.container_id, f"{path}.container_id"),
                success=flag(result.success, f"{path}.success"),
            )
    return proto


def command_status_from_proto(proto: pb.CommandStatus, field: str = "cmdStatus") -> CommandStatusReport:
    results: tuple[DeleteBlockTransactionResult, ...] = ()
    if proto.HasField("blockDeletionAck"):
        path = f"{field}.blockDeletionAck.results"
        results = tuple(
            DeleteBlockTransactionResult(
                integer(r.txID, f"{path}[{i}].txID", 1),
                container_id(r.containerID, f"{path}[{i}].containerID"),
                r.success,
            )
            for i, r in enumerate(proto.blockDeletionAck.results)
        )
    return CommandStatusReport(
        command_id=integer(proto.cmdId, f"{field}.cmdId", 1),
        type=enum_from_proto(SCMCommandType, proto.type, f"{field}.type"),
        status=enum_from_proto(CommandStatus, proto.status, f"{field}.status"),
        block_deletion_results=results,
    )


# ------------------------------------------------------------------ queue report
@guarded("command_queue_report")
def command_queue_report_to_proto(
    counts: Mapping[SCMCommandType, int], field: str = "command_queue_report"
) -> pb.CommandQueueReportProto:
    proto = pb.CommandQueueReportProto()
    for command_type in sorted(counts):
        path = f"{field}[{getattr(command_type, 'name', command_type)}]"
        proto.command.append(enum_to_proto(SCMCommandType, command_type, path))
        proto.count.append(uint32(counts[command_type], path))
    return proto


def command_queue_report_from_proto(
    proto: pb.CommandQueueReportProto, field: str = "commandQueueReport"
) -> dict[SCMCommandType, int]:
    if len(proto.command) != len(proto.count):
        raise ProtocolError(
            f"{field}.count", f"has {len(proto.count)} entries for {len(proto.command)} command types"
        )
    counts: dict[SCMCommandType, int] = {}
    for i, (value, count) in enumerate(zip(proto.command, proto.count, strict=True)):
        command_type = enum_from_proto(SCMCommandType, value, f"{field}.command[{i}]")
        if command_type in counts:
            raise ProtocolError(f"{field}.command[{i}]", f"{command_type.name} is listed twice")
        counts[command_type] = count
    return counts


# ------------------------------------------------------------------ heartbeat
@guarded("Heartbeat")
def heartbeat_to_proto(hb: Heartbeat) -> pb.SCMHeartbeatRequestProto:
    """Ozone's SCMHeartbeatRequestProto. Empty repeated reports are left out; None reports are not sent.

    The wire carries one operational state, in datanodeDetails: `hb.persisted_op_state` must be None (not
    reported; then `hb.datanode` must be IN_SERVICE) or equal `hb.datanode.persisted_op_state`.
    """
    details = datanode_details_to_proto(hb.datanode, "datanode")
    if hb.persisted_op_state is None:
        if hb.datanode.persisted_op_state is not NodeOperationalState.IN_SERVICE:
            raise ProtocolError(
                "persisted_op_state", "is None but datanode.persisted_op_state is not IN_SERVICE"
            )
        details.ClearField("persistedOpState")
    elif hb.persisted_op_state is not hb.datanode.persisted_op_state:
        raise ProtocolError(
            "persisted_op_state",
            f"{hb.persisted_op_state!r} differs from datanode.persisted_op_state "
            f"{hb.datanode.persisted_op_state!r}; the heartbeat carries one",
        )
    proto = pb.SCMHeartbeatRequestProto(datanodeDetails=details)
    if hb.node_report is not None:
        proto.nodeReport.CopyFrom(node_report_to_proto(hb.node_report, "node_report"))
    if hb.container_report is not None:
        proto.containerReport.SetInParent()
        _replicas_to_proto(hb.container_report, proto.containerReport.reports, "container_report")
    if hb.incremental_container_reports:
        _replicas_to_proto(
            hb.incremental_container_reports,
            proto.incrementalContainerReport.add().report,
            "incremental_container_reports",
        )
    if hb.command_status_reports:
        statuses = proto.commandStatusReports.add()
        for i, report in enumerate(hb.command_status_reports):
            statuses.cmdStatus.append(
                command_status_to_proto(report, hb.datanode.uuid, f"command_status_reports[{i}]")
            )
    for i, container_action in enumerate(hb.container_actions):
        proto.containerActions.containerActions.append(
            container_action_to_proto(container_action, f"container_actions[{i}]")
        )
    for i, pipeline_action in enumerate(hb.pipeline_actions):
        proto.pipelineActions.pipelineActions.append(
            pipeline_action_to_proto(pipeline_action, f"pipeline_actions[{i}]")
        )
    if hb.pipeline_reports is not None:
        proto.pipelineReports.CopyFrom(_pipeline_reports_to_proto(hb.pipeline_reports, "pipeline_reports"))
    if hb.layout is not None:
        proto.dataNodeLayoutVersion.CopyFrom(layout_version_to_proto(hb.layout, "layout"))
    if hb.command_queue_report is not None:
        proto.commandQueueReport.CopyFrom(
            command_queue_report_to_proto(hb.command_queue_report, "command_queue_report")
        )
    return proto


def heartbeat_from_proto(proto: pb.SCMHeartbeatRequestProto) -> Heartbeat:
    """The heartbeat as the SCM core takes it; all incremental reports (and statuses) are joined in order."""
    details_proto = sub_message(proto, "datanodeDetails", "")
    details = datanode_details_from_proto(details_proto, "datanodeDetails")
    node_report = optional_message(proto, "nodeReport")
    container_report = optional_message(proto, "containerReport")
    pipeline_reports = optional_message(proto, "pipelineReports")
    layout = optional_message(proto, "dataNodeLayoutVersion")
    queue = optional_message(proto, "commandQueueReport")
    icrs: list[ContainerReplicaReport] = []
    for i, icr in enumerate(proto.incrementalContainerReport):
        icrs.extend(_replicas_from_proto(icr.report, f"incrementalContainerReport[{i}].report"))
    statuses = [
        command_status_from_proto(s, f"commandStatusReports[{i}].cmdStatus[{j}]")
        for i, group in enumerate(proto.commandStatusReports)
        for j, s in enumerate(group.cmdStatus)
    ]
    return Heartbeat(
        datanode=details,
        node_report=None if node_report is None else node_report_from_proto(node_report, "nodeReport"),
        container_report=(
            None
            if container_report is None
            else _replicas_from_proto(container_report.reports, "containerReport.reports")
        ),
        incremental_container_reports=tuple(icrs),
        command_status_reports=tuple(statuses),
        container_actions=tuple(
            container_action_from_proto(a, f"containerActions.containerActions[{i}]")
            for i, a in enumerate(proto.containerActions.containerActions)
        ),
        pipeline_actions=tuple(
            pipeline_action_from_proto(a, f"pipelineActions.pipelineActions[{i}]")
            for i, a in enumerate(proto.pipelineActions.pipelineActions)
        ),
        pipeline_reports=(
            None
            if pipeline_reports is None
            else _pipeline_reports_from_proto(pipeline_reports, "pipelineReports")
        ),
        layout=None if layout is None else layout_version_from_proto(layout, "dataNodeLayoutVersion"),
        command_queue_report=None
        if queue is None
        else command_queue_report_from_proto(queue, "commandQueueReport"),
        persisted_op_state=details.persisted_op_state if details_proto.HasField("persistedOpState") else None,
    )


@dataclass(frozen=True, slots=True)
class HeartbeatResponse:
    """SCM's answer to a heartbeat: the commands for the datanode to run."""

    datanode_uuid: str
    commands: tuple[SCMCommand, ...] = ()
    term: int = 0


@guarded("HeartbeatResponse")
def heartbeat_response_to_proto(
    response: HeartbeatResponse, resolve: Resolver | None = None
) -> pb.SCMHeartbeatResponseProto:
    """`resolve` lets createPipelineCommand name its members in full (see scm_command_to_proto)."""
    proto = pb.SCMHeartbeatResponseProto(
        datanodeUUID=text(response.datanode_uuid, "datanode_uuid"), term=integer(response.term, "term")
    )
    for i, command in enumerate(response.commands):
        proto.commands.append(scm_command_to_proto(command, resolve, f"commands[{i}]"))
    return proto


def heartbeat_response_from_proto(proto: pb.SCMHeartbeatResponseProto) -> HeartbeatResponse:
    return HeartbeatResponse(
        datanode_uuid=text(proto.datanodeUUID, "datanodeUUID"),
        commands=tuple(scm_command_from_proto(c, f"commands[{i}]") for i, c in enumerate(proto.commands)),
        term=integer(proto.term, "term"),
    )


def heartbeat_commands_from_proto(
    proto: pb.SCMHeartbeatResponseProto,
) -> tuple[HeartbeatResponse, tuple[ProtocolError, ...]]:
    """SCM's answer as the datanode takes it: the commands it can read, and why each other one cannot be
    read (the datanode skips those: one command it cannot read must not hold up the others)."""
    commands: list[SCMCommand] = []
    unreadable: list[ProtocolError] = []
    for i, message in enumerate(proto.commands):
        try:
            commands.append(scm_command_from_proto(message, f"commands[{i}]"))
        except ProtocolError as e:
            unreadable.append(e)
    return HeartbeatResponse(proto.datanodeUUID, tuple(commands), proto.term), tuple(unreadable)


# ------------------------------------------------------------------ registration
@dataclass(frozen=True, slots=True)
class RegisterRequest:
    """What a datanode sends to register: the arguments of StorageContainerManager.register."""

    datanode: DatanodeDetails
    node_report: NodeReport | None = None
    container_report: tuple[ContainerReplicaReport, ...] = ()
    pipeline_reports: tuple[PipelineReport, ...] = ()
    layout: LayoutVersion | None = None
    setup_time_ms: int = 0
    revision: str = ""
    cluster_id: str = ""  # empty: a datanode that has not joined a cluster yet


@guarded("RegisterRequest")
def register_request_to_proto(request: RegisterRequest) -> pb.SCMRegisterRequestProto:
    proto = pb.SCMRegisterRequestProto()
    extended = proto.extendedDatanodeDetails
    extended.datanodeDetails.CopyFrom(datanode_details_to_proto(request.datanode, "datanode"))
    extended.setupTime = integer(request.setup_time_ms, "setup_time_ms")
    extended.revision = text(request.revision, "revision", required=False)
    if request.node_report is not None:
        proto.nodeReport.CopyFrom(node_report_to_proto(request.node_report, "node_report"))
    proto.containerReport.SetInParent()
    _replicas_to_proto(request.container_report, proto.containerReport.reports, "container_report")
    proto.pipelineReports.CopyFrom(_pipeline_reports_to_proto(request.pipeline_reports, "pipeline_reports"))
    if request.layout is not None:
        proto.dataNodeLayoutVersion.CopyFrom(layout_version_to_proto(request.layout, "layout"))
    proto.clusterID = text(request.cluster_id, "cluster_id", required=False)
    return proto


def register_request_from_proto(proto: pb.SCMRegisterRequestProto) -> RegisterRequest:
    extended = sub_message(proto, "extendedDatanodeDetails", "")
    details = datanode_details_from_proto(
        sub_message(extended, "datanodeDetails", "extendedDatanodeDetails"),
        "extendedDatanodeDetails.datanodeDetails",
    )
    node_report = optional_message(proto, "nodeReport")
    layout = optional_message(proto, "dataNodeLayoutVersion")
    return RegisterRequest(
        datanode=details,
        node_report=None if node_report is None else node_report_from_proto(node_report, "nodeReport"),
        container_report=_replicas_from_proto(proto.containerReport.reports, "containerReport.reports"),
        pipeline_reports=_pipeline_reports_from_proto(proto.pipelineReports, "pipelineReports"),
        layout=None if layout is None else layout_version_from_proto(layout, "dataNodeLayoutVersion"),
        setup_time_ms=integer(extended.setupTime, "extendedDatanodeDetails.setupTime"),
        revision=extended.revision,
        cluster_id=proto.clusterID,
    )


@dataclass(frozen=True, slots=True)
class RegisterResponse:
    """SCM's answer to a registration; `error` is empty on success (Ozone's errorCode success), else why the
    node was refused (errorNodeNotPermitted)."""

    cluster_id: str
    datanode_uuid: str
    network_location: str = ""
    hostname: str = ""
    ip_address: str = ""
    error: str = ""

    @property
    def success(self) -> bool:
        return not self.error


_Registered = pb.SCMRegisteredResponseProto


@guarded("RegisterResponse")
def register_response_to_proto(response: RegisterResponse) -> pb.SCMRegisteredResponseProto:
    return _Registered(
        errorCode=_Registered.errorNodeNotPermitted if response.error else _Registered.success,
        errorMessage=text(response.error, "error", required=False),
        datanodeUUID=text(response.datanode_uuid, "datanode_uuid"),
        clusterID=text(response.cluster_id, "cluster_id"),
        networkLocation=text(response.network_location, "network_location", required=False),
        hostname=text(response.hostname, "hostname", required=False),
        ipAddress=text(response.ip_address, "ip_address", required=False),
    )


def register_response_from_proto(proto: pb.SCMRegisteredResponseProto) -> RegisterResponse:
    if proto.errorCode == _Registered.success:
        error = ""
    elif proto.errorCode == _Registered.errorNodeNotPermitted:
        error = proto.errorMessage or "errorNodeNotPermitted"
    else:
        problem = "is missing" if proto.errorCode == 0 else f"unknown error code {proto.errorCode}"
        raise ProtocolError("errorCode", problem)
    return RegisterResponse(
        cluster_id=text(proto.clusterID, "clusterID"),
        datanode_uuid=text(proto.datanodeUUID, "datanodeUUID"),
        network_location=proto.networkLocation,
        hostname=proto.hostname,
        ip_address=proto.ipAddress,
        error=error,
    )


# ------------------------------------------------------------------ version
DATANODE_SERVICE: ServiceDescriptor = pb.DESCRIPTOR.services_by_name[
    "StorageContainerDatanodeProtocolService"
]
"""SCM's service for datanodes: getVersion, register, sendHeartbeat."""


def version_request_to_proto() -> pb.SCMVersionRequestProto:
    """getVersion asks nothing."""
    return pb.SCMVersionRequestProto()


@dataclass(frozen=True, slots=True)
class VersionResponse:
    """SCM's answer to getVersion: which cluster this is, and SCM's layout version."""

    cluster_id: str
    scm_uuid: str
    layout: LayoutVersion
    software_version: int = 0


@guarded("VersionResponse")
def version_response_to_proto(response: VersionResponse) -> pb.SCMVersionResponseProto:
    return pb.SCMVersionResponseProto(
        softwareVersion=uint32(response.software_version, "software_version"),
        clusterID=text(response.cluster_id, "cluster_id"),
        scmUuid=text(response.scm_uuid, "scm_uuid"),
        scmLayoutVersion=layout_version_to_proto(response.layout, "layout"),
    )


def version_response_from_proto(proto: pb.SCMVersionResponseProto) -> VersionResponse:
    return VersionResponse(
        cluster_id=text(proto.clusterID, "clusterID"),
        scm_uuid=text(proto.scmUuid, "scmUuid"),
        layout=layout_version_from_proto(sub_message(proto, "scmLayoutVersion", ""), "scmLayoutVersion"),
        software_version=proto.softwareVersion,
    )
