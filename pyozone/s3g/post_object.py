"""POST Object: a browser's HTML form upload (`POST /bucket`, `multipart/form-data`), as Amazon defines it.

The form carries what a PUT carries in headers (key, Content-Type, x-amz-meta-*, tagging, ...) and its
authentication: a SigV4 signature over a base64 policy (post_policy.py) with the signing key of the
credential's scope, which OM derives (authenticate.signing_key, as for every request). The fields before
the part named `file` are read (bounded), the signature and policy checked, and only then is the file
streamed into the key, as a PUT streams its body (the key commits once the whole body arrived and the file
fits the policy's content-length-range). The write runs as the access id's user: OM's ACLs apply as to a
PUT. A form with no policy is anonymous, refused as every anonymous write is; the SigV2 form
(AWSAccessKeyId + signature) is NotImplemented, as SigV2 is.
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from urllib.parse import quote, urlencode, urlsplit

from aiohttp import web
from multidict import CIMultiDict, CIMultiDictProxy

from pyozone.client.errors import OzoneClientError
from pyozone.hdds.security.acl import Acls
from pyozone.s3g import post_policy, sse, xml
from pyozone.s3g.acls import expected_owners, form_acl, form_object_acl
from pyozone.s3g.auth import sigv4
from pyozone.s3g.auth.checksums import check_content_md5, decode_content_md5
from pyozone.s3g.auth.payload import Payload
from pyozone.s3g.authenticate import signing_key
from pyozone.s3g.body import RequestBody
from pyozone.s3g.errors import S3Error, S3ErrorCode
from pyozone.s3g.form_data import Event, Field, FileData, FileEnd, FileStart, FormDataParser, form_boundary
from pyozone.s3g.headers import (
    ETAG,
    GRANT_HEADERS,
    MULTI_VALUED_PREFIX,
    check_header_value,
    object_metadata,
    parse_tagging,
    refuse_unimplemented,
    storage_class,
)
from pyozone.s3g.objects import MAX_PUT_BYTES, conditional_error, version_headers
from pyozone.s3g.policy import acting_user
from pyozone.s3g.request import Gateway, S3Request
from pyozone.s3g.routing import MAX_KEY_BYTES, Operation, Target

MAX_PRE_DATA_BYTES = 20 * 1024
"""The most bytes of the body before the file's data (fields, their headers, boundaries): Amazon refuses
more with MaxPostPreDataLengthExceededError (MaxPostPreDataLengthBytes 20480); a policy of a hundred
conditions fits."""
FILENAME = "${filename}"
SIGV2_FIELDS = ("awsaccesskeyid", "signature")
SECURITY_TOKEN = "x-amz-security-token"
SUCCESS_STATUS = "success_action_status"
SUCCESS_REDIRECT = "success_action_redirect"
TAGGING = "tagging"
CHECKSUM_FIELD = "x-amz-checksum-"
OBJECT_LOCK_FIELD = "x-amz-object-lock-"


async def post_object(
    gateway: Gateway, http: web.Request, where: Target, request_id: str
) -> web.StreamResponse:
    """Reads the form up to its file, authenticates it, checks it, then streams the file into the key."""
    assert where.bucket is not None  # routing gives POST Object a bucket
    boundary = form_boundary(http.headers.get("Content-Type"))
    payload = Payload(None, http.content_length, None, None, None, (), md5=False)  # its length; unsigned
    body = RequestBody(http, payload, gateway.body_idle_timeout_s, gateway.settings.buffer_size)
    events = _events(body, FormDataParser(boundary, MAX_PRE_DATA_BYTES))
    fields, file = await _fields(events)
    access_key = await _authenticate(gateway, fields)
    if file is None:
        raise S3Error(S3ErrorCode.IncorrectNumberOfFilesInPostRequest)
    if "key" not in fields:
        raise sigv4.missing_form_field("key")
    key = fields["key"].replace(FILENAME, _basename(file.filename))
    checked = {name.lower(): value for name, value in fields.items()}
    checked["key"] = key
    policy = post_policy.decode(fields["policy"])
    post_policy.check(policy, checked, where.bucket, datetime.now(UTC))
    if not key:
        raise sigv4.missing_form_field("key")
    if len(key.encode()) > MAX_KEY_BYTES:
        raise S3Error(S3ErrorCode.KeyTooLongError)
    refuse_unimplemented(fields, CIMultiDictProxy(CIMultiDict()), sse=True)  # SSE fields: `_store`
    if SUCCESS_REDIRECT in fields:  # sent back as the Location header: refused before the file is stored
        check_header_value(SUCCESS_REDIRECT, fields[SUCCESS_REDIRECT])
    acl = fields.get("acl")
    if any(name.lower().startswith(GRANT_HEADERS) for name in fields):
        raise S3Error(S3ErrorCode.NotImplemented, "Grant fields on POST Object are not implemented.")
    if acl is not None:
        form_acl(acl)
    if any(name.lower().startswith(CHECKSUM_FIELD) for name in fields):
        raise S3Error(
            S3ErrorCode.NotImplemented, "x-amz-checksum-* fields on POST Object are not implemented."
        )
    if any(name.lower().startswith(OBJECT_LOCK_FIELD) for name in fields):  # never stored without its lock
        raise S3Error(
            S3ErrorCode.NotImplemented, "x-amz-object-lock-* fields on POST Object are not implemented."
        )
    target = Target(where.bucket, key, where.query)
    acting = await acting_user(gateway, http, target, Operation.POST_OBJECT, access_key, http.headers)
    s3 = S3Request(http, target, Operation.POST_OBJECT, request_id, access_key, body, gateway, fields, acting)
    length = policy.length or post_policy.LengthRange(0, MAX_PUT_BYTES)
    length = post_policy.LengthRange(length.low, min(length.high, MAX_PUT_BYTES))  # a policy never lifts it
    with gateway.client.acting_for(acting):  # its signer, or the bucket's owner if its policy grants it
        await expected_owners(s3)
        acls = await form_object_acl(s3, acl) if acl is not None else ()
        etag, version = await _store(s3, events, length, acls)
    return _answer(http, fields, where.bucket, key, etag, version)


async def _events(body: RequestBody, parser: FormDataParser) -> AsyncIterator[Event]:
    async for piece in body.pieces(as_received=True):
        for event in parser.feed(piece):
            yield event
    parser.finish()


async def _fields(events: AsyncIterator[Event]) -> tuple[CIMultiDictProxy[str], FileStart | None]:
    """The fields before the file, and the file's part (None: the form has none)."""
    fields: CIMultiDict[str] = CIMultiDict()
    async for event in events:
        if isinstance(event, FileStart):
            return _unique(fields), event
        assert isinstance(event, Field)
        fields.add(event.name, event.value)
    return _unique(fields), None


def _unique(fields: CIMultiDict[str]) -> CIMultiDictProxy[str]:
    """Every field but user metadata is given once (which of two would the policy have checked?)."""
    for name in {name.lower() for name in fields}:
        if not name.startswith(MULTI_VALUED_PREFIX) and len(fields.getall(name)) > 1:
            raise S3Error(
                S3ErrorCode.InvalidArgument,
                f"The form field {name} is given more than once.",
                ArgumentName=name,
            )
    return CIMultiDictProxy(fields)


async def _authenticate(gateway: Gateway, fields: CIMultiDictProxy[str]) -> str:
    """The access id whose key signed the policy; SigV2 is NotImplemented, a form with neither policy nor
    signature anonymous (sigv4.Unsigned: AccessDenied, or NoSuchBucket, as for any anonymous write)."""
    if any(name in fields for name in SIGV2_FIELDS):
        raise S3Error(
            S3ErrorCode.NotImplemented,
            "POST Object with AWS Signature Version 2 (AWSAccessKeyId, signature) is not implemented; "
            "sign the policy with AWS4-HMAC-SHA256 (x-amz-algorithm, x-amz-credential, x-amz-date, "
            "x-amz-signature).",
        )
    if "policy" not in fields and not any(name in fields for name in sigv4.POST_FIELDS):
        raise sigv4.Unsigned
    if "policy" not in fields:
        raise sigv4.missing_form_field("policy")
    lower = {name.lower(): value for name, value in fields.items() if name.lower() in sigv4.POST_FIELDS}
    signed = sigv4.parse_post(lower)
    try:
        key = await signing_key(gateway, signed)
    except S3Error as e:  # a scope OM derives no key for: the header's code, a form's is InvalidArgument
        if e.code is not S3ErrorCode.AuthorizationHeaderMalformed:
            raise
        raise S3Error(S3ErrorCode.InvalidArgument, e.message, ArgumentName="x-amz-credential") from None
    sigv4.verify_post(signed, key, fields["policy"])
    if SECURITY_TOKEN in fields:  # the gateway issues no temporary credentials: no token is valid
        raise S3Error(S3ErrorCode.InvalidToken, ArgumentName=SECURITY_TOKEN)
    return signed.access_key


async def _store(
    s3: S3Request, events: AsyncIterator[Event], length: post_policy.LengthRange, acls: Acls
) -> tuple[str, dict[str, str]]:
    """Streams the file into the key, encrypted as its `x-amz-server-side-encryption*` fields (or its
    bucket's default) ask, as PutObject; returns its ETag and the headers PutObject answers of what it
    wrote (x-amz-version-id in a versioned bucket, R32's F7c; its encryption, R36 F10). Commits only once
    the whole body arrived and the file's size is within `length`."""
    fields = s3.headers
    metadata = object_metadata(fields, from_form=True)
    tagging = fields.get(TAGGING)
    tags = {} if tagging is None else parse_tagging(tagging.encode())
    given_md5 = fields.get("Content-MD5")
    content_md5 = None if given_md5 is None else decode_content_md5(given_md5)
    encryption = sse.requested(s3)
    try:
        out = await s3.gateway.client.create_key(
            s3.gateway.volume, s3.bucket, s3.key, size_hint=0, replication=storage_class(fields),
            datastream=True, metadata=metadata, tags=tags, acls=acls, sse_s3=encryption.sse_s3,
            customer_key=encryption.customer_key,
        )  # fmt: skip
    except OzoneClientError as e:
        raise conditional_error(e, s3) from None
    md5 = hashlib.md5(usedforsecurity=False)
    size = 0
    try:
        async with out:
            async for event in events:
                if isinstance(event, FileData):
                    size += len(event.data)
                    if size > length.high:
                        raise _too_large(size, length.high)
                    md5.update(event.data)
                    await out.write(event.data)
                elif isinstance(event, FileEnd) and size < length.low:
                    raise _too_small(size, length.low)
            if content_md5 is not None:
                check_content_md5(md5.digest(), content_md5)
            etag = sse.etag(md5.hexdigest(), encryption.customer_key)
            out.metadata[ETAG] = etag
    except OzoneClientError as e:
        raise conditional_error(e, s3, committing=True) from None
    assert out.key_info is not None
    return etag, version_headers(out.key_info) | sse.answer_headers(out.key_info.encryption)


def _basename(filename: str) -> str:
    """What `${filename}` stands for: the text after the file name's last / or \\ (Amazon keeps no path)."""
    return filename[max(filename.rfind("/"), filename.rfind("\\")) + 1 :]


def _too_large(size: int, high: int) -> S3Error:
    message = "Your proposed upload exceeds the maximum allowed size"
    return S3Error(S3ErrorCode.EntityTooLarge, message, ProposedSize=str(size), MaxSizeAllowed=str(high))


def _too_small(size: int, low: int) -> S3Error:
    message = "Your proposed upload is smaller than the minimum allowed size"
    return S3Error(S3ErrorCode.EntityTooSmall, message, ProposedSize=str(size), MinSizeAllowed=str(low))


def _answer(
    http: web.Request, fields: CIMultiDictProxy[str], bucket: str, key: str, etag: str,
    version: dict[str, str],
) -> web.Response:  # fmt: skip
    """success_action_redirect (a valid http(s) URL: 303 to it with bucket, key and ETag), else
    success_action_status: 200 or 204 empty, 201 with the PostResponse document; anything else 204."""
    quoted = f'"{etag}"'
    location = str(http.url.with_query(None)).rstrip("/") + "/" + quote(key, safe="/")
    headers = {"ETag": quoted, "Location": location, **version}
    redirect = fields.get(SUCCESS_REDIRECT)
    if redirect is not None and _is_url(redirect):
        separator = "&" if urlsplit(redirect).query else ("" if redirect.endswith("?") else "?")
        target = redirect + separator + urlencode({"bucket": bucket, "key": key, "etag": quoted})
        return web.Response(status=303, headers={**headers, "Location": target})
    status = fields.get(SUCCESS_STATUS, "204")
    if status == "201":
        body = xml.document(
            "PostResponse",
            xml.el("Location", location),
            xml.el("Bucket", bucket),
            xml.el("Key", key),
            xml.el("ETag", quoted),
        )
        return web.Response(status=201, body=body, headers=headers, content_type="application/xml")
    return web.Response(status=200 if status == "200" else 204, headers=headers)


def _is_url(value: str) -> bool:
    parts = urlsplit(value)
    return parts.scheme in ("http", "https") and bool(parts.netloc)
