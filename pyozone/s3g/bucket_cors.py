"""A bucket's CORS configuration: PutBucketCors, GetBucketCors and DeleteBucketCors, the OPTIONS preflight
and the CORS headers of every other answer (the rules themselves: hdds/s3_cors.py and cors.py).

OM keeps the configuration apart from the bucket's record (putBucketCors, getBucketCors, deleteBucketCors:
om/bucket_documents.py), checks every document before it keeps one, and lets only the bucket's owner (or an
administrator) read or change it; the gateway checks ownership too, for a cluster whose OM has no ACLs.
A preflight carries no credentials: the gateway reads the configuration as itself, through a short cache
(cors_cache.py).
"""

from __future__ import annotations

import logging

from aiohttp import web

from pyozone.client.errors import OzoneClientError
from pyozone.hdds.s3_cors import CORSError, parse
from pyozone.s3g import cors
from pyozone.s3g.buckets import on_bucket, require_owner, xml_response
from pyozone.s3g.cors_cache import NO_BUCKET, BucketCors
from pyozone.s3g.errors import S3Error, S3ErrorCode
from pyozone.s3g.headers import require_body_digest
from pyozone.s3g.om_errors import s3_error
from pyozone.s3g.request import Gateway, S3Request
from pyozone.s3g.routing import Target

log = logging.getLogger(__name__)


async def _change(s3: S3Request, body: bytes | None) -> None:
    """Has OM keep `body` as the bucket's configuration (None: delete it); this gateway forgets it."""
    client, volume = s3.gateway.client, s3.gateway.volume
    with s3.gateway.cors.forgetting(s3.bucket):
        if body is None:
            await on_bucket(s3, client.delete_bucket_cors(volume, s3.bucket))
        else:
            await on_bucket(s3, client.put_bucket_cors(volume, s3.bucket, body))


async def put_bucket_cors(s3: S3Request) -> web.Response:
    """Replaces the configuration; its body needs a Content-MD5 or a checksum, as Amazon requires. The
    document is checked here (S3's errors) and again by OM, which keeps it."""
    await require_owner(s3)
    require_body_digest(s3.headers)
    body = await s3.body.read_all()
    cors.parse(body)
    await _change(s3, body)
    return web.Response(status=200)


async def get_bucket_cors(s3: S3Request) -> web.Response:
    await require_owner(s3)
    text = await on_bucket(s3, s3.gateway.client.get_bucket_cors(s3.gateway.volume, s3.bucket))
    if text is None:
        raise S3Error(S3ErrorCode.NoSuchCORSConfiguration, BucketName=s3.bucket)
    return xml_response(text)


async def delete_bucket_cors(s3: S3Request) -> web.Response:
    """204 whether or not the bucket had a configuration, as Amazon answers."""
    await require_owner(s3)
    await _change(s3, None)
    return web.Response(status=204)


async def configuration(gateway: Gateway, bucket: str) -> BucketCors:
    """The bucket's configuration, or that it has none or that there is no such bucket, read as the
    gateway itself, at most once per cache period. One OM keeps and this gateway cannot read (a newer
    OM's, say) counts as none: CORS must not break the bucket's other requests."""
    return await gateway.cors.load(bucket, lambda: _read(gateway, bucket))


async def _read(gateway: Gateway, bucket: str) -> tuple[BucketCors, int]:
    try:
        text = await gateway.client.get_bucket_cors(gateway.volume, bucket)
    except OzoneClientError as e:
        if s3_error(e).code is S3ErrorCode.NoSuchBucket:
            return NO_BUCKET, 0
        raise
    if text is None:
        return BucketCors(None), 0
    try:  # no size limit: OM checked the body as sent; what it keeps may be longer (R29's N1)
        return BucketCors(parse(text, limit=None)), len(text)
    except CORSError as e:
        log.warning(
            "bucket %s: its CORS configuration is unreadable (%s); answering as if it had none", bucket, e
        )
        return BucketCors(None), len(text)


async def preflight(gateway: Gateway, http: web.Request, where: Target) -> web.Response:
    """OPTIONS: S3's answer to a browser's preflight (cors.preflight), never authenticated. A bucket that
    does not exist is 403 as well, once the Origin is known."""
    origin = cors.check_origin(http.headers)
    method = http.headers.get(cors.REQUEST_METHOD) or "OPTIONS"
    if where.bucket is None:
        raise cors.forbidden(cors.NO_BUCKET, method, cors.ResourceType.BUCKET)
    try:
        found = await configuration(gateway, where.bucket)
    except OzoneClientError as e:
        raise s3_error(e) from None
    if not found.bucket_exists:
        raise cors.forbidden(cors.NO_BUCKET, method, cors.ResourceType.BUCKET)
    return web.Response(
        status=200,
        headers=cors.preflight(found.config, origin, http.headers, on_object=where.key is not None),
    )


async def answer_headers(gateway: Gateway, http: web.Request, where: Target) -> dict[str, str]:
    """The CORS headers of the answer to a request that is not a preflight (cors.actual), errors included;
    none when the request has no Origin, or its bucket cannot be read: CORS never fails a request."""
    if cors.ORIGIN not in http.headers or where.bucket is None:
        return {}
    try:
        found = await configuration(gateway, where.bucket)
    except OzoneClientError:
        return {}
    return cors.actual(found.config, http.headers, http.method)
