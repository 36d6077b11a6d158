"""Object operations: PUT streams the body into a key, GET streams a key (or a range of it) out; neither
holds a whole object. Copies read the source and write the target through the gateway, as Ozone's does."""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import AsyncIterator, Mapping
from urllib.parse import unquote

from aiohttp import web

from pyozone.client.errors import OMException, OzoneClientError
from pyozone.client.key_input import KeyInputStream
from pyozone.client.key_output import KeyOutputStream
from pyozone.hdds.om_views import CHECKSUM_PREFIX, KeyInfo
from pyozone.hdds.s3_versions import NULL_VERSION
from pyozone.hdds.security.acl import Acls
from pyozone.hdds.security.sse import SseKeyError
from pyozone.s3g import policy, sse, xml
from pyozone.s3g.buckets import xml_response
from pyozone.s3g.errors import S3Error, S3ErrorCode
from pyozone.s3g.headers import (
    CHECKSUM_TYPE,
    ETAG,
    FULL_OBJECT,
    RESPONSE_OVERRIDES,
    STORED_HEADERS,
    USER_METADATA_PREFIX,
    ByteRange,
    Precondition,
    byte_range,
    delete_condition,
    object_metadata,
    parse_tagging,
    precondition,
    require_body_digest,
    storage_class,
    storage_class_name,
    tagging_header,
    write_condition,
)
from pyozone.s3g.lock_headers import (
    answer_lock_headers,
    bypass_governance,
    lock_metadata,
    require_lock_digest,
)
from pyozone.s3g.om_errors import s3_error
from pyozone.s3g.parts import PARTS_COUNT, check_part_number, checksum_type, part_span
from pyozone.s3g.request import S3Request

log = logging.getLogger(__name__)

MAX_PUT_BYTES = 5 * 1024**3
"""S3's largest single PUT (and copy); larger objects are multipart uploads."""
TAGGING_DIRECTIVES = ("COPY", "REPLACE")
VERSION_ID = "x-amz-version-id"
DELETE_MARKER = "x-amz-delete-marker"


def version_headers(info: KeyInfo | None) -> dict[str, str]:
    """x-amz-version-id of a version written in a versioned bucket (a key written while its bucket was
    unversioned names none, as Amazon's answers in such a bucket)."""
    return {VERSION_ID: info.version_id} if info is not None and info.version_id else {}


async def write_body(s3: S3Request, out: KeyOutputStream) -> dict[str, str]:
    """Streams the verified body into an open key; returns the ETag and checksums to store with it.
    The key commits only when the whole body arrived intact (the caller's `async with` aborts it else)."""
    async for piece in s3.body.pieces():
        await out.write(piece)
    digest = s3.body.digest()
    stored = {ETAG: digest.md5_hex}
    stored.update({algorithm.header: value for algorithm, value in digest.checksums.items()})
    return stored


def checksum_headers(stored: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in stored.items() if k.startswith(CHECKSUM_PREFIX)}


def conditional_error(e: OzoneClientError, s3: S3Request, committing: bool = False) -> S3Error:
    """A write's failure in S3's words. A conditional write's condition that fails is 412 PreconditionFailed
    naming its header; one that held when the write began (OM checks it at openKey) and failed at its
    commit met a concurrent write: 409 ConditionalRequestConflict, as Amazon answers then."""
    error = s3_error(e, BucketName=s3.bucket, Key=s3.key)
    if error.code is not S3ErrorCode.PreconditionFailed or not isinstance(e, OMException):
        return error
    if committing:
        return S3Error(S3ErrorCode.ConditionalRequestConflict, Key=s3.key)
    header = "If-None-Match" if e.result == "KEY_ALREADY_EXISTS" else "If-Match"
    return S3Error(S3ErrorCode.PreconditionFailed, Condition=header)


async def put_object(s3: S3Request, acls: Acls = ()) -> web.Response:
    """`acls`: the key's whole ACL, committed with it (acls.py; none: its writer's defaults)."""
    size = s3.body.require_length()
    if size is not None and size > MAX_PUT_BYTES:
        raise S3Error(S3ErrorCode.EntityTooLarge, MaxSizeAllowed=str(MAX_PUT_BYTES), ProposedSize=str(size))
    metadata = object_metadata(s3.headers) | lock_metadata(s3.headers)
    require_lock_digest(s3.headers)
    tags = tagging_header(s3.headers.get("x-amz-tagging"))
    condition = write_condition(s3.headers)
    encryption = sse.requested(s3)
    client = s3.gateway.client
    try:
        out = await client.create_key(
            s3.gateway.volume, s3.bucket, s3.key, size_hint=size or 0, replication=storage_class(s3.headers),
            datastream=None if size is not None else True, metadata=metadata, tags=tags, condition=condition,
            sse_s3=encryption.sse_s3, customer_key=encryption.customer_key, acls=acls,
        )  # fmt: skip
    except OzoneClientError as e:
        raise conditional_error(e, s3) from None
    try:
        async with out:
            stored = await write_body(s3, out)
            stored[ETAG] = sse.etag(stored[ETAG], encryption.customer_key)
            out.metadata.update(stored)
    except OzoneClientError as e:
        raise conditional_error(e, s3, committing=True) from None
    assert out.key_info is not None
    checksums = checksum_headers(stored)  # a PUT's is always of the whole object (R31's I6)
    headers = {"ETag": f'"{stored[ETAG]}"', **checksums, **version_headers(out.key_info)}
    headers.update(sse.answer_headers(out.key_info.encryption))
    if checksums:
        headers[CHECKSUM_TYPE] = FULL_OBJECT
    return web.Response(status=200, headers=headers)


def object_headers(info: KeyInfo, s3: S3Request, lock: Mapping[str, str]) -> dict[str, str]:
    """GET/HEAD response headers: stored metadata, the version's `lock` headers the caller may see
    (lock_headers.answer_lock_headers), then the request's response-* overrides."""
    metadata = info.metadata
    headers = {name: metadata[name] for name in STORED_HEADERS if name in metadata}
    headers.setdefault("Content-Type", "binary/octet-stream")
    headers.update({k: v for k, v in metadata.items() if k.startswith(USER_METADATA_PREFIX)})
    if ETAG in metadata:
        headers["ETag"] = f'"{metadata[ETAG]}"'
    headers["Last-Modified"] = xml.http_time(info.modification_time)
    headers["Accept-Ranges"] = "bytes"
    headers.update(version_headers(info))
    headers.update(lock)
    headers.update(sse.answer_headers(info.encryption))
    # the tag count goes to whom s3:GetObjectTagging allows, as Amazon's: never to an unsigned request,
    # which GetObjectTagging refuses (R37's F13)
    if info.tags and not s3.as_public:
        headers["x-amz-tagging-count"] = str(len(info.tags))
    if (named := storage_class_name(info.replication)) != "STANDARD":  # STANDARD goes unnamed, as Amazon's
        headers["x-amz-storage-class"] = named
    # a stored checksum is of the whole object, never of a range or of one part of several
    whole = "Range" not in s3.headers and ("partNumber" not in s3.query or not info.parts)
    if whole and s3.headers.get("x-amz-checksum-mode", "").upper() == "ENABLED":
        checksums = checksum_headers(metadata)
        headers.update(checksums)
        if checksums:
            headers[CHECKSUM_TYPE] = checksum_type(next(iter(checksums.values())))
    for parameter, header in RESPONSE_OVERRIDES.items():
        if parameter in s3.query:
            headers[header] = s3.query[parameter]
    return headers


def _check_preconditions(s3: S3Request, info: KeyInfo) -> None:
    outcome = precondition(s3.headers, info.metadata.get(ETAG, ""), info.modification_time)
    if outcome == Precondition.FAILED:
        raise S3Error(S3ErrorCode.PreconditionFailed, Condition="If-Match")
    if outcome == Precondition.NOT_MODIFIED:
        raise NotModified(info)


class NotModified(Exception):
    """304: the app answers it with the object's ETag and Last-Modified and no body."""

    def __init__(self, info: KeyInfo) -> None:
        super().__init__("not modified")
        self.headers = {"Last-Modified": xml.http_time(info.modification_time)}
        if ETAG in info.metadata:
            self.headers["ETag"] = f'"{info.metadata[ETAG]}"'


def _span(s3: S3Request, info: KeyInfo, headers: dict[str, str]) -> ByteRange | None:
    """The bytes a GET or HEAD asks for (None: the whole object, 200): its Range, or its partNumber's part
    (parts.py), which also sets x-amz-mp-parts-count and, with x-amz-checksum-mode, the part's checksum."""
    if "partNumber" not in s3.query:
        return byte_range(s3.headers.get("Range"), info.data_size)
    part = part_span(s3.query["partNumber"], "Range" in s3.headers, info)
    if part.count is not None:
        headers[PARTS_COUNT] = str(part.count)
    named = next(iter(checksum_headers(info.metadata)), None)
    if part.checksum and named and s3.headers.get("x-amz-checksum-mode", "").upper() == "ENABLED":
        headers[named] = part.checksum  # the part's own, as Amazon answers for one part
    return part.span


def refuse_delete_marker(s3: S3Request, info: KeyInfo) -> None:
    """A delete marker has no data (Amazon's "Working with delete markers"): named by its versionId it is
    405 MethodNotAllowed, as the latest version of a key asked without one 404 NoSuchKey; both say it is
    a marker, and which."""
    if not info.delete_marker:
        return
    headers = {DELETE_MARKER: "true", VERSION_ID: info.version_id or NULL_VERSION}
    if "versionId" in s3.query:
        headers["Last-Modified"] = xml.http_time(info.modification_time)
        raise S3Error(S3ErrorCode.MethodNotAllowed, headers=headers, Method=s3.http.method,
                      ResourceType="DeleteMarker")  # fmt: skip
    raise S3Error(S3ErrorCode.NoSuchKey, headers=headers, Key=s3.key)


def version_error(e: OzoneClientError, s3: S3Request) -> S3Error:
    """A read's failure in S3's words; a version the key lacks is NoSuchVersion naming it."""
    error = s3_error(e, BucketName=s3.bucket, Key=s3.key)
    if error.code is S3ErrorCode.NoSuchVersion:
        return S3Error(S3ErrorCode.NoSuchVersion, Key=s3.key, VersionId=s3.query.get("versionId", ""))
    return error


async def version_info(s3: S3Request) -> KeyInfo:
    """The info of the version the request names (its current one without a versionId); a delete
    marker is refused as S3 answers (refuse_delete_marker)."""
    try:
        info = await s3.gateway.client.key_info(
            s3.gateway.volume, s3.bucket, s3.key, version=s3.query.get("versionId", ""), delete_markers=True
        )
    except OzoneClientError as e:
        raise version_error(e, s3) from None
    refuse_delete_marker(s3, info)
    return info


async def head_object(s3: S3Request) -> web.Response:
    check_part_number(s3.query)
    sse.refuse_sse_s3_on_read(s3.headers)
    key = sse.request_key(s3)
    info = await version_info(s3)
    sse.check_read_key(info.encryption, key)
    _check_preconditions(s3, info)
    headers = object_headers(info, s3, await answer_lock_headers(s3, info))
    span = _span(s3, info, headers)
    if span is None or not span.length:
        headers["Content-Length"] = str(info.data_size if span is None else 0)
        return web.Response(status=200, headers=headers)
    headers["Content-Length"] = str(span.length)
    headers["Content-Range"] = span.content_range(info.data_size)
    return web.Response(status=206, headers=headers)


async def get_object(s3: S3Request) -> web.StreamResponse:
    check_part_number(s3.query)
    sse.refuse_sse_s3_on_read(s3.headers)
    key = sse.request_key(s3)
    try:
        stream = await s3.gateway.client.read_key(
            s3.gateway.volume, s3.bucket, s3.key, version=s3.query.get("versionId", ""), delete_markers=True,
            customer_key=key,
        )  # fmt: skip
    except OzoneClientError as e:
        raise version_error(e, s3) from None
    except SseKeyError as e:
        raise sse.key_error(e) from None
    async with stream:
        info = stream.info
        refuse_delete_marker(s3, info)
        sse.check_read_key(info.encryption, key)
        _check_preconditions(s3, info)
        headers = object_headers(info, s3, await answer_lock_headers(s3, info))
        span = _span(s3, info, headers)
        status = 200
        if span is None:
            span = ByteRange(0, info.data_size - 1)
        elif span.length:  # an empty part has no Content-Range to give
            status = 206
            headers["Content-Range"] = span.content_range(info.data_size)
        response = web.StreamResponse(status=status, headers=headers)
        response.content_length = span.length
        sent, idle_s = 0, s3.gateway.body_idle_timeout_s
        try:
            await response.prepare(s3.http)
            async for piece in read_range(stream, span, s3.gateway.settings.buffer_size):
                if not await _write(response, piece, idle_s):
                    log.info("GET %s: the client read nothing for %g s after %d of %d bytes; closed",
                             s3.http.path, idle_s, sent, span.length)  # fmt: skip
                    _abort(s3)
                    break
                sent += len(piece)
            else:
                await response.write_eof()
        except ConnectionError as e:  # the client went away, before or after the head: its business, one line
            log.info("GET %s: the client disconnected after %d of %d bytes (%s)",
                     s3.http.path, sent, span.length, e)  # fmt: skip
        except (S3Error, OzoneClientError, TimeoutError) as e:
            raise ResponseBroken(f"{s3.key}: the read failed after the response began") from e
        return response


async def _write(response: web.StreamResponse, piece: bytes, idle_s: float) -> bool:
    """Writes one piece; False when the client took none of it for `idle_s` (a reader that stopped)."""
    try:
        async with asyncio.timeout(idle_s):
            await response.write(piece)
    except TimeoutError:
        return False
    return True


def _abort(s3: S3Request) -> None:
    """Ends the connection at once: the client sees its body cut short, and aiohttp writes nothing more
    (its last writes meet a closed transport, which it takes quietly)."""
    transport = s3.http.transport
    if transport is not None:
        transport.abort()


class ResponseBroken(Exception):
    """A failure after the response's head went out: no error document can follow it."""


async def read_range(stream: KeyInputStream, span: ByteRange, piece_size: int) -> AsyncIterator[bytes]:
    """The bytes of `span`, at most `piece_size` at a time (the gateway's memory per reader)."""
    stream.seek(span.start)
    remaining = span.length
    while remaining > 0:
        try:
            piece = await stream.read(min(piece_size, remaining))
        except OzoneClientError as e:
            raise s3_error(e) from None
        if not piece:
            raise S3Error(S3ErrorCode.InternalError, "the object ended before its length")
        remaining -= len(piece)
        yield piece


async def delete_object(s3: S3Request) -> web.Response:
    """S3 answers 204 whether or not the key (or the version named) existed, unless If-Match named it:
    then a missing key is NoSuchKey and one with another ETag PreconditionFailed (OM compares in the
    delete's step). In a versioned bucket a delete without versionId adds a delete marker; with one it
    removes that version for good (om/versions.py); either answer names the version and whether it is a
    marker. Amazon evaluates If-Match on the current version alone; with a versionId it is refused, not
    dropped (a 204 would destroy what the client meant to protect)."""
    condition = delete_condition(s3.headers)
    version = s3.query.get("versionId", "")
    if version and condition is not None:  # never carried out unconditionally (R32's F5)
        raise S3Error(
            S3ErrorCode.NotImplemented, "A conditional DeleteObject of a versionId is not implemented."
        )
    bypass = bool(version) and await bypass_governance(s3, s3.key)
    try:
        version_id, marker = await s3.gateway.client.delete_key(
            s3.gateway.volume, s3.bucket, s3.key, condition, version, bypass
        )
    except OzoneClientError as e:
        error = conditional_error(e, s3)
        if error.code is not S3ErrorCode.NoSuchKey or condition is not None:
            raise error from None
        version_id, marker = "", False
    headers = {VERSION_ID: version_id} if version_id else {}
    if marker:
        headers[DELETE_MARKER] = "true"
    return web.Response(status=204, headers=headers)


COPY_SOURCE = "x-amz-copy-source"
COPY_CHECKSUM = "x-amz-checksum-algorithm"
"""The checksum a CopyObject asks to be computed for the copy (as CreateMultipartUpload's, multipart.py)."""


def copy_source(s3: S3Request) -> tuple[str, str, str]:
    """x-amz-copy-source: `bucket/key` or `/bucket/key`, URL-encoded, perhaps with ?versionId= (the
    source's version; "": its current one)."""
    raw = s3.headers[COPY_SOURCE]
    path, _, query = raw.partition("?")
    name, _, version = query.partition("=")
    if query and (name != "versionId" or not version):
        message = "Invalid copy source: only ?versionId=<version id> may follow the key"
        raise S3Error(
            S3ErrorCode.InvalidArgument, message, ArgumentName="x-amz-copy-source", ArgumentValue=raw
        )
    bucket, _, key = unquote(path).lstrip("/").partition("/")
    if not bucket or not key:
        message = "Copy Source must mention the source bucket and key: sourcebucket/sourcekey"
        raise S3Error(
            S3ErrorCode.InvalidArgument, message, ArgumentName="x-amz-copy-source", ArgumentValue=raw
        )
    return bucket, key, unquote(version)


async def open_copy_source(s3: S3Request) -> KeyInputStream:
    """The source's version named, or its current one; a delete marker named by its version id is
    InvalidRequest, as Amazon answers (one that is the latest version is NoSuchKey)."""
    bucket, key, version = copy_source(s3)
    customer_key = sse.request_key(s3, sse.COPY_CUSTOMER)
    try:
        stream = await s3.gateway.client.read_key(
            s3.gateway.volume, bucket, key, version=version, customer_key=customer_key
        )
    except OzoneClientError as e:
        error = s3_error(e, BucketName=bucket, Key=key)
        if error.code is S3ErrorCode.NoSuchVersion:
            error = S3Error(S3ErrorCode.NoSuchVersion, Key=key, VersionId=version)
        raise error from None
    except SseKeyError as e:
        raise sse.key_error(e, "copy source") from None
    info = stream.info
    try:
        sse.check_read_key(info.encryption, customer_key, copy_source=True)
    except S3Error:
        await stream.close()
        raise
    if info.delete_marker:
        await stream.close()
        message = "The source of a copy request may not specifically refer to a delete marker by version id."
        raise S3Error(S3ErrorCode.InvalidRequest, message)
    outcome = precondition(
        s3.headers, info.metadata.get(ETAG, ""), info.modification_time, "x-amz-copy-source-"
    )
    if outcome != Precondition.OK:
        await stream.close()
        raise S3Error(S3ErrorCode.PreconditionFailed, Condition="x-amz-copy-source-If-Match")
    return stream


async def copy_object(s3: S3Request, acls: Acls = ()) -> web.Response:
    """`acls`: the copy's whole ACL, committed with it (acls.py; none: its writer's defaults)."""
    directive = s3.headers.get("x-amz-metadata-directive", "COPY").upper()
    tagging = s3.headers.get("x-amz-tagging-directive", "COPY").upper()
    if directive not in ("COPY", "REPLACE") or tagging not in TAGGING_DIRECTIVES:
        raise S3Error(S3ErrorCode.InvalidArgument, "Unknown metadata or tagging directive")
    if COPY_CHECKSUM in s3.headers:  # the copy would need a checksum computed over the data copied
        raise S3Error(S3ErrorCode.NotImplemented, f"{COPY_CHECKSUM} on a copy is not implemented.")
    source_bucket, source_key, source_version = copy_source(s3)
    encryption = sse.requested(s3)
    same = (source_bucket, source_key) == (s3.bucket, s3.key)
    if same and directive == "COPY" and not source_version and not encryption.asked:
        raise S3Error(
            S3ErrorCode.InvalidRequest,
            "This copy request is illegal because it is trying to copy an object to itself without changing "
            "the object's metadata, storage class, website redirect location or encryption attributes.",
        )
    condition = write_condition(s3.headers)
    stream = await open_copy_source(s3)
    async with stream:
        source = stream.info
        if source.data_size > MAX_PUT_BYTES:
            raise S3Error(S3ErrorCode.InvalidRequest, "The specified copy source is larger than the maximum "
                          "allowable size for a copy source: 5368709120")  # fmt: skip
        keep = {k: v for k, v in source.metadata.items() if k.startswith(CHECKSUM_PREFIX)}
        metadata = dict(source.metadata) if directive == "COPY" else {**object_metadata(s3.headers), **keep}
        metadata |= lock_metadata(s3.headers)  # the copy's own retention; never the source's
        tags = dict(source.tags) if tagging == "COPY" else tagging_header(s3.headers.get("x-amz-tagging"))
        try:
            out = await s3.gateway.client.create_key(
                s3.gateway.volume, s3.bucket, s3.key, size_hint=source.data_size,
                replication=storage_class(s3.headers), metadata=metadata, tags=tags, condition=condition,
                sse_s3=encryption.sse_s3, customer_key=encryption.customer_key, acls=acls,
            )  # fmt: skip
        except OzoneClientError as e:
            raise conditional_error(e, s3) from None
        try:
            async with out:
                span = ByteRange(0, source.data_size - 1)
                md5 = hashlib.md5(usedforsecurity=False)
                async for piece in read_range(stream, span, s3.gateway.settings.buffer_size):
                    md5.update(piece)
                    await out.write(piece)
                # a copy is a new object: its ETag is its MD5 (keyed for SSE-C)
                out.metadata[ETAG] = sse.etag(md5.hexdigest(), encryption.customer_key)
            committed = out.key_info
        except OzoneClientError as e:
            raise conditional_error(e, s3, committing=True) from None
    assert committed is not None
    etag = committed.metadata.get(ETAG, "")
    body = xml.document(
        "CopyObjectResult",
        xml.el("LastModified", xml.iso_time(committed.modification_time)),
        xml.el("ETag", f'"{etag}"'),
    )
    headers = {**version_headers(committed), **sse.answer_headers(committed.encryption)}
    if source.version_id:
        headers["x-amz-copy-source-version-id"] = source.version_id
    return xml_response(body, **headers)


async def delete_objects(s3: S3Request) -> web.Response:
    require_body_digest(s3.headers)
    request = xml.parse(await s3.body.read_all(), "Delete")
    quiet = (request.findtext("Quiet") or "false").strip().lower() == "true"
    objects = [
        (xml.text(node, "Key") or "", xml.text(node, "VersionId", required=False))
        for node in request.findall("Object")
    ]
    if len(objects) > 1000:
        raise S3Error(S3ErrorCode.MalformedXML, "The request may name at most 1000 keys")
    results: list[xml.ET.Element] = []
    client = s3.gateway.client
    values = policy.condition_values(s3.http, s3.headers, s3.query, s3.user)  # one request's, every key
    for key, version in objects:
        version_el = xml.el("VersionId", version) if version is not None else None
        if version == "":  # Amazon: an empty VersionId names no version (R32's F4), not "the key"
            results.append(_delete_error(key, version_el, S3Error(S3ErrorCode.NoSuchVersion)))
            continue
        if await policy.key_denied(s3.gateway, s3.bucket, key, version, s3.user, values):
            results.append(_delete_error(key, version_el, S3Error(S3ErrorCode.AccessDenied)))
            continue
        bypass = bool(version) and await bypass_governance(s3, key)
        try:
            version_id, marker = await client.delete_key(
                s3.gateway.volume, s3.bucket, key, version=version or "", bypass_governance=bypass
            )
        except OzoneClientError as e:
            error = s3_error(e, Key=key)
            if error.code is S3ErrorCode.NoSuchBucket:
                raise error from None
            if error.code is not S3ErrorCode.NoSuchKey:
                results.append(_delete_error(key, version_el, error))
                continue
            version_id, marker = "", False
        if not quiet:
            results.append(_deleted(key, version, version_id, marker))
    return xml_response(xml.document("DeleteResult", *results))


def _deleted(key: str, version: str | None, version_id: str, marker: bool) -> xml.ET.Element:
    """DeleteObjects' Deleted entry (Amazon's DeletedObject): the version named, and, when the version
    added or removed is a delete marker, DeleteMarker with its id."""
    return xml.el(
        "Deleted",
        None,
        xml.el("Key", key),
        xml.el("VersionId", version) if version is not None else None,
        xml.el("DeleteMarker", True) if marker else None,
        xml.el("DeleteMarkerVersionId", version_id) if marker else None,
    )


def _delete_error(key: str, version: xml.ET.Element | None, error: S3Error) -> xml.ET.Element:
    return xml.el(
        "Error",
        None,
        xml.el("Key", key),
        version,
        xml.el("Code", error.code.name),
        xml.el("Message", error.message),
    )


async def get_object_tagging(s3: S3Request) -> web.Response:
    try:
        info = await s3.gateway.client.key_info(s3.gateway.volume, s3.bucket, s3.key)
    except OzoneClientError as e:
        raise s3_error(e, BucketName=s3.bucket, Key=s3.key) from None
    tags = (xml.el("Tag", None, xml.el("Key", k), xml.el("Value", v)) for k, v in sorted(info.tags.items()))
    return xml_response(xml.document("Tagging", xml.group("TagSet", tags)))


async def put_object_tagging(s3: S3Request) -> web.Response:
    await _set_tags(s3, parse_tagging(await s3.body.read_all()))
    return web.Response(status=200)


async def delete_object_tagging(s3: S3Request) -> web.Response:
    await _set_tags(s3, {})
    return web.Response(status=204)


async def _set_tags(s3: S3Request, tags: dict[str, str]) -> None:
    try:
        await s3.gateway.client.set_key_tags(s3.gateway.volume, s3.bucket, s3.key, tags)
    except OzoneClientError as e:
        raise s3_error(e, BucketName=s3.bucket, Key=s3.key) from None
