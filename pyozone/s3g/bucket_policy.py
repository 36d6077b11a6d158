"""A bucket's policy: PutBucketPolicy, GetBucketPolicy, DeleteBucketPolicy and GetBucketPolicyStatus (the
document's rules: hdds/s3_policy.py; how it decides requests: policy.py), and its PublicAccessBlock:
Put/Get/DeletePublicAccessBlock (hdds/s3_public_access.py; OM refuses a public policy under
BlockPublicPolicy).

OM keeps the policy as sent, apart from the bucket's record (putBucketPolicy, getBucketPolicy,
deleteBucketPolicy: om/bucket_documents.py), checks every document before it keeps one and lets only the
bucket's owner (or an administrator) read or change it; the gateway checks ownership too, for a cluster
whose OM has no ACLs. A policy never locks its owner out of these four: the owner may always read, change
or delete it (as Amazon's root user may).
"""

from __future__ import annotations

from aiohttp import web

from pyozone.hdds import s3_public_access
from pyozone.hdds.s3_policy import PolicyError, is_public, parse
from pyozone.hdds.s3_public_access import PublicAccessBlockError
from pyozone.s3g import xml
from pyozone.s3g.buckets import on_bucket, require_owner, xml_response
from pyozone.s3g.errors import S3Error, S3ErrorCode
from pyozone.s3g.request import S3Request


def policy_error(e: PolicyError) -> S3Error:
    return S3Error(S3ErrorCode[e.code], e.message)


async def _read(s3: S3Request) -> bytes:
    text = await on_bucket(s3, s3.gateway.client.get_bucket_policy(s3.gateway.volume, s3.bucket))
    if text is None:
        raise S3Error(S3ErrorCode.NoSuchBucketPolicy, BucketName=s3.bucket)
    return text


async def put_bucket_policy(s3: S3Request) -> web.Response:
    """Replaces the policy: checked here (S3's errors) and again by OM, which keeps it as sent. 204, as
    Amazon answers."""
    await require_owner(s3, by_policy=False)
    body = await s3.body.read_all()
    try:
        parse(body, s3.bucket)
    except PolicyError as e:
        raise policy_error(e) from None
    with s3.gateway.policies.forgetting(s3.bucket):
        await on_bucket(s3, s3.gateway.client.put_bucket_policy(s3.gateway.volume, s3.bucket, body))
    return web.Response(status=204)


async def get_bucket_policy(s3: S3Request) -> web.Response:
    await require_owner(s3, by_policy=False)
    return web.Response(body=await _read(s3), content_type="application/json")


async def delete_bucket_policy(s3: S3Request) -> web.Response:
    """204 whether or not the bucket had a policy, as Amazon answers."""
    await require_owner(s3, by_policy=False)
    with s3.gateway.policies.forgetting(s3.bucket):
        await on_bucket(s3, s3.gateway.client.delete_bucket_policy(s3.gateway.volume, s3.bucket))
    return web.Response(status=204)


async def get_bucket_policy_status(s3: S3Request) -> web.Response:
    """Whether the policy makes the bucket public (hdds/s3_policy.is_public); no policy is
    NoSuchBucketPolicy, as Amazon answers."""
    await require_owner(s3, by_policy=False)
    public = is_public(parse(await _read(s3), s3.bucket, limit=None))
    return xml_response(xml.document("PolicyStatus", xml.el("IsPublic", "true" if public else "false")))


async def put_public_access_block(s3: S3Request) -> web.Response:
    """Replaces the bucket's PublicAccessBlock (a setting left out is false); a body that is not a
    PublicAccessBlockConfiguration of true/false settings is MalformedXML. 200, as Amazon answers."""
    await require_owner(s3, by_policy=False)
    body = await s3.body.read_all()
    try:
        s3_public_access.parse(body)
    except PublicAccessBlockError as e:
        raise S3Error(S3ErrorCode.MalformedXML, str(e)) from None
    with s3.gateway.policies.forgetting(s3.bucket):
        await on_bucket(
            s3, s3.gateway.client.put_bucket_public_access_block(s3.gateway.volume, s3.bucket, body)
        )
    return web.Response(status=200)


async def get_public_access_block(s3: S3Request) -> web.Response:
    """Every setting; none: NoSuchPublicAccessBlockConfiguration, as Amazon answers."""
    await require_owner(s3, by_policy=False)
    text = await on_bucket(s3, s3.gateway.client.get_bucket_public_access_block(s3.gateway.volume, s3.bucket))
    if text is None:
        raise S3Error(S3ErrorCode.NoSuchPublicAccessBlockConfiguration, BucketName=s3.bucket)
    return xml_response(text)


async def delete_public_access_block(s3: S3Request) -> web.Response:
    """204 whether or not the bucket had one."""
    await require_owner(s3, by_policy=False)
    with s3.gateway.policies.forgetting(s3.bucket):
        await on_bucket(s3, s3.gateway.client.delete_bucket_public_access_block(s3.gateway.volume, s3.bucket))
    return web.Response(status=204)
