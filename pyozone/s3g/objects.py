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
from pyozone.hdds.om_views import KeyInfo
from pyozone.s3g import policy, xml
from pyozone.s3g.buckets import xml_response
from pyozone.s3g.errors import S3Error, S3ErrorCode
from pyozone.s3g.headers import (
    ETAG,
    NULL_VERSION,
    RESPONSE_OVERRIDES,
    STORED_HEADERS,
    USER_METADATA_PREFIX,
    ByteRange,
    Precondition,
    byte_range,
    check_tags,
    delete_condition,
    object_metadata,
    precondition,
    require_body_digest,
    storage_class,
    tagging_header,
    write_condition,
)
from pyozone.s3g.om_errors import s3_error
from pyozone.s3g.request import S3Request

log = logging.getLogger(__name__)

MAX_PUT_BYTES = 5 * 1024**3
"""S3's largest single PUT (and copy); larger objects are multipart uploads."""
CHECKSUM_PREFIX = "x-amz-checksum-"
TAGGING_DIRECTIVES = ("COPY", "REPLACE")


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


async def put_object(s3: S3Request) -> web.Response:
    size = s3.body.require_length()
    if size is not None and size > MAX_PUT_BYTES:
        raise S3Error(S3ErrorCode.EntityTooLarge, MaxSizeAllowed=str(MAX_PUT_BYTES), ProposedSize=str(size))
    metadata = object_metadata(s3.headers)
    tags = tagging_header(s3.headers.get("x-amz-tagging"))
    condition = write_condition(s3.headers)
    client = s3.gateway.client
    try:
        out = await client.create_key(
            s3.gateway.volume, s3.bucket, s3.key, size_hint=size or 0, replication=storage_class(s3.headers),
            datastream=None if size is not None else True, metadata=metadata, tags=tags, condition=condition,
        )  # fmt: skip
    except OzoneClientError as e:
        raise conditional_error(e, s3) from None
    try:
        async with out:
            stored = await write_body(s3, out)
            out.metadata.update(stored)
    except OzoneClientError as e:
        raise conditional_error(e, s3, committing=True) from None
    return web.Response(status=200, headers={"ETag": f'"{stored[ETAG]}"', **checksum_headers(stored)})


def object_headers(info: KeyInfo, s3: S3Request) -> dict[str, str]:
    """GET/HEAD response headers: stored metadata, then the request's response-* overrides."""
    metadata = info.metadata
    headers = {name: metadata[name] for name in STORED_HEADERS if name in metadata}
    headers.setdefault("Content-Type", "binary/octet-stream")
    headers.update({k: v for k, v in metadata.items() if k.startswith(USER_METADATA_PREFIX)})
    if ETAG in metadata:
        headers["ETag"] = f'"{metadata[ETAG]}"'
    headers["Last-Modified"] = xml.http_time(info.modification_time)
    headers["Accept-Ranges"] = "bytes"
    if info.tags:
        headers["x-amz-tagging-count"] = str(len(info.tags))
    if info.replication == "RATIS/ONE":
        headers["x-amz-storage-class"] = "REDUCED_REDUNDANCY"
    whole = "Range" not in s3.headers  # a stored checksum is of the whole object, never of a range
    if whole and s3.headers.get("x-amz-checksum-mode", "").upper() == "ENABLED":
        headers.update(checksum_headers(metadata))
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


def _refuse_part_number(s3: S3Request) -> None:
    """GET or HEAD of one part of a multipart object: OM keeps no part boundaries of a completed key."""
    if "partNumber" in s3.query:
        raise S3Error(S3ErrorCode.NotImplemented, f"{s3.http.method} by partNumber is not implemented.")


async def head_object(s3: S3Request) -> web.Response:
    _refuse_part_number(s3)
    try:
        info = await s3.gateway.client.key_info(s3.gateway.volume, s3.bucket, s3.key)
    except OzoneClientError as e:
        raise s3_error(e, BucketName=s3.bucket, Key=s3.key) from None
    _check_preconditions(s3, info)
    headers = object_headers(info, s3)
    span = byte_range(s3.headers.get("Range"), info.data_size)
    if span is None:
        headers["Content-Length"] = str(info.data_size)
        return web.Response(status=200, headers=headers)
    headers["Content-Length"] = str(span.length)
    headers["Content-Range"] = span.content_range(info.data_size)
    return web.Response(status=206, headers=headers)


async def get_object(s3: S3Request) -> web.StreamResponse:
    _refuse_part_number(s3)
    try:
        stream = await s3.gateway.client.read_key(s3.gateway.volume, s3.bucket, s3.key)
    except OzoneClientError as e:
        raise s3_error(e, BucketName=s3.bucket, Key=s3.key) from None
    async with stream:
        info = stream.info
        _check_preconditions(s3, info)
        headers = object_headers(info, s3)
        span = byte_range(s3.headers.get("Range"), info.data_size)
        status = 200
        if span is not None:
            status = 206
            headers["Content-Range"] = span.content_range(info.data_size)
        else:
            span = ByteRange(0, info.data_size - 1)
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
    """S3 answers 204 whether or not the key existed, unless If-Match named it: then a missing key is
    NoSuchKey and one with another ETag PreconditionFailed (OM compares in the delete's step)."""
    condition = delete_condition(s3.headers)
    try:
        await s3.gateway.client.delete_key(s3.gateway.volume, s3.bucket, s3.key, condition)
    except OzoneClientError as e:
        error = conditional_error(e, s3)
        if error.code is not S3ErrorCode.NoSuchKey or condition is not None:
            raise error from None
    return web.Response(status=204)


COPY_SOURCE = "x-amz-copy-source"
COPY_CHECKSUM = "x-amz-checksum-algorithm"
"""The checksum a CopyObject asks to be computed for the copy (as CreateMultipartUpload's, multipart.py)."""


def copy_source(s3: S3Request) -> tuple[str, str]:
    """x-amz-copy-source: `bucket/key` or `/bucket/key`, URL-encoded, perhaps with ?versionId=."""
    raw = s3.headers[COPY_SOURCE]
    path, _, version = raw.partition("?")
    if version and version not in ("versionId=null", "versionId="):
        raise S3Error(S3ErrorCode.NotImplemented, "Object versions are not implemented.")
    bucket, _, key = unquote(path).lstrip("/").partition("/")
    if not bucket or not key:
        message = "Copy Source must mention the source bucket and key: sourcebucket/sourcekey"
        raise S3Error(
            S3ErrorCode.InvalidArgument, message, ArgumentName="x-amz-copy-source", ArgumentValue=raw
        )
    return bucket, key


async def open_copy_source(s3: S3Request) -> KeyInputStream:
    bucket, key = copy_source(s3)
    try:
        stream = await s3.gateway.client.read_key(s3.gateway.volume, bucket, key)
    except OzoneClientError as e:
        raise s3_error(e, BucketName=bucket, Key=key) from None
    info = stream.info
    outcome = precondition(
        s3.headers, info.metadata.get(ETAG, ""), info.modification_time, "x-amz-copy-source-"
    )
    if outcome != Precondition.OK:
        await stream.close()
        raise S3Error(S3ErrorCode.PreconditionFailed, Condition="x-amz-copy-source-If-Match")
    return stream


async def copy_object(s3: S3Request) -> web.Response:
    directive = s3.headers.get("x-amz-metadata-directive", "COPY").upper()
    tagging = s3.headers.get("x-amz-tagging-directive", "COPY").upper()
    if directive not in ("COPY", "REPLACE") or tagging not in TAGGING_DIRECTIVES:
        raise S3Error(S3ErrorCode.InvalidArgument, "Unknown metadata or tagging directive")
    if COPY_CHECKSUM in s3.headers:  # the copy would need a checksum computed over the data copied
        raise S3Error(S3ErrorCode.NotImplemented, f"{COPY_CHECKSUM} on a copy is not implemented.")
    source_bucket, source_key = copy_source(s3)
    if (source_bucket, source_key) == (s3.bucket, s3.key) and directive == "COPY":
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
        tags = dict(source.tags) if tagging == "COPY" else tagging_header(s3.headers.get("x-amz-tagging"))
        try:
            out = await s3.gateway.client.create_key(
                s3.gateway.volume, s3.bucket, s3.key, size_hint=source.data_size,
                replication=storage_class(s3.headers), metadata=metadata, tags=tags, condition=condition,
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
                out.metadata[ETAG] = md5.hexdigest()  # a copy is a new object: its ETag is its MD5
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
    return xml_response(body)


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
    for key, version in objects:
        version_el = xml.el("VersionId", version) if version is not None else None
        if version not in (None, NULL_VERSION):  # a key has one version, null: no other exists
            error = S3Error(S3ErrorCode.NoSuchVersion)
            results.append(_delete_error(key, version_el, error))
            continue
        if await policy.key_denied(s3.gateway, s3.http, s3.headers, s3.bucket, key, s3.user, s3.query):
            results.append(_delete_error(key, version_el, S3Error(S3ErrorCode.AccessDenied)))
            continue
        try:
            await client.delete_key(s3.gateway.volume, s3.bucket, key)
        except OzoneClientError as e:
            error = s3_error(e, Key=key)
            if error.code is S3ErrorCode.NoSuchBucket:
                raise error from None
            if error.code is not S3ErrorCode.NoSuchKey:
                results.append(_delete_error(key, version_el, error))
                continue
        if not quiet:
            results.append(xml.el("Deleted", None, xml.el("Key", key), version_el))
    return xml_response(xml.document("DeleteResult", *results))


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
    request = xml.parse(await s3.body.read_all(), "Tagging")
    tag_set = request.find("TagSet")
    if tag_set is None:
        raise S3Error(S3ErrorCode.MalformedXML)
    tags = check_tags(
        [(xml.text(t, "Key") or "", xml.text(t, "Value") or "") for t in tag_set.findall("Tag")]
    )
    await _set_tags(s3, tags)
    return web.Response(status=200)


async def delete_object_tagging(s3: S3Request) -> web.Response:
    await _set_tags(s3, {})
    return web.Response(status=204)


async def _set_tags(s3: S3Request, tags: dict[str, str]) -> None:
    try:
        await s3.gateway.client.set_key_tags(s3.gateway.volume, s3.bucket, s3.key, tags)
    except OzoneClientError as e:
        raise s3_error(e, BucketName=s3.bucket, Key=s3.key) from None
