from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class DBTableRecord(_message.Message):
    __slots__ = ("key", "value", "deleted")
    KEY_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    DELETED_FIELD_NUMBER: _ClassVar[int]
    key: bytes
    value: bytes
    deleted: bool
    def __init__(self, key: _Optional[bytes] = ..., value: _Optional[bytes] = ..., deleted: _Optional[bool] = ...) -> None: ...

class DBTableUpdate(_message.Message):
    __slots__ = ("tableName", "records")
    TABLENAME_FIELD_NUMBER: _ClassVar[int]
    RECORDS_FIELD_NUMBER: _ClassVar[int]
    tableName: str
    records: _containers.RepeatedCompositeFieldContainer[DBTableRecord]
    def __init__(self, tableName: _Optional[str] = ..., records: _Optional[_Iterable[_Union[DBTableRecord, _Mapping]]] = ...) -> None: ...

class ScmRatisEntry(_message.Message):
    __slots__ = ("epoch", "ops")
    EPOCH_FIELD_NUMBER: _ClassVar[int]
    OPS_FIELD_NUMBER: _ClassVar[int]
    epoch: int
    ops: _containers.RepeatedCompositeFieldContainer[DBTableUpdate]
    def __init__(self, epoch: _Optional[int] = ..., ops: _Optional[_Iterable[_Union[DBTableUpdate, _Mapping]]] = ...) -> None: ...
