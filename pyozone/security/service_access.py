"""Service authorization over mutual TLS: which certificates may call a service, and which datanode a
datanode's certificate speaks for.

Ozone restricts its internal protocols to the services that use them (SCMPolicyProvider's protocol ACLs,
by Kerberos principal): only OM calls SCM's block protocol, only datanodes SCM's datanode protocol. Here the
caller is the role its verified certificate names. On a plaintext port no caller is proven, so nothing is
checked there, as Ozone's simple authentication trusts whoever calls.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from pyozone import rpc
from pyozone.hdds.security import x509 as X
from pyozone.hdds.security.x509 import CertRole
from pyozone.rpc.metadata import peer_identity

log = logging.getLogger(__name__)

PEM_CERT_PROPERTY = "x509_pem_cert"
"""The auth context property holding the peer's verified certificate (gRPC's name; pyozone.rpc keeps it)."""


def peer_certificate(context: Any) -> X.Certificate | None:
    """The caller's verified certificate, or None on a plaintext port."""
    pems = context.auth_context().get(PEM_CERT_PROPERTY)
    return X.cert_from_pem(pems[0]) if pems else None


def peer_datanode(context: Any) -> str | None:
    """The datanode UUID the caller's certificate names, or None (no certificate, or not a
    datanode's)."""
    cert = peer_certificate(context)
    return None if cert is None else X.datanode_id(cert)


def peer_node(context: Any) -> str | None:
    """Which daemon of its common name the caller's certificate is for (X.node_of: a datanode's UUID, an
    HA OM's "SERVICE/NODE"), or None."""
    cert = peer_certificate(context)
    return None if cert is None else X.node_of(cert)


@dataclass(frozen=True, slots=True)
class ServiceAccess:
    """Who may call one service: the certificate roles in `roles`, when `tls` (the port is mutual TLS)."""

    service: str
    roles: frozenset[CertRole]
    tls: bool

    def refusal(self, context: Any) -> str | None:
        """Why the caller may not call the service, or None when it may."""
        if not self.tls:
            return None
        try:
            identity = peer_identity(context)
        except ValueError as e:
            return f"the caller's certificate names no service: {e}"
        if identity is None:
            return "the caller presented no certificate"
        if identity.role in self.roles:
            return None
        allowed = ", ".join(sorted(r.name for r in self.roles))
        return f"{identity.common_name} may not call {self.service}: {allowed} certificates only"

    async def require(self, context: rpc.CallContext) -> None:
        """Returns when the caller may call the service; else ends the call with PERMISSION_DENIED."""
        why = self.refusal(context)
        if why is not None:
            await _deny(context, why)

    async def require_datanode(self, context: rpc.CallContext, uuid: str) -> None:
        """Returns when the caller may speak for datanode `uuid`: over TLS its certificate names that
        datanode; else ends the call with PERMISSION_DENIED."""
        if not self.tls:
            return
        theirs = peer_datanode(context)
        if theirs != uuid:
            why = f"the caller's certificate names datanode {theirs}, not {uuid}: each datanode for itself"
            await _deny(context, why)


async def _deny(context: rpc.CallContext, why: str) -> None:
    log.warning("Refused a call from %s: %s", context.peer(), why)
    await context.abort(rpc.StatusCode.PERMISSION_DENIED, why)
