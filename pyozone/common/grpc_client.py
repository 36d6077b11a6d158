"""A synchronous gRPC client: one channel, context management, and one path for failures.

Subclasses name their stub and say how a failed call or a malformed answer reads to their users.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import grpc

from pyozone.common.net import HostPort
from pyozone.hdds.errors import ProtocolError
from pyozone.hdds.limits import grpc_options

T = TypeVar("T")


class GrpcClient:
    def __init__(self, address: HostPort, stub_class: type, max_message_bytes: int, timeout_s: float) -> None:
        self.address = address
        self.timeout_s = timeout_s
        self._channel = grpc.insecure_channel(str(address), options=grpc_options(max_message_bytes))
        self._stub = stub_class(self._channel)

    def close(self) -> None:
        self._channel.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _call(self, method: Callable[..., Any], request: Any, convert: Callable[[Any], T]) -> T:
        try:
            response = method(request, timeout=self.timeout_s)
        except grpc.RpcError as e:
            raise self._error(e) from None
        try:
            return convert(response)
        except ProtocolError as e:
            raise self._malformed(e) from None

    def _error(self, e: grpc.RpcError) -> Exception:
        raise NotImplementedError

    def _malformed(self, e: ProtocolError) -> Exception:
        raise NotImplementedError
