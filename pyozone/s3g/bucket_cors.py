"""A bucket's CORS configuration: PutBucketCors, GetBucketCors and DeleteBucketCors, the OPTIONS preflight
and the CORS headers of every other answer (the rules themselves: cors.py).

OM keeps the configuration in the bucket's metadata (CORS_METADATA, through setBucketProperty), so it is
replicated through OM's Raft and survives restarts as every bucket change does. Only the bucket's owner
reads or changes it (Amazon's default grant of s3:GetBucketCORS and s3:PutBucketCORS), and OM checks the
user's READ or WRITE on the bucket as for its other properties. A preflight carries no credentials: the
gateway reads the configuration as itself.
"""

from __future__ import annotations

from aiohttp import web

from pyozone.client.errors import OzoneClientError
from pyozone.hdds.om_views import BucketInfo
from pyozone.s3g import cors
from pyozone.s3g.buckets import xml_response
from pyozone.s3g.errors import S3Error, S3ErrorCode
from pyozone.s3g.headers import require_body_digest
from pyozone.s3g.om_errors import s3_error
from pyozone.s3g.request import Gateway, S3Request
from pyozone.s3g.routing import Target

CORS_METADATA = "s3.cors"
"""The bucket metadata entry holding the configuration, as GetBucketCors answers it (cors.document)."""


async def _owned_bucket(s3: S3Request) -> BucketInfo:
    """The bucket, if the requester owns it; another user's is AccessDenied, as Amazon's default answers."""
    try:
        bucket = await s3.gateway.client.bucket_info(s3.gateway.volume, s3.bucket)
    except OzoneClientError as e:
        raise s3_error(e, BucketName=s3.bucket) from None
    if bucket.owner != s3.user:
        raise S3Error(S3ErrorCode.AccessDenied)
    return bucket


async def _set(s3: S3Request, text: str) -> None:
    try:
        await s3.gateway.client.set_bucket_metadata(s3.gateway.volume, s3.bucket, {CORS_METADATA: text})
    except OzoneClientError as e:
        raise s3_error(e, BucketName=s3.bucket) from None


async def put_bucket_cors(s3: S3Request) -> web.Response:
    """Replaces the configuration; its body needs a Content-MD5 or a checksum, as Amazon requires."""
    await _owned_bucket(s3)
    require_body_digest(s3.headers)
    document = cors.document(cors.parse(await s3.body.read_all()))
    if len(document) > cors.MAX_CONFIGURATION_BYTES:  # what the document says, written out
        raise S3Error(S3ErrorCode.MaxMessageLengthExceeded, "The CORS configuration is above 64 KB.")
    await _set(s3, document.decode())
    return web.Response(status=200)


async def get_bucket_cors(s3: S3Request) -> web.Response:
    text = (await _owned_bucket(s3)).metadata.get(CORS_METADATA)
    if text is None:
        raise S3Error(S3ErrorCode.NoSuchCORSConfiguration, BucketName=s3.bucket)
    return xml_response(text.encode())


async def delete_bucket_cors(s3: S3Request) -> web.Response:
    """204 whether or not the bucket had a configuration, as Amazon answers."""
    await _owned_bucket(s3)
    await _set(s3, "")
    return web.Response(status=204)


async def configuration(gateway: Gateway, bucket: str) -> cors.CORSConfiguration | None:
    """The bucket's configuration (None: it has none), read as the gateway itself."""
    info = await gateway.client.bucket_info(gateway.volume, bucket)
    text = info.metadata.get(CORS_METADATA)
    return cors.stored(text) if text is not None else None


async def preflight(gateway: Gateway, http: web.Request, where: Target) -> web.Response:
    """OPTIONS: S3's answer to a browser's preflight (cors.preflight), never authenticated. A bucket that
    does not exist is 403 as well, once the Origin is known."""
    origin = cors.check_origin(http.headers)
    method = http.headers.get(cors.REQUEST_METHOD) or "OPTIONS"
    if where.bucket is None:
        raise cors.forbidden(cors.NO_BUCKET, method, cors.ResourceType.BUCKET)
    try:
        config = await configuration(gateway, where.bucket)
    except OzoneClientError as e:
        error = s3_error(e)
        if error.code is S3ErrorCode.NoSuchBucket:
            raise cors.forbidden(cors.NO_BUCKET, method, cors.ResourceType.BUCKET) from None
        raise error from None
    return web.Response(
        status=200, headers=cors.preflight(config, origin, http.headers, on_object=where.key is not None)
    )


async def answer_headers(gateway: Gateway, http: web.Request, where: Target) -> dict[str, str]:
    """The CORS headers of the answer to a request that is not a preflight (cors.actual), errors included;
    none when the request has no Origin, or its bucket cannot be read: CORS never fails a request."""
    if cors.ORIGIN not in http.headers or where.bucket is None:
        return {}
    try:
        config = await configuration(gateway, where.bucket)
    except OzoneClientError:
        return {}
    return cors.actual(config, http.headers, http.method)
