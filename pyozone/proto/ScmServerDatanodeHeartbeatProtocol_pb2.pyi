from pyozone.proto import hdds_pb2 as _hdds_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ReplicationCommandPriority(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    REPLICATION_COMMAND_PRIORITY_UNSPECIFIED: _ClassVar[ReplicationCommandPriority]
    NORMAL: _ClassVar[ReplicationCommandPriority]
    LOW: _ClassVar[ReplicationCommandPriority]
REPLICATION_COMMAND_PRIORITY_UNSPECIFIED: ReplicationCommandPriority
NORMAL: ReplicationCommandPriority
LOW: ReplicationCommandPriority

class LayoutVersionProto(_message.Message):
    __slots__ = ("metadataLayoutVersion", "softwareLayoutVersion")
    METADATALAYOUTVERSION_FIELD_NUMBER: _ClassVar[int]
    SOFTWARELAYOUTVERSION_FIELD_NUMBER: _ClassVar[int]
    metadataLayoutVersion: int
    softwareLayoutVersion: int
    def __init__(self, metadataLayoutVersion: _Optional[int] = ..., softwareLayoutVersion: _Optional[int] = ...) -> None: ...

class SCMVersionRequestProto(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class SCMVersionResponseProto(_message.Message):
    __slots__ = ("softwareVersion", "keys", "clusterID", "scmUuid", "scmLayoutVersion")
    SOFTWAREVERSION_FIELD_NUMBER: _ClassVar[int]
    KEYS_FIELD_NUMBER: _ClassVar[int]
    CLUSTERID_FIELD_NUMBER: _ClassVar[int]
    SCMUUID_FIELD_NUMBER: _ClassVar[int]
    SCMLAYOUTVERSION_FIELD_NUMBER: _ClassVar[int]
    softwareVersion: int
    keys: _containers.RepeatedCompositeFieldContainer[_hdds_pb2.KeyValue]
    clusterID: str
    scmUuid: str
    scmLayoutVersion: LayoutVersionProto
    def __init__(self, softwareVersion: _Optional[int] = ..., keys: _Optional[_Iterable[_Union[_hdds_pb2.KeyValue, _Mapping]]] = ..., clusterID: _Optional[str] = ..., scmUuid: _Optional[str] = ..., scmLayoutVersion: _Optional[_Union[LayoutVersionProto, _Mapping]] = ...) -> None: ...

class SCMRegisterRequestProto(_message.Message):
    __slots__ = ("extendedDatanodeDetails", "nodeReport", "containerReport", "pipelineReports", "dataNodeLayoutVersion", "clusterID")
    EXTENDEDDATANODEDETAILS_FIELD_NUMBER: _ClassVar[int]
    NODEREPORT_FIELD_NUMBER: _ClassVar[int]
    CONTAINERREPORT_FIELD_NUMBER: _ClassVar[int]
    PIPELINEREPORTS_FIELD_NUMBER: _ClassVar[int]
    DATANODELAYOUTVERSION_FIELD_NUMBER: _ClassVar[int]
    CLUSTERID_FIELD_NUMBER: _ClassVar[int]
    extendedDatanodeDetails: _hdds_pb2.ExtendedDatanodeDetailsProto
    nodeReport: NodeReportProto
    containerReport: ContainerReportsProto
    pipelineReports: PipelineReportsProto
    dataNodeLayoutVersion: LayoutVersionProto
    clusterID: str
    def __init__(self, extendedDatanodeDetails: _Optional[_Union[_hdds_pb2.ExtendedDatanodeDetailsProto, _Mapping]] = ..., nodeReport: _Optional[_Union[NodeReportProto, _Mapping]] = ..., containerReport: _Optional[_Union[ContainerReportsProto, _Mapping]] = ..., pipelineReports: _Optional[_Union[PipelineReportsProto, _Mapping]] = ..., dataNodeLayoutVersion: _Optional[_Union[LayoutVersionProto, _Mapping]] = ..., clusterID: _Optional[str] = ...) -> None: ...

class SCMRegisteredResponseProto(_message.Message):
    __slots__ = ("errorCode", "datanodeUUID", "clusterID", "addressList", "hostname", "ipAddress", "networkName", "networkLocation", "errorMessage")
    class ErrorCode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        ERROR_CODE_UNSPECIFIED: _ClassVar[SCMRegisteredResponseProto.ErrorCode]
        success: _ClassVar[SCMRegisteredResponseProto.ErrorCode]
        errorNodeNotPermitted: _ClassVar[SCMRegisteredResponseProto.ErrorCode]
    ERROR_CODE_UNSPECIFIED: SCMRegisteredResponseProto.ErrorCode
    success: SCMRegisteredResponseProto.ErrorCode
    errorNodeNotPermitted: SCMRegisteredResponseProto.ErrorCode
    ERRORCODE_FIELD_NUMBER: _ClassVar[int]
    DATANODEUUID_FIELD_NUMBER: _ClassVar[int]
    CLUSTERID_FIELD_NUMBER: _ClassVar[int]
    ADDRESSLIST_FIELD_NUMBER: _ClassVar[int]
    HOSTNAME_FIELD_NUMBER: _ClassVar[int]
    IPADDRESS_FIELD_NUMBER: _ClassVar[int]
    NETWORKNAME_FIELD_NUMBER: _ClassVar[int]
    NETWORKLOCATION_FIELD_NUMBER: _ClassVar[int]
    ERRORMESSAGE_FIELD_NUMBER: _ClassVar[int]
    errorCode: SCMRegisteredResponseProto.ErrorCode
    datanodeUUID: str
    clusterID: str
    addressList: SCMNodeAddressList
    hostname: str
    ipAddress: str
    networkName: str
    networkLocation: str
    errorMessage: str
    def __init__(self, errorCode: _Optional[_Union[SCMRegisteredResponseProto.ErrorCode, str]] = ..., datanodeUUID: _Optional[str] = ..., clusterID: _Optional[str] = ..., addressList: _Optional[_Union[SCMNodeAddressList, _Mapping]] = ..., hostname: _Optional[str] = ..., ipAddress: _Optional[str] = ..., networkName: _Optional[str] = ..., networkLocation: _Optional[str] = ..., errorMessage: _Optional[str] = ...) -> None: ...

class SCMNodeAddressList(_message.Message):
    __slots__ = ("addressList",)
    ADDRESSLIST_FIELD_NUMBER: _ClassVar[int]
    addressList: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, addressList: _Optional[_Iterable[str]] = ...) -> None: ...

class SCMHeartbeatRequestProto(_message.Message):
    __slots__ = ("datanodeDetails", "nodeReport", "containerReport", "incrementalContainerReport", "commandStatusReports", "containerActions", "pipelineActions", "pipelineReports", "dataNodeLayoutVersion", "commandQueueReport")
    DATANODEDETAILS_FIELD_NUMBER: _ClassVar[int]
    NODEREPORT_FIELD_NUMBER: _ClassVar[int]
    CONTAINERREPORT_FIELD_NUMBER: _ClassVar[int]
    INCREMENTALCONTAINERREPORT_FIELD_NUMBER: _ClassVar[int]
    COMMANDSTATUSREPORTS_FIELD_NUMBER: _ClassVar[int]
    CONTAINERACTIONS_FIELD_NUMBER: _ClassVar[int]
    PIPELINEACTIONS_FIELD_NUMBER: _ClassVar[int]
    PIPELINEREPORTS_FIELD_NUMBER: _ClassVar[int]
    DATANODELAYOUTVERSION_FIELD_NUMBER: _ClassVar[int]
    COMMANDQUEUEREPORT_FIELD_NUMBER: _ClassVar[int]
    datanodeDetails: _hdds_pb2.DatanodeDetailsProto
    nodeReport: NodeReportProto
    containerReport: ContainerReportsProto
    incrementalContainerReport: _containers.RepeatedCompositeFieldContainer[IncrementalContainerReportProto]
    commandStatusReports: _containers.RepeatedCompositeFieldContainer[CommandStatusReportsProto]
    containerActions: ContainerActionsProto
    pipelineActions: PipelineActionsProto
    pipelineReports: PipelineReportsProto
    dataNodeLayoutVersion: LayoutVersionProto
    commandQueueReport: CommandQueueReportProto
    def __init__(self, datanodeDetails: _Optional[_Union[_hdds_pb2.DatanodeDetailsProto, _Mapping]] = ..., nodeReport: _Optional[_Union[NodeReportProto, _Mapping]] = ..., containerReport: _Optional[_Union[ContainerReportsProto, _Mapping]] = ..., incrementalContainerReport: _Optional[_Iterable[_Union[IncrementalContainerReportProto, _Mapping]]] = ..., commandStatusReports: _Optional[_Iterable[_Union[CommandStatusReportsProto, _Mapping]]] = ..., containerActions: _Optional[_Union[ContainerActionsProto, _Mapping]] = ..., pipelineActions: _Optional[_Union[PipelineActionsProto, _Mapping]] = ..., pipelineReports: _Optional[_Union[PipelineReportsProto, _Mapping]] = ..., dataNodeLayoutVersion: _Optional[_Union[LayoutVersionProto, _Mapping]] = ..., commandQueueReport: _Optional[_Union[CommandQueueReportProto, _Mapping]] = ...) -> None: ...

class CommandQueueReportProto(_message.Message):
    __slots__ = ("command", "count")
    COMMAND_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    command: _containers.RepeatedScalarFieldContainer[SCMCommandProto.Type]
    count: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, command: _Optional[_Iterable[_Union[SCMCommandProto.Type, str]]] = ..., count: _Optional[_Iterable[int]] = ...) -> None: ...

class SCMHeartbeatResponseProto(_message.Message):
    __slots__ = ("datanodeUUID", "commands", "term")
    DATANODEUUID_FIELD_NUMBER: _ClassVar[int]
    COMMANDS_FIELD_NUMBER: _ClassVar[int]
    TERM_FIELD_NUMBER: _ClassVar[int]
    datanodeUUID: str
    commands: _containers.RepeatedCompositeFieldContainer[SCMCommandProto]
    term: int
    def __init__(self, datanodeUUID: _Optional[str] = ..., commands: _Optional[_Iterable[_Union[SCMCommandProto, _Mapping]]] = ..., term: _Optional[int] = ...) -> None: ...

class NodeReportProto(_message.Message):
    __slots__ = ("storageReport", "metadataStorageReport", "dbStorageReport")
    STORAGEREPORT_FIELD_NUMBER: _ClassVar[int]
    METADATASTORAGEREPORT_FIELD_NUMBER: _ClassVar[int]
    DBSTORAGEREPORT_FIELD_NUMBER: _ClassVar[int]
    storageReport: _containers.RepeatedCompositeFieldContainer[StorageReportProto]
    metadataStorageReport: _containers.RepeatedCompositeFieldContainer[MetadataStorageReportProto]
    dbStorageReport: _containers.RepeatedCompositeFieldContainer[StorageReportProto]
    def __init__(self, storageReport: _Optional[_Iterable[_Union[StorageReportProto, _Mapping]]] = ..., metadataStorageReport: _Optional[_Iterable[_Union[MetadataStorageReportProto, _Mapping]]] = ..., dbStorageReport: _Optional[_Iterable[_Union[StorageReportProto, _Mapping]]] = ...) -> None: ...

class StorageReportProto(_message.Message):
    __slots__ = ("storageUuid", "storageLocation", "capacity", "scmUsed", "remaining", "storageType", "failed", "committed", "freeSpaceToSpare")
    STORAGEUUID_FIELD_NUMBER: _ClassVar[int]
    STORAGELOCATION_FIELD_NUMBER: _ClassVar[int]
    CAPACITY_FIELD_NUMBER: _ClassVar[int]
    SCMUSED_FIELD_NUMBER: _ClassVar[int]
    REMAINING_FIELD_NUMBER: _ClassVar[int]
    STORAGETYPE_FIELD_NUMBER: _ClassVar[int]
    FAILED_FIELD_NUMBER: _ClassVar[int]
    COMMITTED_FIELD_NUMBER: _ClassVar[int]
    FREESPACETOSPARE_FIELD_NUMBER: _ClassVar[int]
    storageUuid: str
    storageLocation: str
    capacity: int
    scmUsed: int
    remaining: int
    storageType: _hdds_pb2.StorageTypeProto
    failed: bool
    committed: int
    freeSpaceToSpare: int
    def __init__(self, storageUuid: _Optional[str] = ..., storageLocation: _Optional[str] = ..., capacity: _Optional[int] = ..., scmUsed: _Optional[int] = ..., remaining: _Optional[int] = ..., storageType: _Optional[_Union[_hdds_pb2.StorageTypeProto, str]] = ..., failed: _Optional[bool] = ..., committed: _Optional[int] = ..., freeSpaceToSpare: _Optional[int] = ...) -> None: ...

class MetadataStorageReportProto(_message.Message):
    __slots__ = ("storageLocation", "storageType", "capacity", "scmUsed", "remaining", "failed", "storageUuid")
    STORAGELOCATION_FIELD_NUMBER: _ClassVar[int]
    STORAGETYPE_FIELD_NUMBER: _ClassVar[int]
    CAPACITY_FIELD_NUMBER: _ClassVar[int]
    SCMUSED_FIELD_NUMBER: _ClassVar[int]
    REMAINING_FIELD_NUMBER: _ClassVar[int]
    FAILED_FIELD_NUMBER: _ClassVar[int]
    STORAGEUUID_FIELD_NUMBER: _ClassVar[int]
    storageLocation: str
    storageType: _hdds_pb2.StorageTypeProto
    capacity: int
    scmUsed: int
    remaining: int
    failed: bool
    storageUuid: str
    def __init__(self, storageLocation: _Optional[str] = ..., storageType: _Optional[_Union[_hdds_pb2.StorageTypeProto, str]] = ..., capacity: _Optional[int] = ..., scmUsed: _Optional[int] = ..., remaining: _Optional[int] = ..., failed: _Optional[bool] = ..., storageUuid: _Optional[str] = ...) -> None: ...

class ContainerReportsProto(_message.Message):
    __slots__ = ("reports",)
    REPORTS_FIELD_NUMBER: _ClassVar[int]
    reports: _containers.RepeatedCompositeFieldContainer[ContainerReplicaProto]
    def __init__(self, reports: _Optional[_Iterable[_Union[ContainerReplicaProto, _Mapping]]] = ...) -> None: ...

class IncrementalContainerReportProto(_message.Message):
    __slots__ = ("report",)
    REPORT_FIELD_NUMBER: _ClassVar[int]
    report: _containers.RepeatedCompositeFieldContainer[ContainerReplicaProto]
    def __init__(self, report: _Optional[_Iterable[_Union[ContainerReplicaProto, _Mapping]]] = ...) -> None: ...

class ContainerReplicaProto(_message.Message):
    __slots__ = ("containerID", "state", "size", "used", "keyCount", "readCount", "writeCount", "readBytes", "writeBytes", "finalhash", "deleteTransactionId", "blockCommitSequenceId", "originNodeId", "replicaIndex", "isEmpty", "dataChecksum")
    class State(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        STATE_UNSPECIFIED: _ClassVar[ContainerReplicaProto.State]
        OPEN: _ClassVar[ContainerReplicaProto.State]
        CLOSING: _ClassVar[ContainerReplicaProto.State]
        QUASI_CLOSED: _ClassVar[ContainerReplicaProto.State]
        CLOSED: _ClassVar[ContainerReplicaProto.State]
        UNHEALTHY: _ClassVar[ContainerReplicaProto.State]
        INVALID: _ClassVar[ContainerReplicaProto.State]
        DELETED: _ClassVar[ContainerReplicaProto.State]
        RECOVERING: _ClassVar[ContainerReplicaProto.State]
    STATE_UNSPECIFIED: ContainerReplicaProto.State
    OPEN: ContainerReplicaProto.State
    CLOSING: ContainerReplicaProto.State
    QUASI_CLOSED: ContainerReplicaProto.State
    CLOSED: ContainerReplicaProto.State
    UNHEALTHY: ContainerReplicaProto.State
    INVALID: ContainerReplicaProto.State
    DELETED: ContainerReplicaProto.State
    RECOVERING: ContainerReplicaProto.State
    CONTAINERID_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    SIZE_FIELD_NUMBER: _ClassVar[int]
    USED_FIELD_NUMBER: _ClassVar[int]
    KEYCOUNT_FIELD_NUMBER: _ClassVar[int]
    READCOUNT_FIELD_NUMBER: _ClassVar[int]
    WRITECOUNT_FIELD_NUMBER: _ClassVar[int]
    READBYTES_FIELD_NUMBER: _ClassVar[int]
    WRITEBYTES_FIELD_NUMBER: _ClassVar[int]
    FINALHASH_FIELD_NUMBER: _ClassVar[int]
    DELETETRANSACTIONID_FIELD_NUMBER: _ClassVar[int]
    BLOCKCOMMITSEQUENCEID_FIELD_NUMBER: _ClassVar[int]
    ORIGINNODEID_FIELD_NUMBER: _ClassVar[int]
    REPLICAINDEX_FIELD_NUMBER: _ClassVar[int]
    ISEMPTY_FIELD_NUMBER: _ClassVar[int]
    DATACHECKSUM_FIELD_NUMBER: _ClassVar[int]
    containerID: int
    state: ContainerReplicaProto.State
    size: int
    used: int
    keyCount: int
    readCount: int
    writeCount: int
    readBytes: int
    writeBytes: int
    finalhash: str
    deleteTransactionId: int
    blockCommitSequenceId: int
    originNodeId: str
    replicaIndex: int
    isEmpty: bool
    dataChecksum: int
    def __init__(self, containerID: _Optional[int] = ..., state: _Optional[_Union[ContainerReplicaProto.State, str]] = ..., size: _Optional[int] = ..., used: _Optional[int] = ..., keyCount: _Optional[int] = ..., readCount: _Optional[int] = ..., writeCount: _Optional[int] = ..., readBytes: _Optional[int] = ..., writeBytes: _Optional[int] = ..., finalhash: _Optional[str] = ..., deleteTransactionId: _Optional[int] = ..., blockCommitSequenceId: _Optional[int] = ..., originNodeId: _Optional[str] = ..., replicaIndex: _Optional[int] = ..., isEmpty: _Optional[bool] = ..., dataChecksum: _Optional[int] = ...) -> None: ...

class CommandStatusReportsProto(_message.Message):
    __slots__ = ("cmdStatus",)
    CMDSTATUS_FIELD_NUMBER: _ClassVar[int]
    cmdStatus: _containers.RepeatedCompositeFieldContainer[CommandStatus]
    def __init__(self, cmdStatus: _Optional[_Iterable[_Union[CommandStatus, _Mapping]]] = ...) -> None: ...

class CommandStatus(_message.Message):
    __slots__ = ("cmdId", "status", "type", "msg", "blockDeletionAck")
    class Status(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        STATUS_UNSPECIFIED: _ClassVar[CommandStatus.Status]
        PENDING: _ClassVar[CommandStatus.Status]
        EXECUTED: _ClassVar[CommandStatus.Status]
        FAILED: _ClassVar[CommandStatus.Status]
    STATUS_UNSPECIFIED: CommandStatus.Status
    PENDING: CommandStatus.Status
    EXECUTED: CommandStatus.Status
    FAILED: CommandStatus.Status
    CMDID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    MSG_FIELD_NUMBER: _ClassVar[int]
    BLOCKDELETIONACK_FIELD_NUMBER: _ClassVar[int]
    cmdId: int
    status: CommandStatus.Status
    type: SCMCommandProto.Type
    msg: str
    blockDeletionAck: ContainerBlocksDeletionACKProto
    def __init__(self, cmdId: _Optional[int] = ..., status: _Optional[_Union[CommandStatus.Status, str]] = ..., type: _Optional[_Union[SCMCommandProto.Type, str]] = ..., msg: _Optional[str] = ..., blockDeletionAck: _Optional[_Union[ContainerBlocksDeletionACKProto, _Mapping]] = ...) -> None: ...

class ContainerBlocksDeletionACKProto(_message.Message):
    __slots__ = ("results", "dnId")
    class DeleteBlockTransactionResult(_message.Message):
        __slots__ = ("txID", "containerID", "success")
        TXID_FIELD_NUMBER: _ClassVar[int]
        CONTAINERID_FIELD_NUMBER: _ClassVar[int]
        SUCCESS_FIELD_NUMBER: _ClassVar[int]
        txID: int
        containerID: int
        success: bool
        def __init__(self, txID: _Optional[int] = ..., containerID: _Optional[int] = ..., success: _Optional[bool] = ...) -> None: ...
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    DNID_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[ContainerBlocksDeletionACKProto.DeleteBlockTransactionResult]
    dnId: str
    def __init__(self, results: _Optional[_Iterable[_Union[ContainerBlocksDeletionACKProto.DeleteBlockTransactionResult, _Mapping]]] = ..., dnId: _Optional[str] = ...) -> None: ...

class ContainerActionsProto(_message.Message):
    __slots__ = ("containerActions",)
    CONTAINERACTIONS_FIELD_NUMBER: _ClassVar[int]
    containerActions: _containers.RepeatedCompositeFieldContainer[ContainerAction]
    def __init__(self, containerActions: _Optional[_Iterable[_Union[ContainerAction, _Mapping]]] = ...) -> None: ...

class ContainerAction(_message.Message):
    __slots__ = ("containerID", "action", "reason")
    class Action(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        ACTION_UNSPECIFIED: _ClassVar[ContainerAction.Action]
        CLOSE: _ClassVar[ContainerAction.Action]
    ACTION_UNSPECIFIED: ContainerAction.Action
    CLOSE: ContainerAction.Action
    class Reason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        REASON_UNSPECIFIED: _ClassVar[ContainerAction.Reason]
        CONTAINER_FULL: _ClassVar[ContainerAction.Reason]
        CONTAINER_UNHEALTHY: _ClassVar[ContainerAction.Reason]
    REASON_UNSPECIFIED: ContainerAction.Reason
    CONTAINER_FULL: ContainerAction.Reason
    CONTAINER_UNHEALTHY: ContainerAction.Reason
    CONTAINERID_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    containerID: int
    action: ContainerAction.Action
    reason: ContainerAction.Reason
    def __init__(self, containerID: _Optional[int] = ..., action: _Optional[_Union[ContainerAction.Action, str]] = ..., reason: _Optional[_Union[ContainerAction.Reason, str]] = ...) -> None: ...

class PipelineReport(_message.Message):
    __slots__ = ("pipelineID", "isLeader", "bytesWritten")
    PIPELINEID_FIELD_NUMBER: _ClassVar[int]
    ISLEADER_FIELD_NUMBER: _ClassVar[int]
    BYTESWRITTEN_FIELD_NUMBER: _ClassVar[int]
    pipelineID: _hdds_pb2.PipelineID
    isLeader: bool
    bytesWritten: int
    def __init__(self, pipelineID: _Optional[_Union[_hdds_pb2.PipelineID, _Mapping]] = ..., isLeader: _Optional[bool] = ..., bytesWritten: _Optional[int] = ...) -> None: ...

class PipelineReportsProto(_message.Message):
    __slots__ = ("pipelineReport",)
    PIPELINEREPORT_FIELD_NUMBER: _ClassVar[int]
    pipelineReport: _containers.RepeatedCompositeFieldContainer[PipelineReport]
    def __init__(self, pipelineReport: _Optional[_Iterable[_Union[PipelineReport, _Mapping]]] = ...) -> None: ...

class PipelineActionsProto(_message.Message):
    __slots__ = ("pipelineActions",)
    PIPELINEACTIONS_FIELD_NUMBER: _ClassVar[int]
    pipelineActions: _containers.RepeatedCompositeFieldContainer[PipelineAction]
    def __init__(self, pipelineActions: _Optional[_Iterable[_Union[PipelineAction, _Mapping]]] = ...) -> None: ...

class ClosePipelineInfo(_message.Message):
    __slots__ = ("pipelineID", "reason", "detailedReason")
    class Reason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        REASON_UNSPECIFIED: _ClassVar[ClosePipelineInfo.Reason]
        PIPELINE_FAILED: _ClassVar[ClosePipelineInfo.Reason]
        PIPELINE_LOG_FAILED: _ClassVar[ClosePipelineInfo.Reason]
        STATEMACHINE_TRANSACTION_FAILED: _ClassVar[ClosePipelineInfo.Reason]
    REASON_UNSPECIFIED: ClosePipelineInfo.Reason
    PIPELINE_FAILED: ClosePipelineInfo.Reason
    PIPELINE_LOG_FAILED: ClosePipelineInfo.Reason
    STATEMACHINE_TRANSACTION_FAILED: ClosePipelineInfo.Reason
    PIPELINEID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    DETAILEDREASON_FIELD_NUMBER: _ClassVar[int]
    pipelineID: _hdds_pb2.PipelineID
    reason: ClosePipelineInfo.Reason
    detailedReason: str
    def __init__(self, pipelineID: _Optional[_Union[_hdds_pb2.PipelineID, _Mapping]] = ..., reason: _Optional[_Union[ClosePipelineInfo.Reason, str]] = ..., detailedReason: _Optional[str] = ...) -> None: ...

class PipelineAction(_message.Message):
    __slots__ = ("action", "closePipeline")
    class Action(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        ACTION_UNSPECIFIED: _ClassVar[PipelineAction.Action]
        CLOSE: _ClassVar[PipelineAction.Action]
    ACTION_UNSPECIFIED: PipelineAction.Action
    CLOSE: PipelineAction.Action
    ACTION_FIELD_NUMBER: _ClassVar[int]
    CLOSEPIPELINE_FIELD_NUMBER: _ClassVar[int]
    action: PipelineAction.Action
    closePipeline: ClosePipelineInfo
    def __init__(self, action: _Optional[_Union[PipelineAction.Action, str]] = ..., closePipeline: _Optional[_Union[ClosePipelineInfo, _Mapping]] = ...) -> None: ...

class SCMCommandProto(_message.Message):
    __slots__ = ("commandType", "reregisterCommandProto", "deleteBlocksCommandProto", "closeContainerCommandProto", "deleteContainerCommandProto", "replicateContainerCommandProto", "createPipelineCommandProto", "closePipelineCommandProto", "setNodeOperationalStateCommandProto", "finalizeNewLayoutVersionCommandProto", "refreshVolumeUsageCommandProto", "reconstructECContainersCommandProto", "reconcileContainerCommandProto", "term", "encodedToken", "deadlineMsSinceEpoch", "cmdId")
    class Type(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        unknownScmCommand: _ClassVar[SCMCommandProto.Type]
        reregisterCommand: _ClassVar[SCMCommandProto.Type]
        deleteBlocksCommand: _ClassVar[SCMCommandProto.Type]
        closeContainerCommand: _ClassVar[SCMCommandProto.Type]
        deleteContainerCommand: _ClassVar[SCMCommandProto.Type]
        replicateContainerCommand: _ClassVar[SCMCommandProto.Type]
        createPipelineCommand: _ClassVar[SCMCommandProto.Type]
        closePipelineCommand: _ClassVar[SCMCommandProto.Type]
        setNodeOperationalStateCommand: _ClassVar[SCMCommandProto.Type]
        finalizeNewLayoutVersionCommand: _ClassVar[SCMCommandProto.Type]
        refreshVolumeUsageInfo: _ClassVar[SCMCommandProto.Type]
        reconstructECContainersCommand: _ClassVar[SCMCommandProto.Type]
        reconcileContainerCommand: _ClassVar[SCMCommandProto.Type]
    unknownScmCommand: SCMCommandProto.Type
    reregisterCommand: SCMCommandProto.Type
    deleteBlocksCommand: SCMCommandProto.Type
    closeContainerCommand: SCMCommandProto.Type
    deleteContainerCommand: SCMCommandProto.Type
    replicateContainerCommand: SCMCommandProto.Type
    createPipelineCommand: SCMCommandProto.Type
    closePipelineCommand: SCMCommandProto.Type
    setNodeOperationalStateCommand: SCMCommandProto.Type
    finalizeNewLayoutVersionCommand: SCMCommandProto.Type
    refreshVolumeUsageInfo: SCMCommandProto.Type
    reconstructECContainersCommand: SCMCommandProto.Type
    reconcileContainerCommand: SCMCommandProto.Type
    COMMANDTYPE_FIELD_NUMBER: _ClassVar[int]
    REREGISTERCOMMANDPROTO_FIELD_NUMBER: _ClassVar[int]
    DELETEBLOCKSCOMMANDPROTO_FIELD_NUMBER: _ClassVar[int]
    CLOSECONTAINERCOMMANDPROTO_FIELD_NUMBER: _ClassVar[int]
    DELETECONTAINERCOMMANDPROTO_FIELD_NUMBER: _ClassVar[int]
    REPLICATECONTAINERCOMMANDPROTO_FIELD_NUMBER: _ClassVar[int]
    CREATEPIPELINECOMMANDPROTO_FIELD_NUMBER: _ClassVar[int]
    CLOSEPIPELINECOMMANDPROTO_FIELD_NUMBER: _ClassVar[int]
    SETNODEOPERATIONALSTATECOMMANDPROTO_FIELD_NUMBER: _ClassVar[int]
    FINALIZENEWLAYOUTVERSIONCOMMANDPROTO_FIELD_NUMBER: _ClassVar[int]
    REFRESHVOLUMEUSAGECOMMANDPROTO_FIELD_NUMBER: _ClassVar[int]
    RECONSTRUCTECCONTAINERSCOMMANDPROTO_FIELD_NUMBER: _ClassVar[int]
    RECONCILECONTAINERCOMMANDPROTO_FIELD_NUMBER: _ClassVar[int]
    TERM_FIELD_NUMBER: _ClassVar[int]
    ENCODEDTOKEN_FIELD_NUMBER: _ClassVar[int]
    DEADLINEMSSINCEEPOCH_FIELD_NUMBER: _ClassVar[int]
    CMDID_FIELD_NUMBER: _ClassVar[int]
    commandType: SCMCommandProto.Type
    reregisterCommandProto: ReregisterCommandProto
    deleteBlocksCommandProto: DeleteBlocksCommandProto
    closeContainerCommandProto: CloseContainerCommandProto
    deleteContainerCommandProto: DeleteContainerCommandProto
    replicateContainerCommandProto: ReplicateContainerCommandProto
    createPipelineCommandProto: CreatePipelineCommandProto
    closePipelineCommandProto: ClosePipelineCommandProto
    setNodeOperationalStateCommandProto: SetNodeOperationalStateCommandProto
    finalizeNewLayoutVersionCommandProto: FinalizeNewLayoutVersionCommandProto
    refreshVolumeUsageCommandProto: RefreshVolumeUsageCommandProto
    reconstructECContainersCommandProto: ReconstructECContainersCommandProto
    reconcileContainerCommandProto: ReconcileContainerCommandProto
    term: int
    encodedToken: str
    deadlineMsSinceEpoch: int
    cmdId: int
    def __init__(self, commandType: _Optional[_Union[SCMCommandProto.Type, str]] = ..., reregisterCommandProto: _Optional[_Union[ReregisterCommandProto, _Mapping]] = ..., deleteBlocksCommandProto: _Optional[_Union[DeleteBlocksCommandProto, _Mapping]] = ..., closeContainerCommandProto: _Optional[_Union[CloseContainerCommandProto, _Mapping]] = ..., deleteContainerCommandProto: _Optional[_Union[DeleteContainerCommandProto, _Mapping]] = ..., replicateContainerCommandProto: _Optional[_Union[ReplicateContainerCommandProto, _Mapping]] = ..., createPipelineCommandProto: _Optional[_Union[CreatePipelineCommandProto, _Mapping]] = ..., closePipelineCommandProto: _Optional[_Union[ClosePipelineCommandProto, _Mapping]] = ..., setNodeOperationalStateCommandProto: _Optional[_Union[SetNodeOperationalStateCommandProto, _Mapping]] = ..., finalizeNewLayoutVersionCommandProto: _Optional[_Union[FinalizeNewLayoutVersionCommandProto, _Mapping]] = ..., refreshVolumeUsageCommandProto: _Optional[_Union[RefreshVolumeUsageCommandProto, _Mapping]] = ..., reconstructECContainersCommandProto: _Optional[_Union[ReconstructECContainersCommandProto, _Mapping]] = ..., reconcileContainerCommandProto: _Optional[_Union[ReconcileContainerCommandProto, _Mapping]] = ..., term: _Optional[int] = ..., encodedToken: _Optional[str] = ..., deadlineMsSinceEpoch: _Optional[int] = ..., cmdId: _Optional[int] = ...) -> None: ...

class ReregisterCommandProto(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class DeleteBlocksCommandProto(_message.Message):
    __slots__ = ("deletedBlocksTransactions",)
    DELETEDBLOCKSTRANSACTIONS_FIELD_NUMBER: _ClassVar[int]
    deletedBlocksTransactions: _containers.RepeatedCompositeFieldContainer[DeletedBlocksTransaction]
    def __init__(self, deletedBlocksTransactions: _Optional[_Iterable[_Union[DeletedBlocksTransaction, _Mapping]]] = ...) -> None: ...

class DeletedBlocksTransaction(_message.Message):
    __slots__ = ("txID", "containerID", "localID", "count")
    TXID_FIELD_NUMBER: _ClassVar[int]
    CONTAINERID_FIELD_NUMBER: _ClassVar[int]
    LOCALID_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    txID: int
    containerID: int
    localID: _containers.RepeatedScalarFieldContainer[int]
    count: int
    def __init__(self, txID: _Optional[int] = ..., containerID: _Optional[int] = ..., localID: _Optional[_Iterable[int]] = ..., count: _Optional[int] = ...) -> None: ...

class CloseContainerCommandProto(_message.Message):
    __slots__ = ("containerID", "pipelineID", "force")
    CONTAINERID_FIELD_NUMBER: _ClassVar[int]
    PIPELINEID_FIELD_NUMBER: _ClassVar[int]
    FORCE_FIELD_NUMBER: _ClassVar[int]
    containerID: int
    pipelineID: _hdds_pb2.PipelineID
    force: bool
    def __init__(self, containerID: _Optional[int] = ..., pipelineID: _Optional[_Union[_hdds_pb2.PipelineID, _Mapping]] = ..., force: _Optional[bool] = ...) -> None: ...

class DeleteContainerCommandProto(_message.Message):
    __slots__ = ("containerID", "force", "replicaIndex")
    CONTAINERID_FIELD_NUMBER: _ClassVar[int]
    FORCE_FIELD_NUMBER: _ClassVar[int]
    REPLICAINDEX_FIELD_NUMBER: _ClassVar[int]
    containerID: int
    force: bool
    replicaIndex: int
    def __init__(self, containerID: _Optional[int] = ..., force: _Optional[bool] = ..., replicaIndex: _Optional[int] = ...) -> None: ...

class ReplicateContainerCommandProto(_message.Message):
    __slots__ = ("containerID", "sources", "replicaIndex", "target", "priority")
    CONTAINERID_FIELD_NUMBER: _ClassVar[int]
    SOURCES_FIELD_NUMBER: _ClassVar[int]
    REPLICAINDEX_FIELD_NUMBER: _ClassVar[int]
    TARGET_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    containerID: int
    sources: _containers.RepeatedCompositeFieldContainer[_hdds_pb2.DatanodeDetailsProto]
    replicaIndex: int
    target: _hdds_pb2.DatanodeDetailsProto
    priority: ReplicationCommandPriority
    def __init__(self, containerID: _Optional[int] = ..., sources: _Optional[_Iterable[_Union[_hdds_pb2.DatanodeDetailsProto, _Mapping]]] = ..., replicaIndex: _Optional[int] = ..., target: _Optional[_Union[_hdds_pb2.DatanodeDetailsProto, _Mapping]] = ..., priority: _Optional[_Union[ReplicationCommandPriority, str]] = ...) -> None: ...

class ReconstructECContainersCommandProto(_message.Message):
    __slots__ = ("containerID", "sources", "targets", "missingContainerIndexes", "ecReplicationConfig")
    CONTAINERID_FIELD_NUMBER: _ClassVar[int]
    SOURCES_FIELD_NUMBER: _ClassVar[int]
    TARGETS_FIELD_NUMBER: _ClassVar[int]
    MISSINGCONTAINERINDEXES_FIELD_NUMBER: _ClassVar[int]
    ECREPLICATIONCONFIG_FIELD_NUMBER: _ClassVar[int]
    containerID: int
    sources: _containers.RepeatedCompositeFieldContainer[DatanodeDetailsAndReplicaIndexProto]
    targets: _containers.RepeatedCompositeFieldContainer[_hdds_pb2.DatanodeDetailsProto]
    missingContainerIndexes: bytes
    ecReplicationConfig: _hdds_pb2.ECReplicationConfig
    def __init__(self, containerID: _Optional[int] = ..., sources: _Optional[_Iterable[_Union[DatanodeDetailsAndReplicaIndexProto, _Mapping]]] = ..., targets: _Optional[_Iterable[_Union[_hdds_pb2.DatanodeDetailsProto, _Mapping]]] = ..., missingContainerIndexes: _Optional[bytes] = ..., ecReplicationConfig: _Optional[_Union[_hdds_pb2.ECReplicationConfig, _Mapping]] = ...) -> None: ...

class DatanodeDetailsAndReplicaIndexProto(_message.Message):
    __slots__ = ("datanodeDetails", "replicaIndex")
    DATANODEDETAILS_FIELD_NUMBER: _ClassVar[int]
    REPLICAINDEX_FIELD_NUMBER: _ClassVar[int]
    datanodeDetails: _hdds_pb2.DatanodeDetailsProto
    replicaIndex: int
    def __init__(self, datanodeDetails: _Optional[_Union[_hdds_pb2.DatanodeDetailsProto, _Mapping]] = ..., replicaIndex: _Optional[int] = ...) -> None: ...

class CreatePipelineCommandProto(_message.Message):
    __slots__ = ("pipelineID", "type", "factor", "datanode", "priority")
    PIPELINEID_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    FACTOR_FIELD_NUMBER: _ClassVar[int]
    DATANODE_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    pipelineID: _hdds_pb2.PipelineID
    type: _hdds_pb2.ReplicationType
    factor: _hdds_pb2.ReplicationFactor
    datanode: _containers.RepeatedCompositeFieldContainer[_hdds_pb2.DatanodeDetailsProto]
    priority: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, pipelineID: _Optional[_Union[_hdds_pb2.PipelineID, _Mapping]] = ..., type: _Optional[_Union[_hdds_pb2.ReplicationType, str]] = ..., factor: _Optional[_Union[_hdds_pb2.ReplicationFactor, str]] = ..., datanode: _Optional[_Iterable[_Union[_hdds_pb2.DatanodeDetailsProto, _Mapping]]] = ..., priority: _Optional[_Iterable[int]] = ...) -> None: ...

class ClosePipelineCommandProto(_message.Message):
    __slots__ = ("pipelineID",)
    PIPELINEID_FIELD_NUMBER: _ClassVar[int]
    pipelineID: _hdds_pb2.PipelineID
    def __init__(self, pipelineID: _Optional[_Union[_hdds_pb2.PipelineID, _Mapping]] = ...) -> None: ...

class RefreshVolumeUsageCommandProto(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class SetNodeOperationalStateCommandProto(_message.Message):
    __slots__ = ("nodeOperationalState", "stateExpiryEpochSeconds")
    NODEOPERATIONALSTATE_FIELD_NUMBER: _ClassVar[int]
    STATEEXPIRYEPOCHSECONDS_FIELD_NUMBER: _ClassVar[int]
    nodeOperationalState: _hdds_pb2.NodeOperationalState
    stateExpiryEpochSeconds: int
    def __init__(self, nodeOperationalState: _Optional[_Union[_hdds_pb2.NodeOperationalState, str]] = ..., stateExpiryEpochSeconds: _Optional[int] = ...) -> None: ...

class FinalizeNewLayoutVersionCommandProto(_message.Message):
    __slots__ = ("finalizeNewLayoutVersion", "dataNodeLayoutVersion")
    FINALIZENEWLAYOUTVERSION_FIELD_NUMBER: _ClassVar[int]
    DATANODELAYOUTVERSION_FIELD_NUMBER: _ClassVar[int]
    finalizeNewLayoutVersion: bool
    dataNodeLayoutVersion: LayoutVersionProto
    def __init__(self, finalizeNewLayoutVersion: _Optional[bool] = ..., dataNodeLayoutVersion: _Optional[_Union[LayoutVersionProto, _Mapping]] = ...) -> None: ...

class ReconcileContainerCommandProto(_message.Message):
    __slots__ = ("containerID", "peers")
    CONTAINERID_FIELD_NUMBER: _ClassVar[int]
    PEERS_FIELD_NUMBER: _ClassVar[int]
    containerID: int
    peers: _containers.RepeatedCompositeFieldContainer[_hdds_pb2.DatanodeDetailsProto]
    def __init__(self, containerID: _Optional[int] = ..., peers: _Optional[_Iterable[_Union[_hdds_pb2.DatanodeDetailsProto, _Mapping]]] = ...) -> None: ...
