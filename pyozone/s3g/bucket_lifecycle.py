"""A bucket's lifecycle configuration: PutBucketLifecycleConfiguration, GetBucketLifecycleConfiguration and
DeleteBucketLifecycle (`?lifecycle`; the rules: hdds/s3_lifecycle.py). The legacy PutBucketLifecycle and
GetBucketLifecycle share the subresource and are answered alike.

OM keeps the configuration apart from the bucket's record (putBucketLifecycle, getBucketLifecycle,
deleteBucketLifecycle: om/bucket_documents.py), checks every document before it keeps one, and lets only
the bucket's owner (or an administrator) read or change it; the gateway checks ownership too, for a cluster
whose OM has no ACLs, as for CORS. OM's lifecycle service applies the rules (om/lifecycle.py).
"""

from __future__ import annotations

from aiohttp import web

from pyozone.client.errors import OzoneClientError
from pyozone.hdds.s3_lifecycle import MAX_CONFIGURATION_BYTES, LifecycleError, parse
from pyozone.s3g.buckets import bucket_owner, xml_response
from pyozone.s3g.errors import S3Error, S3ErrorCode
from pyozone.s3g.headers import require_body_digest
from pyozone.s3g.om_errors import s3_error
from pyozone.s3g.request import S3Request


async def _check_owner(s3: S3Request) -> None:
    """The requester must own the bucket; another user's is AccessDenied, as Amazon's default answers
    (s3:PutLifecycleConfiguration and s3:GetLifecycleConfiguration are the owner's)."""
    if await bucket_owner(s3) != s3.user:
        raise S3Error(S3ErrorCode.AccessDenied)


async def put_bucket_lifecycle(s3: S3Request) -> web.Response:
    """Replaces the configuration; its body needs a Content-MD5 or a checksum, as Amazon requires. The
    document is checked here (S3's errors) and again by OM, which keeps it."""
    await _check_owner(s3)
    require_body_digest(s3.headers)
    body = await s3.body.read_all(MAX_CONFIGURATION_BYTES)
    try:
        parse(body)
    except LifecycleError as e:
        raise S3Error(S3ErrorCode[e.code], e.message or None) from None
    try:
        await s3.gateway.client.put_bucket_lifecycle(s3.gateway.volume, s3.bucket, body)
    except OzoneClientError as e:
        raise s3_error(e, BucketName=s3.bucket) from None
    return web.Response(status=200)


async def get_bucket_lifecycle(s3: S3Request) -> web.Response:
    """The configuration as OM keeps it; none is NoSuchLifecycleConfiguration (404)."""
    await _check_owner(s3)
    try:
        text = await s3.gateway.client.get_bucket_lifecycle(s3.gateway.volume, s3.bucket)
    except OzoneClientError as e:
        raise s3_error(e, BucketName=s3.bucket) from None
    if text is None:
        raise S3Error(S3ErrorCode.NoSuchLifecycleConfiguration, BucketName=s3.bucket)
    return xml_response(text)


async def delete_bucket_lifecycle(s3: S3Request) -> web.Response:
    """204 whether or not the bucket had a configuration, as Amazon answers."""
    await _check_owner(s3)
    try:
        await s3.gateway.client.delete_bucket_lifecycle(s3.gateway.volume, s3.bucket)
    except OzoneClientError as e:
        raise s3_error(e, BucketName=s3.bucket) from None
    return web.Response(status=204)
