"""A synchronous gRPC client: one channel, context management, and one path for failures.

Subclasses name their stub and say how a failed call or a malformed answer reads to their users. With a
`TlsStore` the channel is mutual TLS and the certificate says who calls (a renewed one too: the channel is
dialled again after a renewal, as a daemon keeps its clients for its life); without one every call claims
the login user in `x-ozone-user` metadata (trusted only by servers without TLS, as Ozone's simple auth).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

import grpc

from pyozone.common.net import HostPort
from pyozone.common.tls import TlsStore, renewing_sync_channel
from pyozone.hdds.errors import ProtocolError
from pyozone.hdds.limits import grpc_options
from pyozone.hdds.security.users import login_user
from pyozone.hdds.security.x509 import CertRole

T = TypeVar("T")

USER_METADATA = "x-ozone-user"
"""The metadata key a plaintext caller names its user in (contract 4 of issue 15)."""


def user_metadata(tls: TlsStore | None) -> tuple[tuple[str, str], ...] | None:
    """What a call sends to say who it is: nothing over TLS (the certificate says it), else the login user."""
    return None if tls is not None else ((USER_METADATA, login_user()),)


class GrpcClient:
    PEER: ClassVar[CertRole | None] = None
    """The role the server's certificate must have (common.tls.aio_channel's `peer`)."""

    def __init__(
        self,
        address: HostPort,
        stub_class: type,
        max_message_bytes: int,
        timeout_s: float,
        tls: TlsStore | None = None,
    ) -> None:
        self.address = address
        self.timeout_s = timeout_s
        self.metadata = user_metadata(tls)
        """Pass with every call the subclass makes itself (streams); `_call` does."""
        self._channel = renewing_sync_channel(
            str(address), grpc_options(max_message_bytes), tls, stub_class, self.PEER
        )

    @property
    def _stub(self) -> Any:
        """The stub of the channel with the current certificate."""
        return self._channel.stub

    def close(self) -> None:
        self._channel.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _call(self, method: Callable[..., Any], request: Any, convert: Callable[[Any], T]) -> T:
        try:
            response = method(request, timeout=self.timeout_s, metadata=self.metadata)
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
