"""S3 ACLs as pyozone has them: S3's default alone, the owner's FULL_CONTROL (`private`). OM's ACLs decide
access (docs/differences.md). A read shows the default; a write that asks for exactly it (the canned
`private`, or a policy whose only grant is the owner's FULL_CONTROL) is accepted and changes nothing; any
other grant is NotImplemented, never accepted and ignored. An object is shown as its bucket's owner's (S3's
"bucket owner enforced" ownership): OM does not record a key's owner."""

from __future__ import annotations

from aiohttp import web

from pyozone.client.errors import OzoneClientError
from pyozone.s3g import xml
from pyozone.s3g.buckets import owner, xml_response
from pyozone.s3g.errors import S3Error, S3ErrorCode
from pyozone.s3g.headers import CANNED_ACL, PRIVATE
from pyozone.s3g.om_errors import s3_error
from pyozone.s3g.request import S3Request

FULL_CONTROL = "FULL_CONTROL"


async def bucket_owner(s3: S3Request) -> str:
    """The bucket's owner in OM: the S3 user who created it."""
    try:
        bucket = await s3.gateway.client.bucket_info(s3.gateway.volume, s3.bucket)
    except OzoneClientError as e:
        raise s3_error(e, BucketName=s3.bucket) from None
    return bucket.owner


async def _object_owner(s3: S3Request) -> str:
    try:
        await s3.gateway.client.key_info(s3.gateway.volume, s3.bucket, s3.key)
    except OzoneClientError as e:
        raise s3_error(e, BucketName=s3.bucket, Key=s3.key) from None
    return await bucket_owner(s3)


def _policy(name: str) -> web.Response:
    grantee = xml.el("Grantee", None, xml.el("ID", name), xml.el("DisplayName", name))
    grantee.set("xmlns:xsi", "http://www.w3.org/2001/XMLSchema-instance")
    grantee.set("xsi:type", "CanonicalUser")
    grant = xml.el("Grant", None, grantee, xml.el("Permission", FULL_CONTROL))
    return xml_response(
        xml.document("AccessControlPolicy", owner(name), xml.group("AccessControlList", [grant]))
    )


async def _check_private(s3: S3Request, name: str) -> None:
    """The ACL a write asks for must be the owner's FULL_CONTROL alone (a canned ACL or a grant header
    other than `private` was refused with the request's headers)."""
    body = await s3.body.read_all()
    if not body.strip():
        if s3.headers.get(CANNED_ACL) != PRIVATE:
            raise S3Error(S3ErrorCode.MalformedXML, "The request names no ACL.")
        return
    policy = xml.parse(body, "AccessControlPolicy")
    if policy.findtext("Owner/ID") not in (None, name):
        raise S3Error(S3ErrorCode.NotImplemented, "Changing an owner through an ACL is not implemented.")
    grants = policy.findall("AccessControlList/Grant")
    for grant in grants:
        grantee = grant.find("Grantee")
        if (
            grantee is None
            or grantee.findtext("ID") != name
            or grantee.find("URI") is not None
            or grantee.find("EmailAddress") is not None
            or (grant.findtext("Permission") or "").strip() != FULL_CONTROL
        ):
            raise S3Error(
                S3ErrorCode.NotImplemented,
                "ACL grants other than the owner's FULL_CONTROL are not implemented.",
            )
    if not grants:
        raise S3Error(
            S3ErrorCode.NotImplemented, "An ACL without the owner's FULL_CONTROL is not implemented."
        )


async def get_bucket_acl(s3: S3Request) -> web.Response:
    return _policy(await bucket_owner(s3))


async def put_bucket_acl(s3: S3Request) -> web.Response:
    await _check_private(s3, await bucket_owner(s3))
    return web.Response(status=200)


async def get_object_acl(s3: S3Request) -> web.Response:
    return _policy(await _object_owner(s3))


async def put_object_acl(s3: S3Request) -> web.Response:
    await _check_private(s3, await _object_owner(s3))
    return web.Response(status=200)
