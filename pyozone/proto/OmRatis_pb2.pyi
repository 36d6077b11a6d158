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

class PersistDbRequest(_message.Message):
    __slots__ = ("tableUpdates",)
    TABLEUPDATES_FIELD_NUMBER: _ClassVar[int]
    tableUpdates: _containers.RepeatedCompositeFieldContainer[DBTableUpdate]
    def __init__(self, tableUpdates: _Optional[_Iterable[_Union[DBTableUpdate, _Mapping]]] = ...) -> None: ...

class ClientRequestInfo(_message.Message):
    __slots__ = ("clientId", "callId", "method", "response", "errorStatus", "errorDetails")
    CLIENTID_FIELD_NUMBER: _ClassVar[int]
    CALLID_FIELD_NUMBER: _ClassVar[int]
    METHOD_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_FIELD_NUMBER: _ClassVar[int]
    ERRORSTATUS_FIELD_NUMBER: _ClassVar[int]
    ERRORDETAILS_FIELD_NUMBER: _ClassVar[int]
    clientId: str
    callId: int
    method: str
    response: bytes
    errorStatus: str
    errorDetails: str
    def __init__(self, clientId: _Optional[str] = ..., callId: _Optional[int] = ..., method: _Optional[str] = ..., response: _Optional[bytes] = ..., errorStatus: _Optional[str] = ..., errorDetails: _Optional[str] = ...) -> None: ...

class ExecutionControlRequest(_message.Message):
    __slots__ = ("requestInfo",)
    REQUESTINFO_FIELD_NUMBER: _ClassVar[int]
    requestInfo: _containers.RepeatedCompositeFieldContainer[ClientRequestInfo]
    def __init__(self, requestInfo: _Optional[_Iterable[_Union[ClientRequestInfo, _Mapping]]] = ...) -> None: ...

class OmReplicatedRequest(_message.Message):
    __slots__ = ("persistDb", "executionControl")
    PERSISTDB_FIELD_NUMBER: _ClassVar[int]
    EXECUTIONCONTROL_FIELD_NUMBER: _ClassVar[int]
    persistDb: PersistDbRequest
    executionControl: ExecutionControlRequest
    def __init__(self, persistDb: _Optional[_Union[PersistDbRequest, _Mapping]] = ..., executionControl: _Optional[_Union[ExecutionControlRequest, _Mapping]] = ...) -> None: ...
