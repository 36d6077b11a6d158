"""The bounds of OM's requests at the RPC edge (issue 11, defect 2: 30 MB names exhausted OM's memory).

OM's requests are names and a few numbers. The RPC layer reads each request's size from its frame header
and skips a body above its method's limit unread (pyozone/rpc/limits.py), so a flood of 30 MB requests
costs OM the bytes on the socket and nothing else. No name longer than the longest valid one (a longer one
cannot name anything) is parsed, copied or echoed: it is refused with its INVALID_*_NAME, naming the field
and its size; and each method's whole request has a limit of its own, at most MAX_OM_REQUEST_BYTES.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyozone.hdds.limits import MAX_ECHO_PAYLOAD_BYTES, MAX_OM_MESSAGE_BYTES, KiB, MiB
from pyozone.om.exceptions import OMException, OMResultCode
from pyozone.om.names import MAX_KEY_NAME_BYTES, MAX_RESOURCE_NAME
from pyozone.om.s3secret import MAX_REGION_CHARS, MAX_SERVICE_CHARS
from pyozone.protocol import om as wire
from pyozone.rpc import Oversized, RequestBounds, ServerSettings, StatusCode

MAX_USER_NAME_BYTES = 256
"""An owner (a user name: Linux allows 32, Kerberos principals are longer)."""
MAX_HOST_NAME_BYTES = 255
"""clientHost: a DNS name is at most 253."""
NAMES_REQUEST_BYTES = 4 * KiB
"""A request of names and numbers only: the longest names it may carry, plus a little."""
EXCLUDE_LIST_REQUEST_BYTES = 1 * MiB
"""openKey and allocateBlock carry the writer's exclude list (datanodes, containers, pipelines)."""
METADATA_REQUEST_BYTES = 64 * KiB
"""Names plus a key's metadata or tags (key_metadata.py bounds those at 16 KiB)."""
BUCKET_CORS_REQUEST_BYTES = 64 * KiB + 1 * KiB
"""putBucketCors: names plus an S3 CORS configuration as sent (at most 64 KB, hdds/s3_cors.py)."""
BUCKET_LIFECYCLE_REQUEST_BYTES = 1 * MiB + 1 * KiB
"""putBucketLifecycle: names plus an S3 lifecycle configuration as sent (at most 1 MiB,
hdds/s3_lifecycle.py)."""
BUCKET_POLICY_REQUEST_BYTES = 20 * KiB + 1 * KiB
"""putBucketPolicy: names plus an S3 bucket policy as sent (at most 20 KB, hdds/s3_policy.py)."""
PART_LIST_REQUEST_BYTES = 1 * MiB
"""completeMultipartUpload: up to 10,000 parts of a number and an ETag, and the key's metadata."""
ECHO_REQUEST_BYTES = MAX_ECHO_PAYLOAD_BYTES + 1 * KiB
"""echoRPC (freon ome): the largest payload an echo carries, and its two small fields."""
MAX_UPLOAD_ID_BYTES = 128
"""An upload id: pyozone's are 53 characters (multipart.py); Ozone's a UUID and a number."""
MAX_VERSION_ID_BYTES = 64
"""An S3 version id: pyozone's are 16 hex digits or `null` (hdds/s3_versions.py); Amazon's about 32."""
MAX_VERSIONING_BYTES = 16
"""setBucketVersioning's state: "Enabled" or "Suspended"."""
MAX_OM_REQUEST_BYTES = 4 * MiB
"""The largest request OM takes: commitKey's, which carries every block of the key (~40 bytes each,
some 100,000 blocks). Responses may be larger (MAX_OM_MESSAGE_BYTES: listings, lookupKey)."""


def server_settings() -> ServerSettings:
    """OM's RPC server: a request up to MAX_OM_MESSAGE_BYTES is refused with a status (above
    MAX_OM_REQUEST_BYTES unread), so its connection goes on serving; a larger frame closes it."""
    return ServerSettings(max_message_bytes=MAX_OM_MESSAGE_BYTES)


@dataclass(frozen=True)
class NameRule:
    """How long a field may be, and the result code that refuses a longer one."""

    kind: str
    limit: int
    code: OMResultCode


VOLUME = NameRule("volume name", MAX_RESOURCE_NAME, OMResultCode.INVALID_VOLUME_NAME)
BUCKET = NameRule("bucket name", MAX_RESOURCE_NAME, OMResultCode.INVALID_BUCKET_NAME)
KEY = NameRule("key name", MAX_KEY_NAME_BYTES, OMResultCode.INVALID_KEY_NAME)
USER = NameRule("user name", MAX_USER_NAME_BYTES, OMResultCode.INVALID_REQUEST)
HOST = NameRule("host name", MAX_HOST_NAME_BYTES, OMResultCode.INVALID_REQUEST)
DATE = NameRule("date (YYYYMMDD)", 8, OMResultCode.INVALID_REQUEST)
REGION = NameRule("region", MAX_REGION_CHARS, OMResultCode.INVALID_REQUEST)
S3_SERVICE = NameRule("service", MAX_SERVICE_CHARS, OMResultCode.INVALID_REQUEST)
UPLOAD_ID = NameRule("multipart upload id", MAX_UPLOAD_ID_BYTES, OMResultCode.INVALID_REQUEST)
PART_CHECKSUM_NAME = NameRule("part checksum name", 64, OMResultCode.INVALID_REQUEST)
"""A part metadata entry's name (the S3 gateway's x-amz-checksum-<algorithm>, 24 bytes at most)."""
KEY_MD5 = NameRule("SSE-C key MD5 (base64)", 24, OMResultCode.INVALID_REQUEST)
VERSION_ID = NameRule("S3 version id", MAX_VERSION_ID_BYTES, OMResultCode.INVALID_REQUEST)
VERSIONING = NameRule("versioning state", MAX_VERSIONING_BYTES, OMResultCode.INVALID_REQUEST)

_NAMES = {
    "volume": VOLUME,
    "volumeName": VOLUME,
    "bucket": BUCKET,
    "key": KEY,
    "toKey": KEY,
    "owner": USER,
    "ownerName": USER,
    "clientHost": HOST,
    "kerberosID": USER,
    "accessId": USER,
    "date": DATE,
    "region": REGION,
    "service": S3_SERVICE,
    "uploadID": UPLOAD_ID,
    "multipartUploadID": UPLOAD_ID,
    "uploadIdMarker": UPLOAD_ID,
    "keyMarker": KEY,
    "partChecksumName": PART_CHECKSUM_NAME,
    "sseCustomerKeyMD5": KEY_MD5,
    "versionId": VERSION_ID,
    "versionIdMarker": VERSION_ID,
    "versioning": VERSIONING,
}
_LISTED = {
    "listVolumes": VOLUME, "listBuckets": BUCKET, "listKeys": KEY, "listMultipartUploads": KEY,
    "listKeyVersions": KEY,
}  # fmt: skip
"""What a listing's prefix and startKey are a prefix of, or the name of."""
_MESSAGE_BYTES = {
    "openKey": EXCLUDE_LIST_REQUEST_BYTES,
    "allocateBlock": EXCLUDE_LIST_REQUEST_BYTES,
    "commitKey": MAX_OM_REQUEST_BYTES,
    "putObjectTagging": METADATA_REQUEST_BYTES,
    "putBucketCors": BUCKET_CORS_REQUEST_BYTES,
    "putBucketLifecycle": BUCKET_LIFECYCLE_REQUEST_BYTES,
    "putBucketPolicy": BUCKET_POLICY_REQUEST_BYTES,
    "putBucketPublicAccessBlock": METADATA_REQUEST_BYTES,
    "putObjectLockConfiguration": METADATA_REQUEST_BYTES,
    "putObjectRetention": METADATA_REQUEST_BYTES,
    "putObjectLegalHold": METADATA_REQUEST_BYTES,
    "putBucketEncryption": METADATA_REQUEST_BYTES,
    "putBucketOwnershipControls": METADATA_REQUEST_BYTES,
    "initiateMultipartUpload": METADATA_REQUEST_BYTES,
    "commitMultipartUploadPart": MAX_OM_REQUEST_BYTES,
    "completeMultipartUpload": PART_LIST_REQUEST_BYTES,
    "setAcl": METADATA_REQUEST_BYTES,
    "echoRPC": ECHO_REQUEST_BYTES,
}


def _rules(method: str, fields: list[str]) -> dict[str, NameRule]:
    rules = {f: _NAMES[f] for f in fields if f in _NAMES}
    listed = _LISTED.get(method)
    if listed is not None:
        rules |= {f: listed for f in ("prefix", "startKey") if f in fields}
    return rules


class OMRequestLimits:
    """RequestLimits of OzoneManagerService: every string field of every request has a rule."""

    def __init__(self) -> None:
        self._bounds: dict[str, RequestBounds] = {}
        self._rules: dict[str, dict[str, NameRule]] = {}
        for method, fields in wire.request_fields().items():
            full = f"/{wire.SERVICE.full_name}/{method}"
            rules = _rules(method, [name for name, _ in fields])
            numbers = dict(fields)
            self._rules[full] = rules
            self._bounds[full] = RequestBounds(
                _MESSAGE_BYTES.get(method, NAMES_REQUEST_BYTES),
                {numbers[name]: (name, rule.limit) for name, rule in rules.items()},
                read_bytes=MAX_OM_REQUEST_BYTES,
            )

    def bounds(self, method: str) -> RequestBounds | None:
        return self._bounds.get(method)

    def rule(self, method: str, field: str) -> NameRule | None:
        return self._rules.get(method, {}).get(field)

    def refusal(self, method: str, oversized: Oversized) -> tuple[StatusCode, str]:
        """A request above MAX_OM_REQUEST_BYTES was skipped unread: RESOURCE_EXHAUSTED, as gRPC answered
        it; below, its long name's INVALID_*_NAME, or INVALID_REQUEST for its method's bound."""
        name = method.rsplit("/", 1)[-1]
        if oversized.field is None and oversized.size > MAX_OM_REQUEST_BYTES:
            error = OMException(
                OMResultCode.INVALID_REQUEST,
                f"{name} request of {oversized.size} bytes is above OM's limit of {MAX_OM_REQUEST_BYTES} "
                "bytes",
            )
            return StatusCode.RESOURCE_EXHAUSTED, str(error)
        rule = self.rule(method, oversized.field) if oversized.field is not None else None
        if rule is None:
            error = OMException(
                OMResultCode.INVALID_REQUEST,
                f"{name} request of {oversized.size} bytes is above its limit of {oversized.limit} bytes",
            )
        else:
            error = OMException(
                rule.code,
                f"{oversized.field} of {oversized.size} bytes is above the limit of {rule.limit} bytes "
                f"for a {rule.kind}",
            )
        return StatusCode[error.status_name], str(error)
