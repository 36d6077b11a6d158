"""How the security protocol fails: one exception with Ozone's status name, on both sides of the wire.

SCM raises it (its CA refuses a CSR, a caller may not read secret keys), the service turns it into an RPC
status whose message starts with the code, and the client raises it again from that status.
"""

from __future__ import annotations

from enum import StrEnum


class SecurityResult(StrEnum):
    """Ozone's SCMSecurityResponse Status names that pyozone answers, plus PERMISSION_DENIED (Ozone's
    AccessControlException) and UNAVAILABLE (SCM could not be reached, client side only)."""

    INVALID_CSR = "INVALID_CSR"
    UNABLE_TO_ISSUE_CERTIFICATE = "UNABLE_TO_ISSUE_CERTIFICATE"
    CERTIFICATE_NOT_FOUND = "CERTIFICATE_NOT_FOUND"
    PERMISSION_DENIED = "PERMISSION_DENIED"
    SECRET_KEY_NOT_INITIALIZED = "SECRET_KEY_NOT_INITIALIZED"
    INTERNAL_ERROR = "INTERNAL_ERROR"
    UNAVAILABLE = "UNAVAILABLE"


class SecurityError(Exception):
    """`code` is a SecurityResult name (or an RPC status name the server chose); `message` says why."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = str(code)
        self.message = message
