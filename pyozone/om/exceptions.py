"""OMException: a refusal of the Ozone Manager, with Ozone's OMException result code.

The code names the rule that refused the request; the RPC adapter turns it into a status whose details
read "RESULT_CODE: message", as the header of OmClientProtocol.proto promises clients.
"""

from __future__ import annotations

from enum import Enum


class OMResultCode(Enum):
    """Ozone's OMException.ResultCodes that pyozone's OM raises, with the RPC status each travels as."""

    INVALID_VOLUME_NAME = "INVALID_ARGUMENT"
    INVALID_BUCKET_NAME = "INVALID_ARGUMENT"
    INVALID_KEY_NAME = "INVALID_ARGUMENT"
    INVALID_REQUEST = "INVALID_ARGUMENT"
    VOLUME_NOT_FOUND = "NOT_FOUND"
    BUCKET_NOT_FOUND = "NOT_FOUND"
    KEY_NOT_FOUND = "NOT_FOUND"
    VOLUME_ALREADY_EXISTS = "ALREADY_EXISTS"
    BUCKET_ALREADY_EXISTS = "ALREADY_EXISTS"
    KEY_ALREADY_EXISTS = "ALREADY_EXISTS"
    VOLUME_NOT_EMPTY = "FAILED_PRECONDITION"
    BUCKET_NOT_EMPTY = "FAILED_PRECONDITION"
    SCM_IN_SAFE_MODE = "FAILED_PRECONDITION"
    KEY_ALLOCATION_ERROR = "FAILED_PRECONDITION"
    INVALID_BLOCK_LIST = "FAILED_PRECONDITION"
    S3_SECRET_NOT_FOUND = "NOT_FOUND"
    NO_SUCH_MULTIPART_UPLOAD_ERROR = "NOT_FOUND"
    INVALID_PART = "INVALID_ARGUMENT"
    INVALID_PART_ORDER = "INVALID_ARGUMENT"
    ENTITY_TOO_SMALL = "INVALID_ARGUMENT"
    SCM_UNAVAILABLE = "UNAVAILABLE"  # pyozone: SCM unreachable or no OPEN pipeline yet; the client retries
    PERMISSION_DENIED = "PERMISSION_DENIED"
    QUOTA_EXCEEDED = "FAILED_PRECONDITION"
    QUOTA_ERROR = "INVALID_ARGUMENT"
    ETAG_MISMATCH = "FAILED_PRECONDITION"  # an S3 If-Match that the committed key does not meet
    NO_SUCH_VERSION = "NOT_FOUND"  # pyozone: an S3 version id the key does not have (om/versions.py)
    INVALID_KMS_PROVIDER = "FAILED_PRECONDITION"  # SSE-S3 without a usable master keystore (master_keys.py)

    def __new__(cls, status: str) -> OMResultCode:
        # Several codes share a status: the value must stay unique, so it is the member's position.
        member = object.__new__(cls)
        member._value_ = len(cls.__members__) + 1
        member.status_name = status  # type: ignore[attr-defined]
        return member


class OMException(Exception):
    """`str()` is "CODE: message", exactly what a client reads in the RPC status details."""

    def __init__(self, code: OMResultCode, message: str) -> None:
        super().__init__(f"{code.name}: {message}")
        self.code = code
        self.message = message

    @property
    def status_name(self) -> str:
        """The rpc.StatusCode member name (kept as text, so the core never imports the RPC layer)."""
        return self.code.status_name  # type: ignore[attr-defined]
