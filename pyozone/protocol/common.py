"""Field checks and the converters every protocol shares: datanode details, pipeline ids, replication configs.

Reading a message, a converter checks what proto3 cannot: that "required" fields are set (a zero enum, an
empty id or a missing sub-message means "not sent"), that enum values are known and that numbers are in
range. Each failure is a ProtocolError naming the field by its path from the message being converted.
Building a message, a converter checks the dataclass the same way, so a bad value fails where it is made.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from enum import IntEnum
from typing import Any, ParamSpec, TypeVar

from google.protobuf.descriptor import ServiceDescriptor
from google.protobuf.message import Message
from google.protobuf.message_factory import GetMessageClass

from pyozone.hdds.datanode import DatanodeDetails, LayoutVersion
from pyozone.hdds.errors import ProtocolError
from pyozone.hdds.ids import DatanodeID, InvalidReplicationConfig, PipelineID, ReplicationConfig
from pyozone.hdds.states import NodeOperationalState, ReplicationFactor, ReplicationType
from pyozone.proto import ScmServerDatanodeHeartbeatProtocol_pb2 as heartbeat_pb2
from pyozone.proto import hdds_pb2

E = TypeVar("E", bound=IntEnum)
P = ParamSpec("P")
R = TypeVar("R")

DEFAULT_NETWORK_LOCATION = "/default-rack"
MAX_PORT = 65535

Resolver = Callable[[DatanodeID], DatanodeDetails | None]
"""Looks up a datanode's details by uuid (None if unknown); lets a message name members in full."""


# ------------------------------------------------------------------ services
def varint(n: int) -> bytes:
    """`n` (non-negative) as protobuf's base-128 varint: the length prefix of a framed record (the pipeline
    log's entries, a Raft log segment's records, as Ratis writes them)."""
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def request_of(service: ServiceDescriptor, method: str) -> Message:
    """A new, empty request of the rpc `method` of `service`."""
    return GetMessageClass(service.methods_by_name[method].input_type)()


def response_of(service: ServiceDescriptor, method: str) -> Message:
    """A new, empty answer of the rpc `method` of `service`."""
    return GetMessageClass(service.methods_by_name[method].output_type)()


# ------------------------------------------------------------------ checks
def guarded(what: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Turns protobuf's own TypeError/ValueError (a wrong type, an out-of-range int) into a ProtocolError."""

    def decorate(fn: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(fn)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
            try:
                return fn(*args, **kwargs)
            except ProtocolError:
                raise
            except (TypeError, ValueError, OverflowError) as e:
                raise ProtocolError(what, str(e)) from e

        return wrapper

    return decorate


def enum_from_proto(enum: type[E], value: int, field: str) -> E:
    """A proto enum number as the Python enum with the same numbers; 0 means the field was not set."""
    if value == 0:
        raise ProtocolError(field, "is missing")
    try:
        return enum(value)
    except ValueError:
        raise ProtocolError(field, f"unknown {enum.__name__} value {value}") from None


def enum_to_proto(enum: type[E], value: Any, field: str) -> int:
    """A Python enum member (or its number) as a proto enum number."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ProtocolError(field, f"expected a {enum.__name__}, got {value!r}")
    try:
        return enum(value).value
    except ValueError:
        raise ProtocolError(field, f"unknown {enum.__name__} value {value}") from None


INT32_MAX = 2**31 - 1
UINT32_MAX = 2**32 - 1
INT64_MAX = 2**63 - 1
UINT64_MAX = 2**64 - 1


def integer(value: Any, field: str, minimum: int = 0, maximum: int = INT64_MAX) -> int:
    """An int in [minimum, maximum] (default: a non-negative int64)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ProtocolError(field, f"expected an integer, got {value!r}")
    if value < minimum:
        raise ProtocolError(field, f"must be at least {minimum}, got {value}")
    if value > maximum:
        raise ProtocolError(field, f"must be at most {maximum}, got {value}")
    return value


def uint64(value: Any, field: str) -> int:
    return integer(value, field, 0, UINT64_MAX)


def uint32(value: Any, field: str) -> int:
    return integer(value, field, 0, UINT32_MAX)


def int32(value: Any, field: str, minimum: int = 0) -> int:
    return integer(value, field, minimum, INT32_MAX)


def container_id(value: Any, field: str) -> int:
    """Container ids start at 1; 0 on the wire means the field was not sent."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ProtocolError(field, f"expected a container id, got {value!r}")
    if value == 0:
        raise ProtocolError(field, "is missing")
    if value < 0:
        raise ProtocolError(field, f"must be a positive container id, got {value}")
    return integer(value, field)


def text(value: Any, field: str, *, required: bool = True) -> str:
    if not isinstance(value, str):
        raise ProtocolError(field, f"expected a string, got {value!r}")
    if required and not value:
        raise ProtocolError(field, "is missing")
    return value


def flag(value: Any, field: str) -> bool:
    if not isinstance(value, bool):
        raise ProtocolError(field, f"expected a bool, got {value!r}")
    return value


def sub_message(parent: Message, name: str, field: str) -> Any:
    """A required sub-message; its absence is a ProtocolError."""
    if not parent.HasField(name):
        raise ProtocolError(f"{field}.{name}" if field else name, "is missing")
    return getattr(parent, name)


def optional_message(parent: Message, name: str) -> Any | None:
    return getattr(parent, name) if parent.HasField(name) else None


def sequence(value: Any, field: str) -> list[Any]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise ProtocolError(field, f"expected a list, got {value!r}")
    return list(value)


# ------------------------------------------------------------------ datanodes
@guarded("DatanodeDetails")
def datanode_details_to_proto(
    details: DatanodeDetails, field: str = "DatanodeDetails"
) -> hdds_pb2.DatanodeDetailsProto:
    """The full identity of a datanode (hdds_pb2.DatanodeDetailsProto)."""
    if not isinstance(details, DatanodeDetails):
        raise ProtocolError(field, f"expected DatanodeDetails, got {details!r}")
    proto = hdds_pb2.DatanodeDetailsProto(
        uuid=text(details.uuid, f"{field}.uuid"),
        ipAddress=text(details.ip_address, f"{field}.ip_address"),
        hostName=text(details.hostname, f"{field}.hostname"),
        networkLocation=text(details.network_location, f"{field}.network_location", required=False),
        persistedOpState=enum_to_proto(
            NodeOperationalState, details.persisted_op_state, f"{field}.persisted_op_state"
        ),
        persistedOpStateExpiry=integer(
            details.persisted_op_state_expiry, f"{field}.persisted_op_state_expiry"
        ),
        version=text(details.version, f"{field}.version", required=False),
    )
    for i, port in enumerate(details.ports):
        if not isinstance(port, tuple) or len(port) != 2:
            raise ProtocolError(f"{field}.ports[{i}]", f"expected a (name, number) pair, got {port!r}")
        name, number = port
        proto.ports.add(
            name=text(name, f"{field}.ports[{i}].name"), value=_port(number, f"{field}.ports[{i}]")
        )
    return proto


def datanode_details_from_proto(
    proto: hdds_pb2.DatanodeDetailsProto, field: str = "datanodeDetails"
) -> DatanodeDetails:
    """A datanode's full identity; uuid, ipAddress and hostName are required."""
    ports = tuple(
        (text(p.name, f"{field}.ports[{i}].name"), _port(p.value, f"{field}.ports[{i}].value"))
        for i, p in enumerate(proto.ports)
    )
    op_state = NodeOperationalState.IN_SERVICE
    if proto.HasField("persistedOpState"):
        op_state = enum_from_proto(NodeOperationalState, proto.persistedOpState, f"{field}.persistedOpState")
    return DatanodeDetails(
        uuid=text(proto.uuid, f"{field}.uuid"),
        hostname=text(proto.hostName, f"{field}.hostName"),
        ip_address=text(proto.ipAddress, f"{field}.ipAddress"),
        ports=ports,
        network_location=proto.networkLocation or DEFAULT_NETWORK_LOCATION,
        persisted_op_state=op_state,
        persisted_op_state_expiry=integer(proto.persistedOpStateExpiry, f"{field}.persistedOpStateExpiry"),
        version=proto.version,
    )


def datanode_ref_to_proto(
    uuid: DatanodeID, resolve: Resolver | None = None, field: str = "datanode"
) -> hdds_pb2.DatanodeDetailsProto:
    """A datanode named by uuid: in full if `resolve` knows it, else the uuid alone."""
    text(uuid, field)
    details = resolve(uuid) if resolve is not None else None
    if details is not None:
        return datanode_details_to_proto(details, field)
    return hdds_pb2.DatanodeDetailsProto(uuid=uuid)


def datanode_ref_from_proto(proto: hdds_pb2.DatanodeDetailsProto, field: str) -> DatanodeID:
    """The uuid of a datanode a message names, in full or by uuid alone."""
    return text(proto.uuid, f"{field}.uuid")


def is_reference(proto: hdds_pb2.DatanodeDetailsProto) -> bool:
    """Whether a DatanodeDetailsProto names a datanode by uuid only (no address)."""
    return not proto.ipAddress and not proto.hostName


def _port(value: Any, field: str) -> int:
    number = integer(value, field)
    if number > MAX_PORT:
        raise ProtocolError(field, f"port {number} is above {MAX_PORT}")
    return number


# ------------------------------------------------------------------ pipelines
def pipeline_id_to_proto(pipeline_id: PipelineID, field: str = "pipelineID") -> hdds_pb2.PipelineID:
    return hdds_pb2.PipelineID(id=text(pipeline_id, field))


def pipeline_id_from_proto(parent: Message, name: str, field: str) -> PipelineID:
    """The required PipelineID sub-message `name` of `parent`."""
    path = f"{field}.{name}" if field else name
    return text(sub_message(parent, name, field).id, f"{path}.id")


# ------------------------------------------------------------------ replication
def ec_config_to_proto(config: ReplicationConfig, field: str) -> hdds_pb2.ECReplicationConfig:
    return hdds_pb2.ECReplicationConfig(
        data=int32(config.ec_data, f"{field}.ec_data", 1),
        parity=int32(config.ec_parity, f"{field}.ec_parity", 1),
        codec=text(config.ec_codec, f"{field}.ec_codec").lower(),  # Ozone writes "rs", "xor"
        ecChunkSize=integer(config.ec_chunk_kb, f"{field}.ec_chunk_kb", 1, INT32_MAX // 1024) * 1024,
    )


def ec_config_from_proto(proto: hdds_pb2.ECReplicationConfig, field: str) -> ReplicationConfig:
    """The config an ECReplicationConfig carries, checked by ReplicationConfig.validate (a broken rule
    names the field it broke)."""
    chunk = integer(proto.ecChunkSize, f"{field}.ecChunkSize", 1)
    if chunk % 1024:
        raise ProtocolError(f"{field}.ecChunkSize", f"must be a multiple of 1024 bytes, got {chunk}")
    config = ReplicationConfig(
        ReplicationType.EC, 0, integer(proto.data, f"{field}.data"), integer(proto.parity, f"{field}.parity"),
        text(proto.codec, f"{field}.codec").upper(),  # Ozone reads it in any case
        chunk // 1024,
    )  # fmt: skip
    try:
        return config.validate()
    except InvalidReplicationConfig as e:
        raise ProtocolError(f"{field}.{e.part}", str(e)) from None


def replication_to_proto(
    config: ReplicationConfig, field: str = "replication_config"
) -> tuple[int, int, hdds_pb2.ECReplicationConfig | None]:
    """(ReplicationType, ReplicationFactor, ECReplicationConfig or None) as Ozone's messages carry them."""
    if not isinstance(config, ReplicationConfig):
        raise ProtocolError(field, f"expected a ReplicationConfig, got {config!r}")
    rtype = enum_to_proto(ReplicationType, config.type, f"{field}.type")
    if config.type is ReplicationType.EC:
        return rtype, 0, ec_config_to_proto(config, field)
    return rtype, enum_to_proto(ReplicationFactor, config.factor, f"{field}.factor"), None


def replication_from_proto(
    rtype: int,
    factor: int,
    ec: hdds_pb2.ECReplicationConfig | None,
    field: str = "",
    type_name: str = "type",
    factor_name: str = "factor",
) -> ReplicationConfig:
    kind = enum_from_proto(ReplicationType, rtype, f"{field}.{type_name}" if field else type_name)
    if kind is ReplicationType.EC:
        ec_field = f"{field}.ecReplicationConfig" if field else "ecReplicationConfig"
        if ec is None:
            raise ProtocolError(ec_field, "is missing for an EC replication config")
        return ec_config_from_proto(ec, ec_field)
    size = enum_from_proto(ReplicationFactor, factor, f"{field}.{factor_name}" if field else factor_name)
    return ReplicationConfig(kind, size.value)  # valid: ReplicationFactor is ONE or THREE


# ------------------------------------------------------------------ layout
@guarded("LayoutVersion")
def layout_version_to_proto(
    layout: LayoutVersion, field: str = "LayoutVersion"
) -> heartbeat_pb2.LayoutVersionProto:
    return heartbeat_pb2.LayoutVersionProto(
        metadataLayoutVersion=uint32(layout.metadata_layout_version, f"{field}.metadata_layout_version"),
        softwareLayoutVersion=uint32(layout.software_layout_version, f"{field}.software_layout_version"),
    )


def layout_version_from_proto(
    proto: heartbeat_pb2.LayoutVersionProto, field: str = "layoutVersion"
) -> LayoutVersion:
    return LayoutVersion(proto.metadataLayoutVersion, proto.softwareLayoutVersion)
