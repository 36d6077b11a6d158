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

from pyozone.hdds.s3_lifecycle import MAX_CONFIGURATION_BYTES, LifecycleError, parse
from pyozone.s3g.buckets import on_bucket, require_owner, xml_response
from pyozone.s3g.errors import S3Error, S3ErrorCode
from pyozone.s3g.headers import require_body_digest
from pyozone.s3g.request import S3Request


async def put_bucket_lifecycle(s3: S3Request) -> web.Response:
    """Replaces the configuration; its body needs a Content-MD5 or a checksum, as Amazon requires. The
    document is checked here (S3's errors) and again by OM, which keeps it."""
    await require_owner(s3)
    require_body_digest(s3.headers)
    body = await s3.body.read_all(MAX_CONFIGURATION_BYTES)
    try:
        parse(body)
    except LifecycleError as e:
        raise S3Error(S3ErrorCode[e.code], e.message or None) from None
    await on_bucket(s3, s3.gateway.client.put_bucket_lifecycle(s3.gateway.volume, s3.bucket, body))
    return web.Response(status=200)


async def get_bucket_lifecycle(s3: S3Request) -> web.Response:
    """The configuration as OM keeps it; none is NoSuchLifecycleConfiguration (404)."""
    await require_owner(s3)
    text = await on_bucket(s3, s3.gateway.client.get_bucket_lifecycle(s3.gateway.volume, s3.bucket))
    if text is None:
        raise S3Error(S3ErrorCode.NoSuchLifecycleConfiguration, BucketName=s3.bucket)
    return xml_response(text)


async def delete_bucket_lifecycle(s3: S3Request) -> web.Response:
    """204 whether or not the bucket had a configuration, as Amazon answers."""
    await require_owner(s3)
    await on_bucket(s3, s3.gateway.client.delete_bucket_lifecycle(s3.gateway.volume, s3.bucket))
    return web.Response(status=204)
