from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class NodeState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    NODE_STATE_UNSPECIFIED: _ClassVar[NodeState]
    HEALTHY: _ClassVar[NodeState]
    STALE: _ClassVar[NodeState]
    DEAD: _ClassVar[NodeState]
    HEALTHY_READONLY: _ClassVar[NodeState]

class NodeOperationalState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    NODE_OPERATIONAL_STATE_UNSPECIFIED: _ClassVar[NodeOperationalState]
    IN_SERVICE: _ClassVar[NodeOperationalState]
    ENTERING_MAINTENANCE: _ClassVar[NodeOperationalState]
    IN_MAINTENANCE: _ClassVar[NodeOperationalState]
    DECOMMISSIONING: _ClassVar[NodeOperationalState]
    DECOMMISSIONED: _ClassVar[NodeOperationalState]

class LifeCycleState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    LIFE_CYCLE_STATE_UNSPECIFIED: _ClassVar[LifeCycleState]
    OPEN: _ClassVar[LifeCycleState]
    CLOSING: _ClassVar[LifeCycleState]
    QUASI_CLOSED: _ClassVar[LifeCycleState]
    CLOSED: _ClassVar[LifeCycleState]
    DELETING: _ClassVar[LifeCycleState]
    DELETED: _ClassVar[LifeCycleState]
    RECOVERING: _ClassVar[LifeCycleState]

class PipelineState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PIPELINE_STATE_UNSPECIFIED: _ClassVar[PipelineState]
    PIPELINE_ALLOCATED: _ClassVar[PipelineState]
    PIPELINE_OPEN: _ClassVar[PipelineState]
    PIPELINE_DORMANT: _ClassVar[PipelineState]
    PIPELINE_CLOSED: _ClassVar[PipelineState]

class ReplicationType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    REPLICATION_TYPE_UNSPECIFIED: _ClassVar[ReplicationType]
    RATIS: _ClassVar[ReplicationType]
    STAND_ALONE: _ClassVar[ReplicationType]
    CHAINED: _ClassVar[ReplicationType]
    EC: _ClassVar[ReplicationType]

class ReplicationFactor(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ZERO: _ClassVar[ReplicationFactor]
    ONE: _ClassVar[ReplicationFactor]
    THREE: _ClassVar[ReplicationFactor]

class StorageTypeProto(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    STORAGE_TYPE_UNSPECIFIED: _ClassVar[StorageTypeProto]
    DISK: _ClassVar[StorageTypeProto]
    SSD: _ClassVar[StorageTypeProto]
    ARCHIVE: _ClassVar[StorageTypeProto]
    RAM_DISK: _ClassVar[StorageTypeProto]
    PROVIDED: _ClassVar[StorageTypeProto]

class AccessModeProto(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ACCESS_MODE_UNSPECIFIED: _ClassVar[AccessModeProto]
    READ: _ClassVar[AccessModeProto]
    WRITE: _ClassVar[AccessModeProto]
    COPY: _ClassVar[AccessModeProto]
    DELETE: _ClassVar[AccessModeProto]
NODE_STATE_UNSPECIFIED: NodeState
HEALTHY: NodeState
STALE: NodeState
DEAD: NodeState
HEALTHY_READONLY: NodeState
NODE_OPERATIONAL_STATE_UNSPECIFIED: NodeOperationalState
IN_SERVICE: NodeOperationalState
ENTERING_MAINTENANCE: NodeOperationalState
IN_MAINTENANCE: NodeOperationalState
DECOMMISSIONING: NodeOperationalState
DECOMMISSIONED: NodeOperationalState
LIFE_CYCLE_STATE_UNSPECIFIED: LifeCycleState
OPEN: LifeCycleState
CLOSING: LifeCycleState
QUASI_CLOSED: LifeCycleState
CLOSED: LifeCycleState
DELETING: LifeCycleState
DELETED: LifeCycleState
RECOVERING: LifeCycleState
PIPELINE_STATE_UNSPECIFIED: PipelineState
PIPELINE_ALLOCATED: PipelineState
PIPELINE_OPEN: PipelineState
PIPELINE_DORMANT: PipelineState
PIPELINE_CLOSED: PipelineState
REPLICATION_TYPE_UNSPECIFIED: ReplicationType
RATIS: ReplicationType
STAND_ALONE: ReplicationType
CHAINED: ReplicationType
EC: ReplicationType
ZERO: ReplicationFactor
ONE: ReplicationFactor
THREE: ReplicationFactor
STORAGE_TYPE_UNSPECIFIED: StorageTypeProto
DISK: StorageTypeProto
SSD: StorageTypeProto
ARCHIVE: StorageTypeProto
RAM_DISK: StorageTypeProto
PROVIDED: StorageTypeProto
ACCESS_MODE_UNSPECIFIED: AccessModeProto
READ: AccessModeProto
WRITE: AccessModeProto
COPY: AccessModeProto
DELETE: AccessModeProto

class Port(_message.Message):
    __slots__ = ("name", "value")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    name: str
    value: int
    def __init__(self, name: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...

class DatanodeDetailsProto(_message.Message):
    __slots__ = ("uuid", "ipAddress", "hostName", "ports", "certSerialId", "networkName", "networkLocation", "persistedOpState", "persistedOpStateExpiry", "currentVersion", "version")
    UUID_FIELD_NUMBER: _ClassVar[int]
    IPADDRESS_FIELD_NUMBER: _ClassVar[int]
    HOSTNAME_FIELD_NUMBER: _ClassVar[int]
    PORTS_FIELD_NUMBER: _ClassVar[int]
    CERTSERIALID_FIELD_NUMBER: _ClassVar[int]
    NETWORKNAME_FIELD_NUMBER: _ClassVar[int]
    NETWORKLOCATION_FIELD_NUMBER: _ClassVar[int]
    PERSISTEDOPSTATE_FIELD_NUMBER: _ClassVar[int]
    PERSISTEDOPSTATEEXPIRY_FIELD_NUMBER: _ClassVar[int]
    CURRENTVERSION_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    uuid: str
    ipAddress: str
    hostName: str
    ports: _containers.RepeatedCompositeFieldContainer[Port]
    certSerialId: str
    networkName: str
    networkLocation: str
    persistedOpState: NodeOperationalState
    persistedOpStateExpiry: int
    currentVersion: int
    version: str
    def __init__(self, uuid: _Optional[str] = ..., ipAddress: _Optional[str] = ..., hostName: _Optional[str] = ..., ports: _Optional[_Iterable[_Union[Port, _Mapping]]] = ..., certSerialId: _Optional[str] = ..., networkName: _Optional[str] = ..., networkLocation: _Optional[str] = ..., persistedOpState: _Optional[_Union[NodeOperationalState, str]] = ..., persistedOpStateExpiry: _Optional[int] = ..., currentVersion: _Optional[int] = ..., version: _Optional[str] = ...) -> None: ...

class ExtendedDatanodeDetailsProto(_message.Message):
    __slots__ = ("datanodeDetails", "setupTime", "revision", "buildDate")
    DATANODEDETAILS_FIELD_NUMBER: _ClassVar[int]
    SETUPTIME_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    BUILDDATE_FIELD_NUMBER: _ClassVar[int]
    datanodeDetails: DatanodeDetailsProto
    setupTime: int
    revision: str
    buildDate: str
    def __init__(self, datanodeDetails: _Optional[_Union[DatanodeDetailsProto, _Mapping]] = ..., setupTime: _Optional[int] = ..., revision: _Optional[str] = ..., buildDate: _Optional[str] = ...) -> None: ...

class PipelineID(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class KeyValue(_message.Message):
    __slots__ = ("key", "value")
    KEY_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    key: str
    value: str
    def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...

class ECReplicationConfig(_message.Message):
    __slots__ = ("data", "parity", "codec", "ecChunkSize")
    DATA_FIELD_NUMBER: _ClassVar[int]
    PARITY_FIELD_NUMBER: _ClassVar[int]
    CODEC_FIELD_NUMBER: _ClassVar[int]
    ECCHUNKSIZE_FIELD_NUMBER: _ClassVar[int]
    data: int
    parity: int
    codec: str
    ecChunkSize: int
    def __init__(self, data: _Optional[int] = ..., parity: _Optional[int] = ..., codec: _Optional[str] = ..., ecChunkSize: _Optional[int] = ...) -> None: ...

class Pipeline(_message.Message):
    __slots__ = ("members", "state", "type", "factor", "id", "leaderID", "memberOrders", "creationTimeStamp", "suggestedLeaderID", "memberReplicaIndexes", "ecReplicationConfig", "stateEnterTime")
    MEMBERS_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    FACTOR_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    LEADERID_FIELD_NUMBER: _ClassVar[int]
    MEMBERORDERS_FIELD_NUMBER: _ClassVar[int]
    CREATIONTIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    SUGGESTEDLEADERID_FIELD_NUMBER: _ClassVar[int]
    MEMBERREPLICAINDEXES_FIELD_NUMBER: _ClassVar[int]
    ECREPLICATIONCONFIG_FIELD_NUMBER: _ClassVar[int]
    STATEENTERTIME_FIELD_NUMBER: _ClassVar[int]
    members: _containers.RepeatedCompositeFieldContainer[DatanodeDetailsProto]
    state: PipelineState
    type: ReplicationType
    factor: ReplicationFactor
    id: PipelineID
    leaderID: str
    memberOrders: _containers.RepeatedScalarFieldContainer[int]
    creationTimeStamp: int
    suggestedLeaderID: str
    memberReplicaIndexes: _containers.RepeatedScalarFieldContainer[int]
    ecReplicationConfig: ECReplicationConfig
    stateEnterTime: int
    def __init__(self, members: _Optional[_Iterable[_Union[DatanodeDetailsProto, _Mapping]]] = ..., state: _Optional[_Union[PipelineState, str]] = ..., type: _Optional[_Union[ReplicationType, str]] = ..., factor: _Optional[_Union[ReplicationFactor, str]] = ..., id: _Optional[_Union[PipelineID, _Mapping]] = ..., leaderID: _Optional[str] = ..., memberOrders: _Optional[_Iterable[int]] = ..., creationTimeStamp: _Optional[int] = ..., suggestedLeaderID: _Optional[str] = ..., memberReplicaIndexes: _Optional[_Iterable[int]] = ..., ecReplicationConfig: _Optional[_Union[ECReplicationConfig, _Mapping]] = ..., stateEnterTime: _Optional[int] = ...) -> None: ...

class ContainerInfoProto(_message.Message):
    __slots__ = ("containerID", "state", "pipelineID", "usedBytes", "numberOfKeys", "stateEnterTime", "owner", "deleteTransactionId", "sequenceId", "replicationFactor", "replicationType", "ecReplicationConfig", "suppressed")
    CONTAINERID_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    PIPELINEID_FIELD_NUMBER: _ClassVar[int]
    USEDBYTES_FIELD_NUMBER: _ClassVar[int]
    NUMBEROFKEYS_FIELD_NUMBER: _ClassVar[int]
    STATEENTERTIME_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    DELETETRANSACTIONID_FIELD_NUMBER: _ClassVar[int]
    SEQUENCEID_FIELD_NUMBER: _ClassVar[int]
    REPLICATIONFACTOR_FIELD_NUMBER: _ClassVar[int]
    REPLICATIONTYPE_FIELD_NUMBER: _ClassVar[int]
    ECREPLICATIONCONFIG_FIELD_NUMBER: _ClassVar[int]
    SUPPRESSED_FIELD_NUMBER: _ClassVar[int]
    containerID: int
    state: LifeCycleState
    pipelineID: PipelineID
    usedBytes: int
    numberOfKeys: int
    stateEnterTime: int
    owner: str
    deleteTransactionId: int
    sequenceId: int
    replicationFactor: ReplicationFactor
    replicationType: ReplicationType
    ecReplicationConfig: ECReplicationConfig
    suppressed: bool
    def __init__(self, containerID: _Optional[int] = ..., state: _Optional[_Union[LifeCycleState, str]] = ..., pipelineID: _Optional[_Union[PipelineID, _Mapping]] = ..., usedBytes: _Optional[int] = ..., numberOfKeys: _Optional[int] = ..., stateEnterTime: _Optional[int] = ..., owner: _Optional[str] = ..., deleteTransactionId: _Optional[int] = ..., sequenceId: _Optional[int] = ..., replicationFactor: _Optional[_Union[ReplicationFactor, str]] = ..., replicationType: _Optional[_Union[ReplicationType, str]] = ..., ecReplicationConfig: _Optional[_Union[ECReplicationConfig, _Mapping]] = ..., suppressed: _Optional[bool] = ...) -> None: ...

class TokenProto(_message.Message):
    __slots__ = ("identifier", "password", "kind", "service")
    IDENTIFIER_FIELD_NUMBER: _ClassVar[int]
    PASSWORD_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    SERVICE_FIELD_NUMBER: _ClassVar[int]
    identifier: bytes
    password: bytes
    kind: str
    service: str
    def __init__(self, identifier: _Optional[bytes] = ..., password: _Optional[bytes] = ..., kind: _Optional[str] = ..., service: _Optional[str] = ...) -> None: ...

class BlockTokenSecretProto(_message.Message):
    __slots__ = ("ownerId", "blockId", "expiryDate", "modes", "maxLength", "secretKeyId")
    OWNERID_FIELD_NUMBER: _ClassVar[int]
    BLOCKID_FIELD_NUMBER: _ClassVar[int]
    EXPIRYDATE_FIELD_NUMBER: _ClassVar[int]
    MODES_FIELD_NUMBER: _ClassVar[int]
    MAXLENGTH_FIELD_NUMBER: _ClassVar[int]
    SECRETKEYID_FIELD_NUMBER: _ClassVar[int]
    ownerId: str
    blockId: str
    expiryDate: int
    modes: _containers.RepeatedScalarFieldContainer[AccessModeProto]
    maxLength: int
    secretKeyId: str
    def __init__(self, ownerId: _Optional[str] = ..., blockId: _Optional[str] = ..., expiryDate: _Optional[int] = ..., modes: _Optional[_Iterable[_Union[AccessModeProto, str]]] = ..., maxLength: _Optional[int] = ..., secretKeyId: _Optional[str] = ...) -> None: ...

class ContainerTokenSecretProto(_message.Message):
    __slots__ = ("ownerId", "containerId", "expiryDate", "secretKeyId")
    OWNERID_FIELD_NUMBER: _ClassVar[int]
    CONTAINERID_FIELD_NUMBER: _ClassVar[int]
    EXPIRYDATE_FIELD_NUMBER: _ClassVar[int]
    SECRETKEYID_FIELD_NUMBER: _ClassVar[int]
    ownerId: str
    containerId: int
    expiryDate: int
    secretKeyId: str
    def __init__(self, ownerId: _Optional[str] = ..., containerId: _Optional[int] = ..., expiryDate: _Optional[int] = ..., secretKeyId: _Optional[str] = ...) -> None: ...
