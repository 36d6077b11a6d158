from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class TermIndexProto(_message.Message):
    __slots__ = ("term", "index")
    TERM_FIELD_NUMBER: _ClassVar[int]
    INDEX_FIELD_NUMBER: _ClassVar[int]
    term: int
    index: int
    def __init__(self, term: _Optional[int] = ..., index: _Optional[int] = ...) -> None: ...

class StateMachineLogEntryProto(_message.Message):
    __slots__ = ("logData", "clientId", "callId")
    LOGDATA_FIELD_NUMBER: _ClassVar[int]
    CLIENTID_FIELD_NUMBER: _ClassVar[int]
    CALLID_FIELD_NUMBER: _ClassVar[int]
    logData: bytes
    clientId: str
    callId: int
    def __init__(self, logData: _Optional[bytes] = ..., clientId: _Optional[str] = ..., callId: _Optional[int] = ...) -> None: ...

class RaftConfigurationProto(_message.Message):
    __slots__ = ("peers", "oldPeers")
    PEERS_FIELD_NUMBER: _ClassVar[int]
    OLDPEERS_FIELD_NUMBER: _ClassVar[int]
    peers: _containers.RepeatedScalarFieldContainer[str]
    oldPeers: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, peers: _Optional[_Iterable[str]] = ..., oldPeers: _Optional[_Iterable[str]] = ...) -> None: ...

class MetadataProto(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class LogEntryProto(_message.Message):
    __slots__ = ("term", "index", "stateMachineLogEntry", "configurationEntry", "metadataEntry")
    TERM_FIELD_NUMBER: _ClassVar[int]
    INDEX_FIELD_NUMBER: _ClassVar[int]
    STATEMACHINELOGENTRY_FIELD_NUMBER: _ClassVar[int]
    CONFIGURATIONENTRY_FIELD_NUMBER: _ClassVar[int]
    METADATAENTRY_FIELD_NUMBER: _ClassVar[int]
    term: int
    index: int
    stateMachineLogEntry: StateMachineLogEntryProto
    configurationEntry: RaftConfigurationProto
    metadataEntry: MetadataProto
    def __init__(self, term: _Optional[int] = ..., index: _Optional[int] = ..., stateMachineLogEntry: _Optional[_Union[StateMachineLogEntryProto, _Mapping]] = ..., configurationEntry: _Optional[_Union[RaftConfigurationProto, _Mapping]] = ..., metadataEntry: _Optional[_Union[MetadataProto, _Mapping]] = ...) -> None: ...
