from pyozone.proto import hdds_pb2 as _hdds_pb2
from pyozone.proto import ScmAdminProtocol_pb2 as _ScmAdminProtocol_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ContainerBlockID(_message.Message):
    __slots__ = ("containerID", "localID")
    CONTAINERID_FIELD_NUMBER: _ClassVar[int]
    LOCALID_FIELD_NUMBER: _ClassVar[int]
    containerID: int
    localID: int
    def __init__(self, containerID: _Optional[int] = ..., localID: _Optional[int] = ...) -> None: ...

class BlockID(_message.Message):
    __slots__ = ("containerBlockID", "blockCommitSequenceId")
    CONTAINERBLOCKID_FIELD_NUMBER: _ClassVar[int]
    BLOCKCOMMITSEQUENCEID_FIELD_NUMBER: _ClassVar[int]
    containerBlockID: ContainerBlockID
    blockCommitSequenceId: int
    def __init__(self, containerBlockID: _Optional[_Union[ContainerBlockID, _Mapping]] = ..., blockCommitSequenceId: _Optional[int] = ...) -> None: ...

class ExcludeListProto(_message.Message):
    __slots__ = ("datanodes", "containerIds", "pipelineIds")
    DATANODES_FIELD_NUMBER: _ClassVar[int]
    CONTAINERIDS_FIELD_NUMBER: _ClassVar[int]
    PIPELINEIDS_FIELD_NUMBER: _ClassVar[int]
    datanodes: _containers.RepeatedScalarFieldContainer[str]
    containerIds: _containers.RepeatedScalarFieldContainer[int]
    pipelineIds: _containers.RepeatedCompositeFieldContainer[_hdds_pb2.PipelineID]
    def __init__(self, datanodes: _Optional[_Iterable[str]] = ..., containerIds: _Optional[_Iterable[int]] = ..., pipelineIds: _Optional[_Iterable[_Union[_hdds_pb2.PipelineID, _Mapping]]] = ...) -> None: ...

class AllocateScmBlockRequestProto(_message.Message):
    __slots__ = ("size", "numBlocks", "type", "factor", "owner", "excludeList", "ecReplicationConfig", "client")
    SIZE_FIELD_NUMBER: _ClassVar[int]
    NUMBLOCKS_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    FACTOR_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    EXCLUDELIST_FIELD_NUMBER: _ClassVar[int]
    ECREPLICATIONCONFIG_FIELD_NUMBER: _ClassVar[int]
    CLIENT_FIELD_NUMBER: _ClassVar[int]
    size: int
    numBlocks: int
    type: _hdds_pb2.ReplicationType
    factor: _hdds_pb2.ReplicationFactor
    owner: str
    excludeList: ExcludeListProto
    ecReplicationConfig: _hdds_pb2.ECReplicationConfig
    client: str
    def __init__(self, size: _Optional[int] = ..., numBlocks: _Optional[int] = ..., type: _Optional[_Union[_hdds_pb2.ReplicationType, str]] = ..., factor: _Optional[_Union[_hdds_pb2.ReplicationFactor, str]] = ..., owner: _Optional[str] = ..., excludeList: _Optional[_Union[ExcludeListProto, _Mapping]] = ..., ecReplicationConfig: _Optional[_Union[_hdds_pb2.ECReplicationConfig, _Mapping]] = ..., client: _Optional[str] = ...) -> None: ...

class AllocateBlockResponse(_message.Message):
    __slots__ = ("containerBlockID", "pipeline")
    CONTAINERBLOCKID_FIELD_NUMBER: _ClassVar[int]
    PIPELINE_FIELD_NUMBER: _ClassVar[int]
    containerBlockID: ContainerBlockID
    pipeline: _hdds_pb2.Pipeline
    def __init__(self, containerBlockID: _Optional[_Union[ContainerBlockID, _Mapping]] = ..., pipeline: _Optional[_Union[_hdds_pb2.Pipeline, _Mapping]] = ...) -> None: ...

class AllocateScmBlockResponseProto(_message.Message):
    __slots__ = ("blocks",)
    BLOCKS_FIELD_NUMBER: _ClassVar[int]
    blocks: _containers.RepeatedCompositeFieldContainer[AllocateBlockResponse]
    def __init__(self, blocks: _Optional[_Iterable[_Union[AllocateBlockResponse, _Mapping]]] = ...) -> None: ...

class KeyBlocks(_message.Message):
    __slots__ = ("key", "blocks")
    KEY_FIELD_NUMBER: _ClassVar[int]
    BLOCKS_FIELD_NUMBER: _ClassVar[int]
    key: str
    blocks: _containers.RepeatedCompositeFieldContainer[BlockID]
    def __init__(self, key: _Optional[str] = ..., blocks: _Optional[_Iterable[_Union[BlockID, _Mapping]]] = ...) -> None: ...

class DeleteScmKeyBlocksRequestProto(_message.Message):
    __slots__ = ("keyBlocks",)
    KEYBLOCKS_FIELD_NUMBER: _ClassVar[int]
    keyBlocks: _containers.RepeatedCompositeFieldContainer[KeyBlocks]
    def __init__(self, keyBlocks: _Optional[_Iterable[_Union[KeyBlocks, _Mapping]]] = ...) -> None: ...

class DeleteScmBlockResult(_message.Message):
    __slots__ = ("result", "blockID")
    class Result(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        RESULT_UNSPECIFIED: _ClassVar[DeleteScmBlockResult.Result]
        success: _ClassVar[DeleteScmBlockResult.Result]
        safeMode: _ClassVar[DeleteScmBlockResult.Result]
        errorNotFound: _ClassVar[DeleteScmBlockResult.Result]
        unknownFailure: _ClassVar[DeleteScmBlockResult.Result]
    RESULT_UNSPECIFIED: DeleteScmBlockResult.Result
    success: DeleteScmBlockResult.Result
    safeMode: DeleteScmBlockResult.Result
    errorNotFound: DeleteScmBlockResult.Result
    unknownFailure: DeleteScmBlockResult.Result
    RESULT_FIELD_NUMBER: _ClassVar[int]
    BLOCKID_FIELD_NUMBER: _ClassVar[int]
    result: DeleteScmBlockResult.Result
    blockID: BlockID
    def __init__(self, result: _Optional[_Union[DeleteScmBlockResult.Result, str]] = ..., blockID: _Optional[_Union[BlockID, _Mapping]] = ...) -> None: ...

class DeleteKeyBlocksResultProto(_message.Message):
    __slots__ = ("objectKey", "blockResults")
    OBJECTKEY_FIELD_NUMBER: _ClassVar[int]
    BLOCKRESULTS_FIELD_NUMBER: _ClassVar[int]
    objectKey: str
    blockResults: _containers.RepeatedCompositeFieldContainer[DeleteScmBlockResult]
    def __init__(self, objectKey: _Optional[str] = ..., blockResults: _Optional[_Iterable[_Union[DeleteScmBlockResult, _Mapping]]] = ...) -> None: ...

class DeleteScmKeyBlocksResponseProto(_message.Message):
    __slots__ = ("results",)
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[DeleteKeyBlocksResultProto]
    def __init__(self, results: _Optional[_Iterable[_Union[DeleteKeyBlocksResultProto, _Mapping]]] = ...) -> None: ...
