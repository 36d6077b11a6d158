"""Who calls: the metadata a plaintext caller names its user in, and the identity a TLS caller's
certificate names (the server's `CallContext.auth_context`)."""

from __future__ import annotations

from typing import Any

from pyozone.common.tls import TlsStore
from pyozone.hdds.security.users import login_user
from pyozone.hdds.security.x509 import Identity

USER_METADATA = "x-ozone-user"
"""The metadata key a plaintext caller names its user in (contract 4 of issue 15)."""


def user_metadata(tls: TlsStore | None) -> tuple[tuple[str, str], ...] | None:
    """What a call sends to say who it is: nothing over TLS (the certificate says it), else the login user."""
    return None if tls is not None else ((USER_METADATA, login_user()),)


def peer_identity(context: Any) -> Identity | None:
    """The identity a caller's certificate names, or None on a plaintext port (no certificate)."""
    names = context.auth_context().get("x509_common_name")
    if not names:
        return None
    return Identity.from_common_name(names[0].decode())
