from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Type(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TYPE_UNSPECIFIED: _ClassVar[Type]
    CreateContainer: _ClassVar[Type]
    ReadContainer: _ClassVar[Type]
    UpdateContainer: _ClassVar[Type]
    DeleteContainer: _ClassVar[Type]
    ListContainer: _ClassVar[Type]
    PutBlock: _ClassVar[Type]
    GetBlock: _ClassVar[Type]
    DeleteBlock: _ClassVar[Type]
    ListBlock: _ClassVar[Type]
    ReadChunk: _ClassVar[Type]
    DeleteChunk: _ClassVar[Type]
    WriteChunk: _ClassVar[Type]
    ListChunk: _ClassVar[Type]
    CompactChunk: _ClassVar[Type]
    PutSmallFile: _ClassVar[Type]
    GetSmallFile: _ClassVar[Type]
    CloseContainer: _ClassVar[Type]
    GetCommittedBlockLength: _ClassVar[Type]
    StreamInit: _ClassVar[Type]
    StreamWrite: _ClassVar[Type]
    FinalizeBlock: _ClassVar[Type]
    Echo: _ClassVar[Type]
    WatchForCommit: _ClassVar[Type]

class Result(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RESULT_UNSPECIFIED: _ClassVar[Result]
    SUCCESS: _ClassVar[Result]
    UNSUPPORTED_REQUEST: _ClassVar[Result]
    MALFORMED_REQUEST: _ClassVar[Result]
    CONTAINER_INTERNAL_ERROR: _ClassVar[Result]
    INVALID_CONFIG: _ClassVar[Result]
    INVALID_FILE_HASH_FOUND: _ClassVar[Result]
    CONTAINER_EXISTS: _ClassVar[Result]
    NO_SUCH_ALGORITHM: _ClassVar[Result]
    CONTAINER_NOT_FOUND: _ClassVar[Result]
    IO_EXCEPTION: _ClassVar[Result]
    UNABLE_TO_READ_METADATA_DB: _ClassVar[Result]
    NO_SUCH_BLOCK: _ClassVar[Result]
    OVERWRITE_FLAG_REQUIRED: _ClassVar[Result]
    UNABLE_TO_FIND_DATA_DIR: _ClassVar[Result]
    INVALID_WRITE_SIZE: _ClassVar[Result]
    CHECKSUM_MISMATCH: _ClassVar[Result]
    UNABLE_TO_FIND_CHUNK: _ClassVar[Result]
    PROTOC_DECODING_ERROR: _ClassVar[Result]
    INVALID_ARGUMENT: _ClassVar[Result]
    PUT_SMALL_FILE_ERROR: _ClassVar[Result]
    GET_SMALL_FILE_ERROR: _ClassVar[Result]
    CLOSED_CONTAINER_IO: _ClassVar[Result]
    ERROR_IN_COMPACT_DB: _ClassVar[Result]
    UNCLOSED_CONTAINER_IO: _ClassVar[Result]
    DELETE_ON_OPEN_CONTAINER: _ClassVar[Result]
    CLOSED_CONTAINER_RETRY: _ClassVar[Result]
    INVALID_CONTAINER_STATE: _ClassVar[Result]
    DISK_OUT_OF_SPACE: _ClassVar[Result]
    CONTAINER_ALREADY_EXISTS: _ClassVar[Result]
    CONTAINER_METADATA_ERROR: _ClassVar[Result]
    CONTAINER_FILES_CREATE_ERROR: _ClassVar[Result]
    CONTAINER_CHECKSUM_ERROR: _ClassVar[Result]
    UNKNOWN_CONTAINER_TYPE: _ClassVar[Result]
    BLOCK_NOT_COMMITTED: _ClassVar[Result]
    CONTAINER_UNHEALTHY: _ClassVar[Result]
    UNKNOWN_BCSID: _ClassVar[Result]
    BCSID_MISMATCH: _ClassVar[Result]
    CONTAINER_NOT_OPEN: _ClassVar[Result]
    CONTAINER_MISSING: _ClassVar[Result]
    BLOCK_TOKEN_VERIFICATION_FAILED: _ClassVar[Result]
    ERROR_IN_DB_SYNC: _ClassVar[Result]
    CHUNK_FILE_INCONSISTENCY: _ClassVar[Result]
    DELETE_ON_NON_EMPTY_CONTAINER: _ClassVar[Result]
    EXPORT_CONTAINER_METADATA_FAILED: _ClassVar[Result]
    IMPORT_CONTAINER_METADATA_FAILED: _ClassVar[Result]
    BLOCK_ALREADY_FINALIZED: _ClassVar[Result]
    CONTAINER_DESCRIPTOR_MISSING: _ClassVar[Result]
    GROUP_MISMATCH: _ClassVar[Result]
    NOT_LEADER: _ClassVar[Result]
    NOT_REPLICATED: _ClassVar[Result]
    RAFT_RETRY_FAILURE: _ClassVar[Result]

class ReplicationLevel(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    REPLICATION_LEVEL_UNSPECIFIED: _ClassVar[ReplicationLevel]
    MAJORITY_COMMITTED: _ClassVar[ReplicationLevel]
    ALL_COMMITTED: _ClassVar[ReplicationLevel]

class ContainerType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CONTAINER_TYPE_UNSPECIFIED: _ClassVar[ContainerType]
    KeyValueContainer: _ClassVar[ContainerType]

class ChecksumType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CHECKSUM_TYPE_UNSPECIFIED: _ClassVar[ChecksumType]
    NONE: _ClassVar[ChecksumType]
    CRC32: _ClassVar[ChecksumType]
    CRC32C: _ClassVar[ChecksumType]
    SHA256: _ClassVar[ChecksumType]
    MD5: _ClassVar[ChecksumType]

class ReadChunkVersion(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    V0: _ClassVar[ReadChunkVersion]
    V1: _ClassVar[ReadChunkVersion]

class CopyContainerCompressProto(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    COMPRESSION_UNSPECIFIED: _ClassVar[CopyContainerCompressProto]
    NO_COMPRESSION: _ClassVar[CopyContainerCompressProto]
    GZIP: _ClassVar[CopyContainerCompressProto]
    LZ4: _ClassVar[CopyContainerCompressProto]
    SNAPPY: _ClassVar[CopyContainerCompressProto]
    ZSTD: _ClassVar[CopyContainerCompressProto]
TYPE_UNSPECIFIED: Type
CreateContainer: Type
ReadContainer: Type
UpdateContainer: Type
DeleteContainer: Type
ListContainer: Type
PutBlock: Type
GetBlock: Type
DeleteBlock: Type
ListBlock: Type
ReadChunk: Type
DeleteChunk: Type
WriteChunk: Type
ListChunk: Type
CompactChunk: Type
PutSmallFile: Type
GetSmallFile: Type
CloseContainer: Type
GetCommittedBlockLength: Type
StreamInit: Type
StreamWrite: Type
FinalizeBlock: Type
Echo: Type
WatchForCommit: Type
RESULT_UNSPECIFIED: Result
SUCCESS: Result
UNSUPPORTED_REQUEST: Result
MALFORMED_REQUEST: Result
CONTAINER_INTERNAL_ERROR: Result
INVALID_CONFIG: Result
INVALID_FILE_HASH_FOUND: Result
CONTAINER_EXISTS: Result
NO_SUCH_ALGORITHM: Result
CONTAINER_NOT_FOUND: Result
IO_EXCEPTION: Result
UNABLE_TO_READ_METADATA_DB: Result
NO_SUCH_BLOCK: Result
OVERWRITE_FLAG_REQUIRED: Result
UNABLE_TO_FIND_DATA_DIR: Result
INVALID_WRITE_SIZE: Result
CHECKSUM_MISMATCH: Result
UNABLE_TO_FIND_CHUNK: Result
PROTOC_DECODING_ERROR: Result
INVALID_ARGUMENT: Result
PUT_SMALL_FILE_ERROR: Result
GET_SMALL_FILE_ERROR: Result
CLOSED_CONTAINER_IO: Result
ERROR_IN_COMPACT_DB: Result
UNCLOSED_CONTAINER_IO: Result
DELETE_ON_OPEN_CONTAINER: Result
CLOSED_CONTAINER_RETRY: Result
INVALID_CONTAINER_STATE: Result
DISK_OUT_OF_SPACE: Result
CONTAINER_ALREADY_EXISTS: Result
CONTAINER_METADATA_ERROR: Result
CONTAINER_FILES_CREATE_ERROR: Result
CONTAINER_CHECKSUM_ERROR: Result
UNKNOWN_CONTAINER_TYPE: Result
BLOCK_NOT_COMMITTED: Result
CONTAINER_UNHEALTHY: Result
UNKNOWN_BCSID: Result
BCSID_MISMATCH: Result
CONTAINER_NOT_OPEN: Result
CONTAINER_MISSING: Result
BLOCK_TOKEN_VERIFICATION_FAILED: Result
ERROR_IN_DB_SYNC: Result
CHUNK_FILE_INCONSISTENCY: Result
DELETE_ON_NON_EMPTY_CONTAINER: Result
EXPORT_CONTAINER_METADATA_FAILED: Result
IMPORT_CONTAINER_METADATA_FAILED: Result
BLOCK_ALREADY_FINALIZED: Result
CONTAINER_DESCRIPTOR_MISSING: Result
GROUP_MISMATCH: Result
NOT_LEADER: Result
NOT_REPLICATED: Result
RAFT_RETRY_FAILURE: Result
REPLICATION_LEVEL_UNSPECIFIED: ReplicationLevel
MAJORITY_COMMITTED: ReplicationLevel
ALL_COMMITTED: ReplicationLevel
CONTAINER_TYPE_UNSPECIFIED: ContainerType
KeyValueContainer: ContainerType
CHECKSUM_TYPE_UNSPECIFIED: ChecksumType
NONE: ChecksumType
CRC32: ChecksumType
CRC32C: ChecksumType
SHA256: ChecksumType
MD5: ChecksumType
V0: ReadChunkVersion
V1: ReadChunkVersion
COMPRESSION_UNSPECIFIED: CopyContainerCompressProto
NO_COMPRESSION: CopyContainerCompressProto
GZIP: CopyContainerCompressProto
LZ4: CopyContainerCompressProto
SNAPPY: CopyContainerCompressProto
ZSTD: CopyContainerCompressProto

class DatanodeBlockID(_message.Message):
    __slots__ = ("containerID", "localID", "blockCommitSequenceId", "replicaIndex")
    CONTAINERID_FIELD_NUMBER: _ClassVar[int]
    LOCALID_FIELD_NUMBER: _ClassVar[int]
    BLOCKCOMMITSEQUENCEID_FIELD_NUMBER: _ClassVar[int]
    REPLICAINDEX_FIELD_NUMBER: _ClassVar[int]
    containerID: int
    localID: int
    blockCommitSequenceId: int
    replicaIndex: int
    def __init__(self, containerID: _Optional[int] = ..., localID: _Optional[int] = ..., blockCommitSequenceId: _Optional[int] = ..., replicaIndex: _Optional[int] = ...) -> None: ...

class KeyValue(_message.Message):
    __slots__ = ("key", "value")
    KEY_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    key: str
    value: str
    def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...

class ContainerCommandRequestProto(_message.Message):
    __slots__ = ("cmdType", "traceID", "containerID", "datanodeUuid", "pipelineID", "createContainer", "readContainer", "updateContainer", "deleteContainer", "listContainer", "closeContainer", "putBlock", "getBlock", "deleteBlock", "listBlock", "readChunk", "writeChunk", "deleteChunk", "listChunk", "putSmallFile", "getSmallFile", "getCommittedBlockLength", "finalizeBlock", "echo", "watchForCommit", "encodedToken", "version")
    CMDTYPE_FIELD_NUMBER: _ClassVar[int]
    TRACEID_FIELD_NUMBER: _ClassVar[int]
    CONTAINERID_FIELD_NUMBER: _ClassVar[int]
    DATANODEUUID_FIELD_NUMBER: _ClassVar[int]
    PIPELINEID_FIELD_NUMBER: _ClassVar[int]
    CREATECONTAINER_FIELD_NUMBER: _ClassVar[int]
    READCONTAINER_FIELD_NUMBER: _ClassVar[int]
    UPDATECONTAINER_FIELD_NUMBER: _ClassVar[int]
    DELETECONTAINER_FIELD_NUMBER: _ClassVar[int]
    LISTCONTAINER_FIELD_NUMBER: _ClassVar[int]
    CLOSECONTAINER_FIELD_NUMBER: _ClassVar[int]
    PUTBLOCK_FIELD_NUMBER: _ClassVar[int]
    GETBLOCK_FIELD_NUMBER: _ClassVar[int]
    DELETEBLOCK_FIELD_NUMBER: _ClassVar[int]
    LISTBLOCK_FIELD_NUMBER: _ClassVar[int]
    READCHUNK_FIELD_NUMBER: _ClassVar[int]
    WRITECHUNK_FIELD_NUMBER: _ClassVar[int]
    DELETECHUNK_FIELD_NUMBER: _ClassVar[int]
    LISTCHUNK_FIELD_NUMBER: _ClassVar[int]
    PUTSMALLFILE_FIELD_NUMBER: _ClassVar[int]
    GETSMALLFILE_FIELD_NUMBER: _ClassVar[int]
    GETCOMMITTEDBLOCKLENGTH_FIELD_NUMBER: _ClassVar[int]
    FINALIZEBLOCK_FIELD_NUMBER: _ClassVar[int]
    ECHO_FIELD_NUMBER: _ClassVar[int]
    WATCHFORCOMMIT_FIELD_NUMBER: _ClassVar[int]
    ENCODEDTOKEN_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    cmdType: Type
    traceID: str
    containerID: int
    datanodeUuid: str
    pipelineID: str
    createContainer: CreateContainerRequestProto
    readContainer: ReadContainerRequestProto
    updateContainer: UpdateContainerRequestProto
    deleteContainer: DeleteContainerRequestProto
    listContainer: ListContainerRequestProto
    closeContainer: CloseContainerRequestProto
    putBlock: PutBlockRequestProto
    getBlock: GetBlockRequestProto
    deleteBlock: DeleteBlockRequestProto
    listBlock: ListBlockRequestProto
    readChunk: ReadChunkRequestProto
    writeChunk: WriteChunkRequestProto
    deleteChunk: DeleteChunkRequestProto
    listChunk: ListChunkRequestProto
    putSmallFile: PutSmallFileRequestProto
    getSmallFile: GetSmallFileRequestProto
    getCommittedBlockLength: GetCommittedBlockLengthRequestProto
    finalizeBlock: FinalizeBlockRequestProto
    echo: EchoRequestProto
    watchForCommit: WatchForCommitRequestProto
    encodedToken: str
    version: int
    def __init__(self, cmdType: _Optional[_Union[Type, str]] = ..., traceID: _Optional[str] = ..., containerID: _Optional[int] = ..., datanodeUuid: _Optional[str] = ..., pipelineID: _Optional[str] = ..., createContainer: _Optional[_Union[CreateContainerRequestProto, _Mapping]] = ..., readContainer: _Optional[_Union[ReadContainerRequestProto, _Mapping]] = ..., updateContainer: _Optional[_Union[UpdateContainerRequestProto, _Mapping]] = ..., deleteContainer: _Optional[_Union[DeleteContainerRequestProto, _Mapping]] = ..., listContainer: _Optional[_Union[ListContainerRequestProto, _Mapping]] = ..., closeContainer: _Optional[_Union[CloseContainerRequestProto, _Mapping]] = ..., putBlock: _Optional[_Union[PutBlockRequestProto, _Mapping]] = ..., getBlock: _Optional[_Union[GetBlockRequestProto, _Mapping]] = ..., deleteBlock: _Optional[_Union[DeleteBlockRequestProto, _Mapping]] = ..., listBlock: _Optional[_Union[ListBlockRequestProto, _Mapping]] = ..., readChunk: _Optional[_Union[ReadChunkRequestProto, _Mapping]] = ..., writeChunk: _Optional[_Union[WriteChunkRequestProto, _Mapping]] = ..., deleteChunk: _Optional[_Union[DeleteChunkRequestProto, _Mapping]] = ..., listChunk: _Optional[_Union[ListChunkRequestProto, _Mapping]] = ..., putSmallFile: _Optional[_Union[PutSmallFileRequestProto, _Mapping]] = ..., getSmallFile: _Optional[_Union[GetSmallFileRequestProto, _Mapping]] = ..., getCommittedBlockLength: _Optional[_Union[GetCommittedBlockLengthRequestProto, _Mapping]] = ..., finalizeBlock: _Optional[_Union[FinalizeBlockRequestProto, _Mapping]] = ..., echo: _Optional[_Union[EchoRequestProto, _Mapping]] = ..., watchForCommit: _Optional[_Union[WatchForCommitRequestProto, _Mapping]] = ..., encodedToken: _Optional[str] = ..., version: _Optional[int] = ...) -> None: ...

class ContainerCommandResponseProto(_message.Message):
    __slots__ = ("cmdType", "traceID", "result", "message", "createContainer", "readContainer", "updateContainer", "deleteContainer", "listContainer", "closeContainer", "putBlock", "getBlock", "deleteBlock", "listBlock", "writeChunk", "readChunk", "deleteChunk", "listChunk", "putSmallFile", "getSmallFile", "getCommittedBlockLength", "finalizeBlock", "echo", "watchForCommit", "logIndex", "commitInfos", "suggestedLeader")
    CMDTYPE_FIELD_NUMBER: _ClassVar[int]
    TRACEID_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    CREATECONTAINER_FIELD_NUMBER: _ClassVar[int]
    READCONTAINER_FIELD_NUMBER: _ClassVar[int]
    UPDATECONTAINER_FIELD_NUMBER: _ClassVar[int]
    DELETECONTAINER_FIELD_NUMBER: _ClassVar[int]
    LISTCONTAINER_FIELD_NUMBER: _ClassVar[int]
    CLOSECONTAINER_FIELD_NUMBER: _ClassVar[int]
    PUTBLOCK_FIELD_NUMBER: _ClassVar[int]
    GETBLOCK_FIELD_NUMBER: _ClassVar[int]
    DELETEBLOCK_FIELD_NUMBER: _ClassVar[int]
    LISTBLOCK_FIELD_NUMBER: _ClassVar[int]
    WRITECHUNK_FIELD_NUMBER: _ClassVar[int]
    READCHUNK_FIELD_NUMBER: _ClassVar[int]
    DELETECHUNK_FIELD_NUMBER: _ClassVar[int]
    LISTCHUNK_FIELD_NUMBER: _ClassVar[int]
    PUTSMALLFILE_FIELD_NUMBER: _ClassVar[int]
    GETSMALLFILE_FIELD_NUMBER: _ClassVar[int]
    GETCOMMITTEDBLOCKLENGTH_FIELD_NUMBER: _ClassVar[int]
    FINALIZEBLOCK_FIELD_NUMBER: _ClassVar[int]
    ECHO_FIELD_NUMBER: _ClassVar[int]
    WATCHFORCOMMIT_FIELD_NUMBER: _ClassVar[int]
    LOGINDEX_FIELD_NUMBER: _ClassVar[int]
    COMMITINFOS_FIELD_NUMBER: _ClassVar[int]
    SUGGESTEDLEADER_FIELD_NUMBER: _ClassVar[int]
    cmdType: Type
    traceID: str
    result: Result
    message: str
    createContainer: CreateContainerResponseProto
    readContainer: ReadContainerResponseProto
    updateContainer: UpdateContainerResponseProto
    deleteContainer: DeleteContainerResponseProto
    listContainer: ListContainerResponseProto
    closeContainer: CloseContainerResponseProto
    putBlock: PutBlockResponseProto
    getBlock: GetBlockResponseProto
    deleteBlock: DeleteBlockResponseProto
    listBlock: ListBlockResponseProto
    writeChunk: WriteChunkResponseProto
    readChunk: ReadChunkResponseProto
    deleteChunk: DeleteChunkResponseProto
    listChunk: ListChunkResponseProto
    putSmallFile: PutSmallFileResponseProto
    getSmallFile: GetSmallFileResponseProto
    getCommittedBlockLength: GetCommittedBlockLengthResponseProto
    finalizeBlock: FinalizeBlockResponseProto
    echo: EchoResponseProto
    watchForCommit: WatchForCommitResponseProto
    logIndex: int
    commitInfos: _containers.RepeatedCompositeFieldContainer[CommitInfoProto]
    suggestedLeader: str
    def __init__(self, cmdType: _Optional[_Union[Type, str]] = ..., traceID: _Optional[str] = ..., result: _Optional[_Union[Result, str]] = ..., message: _Optional[str] = ..., createContainer: _Optional[_Union[CreateContainerResponseProto, _Mapping]] = ..., readContainer: _Optional[_Union[ReadContainerResponseProto, _Mapping]] = ..., updateContainer: _Optional[_Union[UpdateContainerResponseProto, _Mapping]] = ..., deleteContainer: _Optional[_Union[DeleteContainerResponseProto, _Mapping]] = ..., listContainer: _Optional[_Union[ListContainerResponseProto, _Mapping]] = ..., closeContainer: _Optional[_Union[CloseContainerResponseProto, _Mapping]] = ..., putBlock: _Optional[_Union[PutBlockResponseProto, _Mapping]] = ..., getBlock: _Optional[_Union[GetBlockResponseProto, _Mapping]] = ..., deleteBlock: _Optional[_Union[DeleteBlockResponseProto, _Mapping]] = ..., listBlock: _Optional[_Union[ListBlockResponseProto, _Mapping]] = ..., writeChunk: _Optional[_Union[WriteChunkResponseProto, _Mapping]] = ..., readChunk: _Optional[_Union[ReadChunkResponseProto, _Mapping]] = ..., deleteChunk: _Optional[_Union[DeleteChunkResponseProto, _Mapping]] = ..., listChunk: _Optional[_Union[ListChunkResponseProto, _Mapping]] = ..., putSmallFile: _Optional[_Union[PutSmallFileResponseProto, _Mapping]] = ..., getSmallFile: _Optional[_Union[GetSmallFileResponseProto, _Mapping]] = ..., getCommittedBlockLength: _Optional[_Union[GetCommittedBlockLengthResponseProto, _Mapping]] = ..., finalizeBlock: _Optional[_Union[FinalizeBlockResponseProto, _Mapping]] = ..., echo: _Optional[_Union[EchoResponseProto, _Mapping]] = ..., watchForCommit: _Optional[_Union[WatchForCommitResponseProto, _Mapping]] = ..., logIndex: _Optional[int] = ..., commitInfos: _Optional[_Iterable[_Union[CommitInfoProto, _Mapping]]] = ..., suggestedLeader: _Optional[str] = ...) -> None: ...

class CommitInfoProto(_message.Message):
    __slots__ = ("datanodeUuid", "commitIndex")
    DATANODEUUID_FIELD_NUMBER: _ClassVar[int]
    COMMITINDEX_FIELD_NUMBER: _ClassVar[int]
    datanodeUuid: str
    commitIndex: int
    def __init__(self, datanodeUuid: _Optional[str] = ..., commitIndex: _Optional[int] = ...) -> None: ...

class WatchForCommitRequestProto(_message.Message):
    __slots__ = ("index", "replication")
    INDEX_FIELD_NUMBER: _ClassVar[int]
    REPLICATION_FIELD_NUMBER: _ClassVar[int]
    index: int
    replication: ReplicationLevel
    def __init__(self, index: _Optional[int] = ..., replication: _Optional[_Union[ReplicationLevel, str]] = ...) -> None: ...

class WatchForCommitResponseProto(_message.Message):
    __slots__ = ("index",)
    INDEX_FIELD_NUMBER: _ClassVar[int]
    index: int
    def __init__(self, index: _Optional[int] = ...) -> None: ...

class ContainerDataProto(_message.Message):
    __slots__ = ("containerID", "metadata", "containerPath", "bytesUsed", "size", "blockCount", "state", "containerType", "blockCommitSequenceId", "replicaIndex", "originNodeId")
    class State(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        STATE_UNSPECIFIED: _ClassVar[ContainerDataProto.State]
        OPEN: _ClassVar[ContainerDataProto.State]
        CLOSING: _ClassVar[ContainerDataProto.State]
        QUASI_CLOSED: _ClassVar[ContainerDataProto.State]
        CLOSED: _ClassVar[ContainerDataProto.State]
        UNHEALTHY: _ClassVar[ContainerDataProto.State]
        INVALID: _ClassVar[ContainerDataProto.State]
        DELETED: _ClassVar[ContainerDataProto.State]
        RECOVERING: _ClassVar[ContainerDataProto.State]
    STATE_UNSPECIFIED: ContainerDataProto.State
    OPEN: ContainerDataProto.State
    CLOSING: ContainerDataProto.State
    QUASI_CLOSED: ContainerDataProto.State
    CLOSED: ContainerDataProto.State
    UNHEALTHY: ContainerDataProto.State
    INVALID: ContainerDataProto.State
    DELETED: ContainerDataProto.State
    RECOVERING: ContainerDataProto.State
    CONTAINERID_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    CONTAINERPATH_FIELD_NUMBER: _ClassVar[int]
    BYTESUSED_FIELD_NUMBER: _ClassVar[int]
    SIZE_FIELD_NUMBER: _ClassVar[int]
    BLOCKCOUNT_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    CONTAINERTYPE_FIELD_NUMBER: _ClassVar[int]
    BLOCKCOMMITSEQUENCEID_FIELD_NUMBER: _ClassVar[int]
    REPLICAINDEX_FIELD_NUMBER: _ClassVar[int]
    ORIGINNODEID_FIELD_NUMBER: _ClassVar[int]
    containerID: int
    metadata: _containers.RepeatedCompositeFieldContainer[KeyValue]
    containerPath: str
    bytesUsed: int
    size: int
    blockCount: int
    state: ContainerDataProto.State
    containerType: ContainerType
    blockCommitSequenceId: int
    replicaIndex: int
    originNodeId: str
    def __init__(self, containerID: _Optional[int] = ..., metadata: _Optional[_Iterable[_Union[KeyValue, _Mapping]]] = ..., containerPath: _Optional[str] = ..., bytesUsed: _Optional[int] = ..., size: _Optional[int] = ..., blockCount: _Optional[int] = ..., state: _Optional[_Union[ContainerDataProto.State, str]] = ..., containerType: _Optional[_Union[ContainerType, str]] = ..., blockCommitSequenceId: _Optional[int] = ..., replicaIndex: _Optional[int] = ..., originNodeId: _Optional[str] = ...) -> None: ...

class CreateContainerRequestProto(_message.Message):
    __slots__ = ("metadata", "containerType", "replicaIndex", "state")
    METADATA_FIELD_NUMBER: _ClassVar[int]
    CONTAINERTYPE_FIELD_NUMBER: _ClassVar[int]
    REPLICAINDEX_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    metadata: _containers.RepeatedCompositeFieldContainer[KeyValue]
    containerType: ContainerType
    replicaIndex: int
    state: ContainerDataProto.State
    def __init__(self, metadata: _Optional[_Iterable[_Union[KeyValue, _Mapping]]] = ..., containerType: _Optional[_Union[ContainerType, str]] = ..., replicaIndex: _Optional[int] = ..., state: _Optional[_Union[ContainerDataProto.State, str]] = ...) -> None: ...

class CreateContainerResponseProto(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ReadContainerRequestProto(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ReadContainerResponseProto(_message.Message):
    __slots__ = ("containerData",)
    CONTAINERDATA_FIELD_NUMBER: _ClassVar[int]
    containerData: ContainerDataProto
    def __init__(self, containerData: _Optional[_Union[ContainerDataProto, _Mapping]] = ...) -> None: ...

class UpdateContainerRequestProto(_message.Message):
    __slots__ = ("metadata", "forceUpdate")
    METADATA_FIELD_NUMBER: _ClassVar[int]
    FORCEUPDATE_FIELD_NUMBER: _ClassVar[int]
    metadata: _containers.RepeatedCompositeFieldContainer[KeyValue]
    forceUpdate: bool
    def __init__(self, metadata: _Optional[_Iterable[_Union[KeyValue, _Mapping]]] = ..., forceUpdate: _Optional[bool] = ...) -> None: ...

class UpdateContainerResponseProto(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class DeleteContainerRequestProto(_message.Message):
    __slots__ = ("forceDelete",)
    FORCEDELETE_FIELD_NUMBER: _ClassVar[int]
    forceDelete: bool
    def __init__(self, forceDelete: _Optional[bool] = ...) -> None: ...

class DeleteContainerResponseProto(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListContainerRequestProto(_message.Message):
    __slots__ = ("count",)
    COUNT_FIELD_NUMBER: _ClassVar[int]
    count: int
    def __init__(self, count: _Optional[int] = ...) -> None: ...

class ListContainerResponseProto(_message.Message):
    __slots__ = ("containerData",)
    CONTAINERDATA_FIELD_NUMBER: _ClassVar[int]
    containerData: _containers.RepeatedCompositeFieldContainer[ContainerDataProto]
    def __init__(self, containerData: _Optional[_Iterable[_Union[ContainerDataProto, _Mapping]]] = ...) -> None: ...

class CloseContainerRequestProto(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class CloseContainerResponseProto(_message.Message):
    __slots__ = ("hash", "containerID")
    HASH_FIELD_NUMBER: _ClassVar[int]
    CONTAINERID_FIELD_NUMBER: _ClassVar[int]
    hash: str
    containerID: int
    def __init__(self, hash: _Optional[str] = ..., containerID: _Optional[int] = ...) -> None: ...

class BlockData(_message.Message):
    __slots__ = ("blockID", "flags", "metadata", "chunks", "size")
    BLOCKID_FIELD_NUMBER: _ClassVar[int]
    FLAGS_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    CHUNKS_FIELD_NUMBER: _ClassVar[int]
    SIZE_FIELD_NUMBER: _ClassVar[int]
    blockID: DatanodeBlockID
    flags: int
    metadata: _containers.RepeatedCompositeFieldContainer[KeyValue]
    chunks: _containers.RepeatedCompositeFieldContainer[ChunkInfo]
    size: int
    def __init__(self, blockID: _Optional[_Union[DatanodeBlockID, _Mapping]] = ..., flags: _Optional[int] = ..., metadata: _Optional[_Iterable[_Union[KeyValue, _Mapping]]] = ..., chunks: _Optional[_Iterable[_Union[ChunkInfo, _Mapping]]] = ..., size: _Optional[int] = ...) -> None: ...

class PutBlockRequestProto(_message.Message):
    __slots__ = ("blockData", "eof")
    BLOCKDATA_FIELD_NUMBER: _ClassVar[int]
    EOF_FIELD_NUMBER: _ClassVar[int]
    blockData: BlockData
    eof: bool
    def __init__(self, blockData: _Optional[_Union[BlockData, _Mapping]] = ..., eof: _Optional[bool] = ...) -> None: ...

class PutBlockResponseProto(_message.Message):
    __slots__ = ("committedBlockLength",)
    COMMITTEDBLOCKLENGTH_FIELD_NUMBER: _ClassVar[int]
    committedBlockLength: GetCommittedBlockLengthResponseProto
    def __init__(self, committedBlockLength: _Optional[_Union[GetCommittedBlockLengthResponseProto, _Mapping]] = ...) -> None: ...

class FinalizeBlockRequestProto(_message.Message):
    __slots__ = ("blockID",)
    BLOCKID_FIELD_NUMBER: _ClassVar[int]
    blockID: DatanodeBlockID
    def __init__(self, blockID: _Optional[_Union[DatanodeBlockID, _Mapping]] = ...) -> None: ...

class FinalizeBlockResponseProto(_message.Message):
    __slots__ = ("blockData",)
    BLOCKDATA_FIELD_NUMBER: _ClassVar[int]
    blockData: BlockData
    def __init__(self, blockData: _Optional[_Union[BlockData, _Mapping]] = ...) -> None: ...

class GetBlockRequestProto(_message.Message):
    __slots__ = ("blockID",)
    BLOCKID_FIELD_NUMBER: _ClassVar[int]
    blockID: DatanodeBlockID
    def __init__(self, blockID: _Optional[_Union[DatanodeBlockID, _Mapping]] = ...) -> None: ...

class GetBlockResponseProto(_message.Message):
    __slots__ = ("blockData",)
    BLOCKDATA_FIELD_NUMBER: _ClassVar[int]
    blockData: BlockData
    def __init__(self, blockData: _Optional[_Union[BlockData, _Mapping]] = ...) -> None: ...

class DeleteBlockRequestProto(_message.Message):
    __slots__ = ("blockID",)
    BLOCKID_FIELD_NUMBER: _ClassVar[int]
    blockID: DatanodeBlockID
    def __init__(self, blockID: _Optional[_Union[DatanodeBlockID, _Mapping]] = ...) -> None: ...

class GetCommittedBlockLengthRequestProto(_message.Message):
    __slots__ = ("blockID",)
    BLOCKID_FIELD_NUMBER: _ClassVar[int]
    blockID: DatanodeBlockID
    def __init__(self, blockID: _Optional[_Union[DatanodeBlockID, _Mapping]] = ...) -> None: ...

class GetCommittedBlockLengthResponseProto(_message.Message):
    __slots__ = ("blockID", "blockLength")
    BLOCKID_FIELD_NUMBER: _ClassVar[int]
    BLOCKLENGTH_FIELD_NUMBER: _ClassVar[int]
    blockID: DatanodeBlockID
    blockLength: int
    def __init__(self, blockID: _Optional[_Union[DatanodeBlockID, _Mapping]] = ..., blockLength: _Optional[int] = ...) -> None: ...

class DeleteBlockResponseProto(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListBlockRequestProto(_message.Message):
    __slots__ = ("startLocalID", "count")
    STARTLOCALID_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    startLocalID: int
    count: int
    def __init__(self, startLocalID: _Optional[int] = ..., count: _Optional[int] = ...) -> None: ...

class ListBlockResponseProto(_message.Message):
    __slots__ = ("blockData",)
    BLOCKDATA_FIELD_NUMBER: _ClassVar[int]
    blockData: _containers.RepeatedCompositeFieldContainer[BlockData]
    def __init__(self, blockData: _Optional[_Iterable[_Union[BlockData, _Mapping]]] = ...) -> None: ...

class EchoRequestProto(_message.Message):
    __slots__ = ("payload", "payloadSizeResp", "sleepTimeMs", "readOnly")
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    PAYLOADSIZERESP_FIELD_NUMBER: _ClassVar[int]
    SLEEPTIMEMS_FIELD_NUMBER: _ClassVar[int]
    READONLY_FIELD_NUMBER: _ClassVar[int]
    payload: bytes
    payloadSizeResp: int
    sleepTimeMs: int
    readOnly: bool
    def __init__(self, payload: _Optional[bytes] = ..., payloadSizeResp: _Optional[int] = ..., sleepTimeMs: _Optional[int] = ..., readOnly: _Optional[bool] = ...) -> None: ...

class EchoResponseProto(_message.Message):
    __slots__ = ("payload",)
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    payload: bytes
    def __init__(self, payload: _Optional[bytes] = ...) -> None: ...

class ChunkInfo(_message.Message):
    __slots__ = ("chunkName", "offset", "len", "metadata", "checksumData", "stripeChecksum")
    CHUNKNAME_FIELD_NUMBER: _ClassVar[int]
    OFFSET_FIELD_NUMBER: _ClassVar[int]
    LEN_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    CHECKSUMDATA_FIELD_NUMBER: _ClassVar[int]
    STRIPECHECKSUM_FIELD_NUMBER: _ClassVar[int]
    chunkName: str
    offset: int
    len: int
    metadata: _containers.RepeatedCompositeFieldContainer[KeyValue]
    checksumData: ChecksumData
    stripeChecksum: bytes
    def __init__(self, chunkName: _Optional[str] = ..., offset: _Optional[int] = ..., len: _Optional[int] = ..., metadata: _Optional[_Iterable[_Union[KeyValue, _Mapping]]] = ..., checksumData: _Optional[_Union[ChecksumData, _Mapping]] = ..., stripeChecksum: _Optional[bytes] = ...) -> None: ...

class ChunkInfoList(_message.Message):
    __slots__ = ("chunks",)
    CHUNKS_FIELD_NUMBER: _ClassVar[int]
    chunks: _containers.RepeatedCompositeFieldContainer[ChunkInfo]
    def __init__(self, chunks: _Optional[_Iterable[_Union[ChunkInfo, _Mapping]]] = ...) -> None: ...

class ChecksumData(_message.Message):
    __slots__ = ("type", "bytesPerChecksum", "checksums")
    TYPE_FIELD_NUMBER: _ClassVar[int]
    BYTESPERCHECKSUM_FIELD_NUMBER: _ClassVar[int]
    CHECKSUMS_FIELD_NUMBER: _ClassVar[int]
    type: ChecksumType
    bytesPerChecksum: int
    checksums: _containers.RepeatedScalarFieldContainer[bytes]
    def __init__(self, type: _Optional[_Union[ChecksumType, str]] = ..., bytesPerChecksum: _Optional[int] = ..., checksums: _Optional[_Iterable[bytes]] = ...) -> None: ...

class WriteChunkRequestProto(_message.Message):
    __slots__ = ("blockID", "chunkData", "data", "block")
    BLOCKID_FIELD_NUMBER: _ClassVar[int]
    CHUNKDATA_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    BLOCK_FIELD_NUMBER: _ClassVar[int]
    blockID: DatanodeBlockID
    chunkData: ChunkInfo
    data: bytes
    block: PutBlockRequestProto
    def __init__(self, blockID: _Optional[_Union[DatanodeBlockID, _Mapping]] = ..., chunkData: _Optional[_Union[ChunkInfo, _Mapping]] = ..., data: _Optional[bytes] = ..., block: _Optional[_Union[PutBlockRequestProto, _Mapping]] = ...) -> None: ...

class WriteChunkResponseProto(_message.Message):
    __slots__ = ("committedBlockLength",)
    COMMITTEDBLOCKLENGTH_FIELD_NUMBER: _ClassVar[int]
    committedBlockLength: GetCommittedBlockLengthResponseProto
    def __init__(self, committedBlockLength: _Optional[_Union[GetCommittedBlockLengthResponseProto, _Mapping]] = ...) -> None: ...

class ReadChunkRequestProto(_message.Message):
    __slots__ = ("blockID", "chunkData", "readChunkVersion")
    BLOCKID_FIELD_NUMBER: _ClassVar[int]
    CHUNKDATA_FIELD_NUMBER: _ClassVar[int]
    READCHUNKVERSION_FIELD_NUMBER: _ClassVar[int]
    blockID: DatanodeBlockID
    chunkData: ChunkInfo
    readChunkVersion: ReadChunkVersion
    def __init__(self, blockID: _Optional[_Union[DatanodeBlockID, _Mapping]] = ..., chunkData: _Optional[_Union[ChunkInfo, _Mapping]] = ..., readChunkVersion: _Optional[_Union[ReadChunkVersion, str]] = ...) -> None: ...

class ReadChunkResponseProto(_message.Message):
    __slots__ = ("blockID", "chunkData", "data", "dataBuffers")
    BLOCKID_FIELD_NUMBER: _ClassVar[int]
    CHUNKDATA_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    DATABUFFERS_FIELD_NUMBER: _ClassVar[int]
    blockID: DatanodeBlockID
    chunkData: ChunkInfo
    data: bytes
    dataBuffers: DataBuffers
    def __init__(self, blockID: _Optional[_Union[DatanodeBlockID, _Mapping]] = ..., chunkData: _Optional[_Union[ChunkInfo, _Mapping]] = ..., data: _Optional[bytes] = ..., dataBuffers: _Optional[_Union[DataBuffers, _Mapping]] = ...) -> None: ...

class DataBuffers(_message.Message):
    __slots__ = ("buffers",)
    BUFFERS_FIELD_NUMBER: _ClassVar[int]
    buffers: _containers.RepeatedScalarFieldContainer[bytes]
    def __init__(self, buffers: _Optional[_Iterable[bytes]] = ...) -> None: ...

class DeleteChunkRequestProto(_message.Message):
    __slots__ = ("blockID", "chunkData")
    BLOCKID_FIELD_NUMBER: _ClassVar[int]
    CHUNKDATA_FIELD_NUMBER: _ClassVar[int]
    blockID: DatanodeBlockID
    chunkData: ChunkInfo
    def __init__(self, blockID: _Optional[_Union[DatanodeBlockID, _Mapping]] = ..., chunkData: _Optional[_Union[ChunkInfo, _Mapping]] = ...) -> None: ...

class DeleteChunkResponseProto(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListChunkRequestProto(_message.Message):
    __slots__ = ("blockID", "prevChunkName", "count")
    BLOCKID_FIELD_NUMBER: _ClassVar[int]
    PREVCHUNKNAME_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    blockID: DatanodeBlockID
    prevChunkName: str
    count: int
    def __init__(self, blockID: _Optional[_Union[DatanodeBlockID, _Mapping]] = ..., prevChunkName: _Optional[str] = ..., count: _Optional[int] = ...) -> None: ...

class ListChunkResponseProto(_message.Message):
    __slots__ = ("chunkData",)
    CHUNKDATA_FIELD_NUMBER: _ClassVar[int]
    chunkData: _containers.RepeatedCompositeFieldContainer[ChunkInfo]
    def __init__(self, chunkData: _Optional[_Iterable[_Union[ChunkInfo, _Mapping]]] = ...) -> None: ...

class PutSmallFileRequestProto(_message.Message):
    __slots__ = ("block", "chunkInfo", "data")
    BLOCK_FIELD_NUMBER: _ClassVar[int]
    CHUNKINFO_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    block: PutBlockRequestProto
    chunkInfo: ChunkInfo
    data: bytes
    def __init__(self, block: _Optional[_Union[PutBlockRequestProto, _Mapping]] = ..., chunkInfo: _Optional[_Union[ChunkInfo, _Mapping]] = ..., data: _Optional[bytes] = ...) -> None: ...

class PutSmallFileResponseProto(_message.Message):
    __slots__ = ("committedBlockLength",)
    COMMITTEDBLOCKLENGTH_FIELD_NUMBER: _ClassVar[int]
    committedBlockLength: GetCommittedBlockLengthResponseProto
    def __init__(self, committedBlockLength: _Optional[_Union[GetCommittedBlockLengthResponseProto, _Mapping]] = ...) -> None: ...

class GetSmallFileRequestProto(_message.Message):
    __slots__ = ("block", "readChunkVersion")
    BLOCK_FIELD_NUMBER: _ClassVar[int]
    READCHUNKVERSION_FIELD_NUMBER: _ClassVar[int]
    block: GetBlockRequestProto
    readChunkVersion: ReadChunkVersion
    def __init__(self, block: _Optional[_Union[GetBlockRequestProto, _Mapping]] = ..., readChunkVersion: _Optional[_Union[ReadChunkVersion, str]] = ...) -> None: ...

class GetSmallFileResponseProto(_message.Message):
    __slots__ = ("data",)
    DATA_FIELD_NUMBER: _ClassVar[int]
    data: ReadChunkResponseProto
    def __init__(self, data: _Optional[_Union[ReadChunkResponseProto, _Mapping]] = ...) -> None: ...

class CopyContainerRequestProto(_message.Message):
    __slots__ = ("containerID", "readOffset", "len", "version", "compression")
    CONTAINERID_FIELD_NUMBER: _ClassVar[int]
    READOFFSET_FIELD_NUMBER: _ClassVar[int]
    LEN_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    COMPRESSION_FIELD_NUMBER: _ClassVar[int]
    containerID: int
    readOffset: int
    len: int
    version: int
    compression: CopyContainerCompressProto
    def __init__(self, containerID: _Optional[int] = ..., readOffset: _Optional[int] = ..., len: _Optional[int] = ..., version: _Optional[int] = ..., compression: _Optional[_Union[CopyContainerCompressProto, str]] = ...) -> None: ...

class CopyContainerResponseProto(_message.Message):
    __slots__ = ("containerID", "readOffset", "len", "eof", "data", "checksum", "archiveSize", "archiveSha256")
    CONTAINERID_FIELD_NUMBER: _ClassVar[int]
    READOFFSET_FIELD_NUMBER: _ClassVar[int]
    LEN_FIELD_NUMBER: _ClassVar[int]
    EOF_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    CHECKSUM_FIELD_NUMBER: _ClassVar[int]
    ARCHIVESIZE_FIELD_NUMBER: _ClassVar[int]
    ARCHIVESHA256_FIELD_NUMBER: _ClassVar[int]
    containerID: int
    readOffset: int
    len: int
    eof: bool
    data: bytes
    checksum: int
    archiveSize: int
    archiveSha256: bytes
    def __init__(self, containerID: _Optional[int] = ..., readOffset: _Optional[int] = ..., len: _Optional[int] = ..., eof: _Optional[bool] = ..., data: _Optional[bytes] = ..., checksum: _Optional[int] = ..., archiveSize: _Optional[int] = ..., archiveSha256: _Optional[bytes] = ...) -> None: ...

class SendContainerRequest(_message.Message):
    __slots__ = ("containerID", "offset", "data", "checksum", "compression", "eof", "archiveSize", "archiveSha256", "replicaIndex")
    CONTAINERID_FIELD_NUMBER: _ClassVar[int]
    OFFSET_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    CHECKSUM_FIELD_NUMBER: _ClassVar[int]
    COMPRESSION_FIELD_NUMBER: _ClassVar[int]
    EOF_FIELD_NUMBER: _ClassVar[int]
    ARCHIVESIZE_FIELD_NUMBER: _ClassVar[int]
    ARCHIVESHA256_FIELD_NUMBER: _ClassVar[int]
    REPLICAINDEX_FIELD_NUMBER: _ClassVar[int]
    containerID: int
    offset: int
    data: bytes
    checksum: int
    compression: CopyContainerCompressProto
    eof: bool
    archiveSize: int
    archiveSha256: bytes
    replicaIndex: int
    def __init__(self, containerID: _Optional[int] = ..., offset: _Optional[int] = ..., data: _Optional[bytes] = ..., checksum: _Optional[int] = ..., compression: _Optional[_Union[CopyContainerCompressProto, str]] = ..., eof: _Optional[bool] = ..., archiveSize: _Optional[int] = ..., archiveSha256: _Optional[bytes] = ..., replicaIndex: _Optional[int] = ...) -> None: ...

class SendContainerResponse(_message.Message):
    __slots__ = ("containerID", "bytesReceived")
    CONTAINERID_FIELD_NUMBER: _ClassVar[int]
    BYTESRECEIVED_FIELD_NUMBER: _ClassVar[int]
    containerID: int
    bytesReceived: int
    def __init__(self, containerID: _Optional[int] = ..., bytesReceived: _Optional[int] = ...) -> None: ...

class AppendEntriesRequestProto(_message.Message):
    __slots__ = ("pipelineID", "leaderID", "term", "index", "leaderCommit", "entry")
    PIPELINEID_FIELD_NUMBER: _ClassVar[int]
    LEADERID_FIELD_NUMBER: _ClassVar[int]
    TERM_FIELD_NUMBER: _ClassVar[int]
    INDEX_FIELD_NUMBER: _ClassVar[int]
    LEADERCOMMIT_FIELD_NUMBER: _ClassVar[int]
    ENTRY_FIELD_NUMBER: _ClassVar[int]
    pipelineID: str
    leaderID: str
    term: int
    index: int
    leaderCommit: int
    entry: ContainerCommandRequestProto
    def __init__(self, pipelineID: _Optional[str] = ..., leaderID: _Optional[str] = ..., term: _Optional[int] = ..., index: _Optional[int] = ..., leaderCommit: _Optional[int] = ..., entry: _Optional[_Union[ContainerCommandRequestProto, _Mapping]] = ...) -> None: ...

class AppendEntriesReplyProto(_message.Message):
    __slots__ = ("index", "result", "message", "appliedIndex")
    INDEX_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    APPLIEDINDEX_FIELD_NUMBER: _ClassVar[int]
    index: int
    result: Result
    message: str
    appliedIndex: int
    def __init__(self, index: _Optional[int] = ..., result: _Optional[_Union[Result, str]] = ..., message: _Optional[str] = ..., appliedIndex: _Optional[int] = ...) -> None: ...
