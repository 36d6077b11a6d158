from pyozone.proto import hdds_pb2 as _hdds_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class GetScmInfoRequestProto(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetScmInfoResponseProto(_message.Message):
    __slots__ = ("clusterId", "scmId", "peerRoles", "inSafeMode", "preCheckComplete")
    CLUSTERID_FIELD_NUMBER: _ClassVar[int]
    SCMID_FIELD_NUMBER: _ClassVar[int]
    PEERROLES_FIELD_NUMBER: _ClassVar[int]
    INSAFEMODE_FIELD_NUMBER: _ClassVar[int]
    PRECHECKCOMPLETE_FIELD_NUMBER: _ClassVar[int]
    clusterId: str
    scmId: str
    peerRoles: _containers.RepeatedScalarFieldContainer[str]
    inSafeMode: bool
    preCheckComplete: bool
    def __init__(self, clusterId: _Optional[str] = ..., scmId: _Optional[str] = ..., peerRoles: _Optional[_Iterable[str]] = ..., inSafeMode: _Optional[bool] = ..., preCheckComplete: _Optional[bool] = ...) -> None: ...

class NodeQueryRequestProto(_message.Message):
    __slots__ = ("state", "traceID", "opState")
    STATE_FIELD_NUMBER: _ClassVar[int]
    TRACEID_FIELD_NUMBER: _ClassVar[int]
    OPSTATE_FIELD_NUMBER: _ClassVar[int]
    state: _hdds_pb2.NodeState
    traceID: str
    opState: _hdds_pb2.NodeOperationalState
    def __init__(self, state: _Optional[_Union[_hdds_pb2.NodeState, str]] = ..., traceID: _Optional[str] = ..., opState: _Optional[_Union[_hdds_pb2.NodeOperationalState, str]] = ...) -> None: ...

class NodeQueryResponseProto(_message.Message):
    __slots__ = ("datanodes",)
    DATANODES_FIELD_NUMBER: _ClassVar[int]
    datanodes: _containers.RepeatedCompositeFieldContainer[Node]
    def __init__(self, datanodes: _Optional[_Iterable[_Union[Node, _Mapping]]] = ...) -> None: ...

class Node(_message.Message):
    __slots__ = ("nodeID", "nodeStates", "nodeOperationalStates", "opStateExpiryEpochSeconds", "lastHeartbeatTime", "pipelineCount", "containerCount", "capacity", "used", "remaining", "healthyVolumeCount", "failedVolumeCount", "metadataLayoutVersion", "softwareLayoutVersion", "adminProgress")
    NODEID_FIELD_NUMBER: _ClassVar[int]
    NODESTATES_FIELD_NUMBER: _ClassVar[int]
    NODEOPERATIONALSTATES_FIELD_NUMBER: _ClassVar[int]
    OPSTATEEXPIRYEPOCHSECONDS_FIELD_NUMBER: _ClassVar[int]
    LASTHEARTBEATTIME_FIELD_NUMBER: _ClassVar[int]
    PIPELINECOUNT_FIELD_NUMBER: _ClassVar[int]
    CONTAINERCOUNT_FIELD_NUMBER: _ClassVar[int]
    CAPACITY_FIELD_NUMBER: _ClassVar[int]
    USED_FIELD_NUMBER: _ClassVar[int]
    REMAINING_FIELD_NUMBER: _ClassVar[int]
    HEALTHYVOLUMECOUNT_FIELD_NUMBER: _ClassVar[int]
    FAILEDVOLUMECOUNT_FIELD_NUMBER: _ClassVar[int]
    METADATALAYOUTVERSION_FIELD_NUMBER: _ClassVar[int]
    SOFTWARELAYOUTVERSION_FIELD_NUMBER: _ClassVar[int]
    ADMINPROGRESS_FIELD_NUMBER: _ClassVar[int]
    nodeID: _hdds_pb2.DatanodeDetailsProto
    nodeStates: _containers.RepeatedScalarFieldContainer[_hdds_pb2.NodeState]
    nodeOperationalStates: _containers.RepeatedScalarFieldContainer[_hdds_pb2.NodeOperationalState]
    opStateExpiryEpochSeconds: int
    lastHeartbeatTime: int
    pipelineCount: int
    containerCount: int
    capacity: int
    used: int
    remaining: int
    healthyVolumeCount: int
    failedVolumeCount: int
    metadataLayoutVersion: int
    softwareLayoutVersion: int
    adminProgress: DatanodeAdminProgressProto
    def __init__(self, nodeID: _Optional[_Union[_hdds_pb2.DatanodeDetailsProto, _Mapping]] = ..., nodeStates: _Optional[_Iterable[_Union[_hdds_pb2.NodeState, str]]] = ..., nodeOperationalStates: _Optional[_Iterable[_Union[_hdds_pb2.NodeOperationalState, str]]] = ..., opStateExpiryEpochSeconds: _Optional[int] = ..., lastHeartbeatTime: _Optional[int] = ..., pipelineCount: _Optional[int] = ..., containerCount: _Optional[int] = ..., capacity: _Optional[int] = ..., used: _Optional[int] = ..., remaining: _Optional[int] = ..., healthyVolumeCount: _Optional[int] = ..., failedVolumeCount: _Optional[int] = ..., metadataLayoutVersion: _Optional[int] = ..., softwareLayoutVersion: _Optional[int] = ..., adminProgress: _Optional[_Union[DatanodeAdminProgressProto, _Mapping]] = ...) -> None: ...

class DatanodeAdminProgressProto(_message.Message):
    __slots__ = ("containersLeft", "underReplicatedContainers", "unclosedContainers", "sufficientlyReplicatedContainers", "pipelinesWaitingToClose")
    CONTAINERSLEFT_FIELD_NUMBER: _ClassVar[int]
    UNDERREPLICATEDCONTAINERS_FIELD_NUMBER: _ClassVar[int]
    UNCLOSEDCONTAINERS_FIELD_NUMBER: _ClassVar[int]
    SUFFICIENTLYREPLICATEDCONTAINERS_FIELD_NUMBER: _ClassVar[int]
    PIPELINESWAITINGTOCLOSE_FIELD_NUMBER: _ClassVar[int]
    containersLeft: int
    underReplicatedContainers: int
    unclosedContainers: int
    sufficientlyReplicatedContainers: int
    pipelinesWaitingToClose: int
    def __init__(self, containersLeft: _Optional[int] = ..., underReplicatedContainers: _Optional[int] = ..., unclosedContainers: _Optional[int] = ..., sufficientlyReplicatedContainers: _Optional[int] = ..., pipelinesWaitingToClose: _Optional[int] = ...) -> None: ...

class ListPipelineRequestProto(_message.Message):
    __slots__ = ("traceID",)
    TRACEID_FIELD_NUMBER: _ClassVar[int]
    traceID: str
    def __init__(self, traceID: _Optional[str] = ...) -> None: ...

class ListPipelineResponseProto(_message.Message):
    __slots__ = ("pipelines",)
    PIPELINES_FIELD_NUMBER: _ClassVar[int]
    pipelines: _containers.RepeatedCompositeFieldContainer[_hdds_pb2.Pipeline]
    def __init__(self, pipelines: _Optional[_Iterable[_Union[_hdds_pb2.Pipeline, _Mapping]]] = ...) -> None: ...

class PipelineRequestProto(_message.Message):
    __slots__ = ("replicationType", "replicationFactor", "pipelineID", "traceID")
    REPLICATIONTYPE_FIELD_NUMBER: _ClassVar[int]
    REPLICATIONFACTOR_FIELD_NUMBER: _ClassVar[int]
    PIPELINEID_FIELD_NUMBER: _ClassVar[int]
    TRACEID_FIELD_NUMBER: _ClassVar[int]
    replicationType: _hdds_pb2.ReplicationType
    replicationFactor: _hdds_pb2.ReplicationFactor
    pipelineID: str
    traceID: str
    def __init__(self, replicationType: _Optional[_Union[_hdds_pb2.ReplicationType, str]] = ..., replicationFactor: _Optional[_Union[_hdds_pb2.ReplicationFactor, str]] = ..., pipelineID: _Optional[str] = ..., traceID: _Optional[str] = ...) -> None: ...

class PipelineResponseProto(_message.Message):
    __slots__ = ("errorCode", "pipeline", "errorMessage")
    class Error(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        ERROR_UNSPECIFIED: _ClassVar[PipelineResponseProto.Error]
        success: _ClassVar[PipelineResponseProto.Error]
        errorPipelineAlreadyExists: _ClassVar[PipelineResponseProto.Error]
    ERROR_UNSPECIFIED: PipelineResponseProto.Error
    success: PipelineResponseProto.Error
    errorPipelineAlreadyExists: PipelineResponseProto.Error
    ERRORCODE_FIELD_NUMBER: _ClassVar[int]
    PIPELINE_FIELD_NUMBER: _ClassVar[int]
    ERRORMESSAGE_FIELD_NUMBER: _ClassVar[int]
    errorCode: PipelineResponseProto.Error
    pipeline: _hdds_pb2.Pipeline
    errorMessage: str
    def __init__(self, errorCode: _Optional[_Union[PipelineResponseProto.Error, str]] = ..., pipeline: _Optional[_Union[_hdds_pb2.Pipeline, _Mapping]] = ..., errorMessage: _Optional[str] = ...) -> None: ...

class ClosePipelineRequestProto(_message.Message):
    __slots__ = ("pipelineID", "traceID")
    PIPELINEID_FIELD_NUMBER: _ClassVar[int]
    TRACEID_FIELD_NUMBER: _ClassVar[int]
    pipelineID: _hdds_pb2.PipelineID
    traceID: str
    def __init__(self, pipelineID: _Optional[_Union[_hdds_pb2.PipelineID, _Mapping]] = ..., traceID: _Optional[str] = ...) -> None: ...

class ClosePipelineResponseProto(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ActivatePipelineRequestProto(_message.Message):
    __slots__ = ("pipelineID", "traceID")
    PIPELINEID_FIELD_NUMBER: _ClassVar[int]
    TRACEID_FIELD_NUMBER: _ClassVar[int]
    pipelineID: _hdds_pb2.PipelineID
    traceID: str
    def __init__(self, pipelineID: _Optional[_Union[_hdds_pb2.PipelineID, _Mapping]] = ..., traceID: _Optional[str] = ...) -> None: ...

class ActivatePipelineResponseProto(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class DeactivatePipelineRequestProto(_message.Message):
    __slots__ = ("pipelineID", "traceID")
    PIPELINEID_FIELD_NUMBER: _ClassVar[int]
    TRACEID_FIELD_NUMBER: _ClassVar[int]
    pipelineID: _hdds_pb2.PipelineID
    traceID: str
    def __init__(self, pipelineID: _Optional[_Union[_hdds_pb2.PipelineID, _Mapping]] = ..., traceID: _Optional[str] = ...) -> None: ...

class DeactivatePipelineResponseProto(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class SCMListContainerRequestProto(_message.Message):
    __slots__ = ("count", "startContainerID", "traceID", "state", "factor", "type")
    COUNT_FIELD_NUMBER: _ClassVar[int]
    STARTCONTAINERID_FIELD_NUMBER: _ClassVar[int]
    TRACEID_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    FACTOR_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    count: int
    startContainerID: int
    traceID: str
    state: _hdds_pb2.LifeCycleState
    factor: _hdds_pb2.ReplicationFactor
    type: _hdds_pb2.ReplicationType
    def __init__(self, count: _Optional[int] = ..., startContainerID: _Optional[int] = ..., traceID: _Optional[str] = ..., state: _Optional[_Union[_hdds_pb2.LifeCycleState, str]] = ..., factor: _Optional[_Union[_hdds_pb2.ReplicationFactor, str]] = ..., type: _Optional[_Union[_hdds_pb2.ReplicationType, str]] = ...) -> None: ...

class SCMListContainerResponseProto(_message.Message):
    __slots__ = ("containers", "containerCount")
    CONTAINERS_FIELD_NUMBER: _ClassVar[int]
    CONTAINERCOUNT_FIELD_NUMBER: _ClassVar[int]
    containers: _containers.RepeatedCompositeFieldContainer[_hdds_pb2.ContainerInfoProto]
    containerCount: int
    def __init__(self, containers: _Optional[_Iterable[_Union[_hdds_pb2.ContainerInfoProto, _Mapping]]] = ..., containerCount: _Optional[int] = ...) -> None: ...

class GetContainerRequestProto(_message.Message):
    __slots__ = ("containerID", "traceID")
    CONTAINERID_FIELD_NUMBER: _ClassVar[int]
    TRACEID_FIELD_NUMBER: _ClassVar[int]
    containerID: int
    traceID: str
    def __init__(self, containerID: _Optional[int] = ..., traceID: _Optional[str] = ...) -> None: ...

class GetContainerResponseProto(_message.Message):
    __slots__ = ("containerInfo", "replicas", "pipeline")
    CONTAINERINFO_FIELD_NUMBER: _ClassVar[int]
    REPLICAS_FIELD_NUMBER: _ClassVar[int]
    PIPELINE_FIELD_NUMBER: _ClassVar[int]
    containerInfo: _hdds_pb2.ContainerInfoProto
    replicas: _containers.RepeatedCompositeFieldContainer[SCMContainerReplicaProto]
    pipeline: _hdds_pb2.Pipeline
    def __init__(self, containerInfo: _Optional[_Union[_hdds_pb2.ContainerInfoProto, _Mapping]] = ..., replicas: _Optional[_Iterable[_Union[SCMContainerReplicaProto, _Mapping]]] = ..., pipeline: _Optional[_Union[_hdds_pb2.Pipeline, _Mapping]] = ...) -> None: ...

class SCMContainerReplicaProto(_message.Message):
    __slots__ = ("containerID", "state", "datanodeDetails", "placeOfBirth", "sequenceID", "keyCount", "bytesUsed", "replicaIndex", "isEmpty", "dataChecksum")
    CONTAINERID_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    DATANODEDETAILS_FIELD_NUMBER: _ClassVar[int]
    PLACEOFBIRTH_FIELD_NUMBER: _ClassVar[int]
    SEQUENCEID_FIELD_NUMBER: _ClassVar[int]
    KEYCOUNT_FIELD_NUMBER: _ClassVar[int]
    BYTESUSED_FIELD_NUMBER: _ClassVar[int]
    REPLICAINDEX_FIELD_NUMBER: _ClassVar[int]
    ISEMPTY_FIELD_NUMBER: _ClassVar[int]
    DATACHECKSUM_FIELD_NUMBER: _ClassVar[int]
    containerID: int
    state: str
    datanodeDetails: _hdds_pb2.DatanodeDetailsProto
    placeOfBirth: str
    sequenceID: int
    keyCount: int
    bytesUsed: int
    replicaIndex: int
    isEmpty: bool
    dataChecksum: int
    def __init__(self, containerID: _Optional[int] = ..., state: _Optional[str] = ..., datanodeDetails: _Optional[_Union[_hdds_pb2.DatanodeDetailsProto, _Mapping]] = ..., placeOfBirth: _Optional[str] = ..., sequenceID: _Optional[int] = ..., keyCount: _Optional[int] = ..., bytesUsed: _Optional[int] = ..., replicaIndex: _Optional[int] = ..., isEmpty: _Optional[bool] = ..., dataChecksum: _Optional[int] = ...) -> None: ...

class SCMCloseContainerRequestProto(_message.Message):
    __slots__ = ("containerID", "traceID")
    CONTAINERID_FIELD_NUMBER: _ClassVar[int]
    TRACEID_FIELD_NUMBER: _ClassVar[int]
    containerID: int
    traceID: str
    def __init__(self, containerID: _Optional[int] = ..., traceID: _Optional[str] = ...) -> None: ...

class SCMCloseContainerResponseProto(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class InSafeModeRequestProto(_message.Message):
    __slots__ = ("traceID",)
    TRACEID_FIELD_NUMBER: _ClassVar[int]
    traceID: str
    def __init__(self, traceID: _Optional[str] = ...) -> None: ...

class InSafeModeResponseProto(_message.Message):
    __slots__ = ("inSafeMode", "preCheckComplete")
    INSAFEMODE_FIELD_NUMBER: _ClassVar[int]
    PRECHECKCOMPLETE_FIELD_NUMBER: _ClassVar[int]
    inSafeMode: bool
    preCheckComplete: bool
    def __init__(self, inSafeMode: _Optional[bool] = ..., preCheckComplete: _Optional[bool] = ...) -> None: ...

class GetSafeModeRuleStatusesRequestProto(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class SafeModeRuleStatusProto(_message.Message):
    __slots__ = ("ruleName", "validate", "statusText", "preCheck")
    RULENAME_FIELD_NUMBER: _ClassVar[int]
    VALIDATE_FIELD_NUMBER: _ClassVar[int]
    STATUSTEXT_FIELD_NUMBER: _ClassVar[int]
    PRECHECK_FIELD_NUMBER: _ClassVar[int]
    ruleName: str
    validate: bool
    statusText: str
    preCheck: bool
    def __init__(self, ruleName: _Optional[str] = ..., validate: _Optional[bool] = ..., statusText: _Optional[str] = ..., preCheck: _Optional[bool] = ...) -> None: ...

class GetSafeModeRuleStatusesResponseProto(_message.Message):
    __slots__ = ("safeModeRuleStatusesProto",)
    SAFEMODERULESTATUSESPROTO_FIELD_NUMBER: _ClassVar[int]
    safeModeRuleStatusesProto: _containers.RepeatedCompositeFieldContainer[SafeModeRuleStatusProto]
    def __init__(self, safeModeRuleStatusesProto: _Optional[_Iterable[_Union[SafeModeRuleStatusProto, _Mapping]]] = ...) -> None: ...

class ForceExitSafeModeRequestProto(_message.Message):
    __slots__ = ("traceID",)
    TRACEID_FIELD_NUMBER: _ClassVar[int]
    traceID: str
    def __init__(self, traceID: _Optional[str] = ...) -> None: ...

class ForceExitSafeModeResponseProto(_message.Message):
    __slots__ = ("exitedSafeMode",)
    EXITEDSAFEMODE_FIELD_NUMBER: _ClassVar[int]
    exitedSafeMode: bool
    def __init__(self, exitedSafeMode: _Optional[bool] = ...) -> None: ...

class DecommissionNodesRequestProto(_message.Message):
    __slots__ = ("hosts", "force")
    HOSTS_FIELD_NUMBER: _ClassVar[int]
    FORCE_FIELD_NUMBER: _ClassVar[int]
    hosts: _containers.RepeatedScalarFieldContainer[str]
    force: bool
    def __init__(self, hosts: _Optional[_Iterable[str]] = ..., force: _Optional[bool] = ...) -> None: ...

class DatanodeAdminErrorResponseProto(_message.Message):
    __slots__ = ("host", "error")
    HOST_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    host: str
    error: str
    def __init__(self, host: _Optional[str] = ..., error: _Optional[str] = ...) -> None: ...

class DecommissionNodesResponseProto(_message.Message):
    __slots__ = ("failedHosts",)
    FAILEDHOSTS_FIELD_NUMBER: _ClassVar[int]
    failedHosts: _containers.RepeatedCompositeFieldContainer[DatanodeAdminErrorResponseProto]
    def __init__(self, failedHosts: _Optional[_Iterable[_Union[DatanodeAdminErrorResponseProto, _Mapping]]] = ...) -> None: ...

class RecommissionNodesRequestProto(_message.Message):
    __slots__ = ("hosts",)
    HOSTS_FIELD_NUMBER: _ClassVar[int]
    hosts: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, hosts: _Optional[_Iterable[str]] = ...) -> None: ...

class RecommissionNodesResponseProto(_message.Message):
    __slots__ = ("failedHosts",)
    FAILEDHOSTS_FIELD_NUMBER: _ClassVar[int]
    failedHosts: _containers.RepeatedCompositeFieldContainer[DatanodeAdminErrorResponseProto]
    def __init__(self, failedHosts: _Optional[_Iterable[_Union[DatanodeAdminErrorResponseProto, _Mapping]]] = ...) -> None: ...

class StartMaintenanceNodesRequestProto(_message.Message):
    __slots__ = ("hosts", "endInHours", "force")
    HOSTS_FIELD_NUMBER: _ClassVar[int]
    ENDINHOURS_FIELD_NUMBER: _ClassVar[int]
    FORCE_FIELD_NUMBER: _ClassVar[int]
    hosts: _containers.RepeatedScalarFieldContainer[str]
    endInHours: int
    force: bool
    def __init__(self, hosts: _Optional[_Iterable[str]] = ..., endInHours: _Optional[int] = ..., force: _Optional[bool] = ...) -> None: ...

class StartMaintenanceNodesResponseProto(_message.Message):
    __slots__ = ("failedHosts",)
    FAILEDHOSTS_FIELD_NUMBER: _ClassVar[int]
    failedHosts: _containers.RepeatedCompositeFieldContainer[DatanodeAdminErrorResponseProto]
    def __init__(self, failedHosts: _Optional[_Iterable[_Union[DatanodeAdminErrorResponseProto, _Mapping]]] = ...) -> None: ...

class GetReplicationManagerReportRequestProto(_message.Message):
    __slots__ = ("traceID",)
    TRACEID_FIELD_NUMBER: _ClassVar[int]
    traceID: str
    def __init__(self, traceID: _Optional[str] = ...) -> None: ...

class KeyIntValue(_message.Message):
    __slots__ = ("key", "value")
    KEY_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    key: str
    value: int
    def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...

class KeyContainerIDList(_message.Message):
    __slots__ = ("key", "containerID")
    KEY_FIELD_NUMBER: _ClassVar[int]
    CONTAINERID_FIELD_NUMBER: _ClassVar[int]
    key: str
    containerID: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, key: _Optional[str] = ..., containerID: _Optional[_Iterable[int]] = ...) -> None: ...

class ReplicationManagerReportProto(_message.Message):
    __slots__ = ("timestamp", "stat", "statSample", "sampleLimit")
    TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    STAT_FIELD_NUMBER: _ClassVar[int]
    STATSAMPLE_FIELD_NUMBER: _ClassVar[int]
    SAMPLELIMIT_FIELD_NUMBER: _ClassVar[int]
    timestamp: int
    stat: _containers.RepeatedCompositeFieldContainer[KeyIntValue]
    statSample: _containers.RepeatedCompositeFieldContainer[KeyContainerIDList]
    sampleLimit: int
    def __init__(self, timestamp: _Optional[int] = ..., stat: _Optional[_Iterable[_Union[KeyIntValue, _Mapping]]] = ..., statSample: _Optional[_Iterable[_Union[KeyContainerIDList, _Mapping]]] = ..., sampleLimit: _Optional[int] = ...) -> None: ...

class GetReplicationManagerReportResponseProto(_message.Message):
    __slots__ = ("report",)
    REPORT_FIELD_NUMBER: _ClassVar[int]
    report: ReplicationManagerReportProto
    def __init__(self, report: _Optional[_Union[ReplicationManagerReportProto, _Mapping]] = ...) -> None: ...

class StartReplicationManagerRequestProto(_message.Message):
    __slots__ = ("traceID",)
    TRACEID_FIELD_NUMBER: _ClassVar[int]
    traceID: str
    def __init__(self, traceID: _Optional[str] = ...) -> None: ...

class StartReplicationManagerResponseProto(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class StopReplicationManagerRequestProto(_message.Message):
    __slots__ = ("traceID",)
    TRACEID_FIELD_NUMBER: _ClassVar[int]
    traceID: str
    def __init__(self, traceID: _Optional[str] = ...) -> None: ...

class StopReplicationManagerResponseProto(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ReplicationManagerStatusRequestProto(_message.Message):
    __slots__ = ("traceID",)
    TRACEID_FIELD_NUMBER: _ClassVar[int]
    traceID: str
    def __init__(self, traceID: _Optional[str] = ...) -> None: ...

class ReplicationManagerStatusResponseProto(_message.Message):
    __slots__ = ("isRunning",)
    ISRUNNING_FIELD_NUMBER: _ClassVar[int]
    isRunning: bool
    def __init__(self, isRunning: _Optional[bool] = ...) -> None: ...

class StartContainerBalancerRequestProto(_message.Message):
    __slots__ = ("traceID", "threshold", "maxSizeToMovePerIterationInGB", "maxSizeEnteringTargetInGB", "maxSizeLeavingSourceInGB", "maxDatanodesPercentageToInvolvePerIteration", "iterations", "balancingInterval", "moveTimeout", "moveReplicationTimeout", "networkTopologyEnable", "includeNodes", "excludeNodes")
    TRACEID_FIELD_NUMBER: _ClassVar[int]
    THRESHOLD_FIELD_NUMBER: _ClassVar[int]
    MAXSIZETOMOVEPERITERATIONINGB_FIELD_NUMBER: _ClassVar[int]
    MAXSIZEENTERINGTARGETINGB_FIELD_NUMBER: _ClassVar[int]
    MAXSIZELEAVINGSOURCEINGB_FIELD_NUMBER: _ClassVar[int]
    MAXDATANODESPERCENTAGETOINVOLVEPERITERATION_FIELD_NUMBER: _ClassVar[int]
    ITERATIONS_FIELD_NUMBER: _ClassVar[int]
    BALANCINGINTERVAL_FIELD_NUMBER: _ClassVar[int]
    MOVETIMEOUT_FIELD_NUMBER: _ClassVar[int]
    MOVEREPLICATIONTIMEOUT_FIELD_NUMBER: _ClassVar[int]
    NETWORKTOPOLOGYENABLE_FIELD_NUMBER: _ClassVar[int]
    INCLUDENODES_FIELD_NUMBER: _ClassVar[int]
    EXCLUDENODES_FIELD_NUMBER: _ClassVar[int]
    traceID: str
    threshold: float
    maxSizeToMovePerIterationInGB: int
    maxSizeEnteringTargetInGB: int
    maxSizeLeavingSourceInGB: int
    maxDatanodesPercentageToInvolvePerIteration: int
    iterations: int
    balancingInterval: int
    moveTimeout: int
    moveReplicationTimeout: int
    networkTopologyEnable: bool
    includeNodes: str
    excludeNodes: str
    def __init__(self, traceID: _Optional[str] = ..., threshold: _Optional[float] = ..., maxSizeToMovePerIterationInGB: _Optional[int] = ..., maxSizeEnteringTargetInGB: _Optional[int] = ..., maxSizeLeavingSourceInGB: _Optional[int] = ..., maxDatanodesPercentageToInvolvePerIteration: _Optional[int] = ..., iterations: _Optional[int] = ..., balancingInterval: _Optional[int] = ..., moveTimeout: _Optional[int] = ..., moveReplicationTimeout: _Optional[int] = ..., networkTopologyEnable: _Optional[bool] = ..., includeNodes: _Optional[str] = ..., excludeNodes: _Optional[str] = ...) -> None: ...

class StartContainerBalancerResponseProto(_message.Message):
    __slots__ = ("start", "message")
    START_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    start: bool
    message: str
    def __init__(self, start: _Optional[bool] = ..., message: _Optional[str] = ...) -> None: ...

class StopContainerBalancerRequestProto(_message.Message):
    __slots__ = ("traceID",)
    TRACEID_FIELD_NUMBER: _ClassVar[int]
    traceID: str
    def __init__(self, traceID: _Optional[str] = ...) -> None: ...

class StopContainerBalancerResponseProto(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ContainerBalancerStatusRequestProto(_message.Message):
    __slots__ = ("traceID",)
    TRACEID_FIELD_NUMBER: _ClassVar[int]
    traceID: str
    def __init__(self, traceID: _Optional[str] = ...) -> None: ...

class ContainerBalancerStatusResponseProto(_message.Message):
    __slots__ = ("isRunning",)
    ISRUNNING_FIELD_NUMBER: _ClassVar[int]
    isRunning: bool
    def __init__(self, isRunning: _Optional[bool] = ...) -> None: ...

class ContainerBalancerConfigurationProto(_message.Message):
    __slots__ = ("utilizationThreshold", "datanodesInvolvedMaxPercentagePerIteration", "sizeMovedMaxPerIteration", "sizeEnteringTargetMax", "sizeLeavingSourceMax", "iterations", "excludeContainers", "moveTimeout", "balancingIterationInterval", "includeDatanodes", "excludeDatanodes", "moveNetworkTopologyEnable", "triggerDuBeforeMoveEnable", "shouldRun", "nextIterationIndex", "moveReplicationTimeout")
    UTILIZATIONTHRESHOLD_FIELD_NUMBER: _ClassVar[int]
    DATANODESINVOLVEDMAXPERCENTAGEPERITERATION_FIELD_NUMBER: _ClassVar[int]
    SIZEMOVEDMAXPERITERATION_FIELD_NUMBER: _ClassVar[int]
    SIZEENTERINGTARGETMAX_FIELD_NUMBER: _ClassVar[int]
    SIZELEAVINGSOURCEMAX_FIELD_NUMBER: _ClassVar[int]
    ITERATIONS_FIELD_NUMBER: _ClassVar[int]
    EXCLUDECONTAINERS_FIELD_NUMBER: _ClassVar[int]
    MOVETIMEOUT_FIELD_NUMBER: _ClassVar[int]
    BALANCINGITERATIONINTERVAL_FIELD_NUMBER: _ClassVar[int]
    INCLUDEDATANODES_FIELD_NUMBER: _ClassVar[int]
    EXCLUDEDATANODES_FIELD_NUMBER: _ClassVar[int]
    MOVENETWORKTOPOLOGYENABLE_FIELD_NUMBER: _ClassVar[int]
    TRIGGERDUBEFOREMOVEENABLE_FIELD_NUMBER: _ClassVar[int]
    SHOULDRUN_FIELD_NUMBER: _ClassVar[int]
    NEXTITERATIONINDEX_FIELD_NUMBER: _ClassVar[int]
    MOVEREPLICATIONTIMEOUT_FIELD_NUMBER: _ClassVar[int]
    utilizationThreshold: str
    datanodesInvolvedMaxPercentagePerIteration: int
    sizeMovedMaxPerIteration: int
    sizeEnteringTargetMax: int
    sizeLeavingSourceMax: int
    iterations: int
    excludeContainers: str
    moveTimeout: int
    balancingIterationInterval: int
    includeDatanodes: str
    excludeDatanodes: str
    moveNetworkTopologyEnable: bool
    triggerDuBeforeMoveEnable: bool
    shouldRun: bool
    nextIterationIndex: int
    moveReplicationTimeout: int
    def __init__(self, utilizationThreshold: _Optional[str] = ..., datanodesInvolvedMaxPercentagePerIteration: _Optional[int] = ..., sizeMovedMaxPerIteration: _Optional[int] = ..., sizeEnteringTargetMax: _Optional[int] = ..., sizeLeavingSourceMax: _Optional[int] = ..., iterations: _Optional[int] = ..., excludeContainers: _Optional[str] = ..., moveTimeout: _Optional[int] = ..., balancingIterationInterval: _Optional[int] = ..., includeDatanodes: _Optional[str] = ..., excludeDatanodes: _Optional[str] = ..., moveNetworkTopologyEnable: _Optional[bool] = ..., triggerDuBeforeMoveEnable: _Optional[bool] = ..., shouldRun: _Optional[bool] = ..., nextIterationIndex: _Optional[int] = ..., moveReplicationTimeout: _Optional[int] = ...) -> None: ...

class NodeTransferInfoProto(_message.Message):
    __slots__ = ("uuid", "dataVolume")
    UUID_FIELD_NUMBER: _ClassVar[int]
    DATAVOLUME_FIELD_NUMBER: _ClassVar[int]
    uuid: str
    dataVolume: int
    def __init__(self, uuid: _Optional[str] = ..., dataVolume: _Optional[int] = ...) -> None: ...

class ContainerBalancerTaskIterationStatusInfoProto(_message.Message):
    __slots__ = ("iterationNumber", "iterationResult", "sizeScheduledForMove", "dataSizeMoved", "containerMovesScheduled", "containerMovesCompleted", "containerMovesFailed", "containerMovesTimeout", "sizeEnteringNodes", "sizeLeavingNodes", "iterationDuration", "datanodesInvolved")
    ITERATIONNUMBER_FIELD_NUMBER: _ClassVar[int]
    ITERATIONRESULT_FIELD_NUMBER: _ClassVar[int]
    SIZESCHEDULEDFORMOVE_FIELD_NUMBER: _ClassVar[int]
    DATASIZEMOVED_FIELD_NUMBER: _ClassVar[int]
    CONTAINERMOVESSCHEDULED_FIELD_NUMBER: _ClassVar[int]
    CONTAINERMOVESCOMPLETED_FIELD_NUMBER: _ClassVar[int]
    CONTAINERMOVESFAILED_FIELD_NUMBER: _ClassVar[int]
    CONTAINERMOVESTIMEOUT_FIELD_NUMBER: _ClassVar[int]
    SIZEENTERINGNODES_FIELD_NUMBER: _ClassVar[int]
    SIZELEAVINGNODES_FIELD_NUMBER: _ClassVar[int]
    ITERATIONDURATION_FIELD_NUMBER: _ClassVar[int]
    DATANODESINVOLVED_FIELD_NUMBER: _ClassVar[int]
    iterationNumber: int
    iterationResult: str
    sizeScheduledForMove: int
    dataSizeMoved: int
    containerMovesScheduled: int
    containerMovesCompleted: int
    containerMovesFailed: int
    containerMovesTimeout: int
    sizeEnteringNodes: _containers.RepeatedCompositeFieldContainer[NodeTransferInfoProto]
    sizeLeavingNodes: _containers.RepeatedCompositeFieldContainer[NodeTransferInfoProto]
    iterationDuration: int
    datanodesInvolved: int
    def __init__(self, iterationNumber: _Optional[int] = ..., iterationResult: _Optional[str] = ..., sizeScheduledForMove: _Optional[int] = ..., dataSizeMoved: _Optional[int] = ..., containerMovesScheduled: _Optional[int] = ..., containerMovesCompleted: _Optional[int] = ..., containerMovesFailed: _Optional[int] = ..., containerMovesTimeout: _Optional[int] = ..., sizeEnteringNodes: _Optional[_Iterable[_Union[NodeTransferInfoProto, _Mapping]]] = ..., sizeLeavingNodes: _Optional[_Iterable[_Union[NodeTransferInfoProto, _Mapping]]] = ..., iterationDuration: _Optional[int] = ..., datanodesInvolved: _Optional[int] = ...) -> None: ...

class ContainerBalancerStatusInfoProto(_message.Message):
    __slots__ = ("startedAt", "configuration", "iterationsStatusInfo", "stoppedAt", "stopReason")
    STARTEDAT_FIELD_NUMBER: _ClassVar[int]
    CONFIGURATION_FIELD_NUMBER: _ClassVar[int]
    ITERATIONSSTATUSINFO_FIELD_NUMBER: _ClassVar[int]
    STOPPEDAT_FIELD_NUMBER: _ClassVar[int]
    STOPREASON_FIELD_NUMBER: _ClassVar[int]
    startedAt: int
    configuration: ContainerBalancerConfigurationProto
    iterationsStatusInfo: _containers.RepeatedCompositeFieldContainer[ContainerBalancerTaskIterationStatusInfoProto]
    stoppedAt: int
    stopReason: str
    def __init__(self, startedAt: _Optional[int] = ..., configuration: _Optional[_Union[ContainerBalancerConfigurationProto, _Mapping]] = ..., iterationsStatusInfo: _Optional[_Iterable[_Union[ContainerBalancerTaskIterationStatusInfoProto, _Mapping]]] = ..., stoppedAt: _Optional[int] = ..., stopReason: _Optional[str] = ...) -> None: ...

class ContainerBalancerStatusInfoRequestProto(_message.Message):
    __slots__ = ("traceID",)
    TRACEID_FIELD_NUMBER: _ClassVar[int]
    traceID: str
    def __init__(self, traceID: _Optional[str] = ...) -> None: ...

class ContainerBalancerStatusInfoResponseProto(_message.Message):
    __slots__ = ("isRunning", "containerBalancerStatusInfo")
    ISRUNNING_FIELD_NUMBER: _ClassVar[int]
    CONTAINERBALANCERSTATUSINFO_FIELD_NUMBER: _ClassVar[int]
    isRunning: bool
    containerBalancerStatusInfo: ContainerBalancerStatusInfoProto
    def __init__(self, isRunning: _Optional[bool] = ..., containerBalancerStatusInfo: _Optional[_Union[ContainerBalancerStatusInfoProto, _Mapping]] = ...) -> None: ...

class TransferLeadershipRequestProto(_message.Message):
    __slots__ = ("newLeaderId",)
    NEWLEADERID_FIELD_NUMBER: _ClassVar[int]
    newLeaderId: str
    def __init__(self, newLeaderId: _Optional[str] = ...) -> None: ...

class TransferLeadershipResponseProto(_message.Message):
    __slots__ = ("newLeaderId",)
    NEWLEADERID_FIELD_NUMBER: _ClassVar[int]
    newLeaderId: str
    def __init__(self, newLeaderId: _Optional[str] = ...) -> None: ...

class SnapshotRequestProto(_message.Message):
    __slots__ = ("batchRows",)
    BATCHROWS_FIELD_NUMBER: _ClassVar[int]
    batchRows: int
    def __init__(self, batchRows: _Optional[int] = ...) -> None: ...

class SnapshotInfoProto(_message.Message):
    __slots__ = ("clusterId", "createdMs", "schemaVersion", "rows")
    class RowsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    CLUSTERID_FIELD_NUMBER: _ClassVar[int]
    CREATEDMS_FIELD_NUMBER: _ClassVar[int]
    SCHEMAVERSION_FIELD_NUMBER: _ClassVar[int]
    ROWS_FIELD_NUMBER: _ClassVar[int]
    clusterId: str
    createdMs: int
    schemaVersion: int
    rows: _containers.ScalarMap[str, int]
    def __init__(self, clusterId: _Optional[str] = ..., createdMs: _Optional[int] = ..., schemaVersion: _Optional[int] = ..., rows: _Optional[_Mapping[str, int]] = ...) -> None: ...

class SnapshotBatchProto(_message.Message):
    __slots__ = ("table", "arrowIpc")
    TABLE_FIELD_NUMBER: _ClassVar[int]
    ARROWIPC_FIELD_NUMBER: _ClassVar[int]
    table: str
    arrowIpc: bytes
    def __init__(self, table: _Optional[str] = ..., arrowIpc: _Optional[bytes] = ...) -> None: ...

class SnapshotChunkProto(_message.Message):
    __slots__ = ("info", "batch")
    INFO_FIELD_NUMBER: _ClassVar[int]
    BATCH_FIELD_NUMBER: _ClassVar[int]
    info: SnapshotInfoProto
    batch: SnapshotBatchProto
    def __init__(self, info: _Optional[_Union[SnapshotInfoProto, _Mapping]] = ..., batch: _Optional[_Union[SnapshotBatchProto, _Mapping]] = ...) -> None: ...
