"""Which bucket and key a request names, and which S3 operation it is: pure functions of its line and
headers, so every rule of S3's addressing is testable without a server."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from urllib.parse import parse_qsl, unquote

from pyozone.s3g.errors import S3Error, S3ErrorCode


class Operation(Enum):
    LIST_BUCKETS = "ListBuckets"
    CREATE_BUCKET = "CreateBucket"
    HEAD_BUCKET = "HeadBucket"
    DELETE_BUCKET = "DeleteBucket"
    GET_BUCKET_LOCATION = "GetBucketLocation"
    GET_BUCKET_VERSIONING = "GetBucketVersioning"
    PUT_BUCKET_VERSIONING = "PutBucketVersioning"
    GET_BUCKET_ACL = "GetBucketAcl"
    PUT_BUCKET_ACL = "PutBucketAcl"
    GET_BUCKET_CORS = "GetBucketCors"
    PUT_BUCKET_CORS = "PutBucketCors"
    DELETE_BUCKET_CORS = "DeleteBucketCors"
    GET_BUCKET_LIFECYCLE = "GetBucketLifecycleConfiguration"
    PUT_BUCKET_LIFECYCLE = "PutBucketLifecycleConfiguration"
    DELETE_BUCKET_LIFECYCLE = "DeleteBucketLifecycle"
    GET_BUCKET_POLICY = "GetBucketPolicy"
    PUT_BUCKET_POLICY = "PutBucketPolicy"
    DELETE_BUCKET_POLICY = "DeleteBucketPolicy"
    GET_BUCKET_POLICY_STATUS = "GetBucketPolicyStatus"
    GET_PUBLIC_ACCESS_BLOCK = "GetPublicAccessBlock"
    PUT_PUBLIC_ACCESS_BLOCK = "PutPublicAccessBlock"
    DELETE_PUBLIC_ACCESS_BLOCK = "DeletePublicAccessBlock"
    GET_BUCKET_ENCRYPTION = "GetBucketEncryption"
    PUT_BUCKET_ENCRYPTION = "PutBucketEncryption"
    DELETE_BUCKET_ENCRYPTION = "DeleteBucketEncryption"
    GET_BUCKET_OWNERSHIP_CONTROLS = "GetBucketOwnershipControls"
    PUT_BUCKET_OWNERSHIP_CONTROLS = "PutBucketOwnershipControls"
    DELETE_BUCKET_OWNERSHIP_CONTROLS = "DeleteBucketOwnershipControls"
    GET_OBJECT_LOCK_CONFIGURATION = "GetObjectLockConfiguration"
    PUT_OBJECT_LOCK_CONFIGURATION = "PutObjectLockConfiguration"
    OPTIONS_OBJECT = "OptionsObject"
    """A browser's CORS preflight, to any bucket or key URL whatever its query: app.serve answers it
    before any other routing, unauthenticated (bucket_cors.py)."""
    LIST_OBJECTS = "ListObjects"
    LIST_OBJECTS_V2 = "ListObjectsV2"
    LIST_OBJECT_VERSIONS = "ListObjectVersions"
    LIST_MULTIPART_UPLOADS = "ListMultipartUploads"
    DELETE_OBJECTS = "DeleteObjects"
    PUT_OBJECT = "PutObject"
    POST_OBJECT = "PostObject"
    """A browser's form upload to a bucket (post_object.py): authenticated by the form, not a header."""
    COPY_OBJECT = "CopyObject"
    GET_OBJECT = "GetObject"
    HEAD_OBJECT = "HeadObject"
    DELETE_OBJECT = "DeleteObject"
    GET_OBJECT_ATTRIBUTES = "GetObjectAttributes"
    GET_OBJECT_TAGGING = "GetObjectTagging"
    PUT_OBJECT_TAGGING = "PutObjectTagging"
    DELETE_OBJECT_TAGGING = "DeleteObjectTagging"
    GET_OBJECT_ACL = "GetObjectAcl"
    PUT_OBJECT_ACL = "PutObjectAcl"
    GET_OBJECT_RETENTION = "GetObjectRetention"
    PUT_OBJECT_RETENTION = "PutObjectRetention"
    GET_OBJECT_LEGAL_HOLD = "GetObjectLegalHold"
    PUT_OBJECT_LEGAL_HOLD = "PutObjectLegalHold"
    CREATE_MULTIPART_UPLOAD = "CreateMultipartUpload"
    UPLOAD_PART = "UploadPart"
    UPLOAD_PART_COPY = "UploadPartCopy"
    COMPLETE_MULTIPART_UPLOAD = "CompleteMultipartUpload"
    ABORT_MULTIPART_UPLOAD = "AbortMultipartUpload"
    LIST_PARTS = "ListParts"


WRITES = frozenset(
    {Operation.PUT_OBJECT, Operation.COPY_OBJECT, Operation.CREATE_MULTIPART_UPLOAD, Operation.UPLOAD_PART,
     Operation.UPLOAD_PART_COPY, Operation.COMPLETE_MULTIPART_UPLOAD}
)  # fmt: skip
"""Operations that create an object: where S3 refuses a key name it could never store."""
MAX_KEY_BYTES = 1024
"""S3's longest key name, in UTF-8 bytes (KeyTooLongError)."""


@dataclass(frozen=True, slots=True)
class Target:
    """What a request addresses: no bucket (the service), a bucket, or a key in a bucket."""

    bucket: str | None
    key: str | None
    query: Mapping[str, str]


def target(raw_path: str, host: str, domains: tuple[str, ...]) -> Target:
    """Path style (`/bucket/key`) unless Host is `<bucket>.<domain>` for a configured domain. The key is
    the rest of the path, percent-decoded once and kept byte for byte (`a//b`, a trailing `/`)."""
    path, _, raw_query = raw_path.partition("?")
    query = dict(parse_qsl(raw_query, keep_blank_values=True))
    bucket = _virtual_host_bucket(host, domains)
    if bucket is None:
        name, slash, rest = path.lstrip("/").partition("/") if path.startswith("/") else ("", "", "")
        bucket = unquote(name) or None
        key = unquote(rest) if slash and rest else None
    else:
        rest = path[1:] if path.startswith("/") else path
        key = unquote(rest) or None
    return Target(bucket, key, query)


def _virtual_host_bucket(host: str, domains: tuple[str, ...]) -> str | None:
    name = host.rsplit(":", 1)[0].lower() if not host.startswith("[") else host
    for domain in domains:
        if name.endswith("." + domain):
            return name[: -len(domain) - 1]
    return None


def operation(method: str, where: Target, headers: Mapping[str, str]) -> Operation:
    """S3's operation for a method and the subresources in the query; an unknown combination is
    MethodNotAllowed / NotImplemented, as S3 answers."""
    q = where.query
    if where.bucket is None:
        if method == "GET":
            return Operation.LIST_BUCKETS
        raise S3Error(S3ErrorCode.MethodNotAllowed)
    if where.key is None:
        return _bucket_operation(method, q)
    return _object_operation(method, q, headers)


_UNSUPPORTED_SUBRESOURCES = frozenset(
    {"website", "replication", "logging", "notification",
     "requestPayment", "accelerate", "analytics",
     "inventory", "metrics", "intelligent-tiering", "torrent", "restore",
     "select"}
)  # fmt: skip


def _bucket_operation(method: str, q: Mapping[str, str]) -> Operation:
    _refuse_unsupported(q)
    for name in ("attributes", "retention", "legal-hold"):  # an object's (R31's F2: GET ?attributes listed)
        if name in q:
            raise S3Error(
                S3ErrorCode.NotImplemented, f"The {name} subresource is not implemented on a bucket."
            )
    if "object-lock" in q:
        if method in ("GET", "PUT"):
            return (
                Operation.GET_OBJECT_LOCK_CONFIGURATION
                if method == "GET"
                else Operation.PUT_OBJECT_LOCK_CONFIGURATION
            )
        raise S3Error(S3ErrorCode.MethodNotAllowed)
    if method == "GET":
        if "location" in q:
            return Operation.GET_BUCKET_LOCATION
        if "versioning" in q:
            return Operation.GET_BUCKET_VERSIONING
        if "acl" in q:
            return Operation.GET_BUCKET_ACL
        if "cors" in q:
            return Operation.GET_BUCKET_CORS
        if "lifecycle" in q:
            return Operation.GET_BUCKET_LIFECYCLE
        if "policy" in q:
            return Operation.GET_BUCKET_POLICY
        if "policyStatus" in q:
            return Operation.GET_BUCKET_POLICY_STATUS
        if "publicAccessBlock" in q:
            return Operation.GET_PUBLIC_ACCESS_BLOCK
        if "encryption" in q:
            return Operation.GET_BUCKET_ENCRYPTION
        if "ownershipControls" in q:
            return Operation.GET_BUCKET_OWNERSHIP_CONTROLS
        if "uploads" in q:
            return Operation.LIST_MULTIPART_UPLOADS
        if "versions" in q:
            return Operation.LIST_OBJECT_VERSIONS
        if "tagging" in q:
            raise S3Error(S3ErrorCode.NotImplemented, "Bucket tagging is not implemented.")
        return Operation.LIST_OBJECTS_V2 if q.get("list-type") == "2" else Operation.LIST_OBJECTS
    if method == "PUT" and not _subresources(q):
        return Operation.CREATE_BUCKET
    if method == "PUT" and "acl" in q:
        return Operation.PUT_BUCKET_ACL
    if method == "PUT" and "cors" in q:
        return Operation.PUT_BUCKET_CORS
    if method == "PUT" and "lifecycle" in q:
        return Operation.PUT_BUCKET_LIFECYCLE
    if method == "PUT" and "versioning" in q:
        return Operation.PUT_BUCKET_VERSIONING
    if method == "DELETE" and "cors" in q:
        return Operation.DELETE_BUCKET_CORS
    if method == "DELETE" and "lifecycle" in q:
        return Operation.DELETE_BUCKET_LIFECYCLE
    if method == "PUT" and "policy" in q:
        return Operation.PUT_BUCKET_POLICY
    if method == "DELETE" and "policy" in q:
        return Operation.DELETE_BUCKET_POLICY
    if method == "PUT" and "publicAccessBlock" in q:
        return Operation.PUT_PUBLIC_ACCESS_BLOCK
    if method == "DELETE" and "publicAccessBlock" in q:
        return Operation.DELETE_PUBLIC_ACCESS_BLOCK
    if method == "PUT" and "encryption" in q:
        return Operation.PUT_BUCKET_ENCRYPTION
    if method == "DELETE" and "encryption" in q:
        return Operation.DELETE_BUCKET_ENCRYPTION
    if method == "PUT" and "ownershipControls" in q:
        return Operation.PUT_BUCKET_OWNERSHIP_CONTROLS
    if method == "DELETE" and "ownershipControls" in q:
        return Operation.DELETE_BUCKET_OWNERSHIP_CONTROLS
    if method == "HEAD":
        return Operation.HEAD_BUCKET
    if method == "DELETE" and not _subresources(q):
        return Operation.DELETE_BUCKET
    if method == "POST" and "delete" in q:
        return Operation.DELETE_OBJECTS
    if method == "POST" and not _subresources(q):
        return Operation.POST_OBJECT
    if method in ("PUT", "DELETE"):
        raise S3Error(S3ErrorCode.NotImplemented, f"{method} with {', '.join(sorted(q))} is not implemented.")
    raise S3Error(S3ErrorCode.MethodNotAllowed)


def _object_operation(method: str, q: Mapping[str, str], headers: Mapping[str, str]) -> Operation:
    _refuse_unsupported(q)
    for name in (
        "cors", "lifecycle", "policy", "policyStatus", "publicAccessBlock", "ownershipControls",
        "object-lock", "encryption",
    ):  # fmt: skip
        if name in q:  # a bucket's subresources: as refused as before they were ones
            message = f"The {name} subresource is not implemented on an object."
            raise S3Error(S3ErrorCode.NotImplemented, message)
    if "acl" in q:
        if method in ("GET", "PUT"):
            return Operation.GET_OBJECT_ACL if method == "GET" else Operation.PUT_OBJECT_ACL
        raise S3Error(S3ErrorCode.MethodNotAllowed)
    for name, get, put in (
        ("retention", Operation.GET_OBJECT_RETENTION, Operation.PUT_OBJECT_RETENTION),
        ("legal-hold", Operation.GET_OBJECT_LEGAL_HOLD, Operation.PUT_OBJECT_LEGAL_HOLD),
    ):
        if name in q:
            if method in ("GET", "PUT"):
                return get if method == "GET" else put
            raise S3Error(S3ErrorCode.MethodNotAllowed)
    if "attributes" in q and method != "GET":  # GetObjectAttributes alone (R31's F2: a PUT overwrote)
        raise S3Error(S3ErrorCode.MethodNotAllowed)
    if method == "GET":
        if "tagging" in q:
            return Operation.GET_OBJECT_TAGGING
        if "attributes" in q:
            return Operation.GET_OBJECT_ATTRIBUTES
        if "uploadId" in q:
            return Operation.LIST_PARTS
        return Operation.GET_OBJECT
    if method == "HEAD":
        return Operation.HEAD_OBJECT
    if method == "PUT":
        if "tagging" in q:
            return Operation.PUT_OBJECT_TAGGING
        copy = "x-amz-copy-source" in headers
        if "uploadId" in q or "partNumber" in q:
            return Operation.UPLOAD_PART_COPY if copy else Operation.UPLOAD_PART
        return Operation.COPY_OBJECT if copy else Operation.PUT_OBJECT
    if method == "DELETE":
        if "tagging" in q:
            return Operation.DELETE_OBJECT_TAGGING
        if "uploadId" in q:
            return Operation.ABORT_MULTIPART_UPLOAD
        return Operation.DELETE_OBJECT
    if method == "POST":
        if "uploads" in q:
            return Operation.CREATE_MULTIPART_UPLOAD
        if "uploadId" in q:
            return Operation.COMPLETE_MULTIPART_UPLOAD
    raise S3Error(S3ErrorCode.MethodNotAllowed)


VERSIONED = frozenset(
    {Operation.GET_OBJECT, Operation.HEAD_OBJECT, Operation.DELETE_OBJECT, Operation.GET_OBJECT_ATTRIBUTES,
     Operation.GET_OBJECT_RETENTION, Operation.PUT_OBJECT_RETENTION, Operation.GET_OBJECT_LEGAL_HOLD,
     Operation.PUT_OBJECT_LEGAL_HOLD, Operation.GET_OBJECT_ACL, Operation.PUT_OBJECT_ACL}
)  # fmt: skip
"""The object operations that act on the version a `versionId` names (objects.py; the ACL ones only on the
current version: acls.py)."""


def check_version(where: Target, operation: Operation) -> None:
    """A `versionId` on an object operation that does not act on versions (tagging, a part's upload) is
    NotImplemented: acting on the current version instead would change another version than
    the one named; an empty one on an operation that does act on versions is InvalidArgument, as Amazon
    answers it (R32's F4). Asked after the request is authenticated, so an anonymous caller learns nothing
    before its AccessDenied."""
    version = where.query.get("versionId")
    if where.key is None or version is None:
        return
    if operation not in VERSIONED:
        if version:
            raise S3Error(S3ErrorCode.NotImplemented, f"{operation.value} of a versionId is not implemented.")
    elif not version:  # not "no version": a script's empty $V must not add a marker or read the latest
        raise S3Error(S3ErrorCode.InvalidArgument, "Version id cannot be the empty string",
                      ArgumentName="versionId", ArgumentValue="")  # fmt: skip


_QUERY_PARAMETERS = frozenset(
    {"list-type", "prefix", "delimiter", "max-keys", "marker", "continuation-token", "start-after",
     "encoding-type", "fetch-owner", "key-marker", "upload-id-marker", "max-uploads", "max-parts",
     "part-number-marker", "uploadId", "partNumber", "versionId", "version-id-marker", "x-id"}
)  # fmt: skip


def _subresources(q: Mapping[str, str]) -> set[str]:
    return {k for k in q if k not in _QUERY_PARAMETERS and not k.startswith(("X-Amz-", "response-"))}


def _refuse_unsupported(q: Mapping[str, str]) -> None:
    unsupported = sorted(set(q) & _UNSUPPORTED_SUBRESOURCES)
    if unsupported:
        raise S3Error(S3ErrorCode.NotImplemented, f"The {unsupported[0]} subresource is not implemented.")
