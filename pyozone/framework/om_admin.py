"""A blocking client of OM's administration service (OzoneManagerAdminService, Ozone's OMAdminProtocol and
OMInterServiceProtocol) over an HA service's OMs: one OM's answer (`configuration`), or the leader's
(`call_leader`): a follower's OMNotLeaderException names the leader, which is asked next; an OM down or
not ready (UNAVAILABLE) is passed over, and the round starts again after `wait_s` until `timeout_s`.

Used by `pyozone om --bootstrap` (the new OM asks the leader to add it) and `pyozone admin om decommission`.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from google.protobuf.message import Message

from pyozone import rpc
from pyozone.common.om_ha import OmNodeDetails
from pyozone.common.tls import TlsStore
from pyozone.framework.om_errors import OMNotLeaderException
from pyozone.hdds.limits import MAX_OM_MESSAGE_BYTES
from pyozone.hdds.security.x509 import CertRole
from pyozone.protocol.om_admin import ADMIN_SERVICE, configuration_request

if TYPE_CHECKING:
    from pyozone.proto import OmAdminProtocol_pb2 as pb

OM_ADMIN_SPEC = rpc.ServiceSpec.of(ADMIN_SERVICE)


class OmAdminError(Exception):
    """An OM refused the call (`code`, its status) or no OM of the service took it (`code` UNAVAILABLE)."""

    def __init__(self, code: rpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code


class OmAdminClient:
    def __init__(self, nodes: Mapping[str, OmNodeDetails], tls: TlsStore | None = None) -> None:
        """`nodes`: the service's OMs by node id (their client addresses)."""
        self.nodes = dict(nodes)
        self._tls = tls
        self._settings = rpc.ChannelSettings(max_message_bytes=MAX_OM_MESSAGE_BYTES)

    def call(self, node: str, method: str, request: Message, timeout_s: float) -> Any:
        """`method` on OM `node`; rpc.RpcError as it failed."""
        address = str(self.nodes[node].rpc_address)
        peer = CertRole.OM if self._tls is not None else None
        with rpc.SyncChannel(address, self._settings, self._tls, peer) as channel:
            return getattr(rpc.Stub(channel, OM_ADMIN_SPEC), method)(request, timeout=timeout_s)

    def configuration(self, node: str, timeout_s: float = 10) -> pb.OMConfigurationResponse:
        return self.call(node, "getOMConfiguration", configuration_request(), timeout_s)

    def call_leader(
        self,
        method: str,
        request: Message,
        timeout_s: float,
        wait_s: float = 1.0,
        call_timeout_s: float = 120,
    ) -> tuple[str, Any]:
        """The leader's answer to `method` and the leader's node id. OmAdminError: a refusal other than
        UNAVAILABLE at once; UNAVAILABLE (naming each OM's last reason) when no OM took it in `timeout_s`."""
        deadline = time.monotonic() + timeout_s
        reasons: dict[str, str] = {}
        while True:
            order = list(self.nodes)
            asked: set[str] = set()
            while order:
                node = order.pop(0)
                if node in asked:
                    continue
                asked.add(node)
                try:
                    return node, self.call(node, method, request, call_timeout_s)
                except rpc.RpcError as e:
                    details = e.details() or e.code().name
                    if e.code() is not rpc.StatusCode.UNAVAILABLE:
                        raise OmAdminError(e.code(), f"OM {node}: {details}") from None
                    reasons[node] = details
                    refusal = OMNotLeaderException.parse(details)
                    if refusal is not None and refusal.leader_id in self.nodes:
                        order.insert(0, refusal.leader_id)
            if time.monotonic() + wait_s > deadline:
                why = "; ".join(f"OM {node}: {reason}" for node, reason in reasons.items())
                raise OmAdminError(rpc.StatusCode.UNAVAILABLE, f"no OM of the service took the call: {why}")
            time.sleep(wait_s)
