"""ListObjects (V1 and V2) and ListObjectVersions: pages of OM's key (or version) listing folded into S3's
contents and common prefixes.

A common prefix stands for every key under it, so after one is found the listing resumes past them
(OM scans in UTF-8 byte order: `prefix + U+10FFFF` sorts after nearly every key that starts with it)
instead of reading each key below a "directory". The scan only ever moves forward, so the few keys past
that point are skipped one by one and every listing ends.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass, field
from urllib.parse import quote

from aiohttp import web

from pyozone.client.errors import OzoneClientError
from pyozone.hdds.om_views import CHECKSUM_PREFIX, KeyInfo
from pyozone.hdds.s3_versions import NULL_VERSION, VersionIdError, parse_version_id, version_id
from pyozone.s3g import xml
from pyozone.s3g.acls import bucket_owner
from pyozone.s3g.buckets import owner, xml_response
from pyozone.s3g.errors import S3Error, S3ErrorCode
from pyozone.s3g.headers import ETAG, storage_class_name
from pyozone.s3g.om_errors import s3_error
from pyozone.s3g.parts import checksum_type
from pyozone.s3g.request import S3Request

OM_PAGE = 1000
"""Keys asked of OM at once: its most (ozone.om.server.list.max.size)."""
_PAST_PREFIX = "\U0010ffff"


@dataclass(slots=True)
class Listing:
    contents: list[KeyInfo] = field(default_factory=list)
    prefixes: list[str] = field(default_factory=list)
    truncated: bool = False
    last: str = ""  # the last key or common prefix returned: where the next page starts

    @property
    def count(self) -> int:
        return len(self.contents) + len(self.prefixes)


async def list_keys(s3: S3Request, prefix: str, delimiter: str, marker: str, max_keys: int) -> Listing:
    """Keys and common prefixes after `marker`, at most `max_keys` of them together."""
    listing = Listing()
    start = marker
    client = s3.gateway.client
    while listing.count < max_keys:
        want = min(OM_PAGE, max_keys - listing.count + 1)
        try:
            page = await client.om.list_keys(s3.gateway.volume, s3.bucket, prefix, start, want)
        except OzoneClientError as e:
            raise s3_error(e, BucketName=s3.bucket) from None
        for info in page:
            start = info.name
            common = _common_prefix(info.name, prefix, delimiter)
            if common is not None and (
                common <= marker or (listing.prefixes and common == listing.prefixes[-1])
            ):
                start = max(info.name, common + _PAST_PREFIX)  # forward only: a key may sort past the jump
                continue
            if listing.count == max_keys:
                listing.truncated = True
                return listing
            if common is None:
                listing.contents.append(info)
                listing.last = info.name
            else:
                listing.prefixes.append(common)
                listing.last = common
                start = max(info.name, common + _PAST_PREFIX)
                break  # resume the scan past everything under the common prefix
        else:
            if len(page) < want:
                return listing
    # max_keys reached: truncated if anything at all remains after the last entry
    try:
        rest = await client.om.list_keys(s3.gateway.volume, s3.bucket, prefix, start, 1)
    except OzoneClientError as e:
        raise s3_error(e, BucketName=s3.bucket) from None
    listing.truncated = bool(rest) and max_keys > 0
    return listing


def _common_prefix(name: str, prefix: str, delimiter: str) -> str | None:
    if not delimiter:
        return None
    at = name.find(delimiter, len(prefix))
    return None if at < 0 else name[: at + len(delimiter)]


def _encoder(s3: S3Request):  # type: ignore[no-untyped-def]
    encoding = s3.query.get("encoding-type")
    if encoding is None:
        return lambda text: text
    if encoding != "url":
        raise S3Error(S3ErrorCode.InvalidArgument, "Invalid Encoding Method specified in Request",
                      ArgumentName="encoding-type", ArgumentValue=encoding)  # fmt: skip
    return lambda text: quote(text, safe="/")


def _checksum(info: KeyInfo) -> tuple[xml.ET.Element | None, xml.ET.Element | None]:
    """ChecksumAlgorithm and ChecksumType of a listed object (Amazon's Object and ObjectVersion), or
    neither for one stored without a checksum."""
    stored = next(((k, v) for k, v in info.metadata.items() if k.startswith(CHECKSUM_PREFIX)), None)
    if stored is None:
        return None, None
    name, value = stored
    return (
        xml.el("ChecksumAlgorithm", name.removeprefix(CHECKSUM_PREFIX).upper()),
        xml.el("ChecksumType", checksum_type(value)),
    )


def _entry(info: KeyInfo, encode, with_owner: bool, owner_name: str) -> xml.ET.Element:  # type: ignore[no-untyped-def]
    etag = info.metadata.get(ETAG)
    return xml.el(
        "Contents",
        None,
        xml.el("Key", encode(info.name)),
        xml.el("LastModified", xml.iso_time(info.modification_time)),
        xml.el("ETag", f'"{etag}"') if etag else None,
        *_checksum(info),
        xml.el("Size", info.data_size),
        owner(owner_name) if with_owner else None,
        xml.el("StorageClass", storage_class_name(info.replication)),
    )


async def list_objects(s3: S3Request) -> web.Response:
    encode = _encoder(s3)
    prefix, delimiter = s3.query.get("prefix", ""), s3.query.get("delimiter", "")
    marker = s3.query.get("marker", "")
    max_keys = s3.page_size("max-keys")
    listing = await list_keys(s3, prefix, delimiter, marker, max_keys)
    shown = await bucket_owner(s3) if listing.contents else ""
    body = xml.document(
        "ListBucketResult",
        xml.el("Name", s3.bucket),
        xml.el("Prefix", prefix),  # as sent, even with encoding-type=url (SDKs decode only V2's)
        xml.el("Marker", encode(marker)),
        xml.el("NextMarker", encode(listing.last)) if listing.truncated and delimiter else None,
        xml.el("MaxKeys", max_keys),
        xml.el("Delimiter", encode(delimiter)) if delimiter else None,
        xml.el("EncodingType", "url") if "encoding-type" in s3.query else None,
        xml.el("IsTruncated", listing.truncated),
        *(_entry(info, encode, True, shown) for info in listing.contents),
        *(xml.el("CommonPrefixes", None, xml.el("Prefix", encode(p))) for p in listing.prefixes),
    )
    return xml_response(body)


async def list_objects_v2(s3: S3Request) -> web.Response:
    encode = _encoder(s3)
    prefix, delimiter = s3.query.get("prefix", ""), s3.query.get("delimiter", "")
    token = s3.query.get("continuation-token")
    start_after = s3.query.get("start-after", "")
    marker = _decode_token(token) if token is not None else start_after
    max_keys = s3.page_size("max-keys")
    fetch_owner = s3.query.get("fetch-owner", "false").lower() == "true"
    listing = await list_keys(s3, prefix, delimiter, marker, max_keys)
    shown = await bucket_owner(s3) if fetch_owner and listing.contents else ""
    body = xml.document(
        "ListBucketResult",
        xml.el("Name", s3.bucket),
        xml.el("Prefix", encode(prefix)),
        xml.el("StartAfter", encode(start_after)) if start_after else None,
        xml.el("ContinuationToken", token) if token is not None else None,
        xml.el("NextContinuationToken", _encode_token(listing.last)) if listing.truncated else None,
        xml.el("KeyCount", listing.count),
        xml.el("MaxKeys", max_keys),
        xml.el("Delimiter", encode(delimiter)) if delimiter else None,
        xml.el("EncodingType", "url") if "encoding-type" in s3.query else None,
        xml.el("IsTruncated", listing.truncated),
        *(_entry(info, encode, fetch_owner, shown) for info in listing.contents),
        *(xml.el("CommonPrefixes", None, xml.el("Prefix", encode(p))) for p in listing.prefixes),
    )
    return xml_response(body)


@dataclass(slots=True)
class VersionListing:
    """A page of ListObjectVersions: versions and delete markers (each with whether it is its key's
    latest), common prefixes, and where the next page starts."""

    entries: list[tuple[KeyInfo, bool]] = field(default_factory=list)
    prefixes: list[str] = field(default_factory=list)
    truncated: bool = False
    next_key: str = ""
    next_version: str = ""  # "": the page ended on a common prefix

    @property
    def count(self) -> int:
        return len(self.entries) + len(self.prefixes)


_XML_UNSAFE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")
"""What XML 1.0 cannot carry. OM refuses such key names (control characters), but a delete marker written
under one before it did (R32's F1b) would make the whole listing unparsable: it is listed only with
encoding-type=url. The other listings read keyTable, which never held such a name."""


def _version_of(info: KeyInfo) -> str:
    return info.version_id or NULL_VERSION


def _position_of(info: KeyInfo) -> str:
    """NextVersionIdMarker: the version's id, or for a `null` version its place as an id (OM resumes after
    it even once the null version is deleted or overwritten between pages, R32's F3; Amazon answers
    `null`, which names a version that may be gone by the next page)."""
    if info.version_id and info.version_id != NULL_VERSION:
        return info.version_id
    return version_id(info.version_seq, True)


async def list_versions(
    s3: S3Request, prefix: str, delimiter: str, key_marker: str, version_marker: str, max_keys: int
) -> VersionListing:
    """OM's versions by key, newest first (om/versions.py), folded into S3's entries and common prefixes
    as list_keys folds keys: a common prefix stands for every version under it, and the listing resumes
    past them."""
    listing = VersionListing()
    at_key, at_version = key_marker, version_marker
    om = s3.gateway.client.om
    while max_keys > 0:
        want = min(OM_PAGE, max_keys - listing.count + 1)
        try:
            page = await om.list_key_versions(s3.gateway.volume, s3.bucket, prefix, at_key, at_version, want)
        except OzoneClientError as e:
            raise s3_error(e, BucketName=s3.bucket) from None
        for info, latest in page:
            common = _common_prefix(info.name, prefix, delimiter)
            if common is not None and (
                common <= key_marker or (listing.prefixes and common == listing.prefixes[-1])
            ):
                at_key, at_version = max(info.name, common + _PAST_PREFIX), ""
                break  # resume past everything under the common prefix
            if listing.count == max_keys:
                listing.truncated = True
                return listing
            if common is None:
                listing.entries.append((info, latest))
                listing.next_key, listing.next_version = info.name, _position_of(info)
                at_key, at_version = info.name, listing.next_version
            else:
                listing.prefixes.append(common)
                listing.next_key, listing.next_version = common, ""
                at_key, at_version = max(info.name, common + _PAST_PREFIX), ""
                break
        else:
            if len(page) < want:
                return listing
    return listing


def _version_entry(info: KeyInfo, latest: bool, encode, owner_name: str) -> xml.ET.Element:  # type: ignore[no-untyped-def]
    """A Version, or a DeleteMarker for a marker (Amazon's ObjectVersion, DeleteMarkerEntry)."""
    if info.delete_marker:
        return xml.el(
            "DeleteMarker",
            None,
            xml.el("Key", encode(info.name)),
            xml.el("VersionId", _version_of(info)),
            xml.el("IsLatest", latest),
            xml.el("LastModified", xml.iso_time(info.modification_time)),
            owner(owner_name),
        )
    return xml.el(
        "Version",
        None,
        xml.el("Key", encode(info.name)),
        xml.el("VersionId", _version_of(info)),
        xml.el("IsLatest", latest),
        xml.el("LastModified", xml.iso_time(info.modification_time)),
        xml.el("ETag", f'"{info.metadata[ETAG]}"') if ETAG in info.metadata else None,
        *_checksum(info),
        xml.el("Size", info.data_size),
        owner(owner_name),
        xml.el("StorageClass", storage_class_name(info.replication)),
    )


async def list_object_versions(s3: S3Request) -> web.Response:
    """Every version and delete marker by key, newest first; a key written while its bucket was
    unversioned is its `null` version. Tools that empty a bucket generically (s3-tests' cleanup, rclone
    purge) list versions and delete them by id."""
    encode = _encoder(s3)
    encoded = "encoding-type" in s3.query
    prefix, delimiter = s3.query.get("prefix", ""), s3.query.get("delimiter", "")
    key_marker = s3.query.get("key-marker", "")
    version_marker = s3.query.get("version-id-marker", "")
    if version_marker and not key_marker:
        message = "A version-id marker cannot be specified without a key marker."
        raise S3Error(S3ErrorCode.InvalidArgument, message,
                      ArgumentName="version-id-marker", ArgumentValue=version_marker)  # fmt: skip
    try:
        parse_version_id(version_marker or NULL_VERSION)
    except VersionIdError:
        raise S3Error(S3ErrorCode.InvalidArgument, "Invalid version id specified",
                      ArgumentName="version-id-marker", ArgumentValue=version_marker) from None  # fmt: skip
    max_keys = s3.page_size("max-keys")
    listing = await list_versions(s3, prefix, delimiter, key_marker, version_marker, max_keys)
    shown = await bucket_owner(s3) if listing.entries else ""
    body = xml.document(
        "ListVersionsResult",
        xml.el("Name", s3.bucket),
        xml.el("Prefix", encode(prefix)),
        xml.el("KeyMarker", encode(key_marker)),
        xml.el("VersionIdMarker", version_marker),
        xml.el("NextKeyMarker", encode(listing.next_key)) if listing.truncated else None,
        xml.el("NextVersionIdMarker", listing.next_version)
        if listing.truncated and listing.next_version
        else None,
        xml.el("MaxKeys", max_keys),
        xml.el("Delimiter", encode(delimiter)) if delimiter else None,
        xml.el("EncodingType", "url") if "encoding-type" in s3.query else None,
        xml.el("IsTruncated", listing.truncated),
        *(
            _version_entry(info, latest, encode, shown)
            for info, latest in listing.entries
            if encoded or not _XML_UNSAFE.search(info.name)
        ),
        *(xml.el("CommonPrefixes", None, xml.el("Prefix", encode(p))) for p in listing.prefixes),
    )
    return xml_response(body)


def _encode_token(last: str) -> str:
    return base64.urlsafe_b64encode(last.encode()).decode()


def _decode_token(token: str) -> str:
    try:
        return base64.urlsafe_b64decode(token.encode()).decode()
    except (binascii.Error, UnicodeError, ValueError):
        raise S3Error(S3ErrorCode.InvalidArgument, "The continuation token provided is incorrect",
                      ArgumentName="continuation-token") from None  # fmt: skip
