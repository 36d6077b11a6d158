from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class RpcMetadataEntry(_message.Message):
    __slots__ = ("key", "value")
    KEY_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    key: str
    value: str
    def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...

class RpcCallHead(_message.Message):
    __slots__ = ("method", "timeoutMillis", "metadata", "traceID")
    METHOD_FIELD_NUMBER: _ClassVar[int]
    TIMEOUTMILLIS_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    TRACEID_FIELD_NUMBER: _ClassVar[int]
    method: str
    timeoutMillis: int
    metadata: _containers.RepeatedCompositeFieldContainer[RpcMetadataEntry]
    traceID: str
    def __init__(self, method: _Optional[str] = ..., timeoutMillis: _Optional[int] = ..., metadata: _Optional[_Iterable[_Union[RpcMetadataEntry, _Mapping]]] = ..., traceID: _Optional[str] = ...) -> None: ...

class RpcStatusHead(_message.Message):
    __slots__ = ("code", "details")
    CODE_FIELD_NUMBER: _ClassVar[int]
    DETAILS_FIELD_NUMBER: _ClassVar[int]
    code: int
    details: str
    def __init__(self, code: _Optional[int] = ..., details: _Optional[str] = ...) -> None: ...
