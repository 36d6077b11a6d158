from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class InstallSnapshotResult(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SUCCESS: _ClassVar[InstallSnapshotResult]
    NOT_LEADER: _ClassVar[InstallSnapshotResult]
    IN_PROGRESS: _ClassVar[InstallSnapshotResult]
    ALREADY_INSTALLED: _ClassVar[InstallSnapshotResult]
    SNAPSHOT_INSTALLED: _ClassVar[InstallSnapshotResult]
SUCCESS: InstallSnapshotResult
NOT_LEADER: InstallSnapshotResult
IN_PROGRESS: InstallSnapshotResult
ALREADY_INSTALLED: InstallSnapshotResult
SNAPSHOT_INSTALLED: InstallSnapshotResult

class TermIndexProto(_message.Message):
    __slots__ = ("term", "index")
    TERM_FIELD_NUMBER: _ClassVar[int]
    INDEX_FIELD_NUMBER: _ClassVar[int]
    term: int
    index: int
    def __init__(self, term: _Optional[int] = ..., index: _Optional[int] = ...) -> None: ...

class StateMachineLogEntryProto(_message.Message):
    __slots__ = ("logData", "clientId", "callId", "stateMachineData", "dataSize")
    LOGDATA_FIELD_NUMBER: _ClassVar[int]
    CLIENTID_FIELD_NUMBER: _ClassVar[int]
    CALLID_FIELD_NUMBER: _ClassVar[int]
    STATEMACHINEDATA_FIELD_NUMBER: _ClassVar[int]
    DATASIZE_FIELD_NUMBER: _ClassVar[int]
    logData: bytes
    clientId: str
    callId: int
    stateMachineData: bytes
    dataSize: int
    def __init__(self, logData: _Optional[bytes] = ..., clientId: _Optional[str] = ..., callId: _Optional[int] = ..., stateMachineData: _Optional[bytes] = ..., dataSize: _Optional[int] = ...) -> None: ...

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

class RaftRpcRequestProto(_message.Message):
    __slots__ = ("requestorId", "replyId", "groupId", "callId")
    REQUESTORID_FIELD_NUMBER: _ClassVar[int]
    REPLYID_FIELD_NUMBER: _ClassVar[int]
    GROUPID_FIELD_NUMBER: _ClassVar[int]
    CALLID_FIELD_NUMBER: _ClassVar[int]
    requestorId: str
    replyId: str
    groupId: str
    callId: int
    def __init__(self, requestorId: _Optional[str] = ..., replyId: _Optional[str] = ..., groupId: _Optional[str] = ..., callId: _Optional[int] = ...) -> None: ...

class RaftRpcReplyProto(_message.Message):
    __slots__ = ("requestorId", "replyId", "groupId", "callId", "success")
    REQUESTORID_FIELD_NUMBER: _ClassVar[int]
    REPLYID_FIELD_NUMBER: _ClassVar[int]
    GROUPID_FIELD_NUMBER: _ClassVar[int]
    CALLID_FIELD_NUMBER: _ClassVar[int]
    SUCCESS_FIELD_NUMBER: _ClassVar[int]
    requestorId: str
    replyId: str
    groupId: str
    callId: int
    success: bool
    def __init__(self, requestorId: _Optional[str] = ..., replyId: _Optional[str] = ..., groupId: _Optional[str] = ..., callId: _Optional[int] = ..., success: _Optional[bool] = ...) -> None: ...

class RequestVoteRequestProto(_message.Message):
    __slots__ = ("serverRequest", "candidateTerm", "candidateLastEntry", "preVote")
    SERVERREQUEST_FIELD_NUMBER: _ClassVar[int]
    CANDIDATETERM_FIELD_NUMBER: _ClassVar[int]
    CANDIDATELASTENTRY_FIELD_NUMBER: _ClassVar[int]
    PREVOTE_FIELD_NUMBER: _ClassVar[int]
    serverRequest: RaftRpcRequestProto
    candidateTerm: int
    candidateLastEntry: TermIndexProto
    preVote: bool
    def __init__(self, serverRequest: _Optional[_Union[RaftRpcRequestProto, _Mapping]] = ..., candidateTerm: _Optional[int] = ..., candidateLastEntry: _Optional[_Union[TermIndexProto, _Mapping]] = ..., preVote: _Optional[bool] = ...) -> None: ...

class RequestVoteReplyProto(_message.Message):
    __slots__ = ("serverReply", "term", "preVote")
    SERVERREPLY_FIELD_NUMBER: _ClassVar[int]
    TERM_FIELD_NUMBER: _ClassVar[int]
    PREVOTE_FIELD_NUMBER: _ClassVar[int]
    serverReply: RaftRpcReplyProto
    term: int
    preVote: bool
    def __init__(self, serverReply: _Optional[_Union[RaftRpcReplyProto, _Mapping]] = ..., term: _Optional[int] = ..., preVote: _Optional[bool] = ...) -> None: ...

class AppendEntriesRequestProto(_message.Message):
    __slots__ = ("serverRequest", "leaderTerm", "previousLog", "entries", "leaderCommit")
    SERVERREQUEST_FIELD_NUMBER: _ClassVar[int]
    LEADERTERM_FIELD_NUMBER: _ClassVar[int]
    PREVIOUSLOG_FIELD_NUMBER: _ClassVar[int]
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    LEADERCOMMIT_FIELD_NUMBER: _ClassVar[int]
    serverRequest: RaftRpcRequestProto
    leaderTerm: int
    previousLog: TermIndexProto
    entries: _containers.RepeatedCompositeFieldContainer[LogEntryProto]
    leaderCommit: int
    def __init__(self, serverRequest: _Optional[_Union[RaftRpcRequestProto, _Mapping]] = ..., leaderTerm: _Optional[int] = ..., previousLog: _Optional[_Union[TermIndexProto, _Mapping]] = ..., entries: _Optional[_Iterable[_Union[LogEntryProto, _Mapping]]] = ..., leaderCommit: _Optional[int] = ...) -> None: ...

class AppendEntriesReplyProto(_message.Message):
    __slots__ = ("serverReply", "term", "nextIndex", "result", "matchIndex", "followerCommit")
    class AppendResult(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        SUCCESS: _ClassVar[AppendEntriesReplyProto.AppendResult]
        NOT_LEADER: _ClassVar[AppendEntriesReplyProto.AppendResult]
        INCONSISTENCY: _ClassVar[AppendEntriesReplyProto.AppendResult]
    SUCCESS: AppendEntriesReplyProto.AppendResult
    NOT_LEADER: AppendEntriesReplyProto.AppendResult
    INCONSISTENCY: AppendEntriesReplyProto.AppendResult
    SERVERREPLY_FIELD_NUMBER: _ClassVar[int]
    TERM_FIELD_NUMBER: _ClassVar[int]
    NEXTINDEX_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    MATCHINDEX_FIELD_NUMBER: _ClassVar[int]
    FOLLOWERCOMMIT_FIELD_NUMBER: _ClassVar[int]
    serverReply: RaftRpcReplyProto
    term: int
    nextIndex: int
    result: AppendEntriesReplyProto.AppendResult
    matchIndex: int
    followerCommit: int
    def __init__(self, serverReply: _Optional[_Union[RaftRpcReplyProto, _Mapping]] = ..., term: _Optional[int] = ..., nextIndex: _Optional[int] = ..., result: _Optional[_Union[AppendEntriesReplyProto.AppendResult, str]] = ..., matchIndex: _Optional[int] = ..., followerCommit: _Optional[int] = ...) -> None: ...

class StartLeaderElectionRequestProto(_message.Message):
    __slots__ = ("serverRequest", "leaderLastEntry")
    SERVERREQUEST_FIELD_NUMBER: _ClassVar[int]
    LEADERLASTENTRY_FIELD_NUMBER: _ClassVar[int]
    serverRequest: RaftRpcRequestProto
    leaderLastEntry: TermIndexProto
    def __init__(self, serverRequest: _Optional[_Union[RaftRpcRequestProto, _Mapping]] = ..., leaderLastEntry: _Optional[_Union[TermIndexProto, _Mapping]] = ...) -> None: ...

class InstallSnapshotRequestProto(_message.Message):
    __slots__ = ("serverRequest", "leaderTerm", "notification")
    class NotificationProto(_message.Message):
        __slots__ = ("firstAvailableTermIndex",)
        FIRSTAVAILABLETERMINDEX_FIELD_NUMBER: _ClassVar[int]
        firstAvailableTermIndex: TermIndexProto
        def __init__(self, firstAvailableTermIndex: _Optional[_Union[TermIndexProto, _Mapping]] = ...) -> None: ...
    SERVERREQUEST_FIELD_NUMBER: _ClassVar[int]
    LEADERTERM_FIELD_NUMBER: _ClassVar[int]
    NOTIFICATION_FIELD_NUMBER: _ClassVar[int]
    serverRequest: RaftRpcRequestProto
    leaderTerm: int
    notification: InstallSnapshotRequestProto.NotificationProto
    def __init__(self, serverRequest: _Optional[_Union[RaftRpcRequestProto, _Mapping]] = ..., leaderTerm: _Optional[int] = ..., notification: _Optional[_Union[InstallSnapshotRequestProto.NotificationProto, _Mapping]] = ...) -> None: ...

class InstallSnapshotReplyProto(_message.Message):
    __slots__ = ("serverReply", "term", "result", "snapshotIndex")
    SERVERREPLY_FIELD_NUMBER: _ClassVar[int]
    TERM_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    SNAPSHOTINDEX_FIELD_NUMBER: _ClassVar[int]
    serverReply: RaftRpcReplyProto
    term: int
    result: InstallSnapshotResult
    snapshotIndex: int
    def __init__(self, serverReply: _Optional[_Union[RaftRpcReplyProto, _Mapping]] = ..., term: _Optional[int] = ..., result: _Optional[_Union[InstallSnapshotResult, str]] = ..., snapshotIndex: _Optional[int] = ...) -> None: ...

class RaftServerMessageProto(_message.Message):
    __slots__ = ("requestVote", "requestVoteReply", "appendEntries", "appendEntriesReply", "startLeaderElection", "installSnapshot", "installSnapshotReply")
    REQUESTVOTE_FIELD_NUMBER: _ClassVar[int]
    REQUESTVOTEREPLY_FIELD_NUMBER: _ClassVar[int]
    APPENDENTRIES_FIELD_NUMBER: _ClassVar[int]
    APPENDENTRIESREPLY_FIELD_NUMBER: _ClassVar[int]
    STARTLEADERELECTION_FIELD_NUMBER: _ClassVar[int]
    INSTALLSNAPSHOT_FIELD_NUMBER: _ClassVar[int]
    INSTALLSNAPSHOTREPLY_FIELD_NUMBER: _ClassVar[int]
    requestVote: RequestVoteRequestProto
    requestVoteReply: RequestVoteReplyProto
    appendEntries: AppendEntriesRequestProto
    appendEntriesReply: AppendEntriesReplyProto
    startLeaderElection: StartLeaderElectionRequestProto
    installSnapshot: InstallSnapshotRequestProto
    installSnapshotReply: InstallSnapshotReplyProto
    def __init__(self, requestVote: _Optional[_Union[RequestVoteRequestProto, _Mapping]] = ..., requestVoteReply: _Optional[_Union[RequestVoteReplyProto, _Mapping]] = ..., appendEntries: _Optional[_Union[AppendEntriesRequestProto, _Mapping]] = ..., appendEntriesReply: _Optional[_Union[AppendEntriesReplyProto, _Mapping]] = ..., startLeaderElection: _Optional[_Union[StartLeaderElectionRequestProto, _Mapping]] = ..., installSnapshot: _Optional[_Union[InstallSnapshotRequestProto, _Mapping]] = ..., installSnapshotReply: _Optional[_Union[InstallSnapshotReplyProto, _Mapping]] = ...) -> None: ...

class RaftServerMessagesProto(_message.Message):
    __slots__ = ("messages",)
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    messages: _containers.RepeatedCompositeFieldContainer[RaftServerMessageProto]
    def __init__(self, messages: _Optional[_Iterable[_Union[RaftServerMessageProto, _Mapping]]] = ...) -> None: ...

class RaftServerMessagesAckProto(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...
