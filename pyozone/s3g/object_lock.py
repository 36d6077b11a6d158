"""S3 Object Lock at the gateway: Put/GetObjectLockConfiguration (`?object-lock`), Put/GetObjectRetention
(`?retention`) and Put/GetObjectLegalHold (`?legal-hold`; the write and answer headers: lock_headers.py).
OM keeps and enforces everything (om/object_lock.py); the gateway reads the documents with the same kernel
model (hdds/s3_object_lock.py) to answer S3's errors before asking OM, and names the bucket's state
errors Amazon's way from the bucket's record."""

from __future__ import annotations

from collections.abc import Awaitable

from aiohttp import web

from pyozone.client.errors import OzoneClientError
from pyozone.hdds.s3_object_lock import (
    MISSING_CONFIGURATION_ON_OBJECT,
    VERSIONING_REQUIRED,
    ObjectLockError,
    configuration_document,
    legal_hold_document,
    parse_configuration,
    parse_legal_hold,
    parse_retention,
    retention_document,
)
from pyozone.s3g.buckets import on_bucket, owned_bucket, xml_response
from pyozone.s3g.errors import S3Error, S3ErrorCode
from pyozone.s3g.headers import require_body_digest
from pyozone.s3g.lock_headers import bypass_governance, s3_lock_error
from pyozone.s3g.objects import version_info
from pyozone.s3g.om_errors import s3_error
from pyozone.s3g.request import S3Request


async def on_key(s3: S3Request, call: Awaitable[None]) -> None:
    """An OM call about the request's key, a refusal in S3's words."""
    try:
        await call
    except OzoneClientError as e:
        raise s3_error(e, BucketName=s3.bucket, Key=s3.key) from None


async def put_object_lock_configuration(s3: S3Request) -> web.Response:
    """The bucket's owner's (an administrator's, or a policy grantee's: buckets.require_owner); the body
    needs a Content-MD5 or a checksum. A bucket without Object Lock gets it if its versioning is Enabled
    (Amazon's now), else InvalidBucketState."""
    bucket = await owned_bucket(s3)
    require_body_digest(s3.headers)
    body = await s3.body.read_all()
    try:
        parse_configuration(body)
    except ObjectLockError as e:
        raise s3_lock_error(e) from None
    if bucket.object_lock is None and bucket.versioning != "Enabled":
        raise S3Error(S3ErrorCode.InvalidBucketState, VERSIONING_REQUIRED, BucketName=s3.bucket)
    await on_bucket(
        s3, s3.gateway.client.om.put_object_lock_configuration(s3.gateway.volume, s3.bucket, body)
    )
    return web.Response(status=200)


async def get_object_lock_configuration(s3: S3Request) -> web.Response:
    bucket = await owned_bucket(s3)
    if bucket.object_lock is None:
        raise S3Error(S3ErrorCode.ObjectLockConfigurationNotFoundError, BucketName=s3.bucket)
    return xml_response(configuration_document(bucket.object_lock))


async def _require_lock(s3: S3Request) -> None:
    bucket = await on_bucket(s3, s3.gateway.client.bucket_info(s3.gateway.volume, s3.bucket))
    if bucket.object_lock is None:
        raise S3Error(S3ErrorCode.InvalidRequest, MISSING_CONFIGURATION_ON_OBJECT)


async def put_object_retention(s3: S3Request) -> web.Response:
    require_body_digest(s3.headers)
    body = await s3.body.read_all()
    try:
        parse_retention(body)
    except ObjectLockError as e:
        raise s3_lock_error(e) from None
    await _require_lock(s3)
    bypass = await bypass_governance(s3, s3.key)
    version = s3.query.get("versionId", "")
    call = s3.gateway.client.om.put_object_retention(
        s3.gateway.volume, s3.bucket, s3.key, version, body, bypass
    )
    await on_key(s3, call)
    return web.Response(status=200)


async def get_object_retention(s3: S3Request) -> web.Response:
    await _require_lock(s3)
    info = await version_info(s3)
    if info.retention is None:
        raise S3Error(S3ErrorCode.NoSuchObjectLockConfiguration)
    return xml_response(retention_document(info.retention))


async def put_object_legal_hold(s3: S3Request) -> web.Response:
    require_body_digest(s3.headers)
    body = await s3.body.read_all()
    try:
        parse_legal_hold(body)
    except ObjectLockError as e:
        raise s3_lock_error(e) from None
    await _require_lock(s3)
    version = s3.query.get("versionId", "")
    await on_key(
        s3, s3.gateway.client.om.put_object_legal_hold(s3.gateway.volume, s3.bucket, s3.key, version, body)
    )
    return web.Response(status=200)


async def get_object_legal_hold(s3: S3Request) -> web.Response:
    await _require_lock(s3)
    info = await version_info(s3)
    if info.legal_hold is None:
        raise S3Error(S3ErrorCode.NoSuchObjectLockConfiguration)
    return xml_response(legal_hold_document(info.legal_hold))
