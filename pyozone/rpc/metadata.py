"""Who calls: the metadata a plaintext caller names its user in, and the identity a TLS caller's
certificate names (the server's `CallContext.auth_context`)."""

from __future__ import annotations

from typing import Any

from pyozone.common.tls import TlsStore
from pyozone.hdds.security.users import login_user
from pyozone.hdds.security.x509 import Identity

USER_METADATA = "x-ozone-user"
"""The metadata key a plaintext caller names its user in (contract 4 of issue 15)."""

CLIENT_ID_METADATA = "x-ozone-client-id"
CALL_ID_METADATA = "x-ozone-call-id"
"""A call to an OM HA service names its client (one id per client) and the call (one per logical call, kept
across retries and failovers), as Hadoop RPC's header carries clientId and callId: OM's retry cache keys
on them."""


def user_metadata(tls: TlsStore | None) -> tuple[tuple[str, str], ...] | None:
    """What a call sends to say who it is: nothing over TLS (the certificate says it), else the login user."""
    return None if tls is not None else ((USER_METADATA, login_user()),)


def peer_identity(context: Any) -> Identity | None:
    """The identity a caller's certificate names, or None on a plaintext port (no certificate)."""
    names = context.auth_context().get("x509_common_name")
    if not names:
        return None
    return Identity.from_common_name(names[0].decode())
