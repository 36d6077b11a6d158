"""S3 Object Lock's headers at the gateway: CreateBucket's x-amz-bucket-object-lock-enabled, a write's
x-amz-object-lock-* (sent to OM as metadata entries of the same names, which OM checks and moves into the
version's fields: om/object_lock.py), a GET/HEAD answer's, and x-amz-bypass-governance-retention."""

from __future__ import annotations

from collections.abc import Mapping

from pyozone.hdds.om_views import KeyInfo
from pyozone.hdds.s3_object_lock import (
    BYPASS_HEADER,
    LEGAL_HOLD_HEADER,
    MODE_HEADER,
    UNTIL_HEADER,
    ObjectLockError,
    bypass_requested,
    iso_date,
    lock_request,
)
from pyozone.s3g import policy
from pyozone.s3g.errors import S3Error, S3ErrorCode
from pyozone.s3g.headers import BODY_DIGESTS
from pyozone.s3g.request import S3Request


def s3_lock_error(e: ObjectLockError) -> S3Error:
    return S3Error(S3ErrorCode[e.code], e.message or None)


BUCKET_LOCK_HEADER = "x-amz-bucket-object-lock-enabled"


def bucket_lock_requested(headers: Mapping[str, str]) -> bool:
    """CreateBucket's x-amz-bucket-object-lock-enabled: true or false (anything else InvalidArgument)."""
    value = headers.get(BUCKET_LOCK_HEADER, "false").strip().lower()
    if value not in ("true", "false"):
        raise S3Error(S3ErrorCode.InvalidArgument, f"Invalid value for {BUCKET_LOCK_HEADER}: {value!r}")
    return value == "true"


def lock_metadata(headers: Mapping[str, str]) -> dict[str, str]:
    """A write's x-amz-object-lock-* headers, checked, as the metadata entries OM reads them from
    (om/object_lock.LOCK_METADATA: the header names); OM checks the bucket and the date."""
    try:
        lock_request(headers.get(MODE_HEADER), headers.get(UNTIL_HEADER), headers.get(LEGAL_HOLD_HEADER))
    except ObjectLockError as e:
        raise s3_lock_error(e) from None
    return {name: headers[name] for name in (MODE_HEADER, UNTIL_HEADER, LEGAL_HOLD_HEADER) if name in headers}


LOCK_DIGEST_REQUIRED = (
    "Content-MD5 OR x-amz-checksum- HTTP header is required for Put Object requests with Object Lock "
    "parameters"
)


def require_lock_digest(headers: Mapping[str, str]) -> None:
    """A PutObject naming a retention or legal hold needs Content-MD5 or a checksum, as Amazon's
    (InvalidRequest; R35's F4): a body stored under COMPLIANCE must be the one sent."""
    if any(name in headers for name in (MODE_HEADER, UNTIL_HEADER, LEGAL_HOLD_HEADER)) and not any(
        name in headers for name in BODY_DIGESTS
    ):
        raise S3Error(S3ErrorCode.InvalidRequest, LOCK_DIGEST_REQUIRED)


def lock_headers(info: KeyInfo) -> dict[str, str]:
    """GET/HEAD's answer headers for the version's retention and legal hold."""
    headers = {}
    if info.retention is not None:
        headers[MODE_HEADER] = info.retention.mode.value
        headers[UNTIL_HEADER] = iso_date(info.retention.until_ms)
    if info.legal_hold is not None:
        headers[LEGAL_HOLD_HEADER] = "ON" if info.legal_hold else "OFF"
    return headers


async def bypass_governance(s3: S3Request, key: str) -> bool:
    """Whether the request bypasses GOVERNANCE retention on `key`: it asks to, and may (policy.py)."""
    if not bypass_requested(s3.headers.get(BYPASS_HEADER)):
        return False
    return await policy.holds(
        s3.gateway, s3.http, s3.headers, s3.target, key, s3.user or None, "s3:BypassGovernanceRetention"
    )


async def answer_lock_headers(s3: S3Request, info: KeyInfo) -> dict[str, str]:
    """GET/HEAD's lock headers for whom Amazon answers them: the mode and date to a holder of
    s3:GetObjectRetention, the legal hold to one of s3:GetObjectLegalHold (policy.holds: the bucket's
    owner, an administrator, a policy's grantee, also when OM's refusal had the gateway serve the object's
    public ACL to them; a reader by ACL alone learns neither), never to an unsigned request (R37's F13)."""
    if not s3.user or (info.retention is None and info.legal_hold is None):
        return {}
    headers = lock_headers(info)
    for action, names in (
        ("s3:GetObjectRetention", (MODE_HEADER, UNTIL_HEADER)),
        ("s3:GetObjectLegalHold", (LEGAL_HOLD_HEADER,)),
    ):
        shown = [name for name in names if name in headers]
        if shown and not await policy.holds(
            s3.gateway, s3.http, s3.headers, s3.target, s3.key, s3.user, action
        ):
            for name in shown:
                del headers[name]
    return headers
