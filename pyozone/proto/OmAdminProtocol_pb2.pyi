from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Optional as _Optional

DESCRIPTOR: _descriptor.FileDescriptor

class TransferLeadershipRequest(_message.Message):
    __slots__ = ("nodeId", "random")
    NODEID_FIELD_NUMBER: _ClassVar[int]
    RANDOM_FIELD_NUMBER: _ClassVar[int]
    nodeId: str
    random: bool
    def __init__(self, nodeId: _Optional[str] = ..., random: _Optional[bool] = ...) -> None: ...

class TransferLeadershipResponse(_message.Message):
    __slots__ = ("newLeaderId",)
    NEWLEADERID_FIELD_NUMBER: _ClassVar[int]
    newLeaderId: str
    def __init__(self, newLeaderId: _Optional[str] = ...) -> None: ...
