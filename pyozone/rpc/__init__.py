"""pyozone's RPC layer: protobuf messages framed and multiplexed by call id over asyncio streams (uvloop),
in the role Hadoop RPC plays for Ozone's OM and dask's comm layer for dask. Only this package and
`pyozone.protocol` touch the wire (`pyozone.proto`); docs/architecture.md "The RPC layer" draws it and
docs/differences.md says how its framing differs from Hadoop RPC and gRPC."""

from pyozone.rpc.client import EOF, Channel, ChannelSettings, StreamCall
from pyozone.rpc.limits import Oversized, RequestBounds, RequestLimits
from pyozone.rpc.server import Server, ServerSettings
from pyozone.rpc.server_connection import CallContext
from pyozone.rpc.service import MethodSpec, ServiceSpec, Stub, service
from pyozone.rpc.status import AbortError, RpcError, StatusCode
from pyozone.rpc.sync import SyncChannel

__all__ = [
    "EOF",
    "AbortError",
    "CallContext",
    "Channel",
    "ChannelSettings",
    "MethodSpec",
    "Oversized",
    "RequestBounds",
    "RequestLimits",
    "RpcError",
    "Server",
    "ServerSettings",
    "ServiceSpec",
    "StatusCode",
    "StreamCall",
    "Stub",
    "SyncChannel",
    "service",
]
