from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

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

class OMNodeInfo(_message.Message):
    __slots__ = ("nodeID", "hostAddress", "rpcPort", "ratisPort", "decommissioned")
    NODEID_FIELD_NUMBER: _ClassVar[int]
    HOSTADDRESS_FIELD_NUMBER: _ClassVar[int]
    RPCPORT_FIELD_NUMBER: _ClassVar[int]
    RATISPORT_FIELD_NUMBER: _ClassVar[int]
    DECOMMISSIONED_FIELD_NUMBER: _ClassVar[int]
    nodeID: str
    hostAddress: str
    rpcPort: int
    ratisPort: int
    decommissioned: bool
    def __init__(self, nodeID: _Optional[str] = ..., hostAddress: _Optional[str] = ..., rpcPort: _Optional[int] = ..., ratisPort: _Optional[int] = ..., decommissioned: _Optional[bool] = ...) -> None: ...

class OMConfigurationRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class OMConfigurationResponse(_message.Message):
    __slots__ = ("nodesInMemory", "nodesInNewConf", "nodeId", "logKnown")
    NODESINMEMORY_FIELD_NUMBER: _ClassVar[int]
    NODESINNEWCONF_FIELD_NUMBER: _ClassVar[int]
    NODEID_FIELD_NUMBER: _ClassVar[int]
    LOGKNOWN_FIELD_NUMBER: _ClassVar[int]
    nodesInMemory: _containers.RepeatedCompositeFieldContainer[OMNodeInfo]
    nodesInNewConf: _containers.RepeatedCompositeFieldContainer[OMNodeInfo]
    nodeId: str
    logKnown: bool
    def __init__(self, nodesInMemory: _Optional[_Iterable[_Union[OMNodeInfo, _Mapping]]] = ..., nodesInNewConf: _Optional[_Iterable[_Union[OMNodeInfo, _Mapping]]] = ..., nodeId: _Optional[str] = ..., logKnown: _Optional[bool] = ...) -> None: ...

class BootstrapOMRequest(_message.Message):
    __slots__ = ("nodeId", "hostAddress", "ratisPort")
    NODEID_FIELD_NUMBER: _ClassVar[int]
    HOSTADDRESS_FIELD_NUMBER: _ClassVar[int]
    RATISPORT_FIELD_NUMBER: _ClassVar[int]
    nodeId: str
    hostAddress: str
    ratisPort: int
    def __init__(self, nodeId: _Optional[str] = ..., hostAddress: _Optional[str] = ..., ratisPort: _Optional[int] = ...) -> None: ...

class BootstrapOMResponse(_message.Message):
    __slots__ = ("configurationIndex",)
    CONFIGURATIONINDEX_FIELD_NUMBER: _ClassVar[int]
    configurationIndex: int
    def __init__(self, configurationIndex: _Optional[int] = ...) -> None: ...

class DecommissionOMRequest(_message.Message):
    __slots__ = ("nodeId", "nodeAddress")
    NODEID_FIELD_NUMBER: _ClassVar[int]
    NODEADDRESS_FIELD_NUMBER: _ClassVar[int]
    nodeId: str
    nodeAddress: str
    def __init__(self, nodeId: _Optional[str] = ..., nodeAddress: _Optional[str] = ...) -> None: ...

class DecommissionOMResponse(_message.Message):
    __slots__ = ("configurationIndex",)
    CONFIGURATIONINDEX_FIELD_NUMBER: _ClassVar[int]
    configurationIndex: int
    def __init__(self, configurationIndex: _Optional[int] = ...) -> None: ...
