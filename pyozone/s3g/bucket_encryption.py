"""A bucket's default encryption: PutBucketEncryption, GetBucketEncryption and DeleteBucketEncryption.

OM keeps the configuration apart from the bucket's record (om/bucket_documents.py), checks it before it
keeps it, lets only the bucket's owner read or change it, and encrypts with SSE-S3 every key written into
the bucket without an encryption of its own (S3's writes and native ones alike). A bucket without one is
not encrypted: GetBucketEncryption answers ServerSideEncryptionConfigurationNotFoundError, as Amazon did
before it encrypted every bucket by default (docs/differences.md).
"""

from __future__ import annotations

from aiohttp import web

from pyozone.hdds import s3_encryption
from pyozone.s3g.buckets import on_bucket, require_owner, xml_response
from pyozone.s3g.errors import S3Error, S3ErrorCode
from pyozone.s3g.headers import require_body_digest
from pyozone.s3g.request import S3Request


async def put_bucket_encryption(s3: S3Request) -> web.Response:
    """Content-MD5 or a checksum is required, as Amazon requires it; the document is checked here (S3's
    errors) and again by OM, which keeps it."""
    await require_owner(s3)
    require_body_digest(s3.headers)
    body = await s3.body.read_all()
    try:
        s3_encryption.parse(body)
    except s3_encryption.EncryptionConfigError as e:
        raise S3Error(S3ErrorCode[e.code], e.message) from None
    await on_bucket(s3, s3.gateway.client.put_bucket_encryption(s3.gateway.volume, s3.bucket, body))
    return web.Response(status=200)


async def get_bucket_encryption(s3: S3Request) -> web.Response:
    await require_owner(s3)
    text = await on_bucket(s3, s3.gateway.client.get_bucket_encryption(s3.gateway.volume, s3.bucket))
    if text is None:
        raise S3Error(S3ErrorCode.ServerSideEncryptionConfigurationNotFoundError, BucketName=s3.bucket)
    return xml_response(text)


async def delete_bucket_encryption(s3: S3Request) -> web.Response:
    """204 whether or not the bucket had one; keys written already stay as they were written."""
    await require_owner(s3)
    await on_bucket(s3, s3.gateway.client.delete_bucket_encryption(s3.gateway.volume, s3.bucket))
    return web.Response(status=204)
