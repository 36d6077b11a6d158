"""A blocking client of one service: one channel, context management, and one path for failures.

Subclasses name their service and say how a failed call or a malformed answer reads to their users. With a
`TlsStore` the channel is mutual TLS and the certificate says who calls (a renewed one too: the channel
follows the store's generation); without one every call claims the login user in `x-ozone-user` metadata
(trusted only by servers without TLS, as Ozone's simple auth).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

from pyozone.common.net import HostPort
from pyozone.common.tls import TlsStore
from pyozone.hdds.errors import ProtocolError
from pyozone.hdds.security.x509 import CertRole
from pyozone.rpc.client import ChannelSettings
from pyozone.rpc.metadata import user_metadata
from pyozone.rpc.service import ServiceSpec, Stub
from pyozone.rpc.status import RpcError
from pyozone.rpc.sync import SyncChannel

T = TypeVar("T")


class RpcClient:
    PEER: ClassVar[CertRole | None] = None
    """The role the server's certificate must have (rpc.Channel's `peer`)."""

    def __init__(
        self,
        address: HostPort,
        spec: ServiceSpec,
        max_message_bytes: int,
        timeout_s: float,
        tls: TlsStore | None = None,
    ) -> None:
        self.address = address
        self.timeout_s = timeout_s
        self._channel = SyncChannel(
            address, ChannelSettings(max_message_bytes), tls, self.PEER, user_metadata(tls)
        )
        self._stub: Any = Stub(self._channel, spec)

    def close(self) -> None:
        self._channel.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _call(self, method: Callable[..., Any], request: Any, convert: Callable[[Any], T]) -> T:
        try:
            response = method(request, timeout=self.timeout_s)
        except RpcError as e:
            raise self._error(e) from None
        try:
            return convert(response)
        except ProtocolError as e:
            raise self._malformed(e) from None

    def _error(self, e: RpcError) -> Exception:
        raise NotImplementedError

    def _malformed(self, e: ProtocolError) -> Exception:
        raise NotImplementedError
