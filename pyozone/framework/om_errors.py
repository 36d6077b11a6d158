"""How a failed OM call reads (Ozone's OMException in ozone-common, shared by OM's clients): the errors
OM's client (framework/om.py) raises, under the one base class the Ozone client raises, so a caller (or
the CLI) can catch everything.

- OMException: the Ozone Manager refused a call; `result` is Ozone's OMException code as a string
  ("KEY_NOT_FOUND"), parsed from the RPC status details "CODE: message" (OmClientProtocol's header).
  SafeModeException is the SCM_IN_SAFE_MODE code, kept as a subclass because callers wait it out.
- OMUnavailableError: OM could not be reached, or answered UNAVAILABLE for longer than the client retries;
  `result` tells the two apart: an OM that answered UNAVAILABLE with its result code (SCM_UNAVAILABLE: SCM
  unreachable, no OPEN pipeline) was reached, and another OM of its service would not do better.
  CommitOutcomeUnknown, one of them: a commit retried after a lost answer no longer finds its session.
- OMNotLeaderException / OMLeaderNotReadyException: an OM of an HA service that cannot serve the call (a
  follower, naming the leader it knows; a leader still applying its log). Status UNAVAILABLE, details in
  Ozone's words (OMNotLeaderException's message), which the failover client reads and OM's server writes.
"""

from __future__ import annotations

import re

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
    a call reached OM's port and got no answer in time (DEADLINE_EXCEEDED), so OM may have applied it.
    `result`: the OM's own result code when OM answered (SCM_UNAVAILABLE), None when it was not reached
    (no connection, or the connection lost before an answer): only then is the call failed over."""

    def __init__(self, message: str, timed_out: bool = False, result: str | None = None) -> None:
        super().__init__(message)
        self.timed_out = timed_out
        self.result = result


class CommitOutcomeUnknown(OMUnavailableError):
    """A commit attempt whose answer was lost (OM unreachable, or no answer in time) was followed by one OM
    answered KEY_NOT_FOUND: the lost attempt may have committed the key, since replaced or deleted by another
    writer, or the session may have expired uncommitted. Neither "written" nor "no such key" would be true;
    an S3 client is told to retry (503)."""


class OMNotLeaderException(OzoneClientError):
    """Ozone's OMNotLeaderException: `node_id` is not the leader; `leader_id` (at `leader_address`, as
    host:port) is the leader it knows of, if any. The call was not executed: any OM may take it."""

    PREFIX = "OMNotLeaderException: "
    _TEXT = re.compile(
        r"OM:(?P<node>\S+) is not the leader\. (?:Suggested leader is OM:(?P<leader>[^\[\s]+)"
        r"\[(?P<address>[^\]]*)\]\.|Could not determine the leader node\.)"
    )

    def __init__(self, node_id: str, leader_id: str | None = None, leader_address: str | None = None) -> None:
        self.node_id = node_id
        self.leader_id = leader_id
        self.leader_address = leader_address
        super().__init__(self.details())

    def details(self) -> str:
        """The status details OM's server sends (Ozone's message, after the exception's name)."""
        if self.leader_id is None:
            return f"{self.PREFIX}OM:{self.node_id} is not the leader. Could not determine the leader node."
        return (
            f"{self.PREFIX}OM:{self.node_id} is not the leader. Suggested leader is "
            f"OM:{self.leader_id}[{self.leader_address or ''}]."
        )

    @classmethod
    def parse(cls, details: str) -> OMNotLeaderException | None:
        if not details.startswith(cls.PREFIX):
            return None
        match = cls._TEXT.fullmatch(details[len(cls.PREFIX) :])
        if match is None:
            return None
        return cls(match["node"], match["leader"], match["address"] or None)


class OMLeaderNotReadyException(OzoneClientError):
    """Ozone's OMLeaderNotReadyException: the leader has not applied its log up to its term's start yet; the
    call was not executed; the same OM takes it after a wait."""

    PREFIX = "OMLeaderNotReadyException: "

    def __init__(self, node_id: str) -> None:
        self.node_id = node_id
        super().__init__(self.details())

    def details(self) -> str:
        return f"{self.PREFIX}{self.node_id} is Leader but not ready to process request yet."

    @classmethod
    def parse(cls, details: str) -> OMLeaderNotReadyException | None:
        if not details.startswith(cls.PREFIX):
            return None
        node, _, _ = details[len(cls.PREFIX) :].partition(" ")
        return cls(node) if node else None


def _split_code(details: str) -> tuple[str | None, str]:
    code, sep, rest = details.partition(":")
    code = code.strip()
    if sep and code and code.replace("_", "").isalnum() and code.upper() == code:
        return code, rest.strip()
    return None, details


def om_exception(e: RpcError, address: str) -> OzoneClientError:
    """The exception for a failed OM call: OMException with the code from the status details, or
    OMUnavailableError when OM could not be reached or answered UNAVAILABLE (with its code, if it gave one:
    the RPC layer's own failures, a refused or lost connection, carry none)."""
    status, details = e.code(), e.details() or ""
    if status is StatusCode.UNAVAILABLE:
        ha_refusal = OMNotLeaderException.parse(details) or OMLeaderNotReadyException.parse(details)
        if ha_refusal is not None:
            return ha_refusal
    if status in (StatusCode.UNAVAILABLE, StatusCode.DEADLINE_EXCEEDED):
        code, message = _split_code(details)
        return OMUnavailableError(
            f"OM at {address}: {code or status.name}: {message or details}",
            timed_out=status == StatusCode.DEADLINE_EXCEEDED,
            result=code,
        )
    code, message = _split_code(details)
    if code is None:
        code = OM_CODES_BY_STATUS.get(status, status.name)
    cls = SafeModeException if code == "SCM_IN_SAFE_MODE" else OMException
    return cls(code, message)
