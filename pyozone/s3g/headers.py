"""What S3 request headers mean: object metadata, storage class, tagging, ranges and preconditions.

Pure functions over header mappings, so each of S3's header rules is one small, testable definition.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from urllib.parse import parse_qsl

from multidict import CIMultiDict, CIMultiDictProxy, MultiMapping

from pyozone.hdds.ids import RATIS_ONE, ReplicationConfig
from pyozone.hdds.om_views import KeyCondition
from pyozone.s3g import xml
from pyozone.s3g.auth.checksums import BY_HEADER
from pyozone.s3g.auth.payload import stored_content_encoding
from pyozone.s3g.auth.sigv4 import PRESIGN_PARAMS
from pyozone.s3g.errors import S3Error, S3ErrorCode
from pyozone.s3g.numbers import decimal

ETAG = "ETag"
USER_METADATA_PREFIX = "x-amz-meta-"
MAX_USER_METADATA_BYTES = 2048
"""S3's limit on the user-defined metadata of one object (names and values, as UTF-8)."""

MAX_STORED_HEADER_BYTES = 8192
"""S3 bounds a request's header section at 8 KB, so the headers an object keeps never exceed that."""

STORED_HEADERS = ("Content-Type", "Content-Encoding", "Content-Disposition", "Content-Language",
                  "Cache-Control", "Expires")  # fmt: skip
"""Standard headers S3 keeps with an object and returns on GET and HEAD."""

RESPONSE_OVERRIDES = {
    "response-content-type": "Content-Type",
    "response-content-language": "Content-Language",
    "response-expires": "Expires",
    "response-cache-control": "Cache-Control",
    "response-content-disposition": "Content-Disposition",
    "response-content-encoding": "Content-Encoding",
}

STORAGE_CLASSES: Mapping[str, ReplicationConfig | None] = {"STANDARD": None, "REDUCED_REDUNDANCY": RATIS_ONE}
"""S3 storage class -> replication config (None: the bucket's default), as Ozone's S3 gateway maps them:
the gateway's one conversion each way (storage_class, storage_class_name)."""

ENCRYPTION_HEADERS = ("x-amz-server-side-encryption", "x-amz-copy-source-server-side-encryption")
"""Prefixes of S3's server-side encryption headers: SSE-S3 and SSE-KMS (`x-amz-server-side-encryption`,
`-aws-kms-key-id`, `-context`, `-bucket-key-enabled`) and SSE-C (`-customer-*`, and a copy source's)."""
GRANT_HEADERS = "x-amz-grant-"
CANNED_ACL = "x-amz-acl"
PRIVATE = "private"
OWNER_CANNED_ACLS = frozenset({PRIVATE, "bucket-owner-full-control"})
"""The canned ACLs that grant the bucket's owner FULL_CONTROL and nobody anything: the ones a bucket whose
ACLs are disabled (BucketOwnerEnforced) still accepts, as Amazon's does."""


def sets_acl(headers: Mapping[str, str]) -> bool:
    """Whether the request asks for an ACL beyond the owner's FULL_CONTROL: a canned ACL other than
    OWNER_CANNED_ACLS, or a grant header (AccessControlListNotSupported where ACLs are disabled)."""
    acl = headers.get(CANNED_ACL)
    return (acl is not None and acl.strip() not in OWNER_CANNED_ACLS) or any(
        name.lower().startswith(GRANT_HEADERS) for name in headers
    )


_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
"""What no header value holds (RFC 9110: field-value is visible characters, SP, HTAB and obs-text)."""
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
"""RFC 9110's token: what a header's name is."""

MAX_TAGS = 10
MAX_TAG_KEY = 128
MAX_TAG_VALUE = 256


def object_metadata(headers: Mapping[str, str], *, from_form: bool = False) -> dict[str, str]:
    """The metadata an object keeps: the stored standard headers and every x-amz-meta-* (names lowercase).
    `from_form`: they are a POST form's fields, not the request's headers, so each name must be an HTTP
    token and each value free of control characters, as aiohttp holds a request's headers to be
    (R28's F8, R30's P5: `x-amz-meta-a:b` came back as another header)."""
    metadata = {name: headers[name] for name in STORED_HEADERS if name in headers}
    encoding = stored_content_encoding(headers.get("Content-Encoding"))
    metadata.pop("Content-Encoding", None)
    if encoding:
        metadata["Content-Encoding"] = encoding
    user = {k.lower(): v for k, v in headers.items() if k.lower().startswith(USER_METADATA_PREFIX)}
    for name, value in (*metadata.items(), *user.items()):
        if from_form:
            check_header_name(name)
            check_header_value(name, value)
        else:
            _check_utf8(name, value)
    if sum(len(k.encode()) - len(USER_METADATA_PREFIX) + len(v.encode()) for k, v in user.items()) > (
        MAX_USER_METADATA_BYTES
    ):
        raise S3Error(S3ErrorCode.MetadataTooLarge)
    metadata.update(user)
    if sum(len(k.encode()) + len(v.encode()) for k, v in metadata.items()) > MAX_STORED_HEADER_BYTES:
        raise S3Error(S3ErrorCode.MetadataTooLarge, "The headers kept with an object exceed 8 KB.")
    return metadata


def _check_utf8(name: str, value: str) -> None:
    try:
        value.encode()
    except UnicodeEncodeError:
        raise S3Error(
            S3ErrorCode.InvalidArgument, f"The {name} header is not valid UTF-8", ArgumentName=name
        ) from None


def check_header_name(name: str) -> None:
    """A name kept to be sent back as a header's: an RFC 9110 token."""
    if not _TOKEN.fullmatch(name):
        raise S3Error(
            S3ErrorCode.InvalidArgument,
            f"The field name {name!r} is not a header name (an RFC 9110 token)",
            ArgumentName=name,
        )


def check_header_value(name: str, value: str) -> None:
    """A value kept to be sent back as a header: UTF-8 (aiohttp keeps other bytes as surrogates) and no
    control character but TAB (RFC 9110's field-value; a CR or LF would end the header, and aiohttp refuses
    to send any). A header the request carried has no control character; a POST form's field may."""
    _check_utf8(name, value)
    if _CONTROL.search(value):
        raise S3Error(
            S3ErrorCode.InvalidArgument,
            f"The {name} header holds a control character",
            ArgumentName=name,
        )


OBJECT_OWNERSHIP = "x-amz-object-ownership"
"""CreateBucket's object ownership (hdds/s3_ownership.py)."""
CHECKSUM_TYPE = "x-amz-checksum-type"
COMPOSITE = "COMPOSITE"
"""A multipart upload's checksum as a checksum of its parts' checksums (ending in `-N`)."""
FULL_OBJECT = "FULL_OBJECT"
"""A checksum of the whole object: a single PUT's, or a multipart upload's CRC combined from its parts'."""
NOT_IMPLEMENTED_HEADERS = {
    "x-amz-website-redirect-location": "Website redirects",
    "x-amz-mfa": "MFA delete",
    "x-amz-write-offset-bytes": "Appends",
    "x-amz-mp-object-size": "Object size checks of multipart uploads",
}
"""Headers naming a feature the gateway does not have: NotImplemented (docs/s3.md has the whole table)."""
SIGV4_QUERY = frozenset(
    name.lower() for name in (*PRESIGN_PARAMS, "X-Amz-Content-Sha256", "X-Amz-Security-Token")
)
"""The x-amz-* query parameters SigV4 presigning defines (the SDKs' presigners put X-Amz-Content-Sha256 in
the query, sigv4.parse reads it there)."""
QUERY_HEADERS = frozenset({*BY_HEADER, "x-amz-sdk-checksum-algorithm"})
"""Headers a presigned URL may carry in its query (the SDKs' presigners put a checksum there): read as the
headers they are (`with_query_headers`), so checked the same. Any other x-amz-* in the query is a header
the gateway does not read there: refused."""


BODY_DIGESTS = ("Content-MD5", "x-amz-sdk-checksum-algorithm", *BY_HEADER)
"""What Amazon requires of a body where it requires a digest (DeleteObjects, PutBucketCors): its
Content-MD5 or a checksum of it (in a header, or named by x-amz-sdk-checksum-algorithm for a trailer); the
payload checks verify whichever came."""


def require_body_digest(headers: Mapping[str, str]) -> None:
    if not any(name in headers for name in BODY_DIGESTS):
        message = "Missing required header for this request: Content-MD5 OR x-amz-checksum-*"
        raise S3Error(S3ErrorCode.InvalidRequest, message)


def with_query_headers(headers: CIMultiDictProxy[str], query: MultiMapping[str]) -> CIMultiDictProxy[str]:
    """The request's headers and the QUERY_HEADERS its query carries (one named twice is then refused as a
    repeated single-valued header)."""
    moved = [(name.lower(), value) for name, value in query.items() if name.lower() in QUERY_HEADERS]
    return CIMultiDictProxy(CIMultiDict([*headers.items(), *moved])) if moved else headers


MULTI_VALUED_PREFIX = USER_METADATA_PREFIX
"""The one x-amz-* header that may repeat: Amazon joins repeated user metadata."""
SINGLE_VALUED = frozenset(
    {"content-md5", "content-disposition", "expires", "range", "if-modified-since", "if-unmodified-since"}
)
"""Standard headers that hold one value (RFC 9110: no list to join repeated lines into) and that aiohttp
lets repeat (it refuses a repeated Content-Type, Content-Length, Authorization or Host itself)."""


def refuse_unimplemented(headers: CIMultiDictProxy[str], query: MultiMapping[str], sse: bool = False) -> None:
    """Headers that ask for what the gateway does not do are refused, never accepted and ignored:
    server-side encryption on an operation that does not read it (outside sse.OPERATIONS), website
    redirects and the like (NOT_IMPLEMENTED_HEADERS; ACL headers: s3g/acls.check_requested). A
    single-valued header (SINGLE_VALUED, every x-amz-* but user metadata) sent twice is refused (which one
    would count?), and so is an x-amz-* header moved into the query string, but for QUERY_HEADERS. `sse`: the
    operation reads the encryption headers itself (s3g/sse.py)."""
    for name in query:
        lower = name.lower()
        if lower.startswith("x-amz-") and lower not in SIGV4_QUERY and lower not in QUERY_HEADERS:
            raise S3Error(
                S3ErrorCode.NotImplemented,
                f"{name} in the query string is not implemented; send it as a header.",
            )
    for name in {name.lower() for name in headers}:
        single = name in SINGLE_VALUED or (
            name.startswith("x-amz-") and not name.startswith(MULTI_VALUED_PREFIX)
        )
        if single and len(headers.getall(name)) > 1:
            raise S3Error(
                S3ErrorCode.InvalidArgument, f"The {name} header is given more than once.", ArgumentName=name
            )
        if name.startswith(ENCRYPTION_HEADERS) and not sse:
            raise S3Error(S3ErrorCode.NotImplemented, f"Server-side encryption ({name}) is not implemented.")
        if name in NOT_IMPLEMENTED_HEADERS:
            raise S3Error(
                S3ErrorCode.NotImplemented, f"{NOT_IMPLEMENTED_HEADERS[name]} ({name}): not implemented."
            )
    if headers.get(CHECKSUM_TYPE, COMPOSITE).upper() not in (COMPOSITE, FULL_OBJECT):
        raise S3Error(S3ErrorCode.InvalidRequest, "Value for x-amz-checksum-type header is invalid.")


def storage_class(headers: Mapping[str, str]) -> ReplicationConfig | None:
    """x-amz-storage-class as the config a write asks OM for (None: the bucket's)."""
    name = headers.get("x-amz-storage-class", "STANDARD")
    if name not in STORAGE_CLASSES:
        raise S3Error(S3ErrorCode.InvalidStorageClass)
    return STORAGE_CLASSES[name]


def storage_class_name(config: ReplicationConfig) -> str:
    """The storage class an answer names for an object or upload of `config`, as Ozone's S3 gateway:
    REDUCED_REDUNDANCY for RATIS/ONE, else STANDARD."""
    return "REDUCED_REDUNDANCY" if config == RATIS_ONE else "STANDARD"


def tagging_header(value: str | None) -> dict[str, str]:
    """x-amz-tagging: URL-query-encoded tags."""
    if not value:
        return {}
    pairs = parse_qsl(value, keep_blank_values=True)
    return check_tags(pairs)


def parse_tagging(document: bytes) -> dict[str, str]:
    """A Tagging document (PutObjectTagging's body, POST Object's `tagging` field): its TagSet's tags."""
    tag_set = xml.parse(document, "Tagging").find("TagSet")
    if tag_set is None:
        raise S3Error(S3ErrorCode.MalformedXML)
    return check_tags(
        [(xml.text(t, "Key") or "", xml.text(t, "Value") or "") for t in tag_set.findall("Tag")]
    )


def check_tags(pairs: list[tuple[str, str]]) -> dict[str, str]:
    tags = dict(pairs)
    if len(tags) != len(pairs):
        raise S3Error(S3ErrorCode.InvalidTag, "Cannot provide multiple Tags with the same key")
    if len(tags) > MAX_TAGS:
        raise S3Error(S3ErrorCode.InvalidTag, "Object tags cannot be greater than 10")
    for k, v in tags.items():
        if not k or len(k) > MAX_TAG_KEY:
            raise S3Error(S3ErrorCode.InvalidTag, "The TagKey you have provided is invalid")
        if len(v) > MAX_TAG_VALUE:
            raise S3Error(S3ErrorCode.InvalidTag, "The TagValue you have provided is invalid")
    return tags


@dataclass(frozen=True, slots=True)
class ByteRange:
    start: int
    end: int  # inclusive

    @property
    def length(self) -> int:
        return self.end - self.start + 1

    def content_range(self, size: int) -> str:
        return f"bytes {self.start}-{self.end}/{size}"


def byte_range(value: str | None, size: int) -> ByteRange | None:
    """RFC 7233's single byte range, as S3 reads it: a header it cannot parse (or several ranges) means
    the whole object; a range that starts past the end is InvalidRange (416)."""
    if not value:
        return None
    unit, _, spec = value.strip().partition("=")
    if unit.strip().lower() != "bytes" or "," in spec:
        return None
    first, dash, last = spec.strip().partition("-")
    start, end = decimal(first), decimal(last)
    if not dash or (first and start is None) or (last and end is None) or not (first or last):
        return None
    if start is None:  # the last N bytes
        assert end is not None
        if end == 0:
            raise S3Error(S3ErrorCode.InvalidRange, ActualObjectSize=str(size), RangeRequested=value)
        return ByteRange(max(0, size - end), size - 1) if size else None
    if end is None:
        end = size - 1
    if start >= size:
        raise S3Error(S3ErrorCode.InvalidRange, ActualObjectSize=str(size), RangeRequested=value)
    if end < start:
        return None
    return ByteRange(start, min(end, size - 1))


class Precondition:
    """Outcome of conditional headers: proceed, 304 Not Modified or 412 Precondition Failed."""

    OK = 0
    NOT_MODIFIED = 304
    FAILED = 412


def precondition(headers: Mapping[str, str], etag: str, modified_ms: int, prefix: str = "") -> int:
    """RFC 7232 as S3 applies it (prefix "x-amz-copy-source-" for a copy's source). If-Match wins over
    If-Unmodified-Since, If-None-Match over If-Modified-Since."""
    quoted = f'"{etag}"'
    modified_s = modified_ms // 1000
    if_match = headers.get(prefix + "if-match")
    if if_match is not None:
        if not _etag_matches(if_match, quoted):
            return Precondition.FAILED
    elif (
        since := _http_date(headers.get(prefix + "if-unmodified-since"))
    ) is not None and modified_s > since:
        return Precondition.FAILED
    if_none_match = headers.get(prefix + "if-none-match")
    if if_none_match is not None:
        if _etag_matches(if_none_match, quoted):
            return Precondition.FAILED if prefix else Precondition.NOT_MODIFIED
    elif (since := _http_date(headers.get(prefix + "if-modified-since"))) is not None and modified_s <= since:
        return Precondition.FAILED if prefix else Precondition.NOT_MODIFIED
    return Precondition.OK


def write_condition(headers: Mapping[str, str]) -> KeyCondition | None:
    """A conditional write's condition (PutObject, CopyObject's destination, CompleteMultipartUpload),
    which OM checks as it commits the key: If-None-Match takes only "*" (the key must not exist), If-Match
    an ETag, quoted or not, or "*" (the key must exist)."""
    if_none_match = headers.get("if-none-match")
    if if_none_match is not None and if_none_match.strip() != "*":
        raise S3Error(
            S3ErrorCode.NotImplemented, "If-None-Match on a write takes only *.", Header="If-None-Match"
        )
    condition = KeyCondition(if_none_match is not None, _etag_condition(headers))
    return condition if condition != KeyCondition() else None


def delete_condition(headers: Mapping[str, str]) -> KeyCondition | None:
    """DeleteObject's If-Match: an ETag, quoted or not, or "*" (the key must exist)."""
    etag = _etag_condition(headers)
    return KeyCondition(expected_etag=etag) if etag else None


def _etag_condition(headers: Mapping[str, str]) -> str:
    value = headers.get("if-match", "").strip()
    if "," in value:
        raise S3Error(S3ErrorCode.NotImplemented, "If-Match on a write takes one ETag.", Header="If-Match")
    return value.strip('"')


def _etag_matches(header: str, quoted: str) -> bool:
    candidates = [c.strip() for c in header.split(",")]
    return "*" in candidates or quoted in candidates or quoted.strip('"') in candidates


def _http_date(value: str | None) -> int | None:
    if not value:
        return None
    try:
        return int(parsedate_to_datetime(value).timestamp())
    except (TypeError, ValueError, IndexError, OverflowError):
        return None  # S3 ignores a date it cannot read
