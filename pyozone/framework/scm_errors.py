"""The one way a failed SCM call reads, for every client of SCM's block and admin protocols."""

from __future__ import annotations

from pyozone import rpc
from pyozone.common.net import HostPort
from pyozone.hdds.errors import ProtocolError

_UNREACHABLE = (rpc.StatusCode.UNAVAILABLE, rpc.StatusCode.DEADLINE_EXCEEDED)


class ScmClientError(Exception):
    """SCM refused or could not be reached; the message is what an operator needs to read. `code`: the
    call's status (None for a malformed answer or a request refused before sending)."""

    def __init__(self, message: str, code: rpc.StatusCode | None = None) -> None:
        super().__init__(message)
        self.code = code

    @property
    def retryable(self) -> bool:
        """SCM unreachable, or no OPEN pipeline yet (SCM is creating one): the caller may retry."""
        return self.code in _UNREACHABLE

    @property
    def not_found(self) -> bool:
        return self.code is rpc.StatusCode.NOT_FOUND


def scm_error(address: HostPort, e: rpc.RpcError) -> ScmClientError:
    code = e.code()
    if code in _UNREACHABLE:
        return ScmClientError(f"cannot reach SCM at {address}: {e.details() or code.name}", code)
    return ScmClientError(e.details() or code.name, code)


def scm_malformed(address: HostPort, e: ProtocolError) -> ScmClientError:
    return ScmClientError(f"SCM at {address} sent a malformed answer: {e}")
