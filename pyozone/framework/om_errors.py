"""How a failed OM call reads (Ozone's OMException in ozone-common, shared by OM's clients): the errors
OM's client (framework/om.py) raises, under the one base class the Ozone client raises, so a caller (or
the CLI) can catch everything.

- OMException: the Ozone Manager refused a call; `result` is Ozone's OMException code as a string
  ("KEY_NOT_FOUND"), parsed from the RPC status details "CODE: message" (OmClientProtocol's header).
  SafeModeException is the SCM_IN_SAFE_MODE code, kept as a subclass because callers wait it out.
- OMUnavailableError: OM could not be reached, or answered UNAVAILABLE for longer than the client retries.
  CommitOutcomeUnknown, one of them: a commit retried after a lost answer no longer finds its session.
"""

from __future__ import annotations

from pyozone.rpc import RpcError, StatusCode

OM_CODES_BY_STATUS = {
    StatusCode.NOT_FOUND: "NOT_FOUND",
    StatusCode.ALREADY_EXISTS: "ALREADY_EXISTS",
    StatusCode.INVALID_ARGUMENT: "INVALID_REQUEST",
    StatusCode.FAILED_PRECONDITION: "INTERNAL_ERROR",
    StatusCode.PERMISSION_DENIED: "PERMISSION_DENIED",
}


class OzoneClientError(Exception):
    """Anything the Ozone client raises."""


class OMException(OzoneClientError):
    """OM refused the call with Ozone's result code (e.g. "VOLUME_NOT_FOUND")."""

    def __init__(self, result: str, message: str) -> None:
        super().__init__(f"{result}: {message}" if message else result)
        self.result = result
        self.message = message


class SafeModeException(OMException):
    """SCM is in safe mode: no blocks can be allocated yet (code SCM_IN_SAFE_MODE)."""


class OMUnavailableError(OzoneClientError):
    """OM did not answer (or kept answering UNAVAILABLE) within the client's retry budget. `timed_out`:
    a call reached OM's port and got no answer in time (DEADLINE_EXCEEDED), so OM may have applied it."""

    def __init__(self, message: str, timed_out: bool = False) -> None:
        super().__init__(message)
        self.timed_out = timed_out


class CommitOutcomeUnknown(OMUnavailableError):
    """A commit attempt whose answer was lost (OM unreachable, or no answer in time) was followed by one OM
    answered KEY_NOT_FOUND: the lost attempt may have committed the key, since replaced or deleted by another
    writer, or the session may have expired uncommitted. Neither "written" nor "no such key" would be true;
    an S3 client is told to retry (503)."""


def _split_code(details: str) -> tuple[str | None, str]:
    code, sep, rest = details.partition(":")
    code = code.strip()
    if sep and code and code.replace("_", "").isalnum() and code.upper() == code:
        return code, rest.strip()
    return None, details


def om_exception(e: RpcError, address: str) -> OzoneClientError:
    """The exception for a failed OM call: OMException with the code from the status details, or
    OMUnavailableError when OM could not be reached."""
    status, details = e.code(), e.details() or ""
    if status in (StatusCode.UNAVAILABLE, StatusCode.DEADLINE_EXCEEDED):
        code, message = _split_code(details)
        return OMUnavailableError(
            f"OM at {address}: {status.name}: {message or details}",
            timed_out=status == StatusCode.DEADLINE_EXCEEDED,
        )
    code, message = _split_code(details)
    if code is None:
        code = OM_CODES_BY_STATUS.get(status, status.name)
    cls = SafeModeException if code == "SCM_IN_SAFE_MODE" else OMException
    return cls(code, message)
