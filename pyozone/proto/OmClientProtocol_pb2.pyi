from pyozone.proto import hdds_pb2 as _hdds_pb2
from pyozone.proto import ScmBlockLocationProtocol_pb2 as _ScmBlockLocationProtocol_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class SseAlgorithm(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SSE_NONE: _ClassVar[SseAlgorithm]
    SSE_S3: _ClassVar[SseAlgorithm]
    SSE_C: _ClassVar[SseAlgorithm]
SSE_NONE: SseAlgorithm
SSE_S3: SseAlgorithm
SSE_C: SseAlgorithm

class OzoneAclInfo(_message.Message):
    __slots__ = ("type", "name", "rights", "aclScope")
    class OzoneAclType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        OZONE_ACL_TYPE_UNSPECIFIED: _ClassVar[OzoneAclInfo.OzoneAclType]
        USER: _ClassVar[OzoneAclInfo.OzoneAclType]
        GROUP: _ClassVar[OzoneAclInfo.OzoneAclType]
        WORLD: _ClassVar[OzoneAclInfo.OzoneAclType]
        ANONYMOUS: _ClassVar[OzoneAclInfo.OzoneAclType]
        CLIENT_IP: _ClassVar[OzoneAclInfo.OzoneAclType]
    OZONE_ACL_TYPE_UNSPECIFIED: OzoneAclInfo.OzoneAclType
    USER: OzoneAclInfo.OzoneAclType
    GROUP: OzoneAclInfo.OzoneAclType
    WORLD: OzoneAclInfo.OzoneAclType
    ANONYMOUS: OzoneAclInfo.OzoneAclType
    CLIENT_IP: OzoneAclInfo.OzoneAclType
    class OzoneAclScope(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        ACCESS: _ClassVar[OzoneAclInfo.OzoneAclScope]
        DEFAULT: _ClassVar[OzoneAclInfo.OzoneAclScope]
    ACCESS: OzoneAclInfo.OzoneAclScope
    DEFAULT: OzoneAclInfo.OzoneAclScope
    TYPE_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    RIGHTS_FIELD_NUMBER: _ClassVar[int]
    ACLSCOPE_FIELD_NUMBER: _ClassVar[int]
    type: OzoneAclInfo.OzoneAclType
    name: str
    rights: bytes
    aclScope: OzoneAclInfo.OzoneAclScope
    def __init__(self, type: _Optional[_Union[OzoneAclInfo.OzoneAclType, str]] = ..., name: _Optional[str] = ..., rights: _Optional[bytes] = ..., aclScope: _Optional[_Union[OzoneAclInfo.OzoneAclScope, str]] = ...) -> None: ...

class VolumeInfo(_message.Message):
    __slots__ = ("volume", "owner", "admin", "creationTime", "modificationTime", "quotaInBytes", "usedBytes", "usedNamespace", "quotaInNamespace", "acls")
    VOLUME_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    ADMIN_FIELD_NUMBER: _ClassVar[int]
    CREATIONTIME_FIELD_NUMBER: _ClassVar[int]
    MODIFICATIONTIME_FIELD_NUMBER: _ClassVar[int]
    QUOTAINBYTES_FIELD_NUMBER: _ClassVar[int]
    USEDBYTES_FIELD_NUMBER: _ClassVar[int]
    USEDNAMESPACE_FIELD_NUMBER: _ClassVar[int]
    QUOTAINNAMESPACE_FIELD_NUMBER: _ClassVar[int]
    ACLS_FIELD_NUMBER: _ClassVar[int]
    volume: str
    owner: str
    admin: str
    creationTime: int
    modificationTime: int
    quotaInBytes: int
    usedBytes: int
    usedNamespace: int
    quotaInNamespace: int
    acls: _containers.RepeatedCompositeFieldContainer[OzoneAclInfo]
    def __init__(self, volume: _Optional[str] = ..., owner: _Optional[str] = ..., admin: _Optional[str] = ..., creationTime: _Optional[int] = ..., modificationTime: _Optional[int] = ..., quotaInBytes: _Optional[int] = ..., usedBytes: _Optional[int] = ..., usedNamespace: _Optional[int] = ..., quotaInNamespace: _Optional[int] = ..., acls: _Optional[_Iterable[_Union[OzoneAclInfo, _Mapping]]] = ...) -> None: ...

class BucketInfo(_message.Message):
    __slots__ = ("volume", "bucket", "creationTime", "modificationTime", "type", "factor", "layout", "usedBytes", "usedNamespace", "owner", "ecReplicationConfig", "quotaInBytes", "quotaInNamespace", "acls", "versioning", "sseDefault", "objectLockEnabled", "defaultRetention")
    VOLUME_FIELD_NUMBER: _ClassVar[int]
    BUCKET_FIELD_NUMBER: _ClassVar[int]
    CREATIONTIME_FIELD_NUMBER: _ClassVar[int]
    MODIFICATIONTIME_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    FACTOR_FIELD_NUMBER: _ClassVar[int]
    LAYOUT_FIELD_NUMBER: _ClassVar[int]
    USEDBYTES_FIELD_NUMBER: _ClassVar[int]
    USEDNAMESPACE_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    ECREPLICATIONCONFIG_FIELD_NUMBER: _ClassVar[int]
    QUOTAINBYTES_FIELD_NUMBER: _ClassVar[int]
    QUOTAINNAMESPACE_FIELD_NUMBER: _ClassVar[int]
    ACLS_FIELD_NUMBER: _ClassVar[int]
    VERSIONING_FIELD_NUMBER: _ClassVar[int]
    SSEDEFAULT_FIELD_NUMBER: _ClassVar[int]
    OBJECTLOCKENABLED_FIELD_NUMBER: _ClassVar[int]
    DEFAULTRETENTION_FIELD_NUMBER: _ClassVar[int]
    volume: str
    bucket: str
    creationTime: int
    modificationTime: int
    type: _hdds_pb2.ReplicationType
    factor: _hdds_pb2.ReplicationFactor
    layout: str
    usedBytes: int
    usedNamespace: int
    owner: str
    ecReplicationConfig: _hdds_pb2.ECReplicationConfig
    quotaInBytes: int
    quotaInNamespace: int
    acls: _containers.RepeatedCompositeFieldContainer[OzoneAclInfo]
    versioning: str
    sseDefault: bool
    objectLockEnabled: bool
    defaultRetention: DefaultRetention
    def __init__(self, volume: _Optional[str] = ..., bucket: _Optional[str] = ..., creationTime: _Optional[int] = ..., modificationTime: _Optional[int] = ..., type: _Optional[_Union[_hdds_pb2.ReplicationType, str]] = ..., factor: _Optional[_Union[_hdds_pb2.ReplicationFactor, str]] = ..., layout: _Optional[str] = ..., usedBytes: _Optional[int] = ..., usedNamespace: _Optional[int] = ..., owner: _Optional[str] = ..., ecReplicationConfig: _Optional[_Union[_hdds_pb2.ECReplicationConfig, _Mapping]] = ..., quotaInBytes: _Optional[int] = ..., quotaInNamespace: _Optional[int] = ..., acls: _Optional[_Iterable[_Union[OzoneAclInfo, _Mapping]]] = ..., versioning: _Optional[str] = ..., sseDefault: _Optional[bool] = ..., objectLockEnabled: _Optional[bool] = ..., defaultRetention: _Optional[_Union[DefaultRetention, _Mapping]] = ...) -> None: ...

class DefaultRetention(_message.Message):
    __slots__ = ("mode", "days", "years")
    MODE_FIELD_NUMBER: _ClassVar[int]
    DAYS_FIELD_NUMBER: _ClassVar[int]
    YEARS_FIELD_NUMBER: _ClassVar[int]
    mode: str
    days: int
    years: int
    def __init__(self, mode: _Optional[str] = ..., days: _Optional[int] = ..., years: _Optional[int] = ...) -> None: ...

class KeyLocation(_message.Message):
    __slots__ = ("blockID", "offset", "length", "pipeline", "createVersion", "containerState", "token")
    BLOCKID_FIELD_NUMBER: _ClassVar[int]
    OFFSET_FIELD_NUMBER: _ClassVar[int]
    LENGTH_FIELD_NUMBER: _ClassVar[int]
    PIPELINE_FIELD_NUMBER: _ClassVar[int]
    CREATEVERSION_FIELD_NUMBER: _ClassVar[int]
    CONTAINERSTATE_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    blockID: _ScmBlockLocationProtocol_pb2.BlockID
    offset: int
    length: int
    pipeline: _hdds_pb2.Pipeline
    createVersion: int
    containerState: str
    token: _hdds_pb2.TokenProto
    def __init__(self, blockID: _Optional[_Union[_ScmBlockLocationProtocol_pb2.BlockID, _Mapping]] = ..., offset: _Optional[int] = ..., length: _Optional[int] = ..., pipeline: _Optional[_Union[_hdds_pb2.Pipeline, _Mapping]] = ..., createVersion: _Optional[int] = ..., containerState: _Optional[str] = ..., token: _Optional[_Union[_hdds_pb2.TokenProto, _Mapping]] = ...) -> None: ...

class KeyInfo(_message.Message):
    __slots__ = ("volume", "bucket", "key", "dataSize", "creationTime", "modificationTime", "type", "factor", "locations", "objectID", "metadata", "tags", "ecReplicationConfig", "owner", "acls", "chargedBytes", "partNumbers", "partSizes", "partChecksums", "versionSeq", "versioned", "deleteMarker", "retentionMode", "retainUntilMs", "legalHold", "sseAlgorithm", "sseIv", "sseWrappedKey", "sseMasterKeyVersion", "sseCustomerKeyMD5", "sseDataKey", "ssePartIvs")
    class MetadataEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    class TagsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    VOLUME_FIELD_NUMBER: _ClassVar[int]
    BUCKET_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    DATASIZE_FIELD_NUMBER: _ClassVar[int]
    CREATIONTIME_FIELD_NUMBER: _ClassVar[int]
    MODIFICATIONTIME_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    FACTOR_FIELD_NUMBER: _ClassVar[int]
    LOCATIONS_FIELD_NUMBER: _ClassVar[int]
    OBJECTID_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    ECREPLICATIONCONFIG_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    ACLS_FIELD_NUMBER: _ClassVar[int]
    CHARGEDBYTES_FIELD_NUMBER: _ClassVar[int]
    PARTNUMBERS_FIELD_NUMBER: _ClassVar[int]
    PARTSIZES_FIELD_NUMBER: _ClassVar[int]
    PARTCHECKSUMS_FIELD_NUMBER: _ClassVar[int]
    VERSIONSEQ_FIELD_NUMBER: _ClassVar[int]
    VERSIONED_FIELD_NUMBER: _ClassVar[int]
    DELETEMARKER_FIELD_NUMBER: _ClassVar[int]
    RETENTIONMODE_FIELD_NUMBER: _ClassVar[int]
    RETAINUNTILMS_FIELD_NUMBER: _ClassVar[int]
    LEGALHOLD_FIELD_NUMBER: _ClassVar[int]
    SSEALGORITHM_FIELD_NUMBER: _ClassVar[int]
    SSEIV_FIELD_NUMBER: _ClassVar[int]
    SSEWRAPPEDKEY_FIELD_NUMBER: _ClassVar[int]
    SSEMASTERKEYVERSION_FIELD_NUMBER: _ClassVar[int]
    SSECUSTOMERKEYMD5_FIELD_NUMBER: _ClassVar[int]
    SSEDATAKEY_FIELD_NUMBER: _ClassVar[int]
    SSEPARTIVS_FIELD_NUMBER: _ClassVar[int]
    volume: str
    bucket: str
    key: str
    dataSize: int
    creationTime: int
    modificationTime: int
    type: _hdds_pb2.ReplicationType
    factor: _hdds_pb2.ReplicationFactor
    locations: _containers.RepeatedCompositeFieldContainer[KeyLocation]
    objectID: int
    metadata: _containers.ScalarMap[str, str]
    tags: _containers.ScalarMap[str, str]
    ecReplicationConfig: _hdds_pb2.ECReplicationConfig
    owner: str
    acls: _containers.RepeatedCompositeFieldContainer[OzoneAclInfo]
    chargedBytes: int
    partNumbers: _containers.RepeatedScalarFieldContainer[int]
    partSizes: _containers.RepeatedScalarFieldContainer[int]
    partChecksums: _containers.RepeatedScalarFieldContainer[str]
    versionSeq: int
    versioned: bool
    deleteMarker: bool
    retentionMode: str
    retainUntilMs: int
    legalHold: str
    sseAlgorithm: SseAlgorithm
    sseIv: bytes
    sseWrappedKey: bytes
    sseMasterKeyVersion: int
    sseCustomerKeyMD5: str
    sseDataKey: bytes
    ssePartIvs: _containers.RepeatedScalarFieldContainer[bytes]
    def __init__(self, volume: _Optional[str] = ..., bucket: _Optional[str] = ..., key: _Optional[str] = ..., dataSize: _Optional[int] = ..., creationTime: _Optional[int] = ..., modificationTime: _Optional[int] = ..., type: _Optional[_Union[_hdds_pb2.ReplicationType, str]] = ..., factor: _Optional[_Union[_hdds_pb2.ReplicationFactor, str]] = ..., locations: _Optional[_Iterable[_Union[KeyLocation, _Mapping]]] = ..., objectID: _Optional[int] = ..., metadata: _Optional[_Mapping[str, str]] = ..., tags: _Optional[_Mapping[str, str]] = ..., ecReplicationConfig: _Optional[_Union[_hdds_pb2.ECReplicationConfig, _Mapping]] = ..., owner: _Optional[str] = ..., acls: _Optional[_Iterable[_Union[OzoneAclInfo, _Mapping]]] = ..., chargedBytes: _Optional[int] = ..., partNumbers: _Optional[_Iterable[int]] = ..., partSizes: _Optional[_Iterable[int]] = ..., partChecksums: _Optional[_Iterable[str]] = ..., versionSeq: _Optional[int] = ..., versioned: _Optional[bool] = ..., deleteMarker: _Optional[bool] = ..., retentionMode: _Optional[str] = ..., retainUntilMs: _Optional[int] = ..., legalHold: _Optional[str] = ..., sseAlgorithm: _Optional[_Union[SseAlgorithm, str]] = ..., sseIv: _Optional[bytes] = ..., sseWrappedKey: _Optional[bytes] = ..., sseMasterKeyVersion: _Optional[int] = ..., sseCustomerKeyMD5: _Optional[str] = ..., sseDataKey: _Optional[bytes] = ..., ssePartIvs: _Optional[_Iterable[bytes]] = ...) -> None: ...

class SseInfo(_message.Message):
    __slots__ = ("algorithm", "iv", "wrappedKey", "masterKeyVersion", "customerKeyMD5")
    ALGORITHM_FIELD_NUMBER: _ClassVar[int]
    IV_FIELD_NUMBER: _ClassVar[int]
    WRAPPEDKEY_FIELD_NUMBER: _ClassVar[int]
    MASTERKEYVERSION_FIELD_NUMBER: _ClassVar[int]
    CUSTOMERKEYMD5_FIELD_NUMBER: _ClassVar[int]
    algorithm: SseAlgorithm
    iv: bytes
    wrappedKey: bytes
    masterKeyVersion: int
    customerKeyMD5: str
    def __init__(self, algorithm: _Optional[_Union[SseAlgorithm, str]] = ..., iv: _Optional[bytes] = ..., wrappedKey: _Optional[bytes] = ..., masterKeyVersion: _Optional[int] = ..., customerKeyMD5: _Optional[str] = ...) -> None: ...

class CreateVolumeRequest(_message.Message):
    __slots__ = ("volume", "owner", "quotaInBytes", "quotaInNamespace")
    VOLUME_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    QUOTAINBYTES_FIELD_NUMBER: _ClassVar[int]
    QUOTAINNAMESPACE_FIELD_NUMBER: _ClassVar[int]
    volume: str
    owner: str
    quotaInBytes: int
    quotaInNamespace: int
    def __init__(self, volume: _Optional[str] = ..., owner: _Optional[str] = ..., quotaInBytes: _Optional[int] = ..., quotaInNamespace: _Optional[int] = ...) -> None: ...

class CreateVolumeResponse(_message.Message):
    __slots__ = ("volume",)
    VOLUME_FIELD_NUMBER: _ClassVar[int]
    volume: VolumeInfo
    def __init__(self, volume: _Optional[_Union[VolumeInfo, _Mapping]] = ...) -> None: ...

class InfoVolumeRequest(_message.Message):
    __slots__ = ("volume",)
    VOLUME_FIELD_NUMBER: _ClassVar[int]
    volume: str
    def __init__(self, volume: _Optional[str] = ...) -> None: ...

class InfoVolumeResponse(_message.Message):
    __slots__ = ("volume",)
    VOLUME_FIELD_NUMBER: _ClassVar[int]
    volume: VolumeInfo
    def __init__(self, volume: _Optional[_Union[VolumeInfo, _Mapping]] = ...) -> None: ...

class DeleteVolumeRequest(_message.Message):
    __slots__ = ("volume",)
    VOLUME_FIELD_NUMBER: _ClassVar[int]
    volume: str
    def __init__(self, volume: _Optional[str] = ...) -> None: ...

class DeleteVolumeResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListVolumesRequest(_message.Message):
    __slots__ = ("prefix", "startKey", "maxKeys")
    PREFIX_FIELD_NUMBER: _ClassVar[int]
    STARTKEY_FIELD_NUMBER: _ClassVar[int]
    MAXKEYS_FIELD_NUMBER: _ClassVar[int]
    prefix: str
    startKey: str
    maxKeys: int
    def __init__(self, prefix: _Optional[str] = ..., startKey: _Optional[str] = ..., maxKeys: _Optional[int] = ...) -> None: ...

class ListVolumesResponse(_message.Message):
    __slots__ = ("volumes",)
    VOLUMES_FIELD_NUMBER: _ClassVar[int]
    volumes: _containers.RepeatedCompositeFieldContainer[VolumeInfo]
    def __init__(self, volumes: _Optional[_Iterable[_Union[VolumeInfo, _Mapping]]] = ...) -> None: ...

class CreateBucketRequest(_message.Message):
    __slots__ = ("volume", "bucket", "type", "factor", "ecReplicationConfig", "owner", "objectLockEnabled", "acls", "ownershipControls")
    VOLUME_FIELD_NUMBER: _ClassVar[int]
    BUCKET_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    FACTOR_FIELD_NUMBER: _ClassVar[int]
    ECREPLICATIONCONFIG_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    OBJECTLOCKENABLED_FIELD_NUMBER: _ClassVar[int]
    ACLS_FIELD_NUMBER: _ClassVar[int]
    OWNERSHIPCONTROLS_FIELD_NUMBER: _ClassVar[int]
    volume: str
    bucket: str
    type: _hdds_pb2.ReplicationType
    factor: _hdds_pb2.ReplicationFactor
    ecReplicationConfig: _hdds_pb2.ECReplicationConfig
    owner: str
    objectLockEnabled: bool
    acls: _containers.RepeatedCompositeFieldContainer[OzoneAclInfo]
    ownershipControls: bytes
    def __init__(self, volume: _Optional[str] = ..., bucket: _Optional[str] = ..., type: _Optional[_Union[_hdds_pb2.ReplicationType, str]] = ..., factor: _Optional[_Union[_hdds_pb2.ReplicationFactor, str]] = ..., ecReplicationConfig: _Optional[_Union[_hdds_pb2.ECReplicationConfig, _Mapping]] = ..., owner: _Optional[str] = ..., objectLockEnabled: _Optional[bool] = ..., acls: _Optional[_Iterable[_Union[OzoneAclInfo, _Mapping]]] = ..., ownershipControls: _Optional[bytes] = ...) -> None: ...

class CreateBucketResponse(_message.Message):
    __slots__ = ("bucket",)
    BUCKET_FIELD_NUMBER: _ClassVar[int]
    bucket: BucketInfo
    def __init__(self, bucket: _Optional[_Union[BucketInfo, _Mapping]] = ...) -> None: ...

class InfoBucketRequest(_message.Message):
    __slots__ = ("volume", "bucket")
    VOLUME_FIELD_NUMBER: _ClassVar[int]
    BUCKET_FIELD_NUMBER: _ClassVar[int]
    volume: str
    bucket: str
    def __init__(self, volume: _Optional[str] = ..., bucket: _Optional[str] = ...) -> None: ...

class InfoBucketResponse(_message.Message):
    __slots__ = ("bucket",)
    BUCKET_FIELD_NUMBER: _ClassVar[int]
    bucket: BucketInfo
    def __init__(self, bucket: _Optional[_Union[BucketInfo, _Mapping]] = ...) -> None: ...

class DeleteBucketRequest(_message.Message):
    __slots__ = ("volume", "bucket")
    VOLUME_FIELD_NUMBER: _ClassVar[int]
    BUCKET_FIELD_NUMBER: _ClassVar[int]
    volume: str
    bucket: str
    def __init__(self, volume: _Optional[str] = ..., bucket: _Optional[str] = ...) -> None: ...

class DeleteBucketResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListBucketsRequest(_message.Message):
    __slots__ = ("volume", "prefix", "startKey", "maxKeys", "owner")
    VOLUME_FIELD_NUMBER: _ClassVar[int]
    PREFIX_FIELD_NUMBER: _ClassVar[int]
    STARTKEY_FIELD_NUMBER: _ClassVar[int]
    MAXKEYS_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    volume: str
    prefix: str
    startKey: str
    maxKeys: int
    owner: str
    def __init__(self, volume: _Optional[str] = ..., prefix: _Optional[str] = ..., startKey: _Optional[str] = ..., maxKeys: _Optional[int] = ..., owner: _Optional[str] = ...) -> None: ...

class ListBucketsResponse(_message.Message):
    __slots__ = ("buckets",)
    BUCKETS_FIELD_NUMBER: _ClassVar[int]
    buckets: _containers.RepeatedCompositeFieldContainer[BucketInfo]
    def __init__(self, buckets: _Optional[_Iterable[_Union[BucketInfo, _Mapping]]] = ...) -> None: ...

class KeyCondition(_message.Message):
    __slots__ = ("mustNotExist", "expectedETag")
    MUSTNOTEXIST_FIELD_NUMBER: _ClassVar[int]
    EXPECTEDETAG_FIELD_NUMBER: _ClassVar[int]
    mustNotExist: bool
    expectedETag: str
    def __init__(self, mustNotExist: _Optional[bool] = ..., expectedETag: _Optional[str] = ...) -> None: ...

class OpenKeyRequest(_message.Message):
    __slots__ = ("volume", "bucket", "key", "dataSize", "type", "factor", "excludeList", "metadata", "tags", "multipartUploadID", "multipartNumber", "ecReplicationConfig", "condition", "sseAlgorithm", "sseCustomerKeyMD5", "acls")
    class MetadataEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    class TagsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    VOLUME_FIELD_NUMBER: _ClassVar[int]
    BUCKET_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    DATASIZE_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    FACTOR_FIELD_NUMBER: _ClassVar[int]
    EXCLUDELIST_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    MULTIPARTUPLOADID_FIELD_NUMBER: _ClassVar[int]
    MULTIPARTNUMBER_FIELD_NUMBER: _ClassVar[int]
    ECREPLICATIONCONFIG_FIELD_NUMBER: _ClassVar[int]
    CONDITION_FIELD_NUMBER: _ClassVar[int]
    SSEALGORITHM_FIELD_NUMBER: _ClassVar[int]
    SSECUSTOMERKEYMD5_FIELD_NUMBER: _ClassVar[int]
    ACLS_FIELD_NUMBER: _ClassVar[int]
    volume: str
    bucket: str
    key: str
    dataSize: int
    type: _hdds_pb2.ReplicationType
    factor: _hdds_pb2.ReplicationFactor
    excludeList: _ScmBlockLocationProtocol_pb2.ExcludeListProto
    metadata: _containers.ScalarMap[str, str]
    tags: _containers.ScalarMap[str, str]
    multipartUploadID: str
    multipartNumber: int
    ecReplicationConfig: _hdds_pb2.ECReplicationConfig
    condition: KeyCondition
    sseAlgorithm: SseAlgorithm
    sseCustomerKeyMD5: str
    acls: _containers.RepeatedCompositeFieldContainer[OzoneAclInfo]
    def __init__(self, volume: _Optional[str] = ..., bucket: _Optional[str] = ..., key: _Optional[str] = ..., dataSize: _Optional[int] = ..., type: _Optional[_Union[_hdds_pb2.ReplicationType, str]] = ..., factor: _Optional[_Union[_hdds_pb2.ReplicationFactor, str]] = ..., excludeList: _Optional[_Union[_ScmBlockLocationProtocol_pb2.ExcludeListProto, _Mapping]] = ..., metadata: _Optional[_Mapping[str, str]] = ..., tags: _Optional[_Mapping[str, str]] = ..., multipartUploadID: _Optional[str] = ..., multipartNumber: _Optional[int] = ..., ecReplicationConfig: _Optional[_Union[_hdds_pb2.ECReplicationConfig, _Mapping]] = ..., condition: _Optional[_Union[KeyCondition, _Mapping]] = ..., sseAlgorithm: _Optional[_Union[SseAlgorithm, str]] = ..., sseCustomerKeyMD5: _Optional[str] = ..., acls: _Optional[_Iterable[_Union[OzoneAclInfo, _Mapping]]] = ...) -> None: ...

class OpenKeyResponse(_message.Message):
    __slots__ = ("keyInfo", "clientID", "openVersion")
    KEYINFO_FIELD_NUMBER: _ClassVar[int]
    CLIENTID_FIELD_NUMBER: _ClassVar[int]
    OPENVERSION_FIELD_NUMBER: _ClassVar[int]
    keyInfo: KeyInfo
    clientID: int
    openVersion: int
    def __init__(self, keyInfo: _Optional[_Union[KeyInfo, _Mapping]] = ..., clientID: _Optional[int] = ..., openVersion: _Optional[int] = ...) -> None: ...

class AllocateBlockRequest(_message.Message):
    __slots__ = ("volume", "bucket", "key", "clientID", "excludeList")
    VOLUME_FIELD_NUMBER: _ClassVar[int]
    BUCKET_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    CLIENTID_FIELD_NUMBER: _ClassVar[int]
    EXCLUDELIST_FIELD_NUMBER: _ClassVar[int]
    volume: str
    bucket: str
    key: str
    clientID: int
    excludeList: _ScmBlockLocationProtocol_pb2.ExcludeListProto
    def __init__(self, volume: _Optional[str] = ..., bucket: _Optional[str] = ..., key: _Optional[str] = ..., clientID: _Optional[int] = ..., excludeList: _Optional[_Union[_ScmBlockLocationProtocol_pb2.ExcludeListProto, _Mapping]] = ...) -> None: ...

class AllocateBlockResponse(_message.Message):
    __slots__ = ("location",)
    LOCATION_FIELD_NUMBER: _ClassVar[int]
    location: KeyLocation
    def __init__(self, location: _Optional[_Union[KeyLocation, _Mapping]] = ...) -> None: ...

class CommitKeyRequest(_message.Message):
    __slots__ = ("volume", "bucket", "key", "clientID", "dataSize", "locations", "metadata", "condition")
    class MetadataEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    VOLUME_FIELD_NUMBER: _ClassVar[int]
    BUCKET_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    CLIENTID_FIELD_NUMBER: _ClassVar[int]
    DATASIZE_FIELD_NUMBER: _ClassVar[int]
    LOCATIONS_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    CONDITION_FIELD_NUMBER: _ClassVar[int]
    volume: str
    bucket: str
    key: str
    clientID: int
    dataSize: int
    locations: _containers.RepeatedCompositeFieldContainer[KeyLocation]
    metadata: _containers.ScalarMap[str, str]
    condition: KeyCondition
    def __init__(self, volume: _Optional[str] = ..., bucket: _Optional[str] = ..., key: _Optional[str] = ..., clientID: _Optional[int] = ..., dataSize: _Optional[int] = ..., locations: _Optional[_Iterable[_Union[KeyLocation, _Mapping]]] = ..., metadata: _Optional[_Mapping[str, str]] = ..., condition: _Optional[_Union[KeyCondition, _Mapping]] = ...) -> None: ...

class CommitKeyResponse(_message.Message):
    __slots__ = ("keyInfo",)
    KEYINFO_FIELD_NUMBER: _ClassVar[int]
    keyInfo: KeyInfo
    def __init__(self, keyInfo: _Optional[_Union[KeyInfo, _Mapping]] = ...) -> None: ...

class LookupKeyRequest(_message.Message):
    __slots__ = ("volume", "bucket", "key", "clientHost", "forceUpdateContainerCache", "versionId", "deleteMarkers")
    VOLUME_FIELD_NUMBER: _ClassVar[int]
    BUCKET_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    CLIENTHOST_FIELD_NUMBER: _ClassVar[int]
    FORCEUPDATECONTAINERCACHE_FIELD_NUMBER: _ClassVar[int]
    VERSIONID_FIELD_NUMBER: _ClassVar[int]
    DELETEMARKERS_FIELD_NUMBER: _ClassVar[int]
    volume: str
    bucket: str
    key: str
    clientHost: str
    forceUpdateContainerCache: bool
    versionId: str
    deleteMarkers: bool
    def __init__(self, volume: _Optional[str] = ..., bucket: _Optional[str] = ..., key: _Optional[str] = ..., clientHost: _Optional[str] = ..., forceUpdateContainerCache: _Optional[bool] = ..., versionId: _Optional[str] = ..., deleteMarkers: _Optional[bool] = ...) -> None: ...

class LookupKeyResponse(_message.Message):
    __slots__ = ("keyInfo",)
    KEYINFO_FIELD_NUMBER: _ClassVar[int]
    keyInfo: KeyInfo
    def __init__(self, keyInfo: _Optional[_Union[KeyInfo, _Mapping]] = ...) -> None: ...

class ListKeysRequest(_message.Message):
    __slots__ = ("volume", "bucket", "prefix", "startKey", "maxKeys", "withBlocks")
    VOLUME_FIELD_NUMBER: _ClassVar[int]
    BUCKET_FIELD_NUMBER: _ClassVar[int]
    PREFIX_FIELD_NUMBER: _ClassVar[int]
    STARTKEY_FIELD_NUMBER: _ClassVar[int]
    MAXKEYS_FIELD_NUMBER: _ClassVar[int]
    WITHBLOCKS_FIELD_NUMBER: _ClassVar[int]
    volume: str
    bucket: str
    prefix: str
    startKey: str
    maxKeys: int
    withBlocks: bool
    def __init__(self, volume: _Optional[str] = ..., bucket: _Optional[str] = ..., prefix: _Optional[str] = ..., startKey: _Optional[str] = ..., maxKeys: _Optional[int] = ..., withBlocks: _Optional[bool] = ...) -> None: ...

class ListKeysResponse(_message.Message):
    __slots__ = ("keys",)
    KEYS_FIELD_NUMBER: _ClassVar[int]
    keys: _containers.RepeatedCompositeFieldContainer[KeyInfo]
    def __init__(self, keys: _Optional[_Iterable[_Union[KeyInfo, _Mapping]]] = ...) -> None: ...

class RenameKeyRequest(_message.Message):
    __slots__ = ("volume", "bucket", "key", "toKey")
    VOLUME_FIELD_NUMBER: _ClassVar[int]
    BUCKET_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    TOKEY_FIELD_NUMBER: _ClassVar[int]
    volume: str
    bucket: str
    key: str
    toKey: str
    def __init__(self, volume: _Optional[str] = ..., bucket: _Optional[str] = ..., key: _Optional[str] = ..., toKey: _Optional[str] = ...) -> None: ...

class RenameKeyResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class DeleteKeyRequest(_message.Message):
    __slots__ = ("volume", "bucket", "key", "condition", "versionId", "bypassGovernanceRetention")
    VOLUME_FIELD_NUMBER: _ClassVar[int]
    BUCKET_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    CONDITION_FIELD_NUMBER: _ClassVar[int]
    VERSIONID_FIELD_NUMBER: _ClassVar[int]
    BYPASSGOVERNANCERETENTION_FIELD_NUMBER: _ClassVar[int]
    volume: str
    bucket: str
    key: str
    condition: KeyCondition
    versionId: str
    bypassGovernanceRetention: bool
    def __init__(self, volume: _Optional[str] = ..., bucket: _Optional[str] = ..., key: _Optional[str] = ..., condition: _Optional[_Union[KeyCondition, _Mapping]] = ..., versionId: _Optional[str] = ..., bypassGovernanceRetention: _Optional[bool] = ...) -> None: ...

class DeleteKeyResponse(_message.Message):
    __slots__ = ("versionId", "deleteMarker")
    VERSIONID_FIELD_NUMBER: _ClassVar[int]
    DELETEMARKER_FIELD_NUMBER: _ClassVar[int]
    versionId: str
    deleteMarker: bool
    def __init__(self, versionId: _Optional[str] = ..., deleteMarker: _Optional[bool] = ...) -> None: ...

class SetBucketVersioningRequest(_message.Message):
    __slots__ = ("volume", "bucket", "versioning")
    VOLUME_FIELD_NUMBER: _ClassVar[int]
    BUCKET_FIELD_NUMBER: _ClassVar[int]
    VERSIONING_FIELD_NUMBER: _ClassVar[int]
    volume: str
    bucket: str
    versioning: str
    def __init__(self, volume: _Optional[str] = ..., bucket: _Optional[str] = ..., versioning: _Optional[str] = ...) -> None: ...

class SetBucketVersioningResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class PutObjectLockConfigurationRequest(_message.Message):
    __slots__ = ("volume", "bucket", "configuration")
    VOLUME_FIELD_NUMBER: _ClassVar[int]
    BUCKET_FIELD_NUMBER: _ClassVar[int]
    CONFIGURATION_FIELD_NUMBER: _ClassVar[int]
    volume: str
    bucket: str
    configuration: bytes
    def __init__(self, volume: _Optional[str] = ..., bucket: _Optional[str] = ..., configuration: _Optional[bytes] = ...) -> None: ...

class PutObjectLockConfigurationResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class PutObjectRetentionRequest(_message.Message):
    __slots__ = ("volume", "bucket", "key", "versionId", "retention", "bypassGovernanceRetention")
    VOLUME_FIELD_NUMBER: _ClassVar[int]
    BUCKET_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    VERSIONID_FIELD_NUMBER: _ClassVar[int]
    RETENTION_FIELD_NUMBER: _ClassVar[int]
    BYPASSGOVERNANCERETENTION_FIELD_NUMBER: _ClassVar[int]
    volume: str
    bucket: str
    key: str
    versionId: str
    retention: bytes
    bypassGovernanceRetention: bool
    def __init__(self, volume: _Optional[str] = ..., bucket: _Optional[str] = ..., key: _Optional[str] = ..., versionId: _Optional[str] = ..., retention: _Optional[bytes] = ..., bypassGovernanceRetention: _Optional[bool] = ...) -> None: ...

class PutObjectRetentionResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class PutObjectLegalHoldRequest(_message.Message):
    __slots__ = ("volume", "bucket", "key", "versionId", "legalHold")
    VOLUME_FIELD_NUMBER: _ClassVar[int]
    BUCKET_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    VERSIONID_FIELD_NUMBER: _ClassVar[int]
    LEGALHOLD_FIELD_NUMBER: _ClassVar[int]
    volume: str
    bucket: str
    key: str
    versionId: str
    legalHold: bytes
    def __init__(self, volume: _Optional[str] = ..., bucket: _Optional[str] = ..., key: _Optional[str] = ..., versionId: _Optional[str] = ..., legalHold: _Optional[bytes] = ...) -> None: ...

class PutObjectLegalHoldResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListKeyVersionsRequest(_message.Message):
    __slots__ = ("volume", "bucket", "prefix", "keyMarker", "versionIdMarker", "maxKeys")
    VOLUME_FIELD_NUMBER: _ClassVar[int]
    BUCKET_FIELD_NUMBER: _ClassVar[int]
    PREFIX_FIELD_NUMBER: _ClassVar[int]
    KEYMARKER_FIELD_NUMBER: _ClassVar[int]
    VERSIONIDMARKER_FIELD_NUMBER: _ClassVar[int]
    MAXKEYS_FIELD_NUMBER: _ClassVar[int]
    volume: str
    bucket: str
    prefix: str
    keyMarker: str
    versionIdMarker: str
    maxKeys: int
    def __init__(self, volume: _Optional[str] = ..., bucket: _Optional[str] = ..., prefix: _Optional[str] = ..., keyMarker: _Optional[str] = ..., versionIdMarker: _Optional[str] = ..., maxKeys: _Optional[int] = ...) -> None: ...

class KeyVersion(_message.Message):
    __slots__ = ("key", "isLatest")
    KEY_FIELD_NUMBER: _ClassVar[int]
    ISLATEST_FIELD_NUMBER: _ClassVar[int]
    key: KeyInfo
    isLatest: bool
    def __init__(self, key: _Optional[_Union[KeyInfo, _Mapping]] = ..., isLatest: _Optional[bool] = ...) -> None: ...

class ListKeyVersionsResponse(_message.Message):
    __slots__ = ("versions",)
    VERSIONS_FIELD_NUMBER: _ClassVar[int]
    versions: _containers.RepeatedCompositeFieldContainer[KeyVersion]
    def __init__(self, versions: _Optional[_Iterable[_Union[KeyVersion, _Mapping]]] = ...) -> None: ...

class PutObjectTaggingRequest(_message.Message):
    __slots__ = ("volume", "bucket", "key", "tags")
    class TagsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    VOLUME_FIELD_NUMBER: _ClassVar[int]
    BUCKET_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    volume: str
    bucket: str
    key: str
    tags: _containers.ScalarMap[str, str]
    def __init__(self, volume: _Optional[str] = ..., bucket: _Optional[str] = ..., key: _Optional[str] = ..., tags: _Optional[_Mapping[str, str]] = ...) -> None: ...

class PutObjectTaggingResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class PutBucketCorsRequest(_message.Message):
    __slots__ = ("volume", "bucket", "configuration")
    VOLUME_FIELD_NUMBER: _ClassVar[int]
    BUCKET_FIELD_NUMBER: _ClassVar[int]
    CONFIGURATION_FIELD_NUMBER: _ClassVar[int]
    volume: str
    bucket: str
    configuration: bytes
    def __init__(self, volume: _Optional[str] = ..., bucket: _Optional[str] = ..., configuration: _Optional[bytes] = ...) -> None: ...

class PutBucketCorsResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetBucketCorsRequest(_message.Message):
    __slots__ = ("volume", "bucket")
    VOLUME_FIELD_NUMBER: _ClassVar[int]
    BUCKET_FIELD_NUMBER: _ClassVar[int]
    volume: str
    bucket: str
    def __init__(self, volume: _Optional[str] = ..., bucket: _Optional[str] = ...) -> None: ...

class GetBucketCorsResponse(_message.Message):
    __slots__ = ("configuration",)
    CONFIGURATION_FIELD_NUMBER: _ClassVar[int]
    configuration: bytes
    def __init__(self, configuration: _Optional[bytes] = ...) -> None: ...

class DeleteBucketCorsRequest(_message.Message):
    __slots__ = ("volume", "bucket")
    VOLUME_FIELD_NUMBER: _ClassVar[int]
    BUCKET_FIELD_NUMBER: _ClassVar[int]
    volume: str
    bucket: str
    def __init__(self, volume: _Optional[str] = ..., bucket: _Optional[str] = ...) -> None: ...

class DeleteBucketCorsResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class PutBucketEncryptionRequest(_message.Message):
    __slots__ = ("volume", "bucket", "configuration")
    VOLUME_FIELD_NUMBER: _ClassVar[int]
    BUCKET_FIELD_NUMBER: _ClassVar[int]
    CONFIGURATION_FIELD_NUMBER: _ClassVar[int]
    volume: str
    bucket: str
    configuration: bytes
    def __init__(self, volume: _Optional[str] = ..., bucket: _Optional[str] = ..., configuration: _Optional[bytes] = ...) -> None: ...

class PutBucketEncryptionResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetBucketEncryptionRequest(_message.Message):
    __slots__ = ("volume", "bucket")
    VOLUME_FIELD_NUMBER: _ClassVar[int]
    BUCKET_FIELD_NUMBER: _ClassVar[int]
    volume: str
    bucket: str
    def __init__(self, volume: _Optional[str] = ..., bucket: _Optional[str] = ...) -> None: ...

class GetBucketEncryptionResponse(_message.Message):
    __slots__ = ("configuration",)
    CONFIGURATION_FIELD_NUMBER: _ClassVar[int]
    configuration: bytes
    def __init__(self, configuration: _Optional[bytes] = ...) -> None: ...

class DeleteBucketEncryptionRequest(_message.Message):
    __slots__ = ("volume", "bucket")
    VOLUME_FIELD_NUMBER: _ClassVar[int]
    BUCKET_FIELD_NUMBER: _ClassVar[int]
    volume: str
    bucket: str
    def __init__(self, volume: _Optional[str] = ..., bucket: _Optional[str] = ...) -> None: ...

class DeleteBucketEncryptionResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class PutBucketLifecycleRequest(_message.Message):
    __slots__ = ("volume", "bucket", "configuration")
    VOLUME_FIELD_NUMBER: _ClassVar[int]
    BUCKET_FIELD_NUMBER: _ClassVar[int]
    CONFIGURATION_FIELD_NUMBER: _ClassVar[int]
    volume: str
    bucket: str
    configuration: bytes
    def __init__(self, volume: _Optional[str] = ..., bucket: _Optional[str] = ..., configuration: _Optional[bytes] = ...) -> None: ...

class PutBucketLifecycleResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetBucketLifecycleRequest(_message.Message):
    __slots__ = ("volume", "bucket")
    VOLUME_FIELD_NUMBER: _ClassVar[int]
    BUCKET_FIELD_NUMBER: _ClassVar[int]
    volume: str
    bucket: str
    def __init__(self, volume: _Optional[str] = ..., bucket: _Optional[str] = ...) -> None: ...

class GetBucketLifecycleResponse(_message.Message):
    __slots__ = ("configuration",)
    CONFIGURATION_FIELD_NUMBER: _ClassVar[int]
    configuration: bytes
    def __init__(self, configuration: _Optional[bytes] = ...) -> None: ...

class DeleteBucketLifecycleRequest(_message.Message):
    __slots__ = ("volume", "bucket")
    VOLUME_FIELD_NUMBER: _ClassVar[int]
    BUCKET_FIELD_NUMBER: _ClassVar[int]
    volume: str
    bucket: str
    def __init__(self, volume: _Optional[str] = ..., bucket: _Optional[str] = ...) -> None: ...

class DeleteBucketLifecycleResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class RunS3LifecycleRequest(_message.Message):
    __slots__ = ("nowMs",)
    NOWMS_FIELD_NUMBER: _ClassVar[int]
    nowMs: int
    def __init__(self, nowMs: _Optional[int] = ...) -> None: ...

class RunS3LifecycleResponse(_message.Message):
    __slots__ = ("keysExpired", "versionsExpired", "markersRemoved", "uploadsAborted")
    KEYSEXPIRED_FIELD_NUMBER: _ClassVar[int]
    VERSIONSEXPIRED_FIELD_NUMBER: _ClassVar[int]
    MARKERSREMOVED_FIELD_NUMBER: _ClassVar[int]
    UPLOADSABORTED_FIELD_NUMBER: _ClassVar[int]
    keysExpired: int
    versionsExpired: int
    markersRemoved: int
    uploadsAborted: int
    def __init__(self, keysExpired: _Optional[int] = ..., versionsExpired: _Optional[int] = ..., markersRemoved: _Optional[int] = ..., uploadsAborted: _Optional[int] = ...) -> None: ...

class RotateS3MasterKeyRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class RotateS3MasterKeyResponse(_message.Message):
    __slots__ = ("version",)
    VERSION_FIELD_NUMBER: _ClassVar[int]
    version: int
    def __init__(self, version: _Optional[int] = ...) -> None: ...

class PutBucketPolicyRequest(_message.Message):
    __slots__ = ("volume", "bucket", "policy")
    VOLUME_FIELD_NUMBER: _ClassVar[int]
    BUCKET_FIELD_NUMBER: _ClassVar[int]
    POLICY_FIELD_NUMBER: _ClassVar[int]
    volume: str
    bucket: str
    policy: bytes
    def __init__(self, volume: _Optional[str] = ..., bucket: _Optional[str] = ..., policy: _Optional[bytes] = ...) -> None: ...

class PutBucketPolicyResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetBucketPolicyRequest(_message.Message):
    __slots__ = ("volume", "bucket")
    VOLUME_FIELD_NUMBER: _ClassVar[int]
    BUCKET_FIELD_NUMBER: _ClassVar[int]
    volume: str
    bucket: str
    def __init__(self, volume: _Optional[str] = ..., bucket: _Optional[str] = ...) -> None: ...

class GetBucketPolicyResponse(_message.Message):
    __slots__ = ("policy",)
    POLICY_FIELD_NUMBER: _ClassVar[int]
    policy: bytes
    def __init__(self, policy: _Optional[bytes] = ...) -> None: ...

class DeleteBucketPolicyRequest(_message.Message):
    __slots__ = ("volume", "bucket")
    VOLUME_FIELD_NUMBER: _ClassVar[int]
    BUCKET_FIELD_NUMBER: _ClassVar[int]
    volume: str
    bucket: str
    def __init__(self, volume: _Optional[str] = ..., bucket: _Optional[str] = ...) -> None: ...

class DeleteBucketPolicyResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class PutBucketPublicAccessBlockRequest(_message.Message):
    __slots__ = ("volume", "bucket", "configuration")
    VOLUME_FIELD_NUMBER: _ClassVar[int]
    BUCKET_FIELD_NUMBER: _ClassVar[int]
    CONFIGURATION_FIELD_NUMBER: _ClassVar[int]
    volume: str
    bucket: str
    configuration: bytes
    def __init__(self, volume: _Optional[str] = ..., bucket: _Optional[str] = ..., configuration: _Optional[bytes] = ...) -> None: ...

class PutBucketPublicAccessBlockResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetBucketPublicAccessBlockRequest(_message.Message):
    __slots__ = ("volume", "bucket")
    VOLUME_FIELD_NUMBER: _ClassVar[int]
    BUCKET_FIELD_NUMBER: _ClassVar[int]
    volume: str
    bucket: str
    def __init__(self, volume: _Optional[str] = ..., bucket: _Optional[str] = ...) -> None: ...

class GetBucketPublicAccessBlockResponse(_message.Message):
    __slots__ = ("configuration",)
    CONFIGURATION_FIELD_NUMBER: _ClassVar[int]
    configuration: bytes
    def __init__(self, configuration: _Optional[bytes] = ...) -> None: ...

class DeleteBucketPublicAccessBlockRequest(_message.Message):
    __slots__ = ("volume", "bucket")
    VOLUME_FIELD_NUMBER: _ClassVar[int]
    BUCKET_FIELD_NUMBER: _ClassVar[int]
    volume: str
    bucket: str
    def __init__(self, volume: _Optional[str] = ..., bucket: _Optional[str] = ...) -> None: ...

class DeleteBucketPublicAccessBlockResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class PutBucketOwnershipControlsRequest(_message.Message):
    __slots__ = ("volume", "bucket", "configuration")
    VOLUME_FIELD_NUMBER: _ClassVar[int]
    BUCKET_FIELD_NUMBER: _ClassVar[int]
    CONFIGURATION_FIELD_NUMBER: _ClassVar[int]
    volume: str
    bucket: str
    configuration: bytes
    def __init__(self, volume: _Optional[str] = ..., bucket: _Optional[str] = ..., configuration: _Optional[bytes] = ...) -> None: ...

class PutBucketOwnershipControlsResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetBucketOwnershipControlsRequest(_message.Message):
    __slots__ = ("volume", "bucket")
    VOLUME_FIELD_NUMBER: _ClassVar[int]
    BUCKET_FIELD_NUMBER: _ClassVar[int]
    volume: str
    bucket: str
    def __init__(self, volume: _Optional[str] = ..., bucket: _Optional[str] = ...) -> None: ...

class GetBucketOwnershipControlsResponse(_message.Message):
    __slots__ = ("configuration",)
    CONFIGURATION_FIELD_NUMBER: _ClassVar[int]
    configuration: bytes
    def __init__(self, configuration: _Optional[bytes] = ...) -> None: ...

class DeleteBucketOwnershipControlsRequest(_message.Message):
    __slots__ = ("volume", "bucket")
    VOLUME_FIELD_NUMBER: _ClassVar[int]
    BUCKET_FIELD_NUMBER: _ClassVar[int]
    volume: str
    bucket: str
    def __init__(self, volume: _Optional[str] = ..., bucket: _Optional[str] = ...) -> None: ...

class DeleteBucketOwnershipControlsResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class S3Secret(_message.Message):
    __slots__ = ("kerberosID", "awsSecret")
    KERBEROSID_FIELD_NUMBER: _ClassVar[int]
    AWSSECRET_FIELD_NUMBER: _ClassVar[int]
    kerberosID: str
    awsSecret: str
    def __init__(self, kerberosID: _Optional[str] = ..., awsSecret: _Optional[str] = ...) -> None: ...

class GetS3SecretRequest(_message.Message):
    __slots__ = ("kerberosID", "createIfNotExist")
    KERBEROSID_FIELD_NUMBER: _ClassVar[int]
    CREATEIFNOTEXIST_FIELD_NUMBER: _ClassVar[int]
    kerberosID: str
    createIfNotExist: bool
    def __init__(self, kerberosID: _Optional[str] = ..., createIfNotExist: _Optional[bool] = ...) -> None: ...

class GetS3SecretResponse(_message.Message):
    __slots__ = ("s3Secret",)
    S3SECRET_FIELD_NUMBER: _ClassVar[int]
    s3Secret: S3Secret
    def __init__(self, s3Secret: _Optional[_Union[S3Secret, _Mapping]] = ...) -> None: ...

class RevokeS3SecretRequest(_message.Message):
    __slots__ = ("kerberosID",)
    KERBEROSID_FIELD_NUMBER: _ClassVar[int]
    kerberosID: str
    def __init__(self, kerberosID: _Optional[str] = ...) -> None: ...

class RevokeS3SecretResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetS3SigningKeyRequest(_message.Message):
    __slots__ = ("accessId", "date", "region", "service")
    ACCESSID_FIELD_NUMBER: _ClassVar[int]
    DATE_FIELD_NUMBER: _ClassVar[int]
    REGION_FIELD_NUMBER: _ClassVar[int]
    SERVICE_FIELD_NUMBER: _ClassVar[int]
    accessId: str
    date: str
    region: str
    service: str
    def __init__(self, accessId: _Optional[str] = ..., date: _Optional[str] = ..., region: _Optional[str] = ..., service: _Optional[str] = ...) -> None: ...

class GetS3SigningKeyResponse(_message.Message):
    __slots__ = ("signingKey",)
    SIGNINGKEY_FIELD_NUMBER: _ClassVar[int]
    signingKey: bytes
    def __init__(self, signingKey: _Optional[bytes] = ...) -> None: ...

class PartInfo(_message.Message):
    __slots__ = ("partNumber", "partName", "partKeyInfo")
    PARTNUMBER_FIELD_NUMBER: _ClassVar[int]
    PARTNAME_FIELD_NUMBER: _ClassVar[int]
    PARTKEYINFO_FIELD_NUMBER: _ClassVar[int]
    partNumber: int
    partName: str
    partKeyInfo: KeyInfo
    def __init__(self, partNumber: _Optional[int] = ..., partName: _Optional[str] = ..., partKeyInfo: _Optional[_Union[KeyInfo, _Mapping]] = ...) -> None: ...

class MultipartInfo(_message.Message):
    __slots__ = ("volume", "bucket", "key", "uploadID", "creationTime", "type", "factor", "objectID", "metadata", "tags", "parts", "ecReplicationConfig", "owner", "acls", "sse")
    class MetadataEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    class TagsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    VOLUME_FIELD_NUMBER: _ClassVar[int]
    BUCKET_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    UPLOADID_FIELD_NUMBER: _ClassVar[int]
    CREATIONTIME_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    FACTOR_FIELD_NUMBER: _ClassVar[int]
    OBJECTID_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    PARTS_FIELD_NUMBER: _ClassVar[int]
    ECREPLICATIONCONFIG_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    ACLS_FIELD_NUMBER: _ClassVar[int]
    SSE_FIELD_NUMBER: _ClassVar[int]
    volume: str
    bucket: str
    key: str
    uploadID: str
    creationTime: int
    type: _hdds_pb2.ReplicationType
    factor: _hdds_pb2.ReplicationFactor
    objectID: int
    metadata: _containers.ScalarMap[str, str]
    tags: _containers.ScalarMap[str, str]
    parts: _containers.RepeatedCompositeFieldContainer[PartInfo]
    ecReplicationConfig: _hdds_pb2.ECReplicationConfig
    owner: str
    acls: _containers.RepeatedCompositeFieldContainer[OzoneAclInfo]
    sse: SseInfo
    def __init__(self, volume: _Optional[str] = ..., bucket: _Optional[str] = ..., key: _Optional[str] = ..., uploadID: _Optional[str] = ..., creationTime: _Optional[int] = ..., type: _Optional[_Union[_hdds_pb2.ReplicationType, str]] = ..., factor: _Optional[_Union[_hdds_pb2.ReplicationFactor, str]] = ..., objectID: _Optional[int] = ..., metadata: _Optional[_Mapping[str, str]] = ..., tags: _Optional[_Mapping[str, str]] = ..., parts: _Optional[_Iterable[_Union[PartInfo, _Mapping]]] = ..., ecReplicationConfig: _Optional[_Union[_hdds_pb2.ECReplicationConfig, _Mapping]] = ..., owner: _Optional[str] = ..., acls: _Optional[_Iterable[_Union[OzoneAclInfo, _Mapping]]] = ..., sse: _Optional[_Union[SseInfo, _Mapping]] = ...) -> None: ...

class InitiateMultipartUploadRequest(_message.Message):
    __slots__ = ("volume", "bucket", "key", "type", "factor", "metadata", "tags", "ecReplicationConfig", "sseAlgorithm", "sseCustomerKeyMD5")
    class MetadataEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    class TagsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    VOLUME_FIELD_NUMBER: _ClassVar[int]
    BUCKET_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    FACTOR_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    ECREPLICATIONCONFIG_FIELD_NUMBER: _ClassVar[int]
    SSEALGORITHM_FIELD_NUMBER: _ClassVar[int]
    SSECUSTOMERKEYMD5_FIELD_NUMBER: _ClassVar[int]
    volume: str
    bucket: str
    key: str
    type: _hdds_pb2.ReplicationType
    factor: _hdds_pb2.ReplicationFactor
    metadata: _containers.ScalarMap[str, str]
    tags: _containers.ScalarMap[str, str]
    ecReplicationConfig: _hdds_pb2.ECReplicationConfig
    sseAlgorithm: SseAlgorithm
    sseCustomerKeyMD5: str
    def __init__(self, volume: _Optional[str] = ..., bucket: _Optional[str] = ..., key: _Optional[str] = ..., type: _Optional[_Union[_hdds_pb2.ReplicationType, str]] = ..., factor: _Optional[_Union[_hdds_pb2.ReplicationFactor, str]] = ..., metadata: _Optional[_Mapping[str, str]] = ..., tags: _Optional[_Mapping[str, str]] = ..., ecReplicationConfig: _Optional[_Union[_hdds_pb2.ECReplicationConfig, _Mapping]] = ..., sseAlgorithm: _Optional[_Union[SseAlgorithm, str]] = ..., sseCustomerKeyMD5: _Optional[str] = ...) -> None: ...

class InitiateMultipartUploadResponse(_message.Message):
    __slots__ = ("uploadID", "sseAlgorithm")
    UPLOADID_FIELD_NUMBER: _ClassVar[int]
    SSEALGORITHM_FIELD_NUMBER: _ClassVar[int]
    uploadID: str
    sseAlgorithm: SseAlgorithm
    def __init__(self, uploadID: _Optional[str] = ..., sseAlgorithm: _Optional[_Union[SseAlgorithm, str]] = ...) -> None: ...

class CommitMultipartUploadPartRequest(_message.Message):
    __slots__ = ("volume", "bucket", "key", "clientID", "multipartUploadID", "multipartNumber", "dataSize", "locations", "metadata")
    class MetadataEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    VOLUME_FIELD_NUMBER: _ClassVar[int]
    BUCKET_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    CLIENTID_FIELD_NUMBER: _ClassVar[int]
    MULTIPARTUPLOADID_FIELD_NUMBER: _ClassVar[int]
    MULTIPARTNUMBER_FIELD_NUMBER: _ClassVar[int]
    DATASIZE_FIELD_NUMBER: _ClassVar[int]
    LOCATIONS_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    volume: str
    bucket: str
    key: str
    clientID: int
    multipartUploadID: str
    multipartNumber: int
    dataSize: int
    locations: _containers.RepeatedCompositeFieldContainer[KeyLocation]
    metadata: _containers.ScalarMap[str, str]
    def __init__(self, volume: _Optional[str] = ..., bucket: _Optional[str] = ..., key: _Optional[str] = ..., clientID: _Optional[int] = ..., multipartUploadID: _Optional[str] = ..., multipartNumber: _Optional[int] = ..., dataSize: _Optional[int] = ..., locations: _Optional[_Iterable[_Union[KeyLocation, _Mapping]]] = ..., metadata: _Optional[_Mapping[str, str]] = ...) -> None: ...

class CommitMultipartUploadPartResponse(_message.Message):
    __slots__ = ("partName", "partKeyInfo")
    PARTNAME_FIELD_NUMBER: _ClassVar[int]
    PARTKEYINFO_FIELD_NUMBER: _ClassVar[int]
    partName: str
    partKeyInfo: KeyInfo
    def __init__(self, partName: _Optional[str] = ..., partKeyInfo: _Optional[_Union[KeyInfo, _Mapping]] = ...) -> None: ...

class Part(_message.Message):
    __slots__ = ("partNumber", "partName")
    PARTNUMBER_FIELD_NUMBER: _ClassVar[int]
    PARTNAME_FIELD_NUMBER: _ClassVar[int]
    partNumber: int
    partName: str
    def __init__(self, partNumber: _Optional[int] = ..., partName: _Optional[str] = ...) -> None: ...

class CompleteMultipartUploadRequest(_message.Message):
    __slots__ = ("volume", "bucket", "key", "uploadID", "parts", "metadata", "condition", "partChecksumName", "sseCustomerKeyMD5")
    class MetadataEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    VOLUME_FIELD_NUMBER: _ClassVar[int]
    BUCKET_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    UPLOADID_FIELD_NUMBER: _ClassVar[int]
    PARTS_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    CONDITION_FIELD_NUMBER: _ClassVar[int]
    PARTCHECKSUMNAME_FIELD_NUMBER: _ClassVar[int]
    SSECUSTOMERKEYMD5_FIELD_NUMBER: _ClassVar[int]
    volume: str
    bucket: str
    key: str
    uploadID: str
    parts: _containers.RepeatedCompositeFieldContainer[Part]
    metadata: _containers.ScalarMap[str, str]
    condition: KeyCondition
    partChecksumName: str
    sseCustomerKeyMD5: str
    def __init__(self, volume: _Optional[str] = ..., bucket: _Optional[str] = ..., key: _Optional[str] = ..., uploadID: _Optional[str] = ..., parts: _Optional[_Iterable[_Union[Part, _Mapping]]] = ..., metadata: _Optional[_Mapping[str, str]] = ..., condition: _Optional[_Union[KeyCondition, _Mapping]] = ..., partChecksumName: _Optional[str] = ..., sseCustomerKeyMD5: _Optional[str] = ...) -> None: ...

class CompleteMultipartUploadResponse(_message.Message):
    __slots__ = ("keyInfo",)
    KEYINFO_FIELD_NUMBER: _ClassVar[int]
    keyInfo: KeyInfo
    def __init__(self, keyInfo: _Optional[_Union[KeyInfo, _Mapping]] = ...) -> None: ...

class AbortMultipartUploadRequest(_message.Message):
    __slots__ = ("volume", "bucket", "key", "uploadID")
    VOLUME_FIELD_NUMBER: _ClassVar[int]
    BUCKET_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    UPLOADID_FIELD_NUMBER: _ClassVar[int]
    volume: str
    bucket: str
    key: str
    uploadID: str
    def __init__(self, volume: _Optional[str] = ..., bucket: _Optional[str] = ..., key: _Optional[str] = ..., uploadID: _Optional[str] = ...) -> None: ...

class AbortMultipartUploadResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListPartsRequest(_message.Message):
    __slots__ = ("volume", "bucket", "key", "uploadID", "partNumberMarker", "maxParts")
    VOLUME_FIELD_NUMBER: _ClassVar[int]
    BUCKET_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    UPLOADID_FIELD_NUMBER: _ClassVar[int]
    PARTNUMBERMARKER_FIELD_NUMBER: _ClassVar[int]
    MAXPARTS_FIELD_NUMBER: _ClassVar[int]
    volume: str
    bucket: str
    key: str
    uploadID: str
    partNumberMarker: int
    maxParts: int
    def __init__(self, volume: _Optional[str] = ..., bucket: _Optional[str] = ..., key: _Optional[str] = ..., uploadID: _Optional[str] = ..., partNumberMarker: _Optional[int] = ..., maxParts: _Optional[int] = ...) -> None: ...

class PartSummary(_message.Message):
    __slots__ = ("partNumber", "partName", "size", "modificationTime", "metadata")
    class MetadataEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    PARTNUMBER_FIELD_NUMBER: _ClassVar[int]
    PARTNAME_FIELD_NUMBER: _ClassVar[int]
    SIZE_FIELD_NUMBER: _ClassVar[int]
    MODIFICATIONTIME_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    partNumber: int
    partName: str
    size: int
    modificationTime: int
    metadata: _containers.ScalarMap[str, str]
    def __init__(self, partNumber: _Optional[int] = ..., partName: _Optional[str] = ..., size: _Optional[int] = ..., modificationTime: _Optional[int] = ..., metadata: _Optional[_Mapping[str, str]] = ...) -> None: ...

class ListPartsResponse(_message.Message):
    __slots__ = ("parts", "nextPartNumberMarker", "isTruncated", "type", "factor", "metadata", "ecReplicationConfig", "sseAlgorithm", "sseCustomerKeyMD5")
    class MetadataEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    PARTS_FIELD_NUMBER: _ClassVar[int]
    NEXTPARTNUMBERMARKER_FIELD_NUMBER: _ClassVar[int]
    ISTRUNCATED_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    FACTOR_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    ECREPLICATIONCONFIG_FIELD_NUMBER: _ClassVar[int]
    SSEALGORITHM_FIELD_NUMBER: _ClassVar[int]
    SSECUSTOMERKEYMD5_FIELD_NUMBER: _ClassVar[int]
    parts: _containers.RepeatedCompositeFieldContainer[PartSummary]
    nextPartNumberMarker: int
    isTruncated: bool
    type: _hdds_pb2.ReplicationType
    factor: _hdds_pb2.ReplicationFactor
    metadata: _containers.ScalarMap[str, str]
    ecReplicationConfig: _hdds_pb2.ECReplicationConfig
    sseAlgorithm: SseAlgorithm
    sseCustomerKeyMD5: str
    def __init__(self, parts: _Optional[_Iterable[_Union[PartSummary, _Mapping]]] = ..., nextPartNumberMarker: _Optional[int] = ..., isTruncated: _Optional[bool] = ..., type: _Optional[_Union[_hdds_pb2.ReplicationType, str]] = ..., factor: _Optional[_Union[_hdds_pb2.ReplicationFactor, str]] = ..., metadata: _Optional[_Mapping[str, str]] = ..., ecReplicationConfig: _Optional[_Union[_hdds_pb2.ECReplicationConfig, _Mapping]] = ..., sseAlgorithm: _Optional[_Union[SseAlgorithm, str]] = ..., sseCustomerKeyMD5: _Optional[str] = ...) -> None: ...

class ListMultipartUploadsRequest(_message.Message):
    __slots__ = ("volume", "bucket", "prefix", "keyMarker", "uploadIdMarker", "maxUploads")
    VOLUME_FIELD_NUMBER: _ClassVar[int]
    BUCKET_FIELD_NUMBER: _ClassVar[int]
    PREFIX_FIELD_NUMBER: _ClassVar[int]
    KEYMARKER_FIELD_NUMBER: _ClassVar[int]
    UPLOADIDMARKER_FIELD_NUMBER: _ClassVar[int]
    MAXUPLOADS_FIELD_NUMBER: _ClassVar[int]
    volume: str
    bucket: str
    prefix: str
    keyMarker: str
    uploadIdMarker: str
    maxUploads: int
    def __init__(self, volume: _Optional[str] = ..., bucket: _Optional[str] = ..., prefix: _Optional[str] = ..., keyMarker: _Optional[str] = ..., uploadIdMarker: _Optional[str] = ..., maxUploads: _Optional[int] = ...) -> None: ...

class MultipartUploadSummary(_message.Message):
    __slots__ = ("key", "uploadID", "creationTime", "type", "factor", "ecReplicationConfig")
    KEY_FIELD_NUMBER: _ClassVar[int]
    UPLOADID_FIELD_NUMBER: _ClassVar[int]
    CREATIONTIME_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    FACTOR_FIELD_NUMBER: _ClassVar[int]
    ECREPLICATIONCONFIG_FIELD_NUMBER: _ClassVar[int]
    key: str
    uploadID: str
    creationTime: int
    type: _hdds_pb2.ReplicationType
    factor: _hdds_pb2.ReplicationFactor
    ecReplicationConfig: _hdds_pb2.ECReplicationConfig
    def __init__(self, key: _Optional[str] = ..., uploadID: _Optional[str] = ..., creationTime: _Optional[int] = ..., type: _Optional[_Union[_hdds_pb2.ReplicationType, str]] = ..., factor: _Optional[_Union[_hdds_pb2.ReplicationFactor, str]] = ..., ecReplicationConfig: _Optional[_Union[_hdds_pb2.ECReplicationConfig, _Mapping]] = ...) -> None: ...

class ListMultipartUploadsResponse(_message.Message):
    __slots__ = ("uploads",)
    UPLOADS_FIELD_NUMBER: _ClassVar[int]
    uploads: _containers.RepeatedCompositeFieldContainer[MultipartUploadSummary]
    def __init__(self, uploads: _Optional[_Iterable[_Union[MultipartUploadSummary, _Mapping]]] = ...) -> None: ...

class SetVolumePropertyRequest(_message.Message):
    __slots__ = ("volumeName", "ownerName", "quotaInBytes", "quotaInNamespace")
    VOLUMENAME_FIELD_NUMBER: _ClassVar[int]
    OWNERNAME_FIELD_NUMBER: _ClassVar[int]
    QUOTAINBYTES_FIELD_NUMBER: _ClassVar[int]
    QUOTAINNAMESPACE_FIELD_NUMBER: _ClassVar[int]
    volumeName: str
    ownerName: str
    quotaInBytes: int
    quotaInNamespace: int
    def __init__(self, volumeName: _Optional[str] = ..., ownerName: _Optional[str] = ..., quotaInBytes: _Optional[int] = ..., quotaInNamespace: _Optional[int] = ...) -> None: ...

class SetVolumePropertyResponse(_message.Message):
    __slots__ = ("volume",)
    VOLUME_FIELD_NUMBER: _ClassVar[int]
    volume: VolumeInfo
    def __init__(self, volume: _Optional[_Union[VolumeInfo, _Mapping]] = ...) -> None: ...

class BucketArgs(_message.Message):
    __slots__ = ("volumeName", "bucketName", "quotaInBytes", "quotaInNamespace", "ownerName")
    VOLUMENAME_FIELD_NUMBER: _ClassVar[int]
    BUCKETNAME_FIELD_NUMBER: _ClassVar[int]
    QUOTAINBYTES_FIELD_NUMBER: _ClassVar[int]
    QUOTAINNAMESPACE_FIELD_NUMBER: _ClassVar[int]
    OWNERNAME_FIELD_NUMBER: _ClassVar[int]
    volumeName: str
    bucketName: str
    quotaInBytes: int
    quotaInNamespace: int
    ownerName: str
    def __init__(self, volumeName: _Optional[str] = ..., bucketName: _Optional[str] = ..., quotaInBytes: _Optional[int] = ..., quotaInNamespace: _Optional[int] = ..., ownerName: _Optional[str] = ...) -> None: ...

class SetBucketPropertyRequest(_message.Message):
    __slots__ = ("bucketArgs",)
    BUCKETARGS_FIELD_NUMBER: _ClassVar[int]
    bucketArgs: BucketArgs
    def __init__(self, bucketArgs: _Optional[_Union[BucketArgs, _Mapping]] = ...) -> None: ...

class SetBucketPropertyResponse(_message.Message):
    __slots__ = ("bucket",)
    BUCKET_FIELD_NUMBER: _ClassVar[int]
    bucket: BucketInfo
    def __init__(self, bucket: _Optional[_Union[BucketInfo, _Mapping]] = ...) -> None: ...

class OzoneObj(_message.Message):
    __slots__ = ("resType", "storeType", "path")
    class ObjectType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        OBJECT_TYPE_UNSPECIFIED: _ClassVar[OzoneObj.ObjectType]
        VOLUME: _ClassVar[OzoneObj.ObjectType]
        BUCKET: _ClassVar[OzoneObj.ObjectType]
        KEY: _ClassVar[OzoneObj.ObjectType]
        PREFIX: _ClassVar[OzoneObj.ObjectType]
    OBJECT_TYPE_UNSPECIFIED: OzoneObj.ObjectType
    VOLUME: OzoneObj.ObjectType
    BUCKET: OzoneObj.ObjectType
    KEY: OzoneObj.ObjectType
    PREFIX: OzoneObj.ObjectType
    class StoreType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        STORE_TYPE_UNSPECIFIED: _ClassVar[OzoneObj.StoreType]
        OZONE: _ClassVar[OzoneObj.StoreType]
        S3: _ClassVar[OzoneObj.StoreType]
    STORE_TYPE_UNSPECIFIED: OzoneObj.StoreType
    OZONE: OzoneObj.StoreType
    S3: OzoneObj.StoreType
    RESTYPE_FIELD_NUMBER: _ClassVar[int]
    STORETYPE_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    resType: OzoneObj.ObjectType
    storeType: OzoneObj.StoreType
    path: str
    def __init__(self, resType: _Optional[_Union[OzoneObj.ObjectType, str]] = ..., storeType: _Optional[_Union[OzoneObj.StoreType, str]] = ..., path: _Optional[str] = ...) -> None: ...

class AddAclRequest(_message.Message):
    __slots__ = ("obj", "acl")
    OBJ_FIELD_NUMBER: _ClassVar[int]
    ACL_FIELD_NUMBER: _ClassVar[int]
    obj: OzoneObj
    acl: OzoneAclInfo
    def __init__(self, obj: _Optional[_Union[OzoneObj, _Mapping]] = ..., acl: _Optional[_Union[OzoneAclInfo, _Mapping]] = ...) -> None: ...

class AddAclResponse(_message.Message):
    __slots__ = ("response",)
    RESPONSE_FIELD_NUMBER: _ClassVar[int]
    response: bool
    def __init__(self, response: _Optional[bool] = ...) -> None: ...

class RemoveAclRequest(_message.Message):
    __slots__ = ("obj", "acl")
    OBJ_FIELD_NUMBER: _ClassVar[int]
    ACL_FIELD_NUMBER: _ClassVar[int]
    obj: OzoneObj
    acl: OzoneAclInfo
    def __init__(self, obj: _Optional[_Union[OzoneObj, _Mapping]] = ..., acl: _Optional[_Union[OzoneAclInfo, _Mapping]] = ...) -> None: ...

class RemoveAclResponse(_message.Message):
    __slots__ = ("response",)
    RESPONSE_FIELD_NUMBER: _ClassVar[int]
    response: bool
    def __init__(self, response: _Optional[bool] = ...) -> None: ...

class SetAclRequest(_message.Message):
    __slots__ = ("obj", "acl")
    OBJ_FIELD_NUMBER: _ClassVar[int]
    ACL_FIELD_NUMBER: _ClassVar[int]
    obj: OzoneObj
    acl: _containers.RepeatedCompositeFieldContainer[OzoneAclInfo]
    def __init__(self, obj: _Optional[_Union[OzoneObj, _Mapping]] = ..., acl: _Optional[_Iterable[_Union[OzoneAclInfo, _Mapping]]] = ...) -> None: ...

class SetAclResponse(_message.Message):
    __slots__ = ("response",)
    RESPONSE_FIELD_NUMBER: _ClassVar[int]
    response: bool
    def __init__(self, response: _Optional[bool] = ...) -> None: ...

class GetAclRequest(_message.Message):
    __slots__ = ("obj",)
    OBJ_FIELD_NUMBER: _ClassVar[int]
    obj: OzoneObj
    def __init__(self, obj: _Optional[_Union[OzoneObj, _Mapping]] = ...) -> None: ...

class GetAclResponse(_message.Message):
    __slots__ = ("acls",)
    ACLS_FIELD_NUMBER: _ClassVar[int]
    acls: _containers.RepeatedCompositeFieldContainer[OzoneAclInfo]
    def __init__(self, acls: _Optional[_Iterable[_Union[OzoneAclInfo, _Mapping]]] = ...) -> None: ...

class ServiceInfoRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ServiceInfoResponse(_message.Message):
    __slots__ = ("clusterID", "omID", "scmInSafeMode")
    CLUSTERID_FIELD_NUMBER: _ClassVar[int]
    OMID_FIELD_NUMBER: _ClassVar[int]
    SCMINSAFEMODE_FIELD_NUMBER: _ClassVar[int]
    clusterID: str
    omID: str
    scmInSafeMode: bool
    def __init__(self, clusterID: _Optional[str] = ..., omID: _Optional[str] = ..., scmInSafeMode: _Optional[bool] = ...) -> None: ...

class EchoRPCRequest(_message.Message):
    __slots__ = ("payloadReq", "payloadSizeResp", "readOnly")
    PAYLOADREQ_FIELD_NUMBER: _ClassVar[int]
    PAYLOADSIZERESP_FIELD_NUMBER: _ClassVar[int]
    READONLY_FIELD_NUMBER: _ClassVar[int]
    payloadReq: bytes
    payloadSizeResp: int
    readOnly: bool
    def __init__(self, payloadReq: _Optional[bytes] = ..., payloadSizeResp: _Optional[int] = ..., readOnly: _Optional[bool] = ...) -> None: ...

class EchoRPCResponse(_message.Message):
    __slots__ = ("payload",)
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    payload: bytes
    def __init__(self, payload: _Optional[bytes] = ...) -> None: ...
