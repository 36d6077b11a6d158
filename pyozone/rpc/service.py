"""A service is its protobuf descriptor: the methods, their message types and which side streams. No code
is generated for it: a server registers a plain object whose async methods are named as the rpcs, a
client makes a `Stub` from the same descriptor."""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from google.protobuf.descriptor import ServiceDescriptor
from google.protobuf.message_factory import GetMessageClass


class Cardinality(enum.Enum):
    UNARY_UNARY = (False, False)
    UNARY_STREAM = (False, True)
    STREAM_UNARY = (True, False)
    STREAM_STREAM = (True, True)

    @property
    def client_streaming(self) -> bool:
        return self.value[0]

    @property
    def server_streaming(self) -> bool:
        return self.value[1]


@dataclass(frozen=True, slots=True)
class MethodSpec:
    name: str
    path: str
    """"/package.Service/method", gRPC's name for it."""
    request: type
    response: type
    cardinality: Cardinality


@dataclass(frozen=True)
class ServiceSpec:
    full_name: str
    methods: Mapping[str, MethodSpec]

    @classmethod
    def of(cls, descriptor: ServiceDescriptor) -> ServiceSpec:
        methods = {
            m.name: MethodSpec(
                m.name,
                f"/{descriptor.full_name}/{m.name}",
                GetMessageClass(m.input_type),
                GetMessageClass(m.output_type),
                Cardinality((m.client_streaming, m.server_streaming)),
            )
            for m in descriptor.methods
        }
        return cls(descriptor.full_name, methods)


def service(module: ModuleType, name: str) -> ServiceSpec:
    """The service `name` of a generated `_pb2` module."""
    return ServiceSpec.of(module.DESCRIPTOR.services_by_name[name])


class Stub:
    """One attribute per rpc of `spec`, each a callable of `channel` (rpc.client.Channel or
    rpc.sync.SyncChannel): `await stub.method(request, timeout=...)`, or a stream call."""

    def __init__(self, channel: Any, spec: ServiceSpec) -> None:
        for method in spec.methods.values():
            setattr(self, method.name, channel.method(method))


Handler = Callable[..., Any]
