"""OM's refusals in S3's words: one table, so every handler answers an Ozone result code the same way."""

from __future__ import annotations

from pyozone.client.errors import CommitOutcomeUnknown, OMException, OMUnavailableError, OzoneClientError
from pyozone.s3g.errors import S3Error, S3ErrorCode

_BY_RESULT = {
    "BUCKET_NOT_FOUND": S3ErrorCode.NoSuchBucket,
    "VOLUME_NOT_FOUND": S3ErrorCode.NoSuchBucket,
    "KEY_NOT_FOUND": S3ErrorCode.NoSuchKey,
    "BUCKET_ALREADY_EXISTS": S3ErrorCode.BucketAlreadyExists,  # or yours: CreateBucket tells
    "BUCKET_NOT_EMPTY": S3ErrorCode.BucketNotEmpty,
    "INVALID_BUCKET_NAME": S3ErrorCode.InvalidBucketName,
    "INVALID_KEY_NAME": S3ErrorCode.InvalidArgument,
    "INVALID_REQUEST": S3ErrorCode.InvalidArgument,
    "NO_SUCH_MULTIPART_UPLOAD_ERROR": S3ErrorCode.NoSuchUpload,
    "INVALID_PART": S3ErrorCode.InvalidPart,
    "INVALID_PART_ORDER": S3ErrorCode.InvalidPartOrder,
    "MISMATCH_MULTIPART_LIST": S3ErrorCode.InvalidPart,
    "ENTITY_TOO_SMALL": S3ErrorCode.EntityTooSmall,
    "S3_SECRET_NOT_FOUND": S3ErrorCode.InvalidAccessKeyId,
    "SCM_IN_SAFE_MODE": S3ErrorCode.ServiceUnavailable,
    "SCM_UNAVAILABLE": S3ErrorCode.ServiceUnavailable,
    "QUOTA_EXCEEDED": S3ErrorCode.QuotaExceeded,
    "PERMISSION_DENIED": S3ErrorCode.AccessDenied,
    "KEY_ALREADY_EXISTS": S3ErrorCode.PreconditionFailed,  # a conditional write's If-None-Match: *
    "ETAG_MISMATCH": S3ErrorCode.PreconditionFailed,  # its If-Match
    "NO_SUCH_VERSION": S3ErrorCode.NoSuchVersion,
}
_WITH_MESSAGE = (S3ErrorCode.InvalidBucketName, S3ErrorCode.InvalidArgument, S3ErrorCode.QuotaExceeded)
"""The codes whose answer carries OM's message (which quota, how much is used); a refusal of access tells
no more than S3's words."""


_NAMED_BY_OM = frozenset(
    {S3ErrorCode.InvalidArgument, S3ErrorCode.InvalidRequest, S3ErrorCode.InvalidBucketState,
     S3ErrorCode.MalformedXML, S3ErrorCode.MethodNotAllowed, S3ErrorCode.InvalidBucketAclWithObjectOwnership}
)  # fmt: skip
"""S3 codes OM names itself in an INVALID_REQUEST's message ("Code: words"): the S3 documents and rules it
checks with the kernel's models (om/bucket_documents.py, om/object_lock.py)."""


def s3_error(e: OzoneClientError, **extra: str) -> S3Error:
    """The S3 error for a client failure; the OM message is kept where S3 has a place for it."""
    if isinstance(e, CommitOutcomeUnknown):  # the PUT may have been written: neither 200 nor NoSuchKey
        return S3Error(S3ErrorCode.ServiceUnavailable, str(e))
    if isinstance(e, OMUnavailableError):
        return S3Error(S3ErrorCode.ServiceUnavailable)
    if isinstance(e, OMException):
        name, sep, words = e.message.partition(": ")
        named = S3ErrorCode.__members__.get(name) if e.result == "INVALID_REQUEST" and sep else None
        if named in _NAMED_BY_OM:
            return S3Error(named, words, **extra)
        code = _BY_RESULT.get(e.result)
        if code is not None:
            return S3Error(code, e.message if code in _WITH_MESSAGE else None, **extra)
    return S3Error(S3ErrorCode.InternalError, f"{type(e).__name__}: {e}")
