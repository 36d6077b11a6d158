"""S3 ACLs as pyozone has them: S3's default alone, the owner's FULL_CONTROL (`private`). OM's ACLs decide
access (docs/differences.md). A read shows the default; a write that asks for exactly it (the canned
`private`, or a policy whose only grant is the owner's FULL_CONTROL) is accepted and changes nothing; any
other grant is NotImplemented, never accepted and ignored. An object is shown as its bucket's owner's (S3's
"bucket owner enforced" ownership): OM does not record a key's owner."""

from __future__ import annotations

from aiohttp import web

from pyozone.client.errors import OzoneClientError
from pyozone.s3g import xml
from pyozone.s3g.buckets import bucket_owner, owner, xml_response
from pyozone.s3g.errors import S3Error, S3ErrorCode
from pyozone.s3g.headers import CANNED_ACL, OWNER_CANNED_ACLS
from pyozone.s3g.objects import COPY_SOURCE, copy_source
from pyozone.s3g.om_errors import s3_error
from pyozone.s3g.policy import COPIES, acls_enabled, bucket_access
from pyozone.s3g.request import S3Request
from pyozone.s3g.routing import Operation

FULL_CONTROL = "FULL_CONTROL"


EXPECTED_OWNER = "x-amz-expected-bucket-owner"
SOURCE_EXPECTED_OWNER = "x-amz-source-expected-bucket-owner"


async def expected_owners(s3: S3Request) -> None:
    """x-amz-expected-bucket-owner, and a copy's x-amz-source-expected-bucket-owner: a bucket another user
    owns is 403 AccessDenied, as Amazon answers, before the operation runs. The owner is the ID the
    gateway shows (GetBucketAcl's Owner/ID: the user name)."""
    expected = s3.headers.get(EXPECTED_OWNER)
    if expected is not None and s3.target.bucket is not None and s3.operation is not Operation.CREATE_BUCKET:
        await _expect_owner(s3, s3.bucket, expected)
    expected = s3.headers.get(SOURCE_EXPECTED_OWNER)
    if expected is not None and COPY_SOURCE in s3.headers and s3.operation in COPIES:  # R34's F7: a GET
        await _expect_owner(s3, copy_source(s3)[0], expected)


async def _expect_owner(s3: S3Request, bucket: str, expected: str) -> None:
    if await bucket_owner(s3, bucket) != expected:
        raise S3Error(S3ErrorCode.AccessDenied, f"The bucket {bucket} is not owned by {expected}.")


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


def _check_private(s3: S3Request, name: str, body: bytes) -> None:
    """The ACL a write asks for must be the owner's FULL_CONTROL alone (a canned ACL or a grant header
    other than `private` or `bucket-owner-full-control` was refused with the request's headers)."""
    if not body.strip():
        if s3.headers.get(CANNED_ACL) not in OWNER_CANNED_ACLS:
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


def _check_write_acp(s3: S3Request, name: str) -> None:
    """WRITE_ACP: an ACL is written by its owner alone, as Amazon's default grants it (no other grant can
    be made here: everything is `private`)."""
    if s3.user != name:
        raise S3Error(S3ErrorCode.AccessDenied)


async def _check_acl(s3: S3Request, name: str) -> None:
    """Where the bucket's ownership controls disable ACLs (BucketOwnerEnforced), an ACL other than the
    owner-only one is AccessControlListNotSupported, as Amazon answers; elsewhere NotImplemented."""
    body = await s3.body.read_all()
    try:
        _check_private(s3, name, body)
    except S3Error as e:
        if e.code is S3ErrorCode.NotImplemented and not acls_enabled(
            await bucket_access(s3.gateway, s3.bucket)
        ):
            raise S3Error(S3ErrorCode.AccessControlListNotSupported) from None
        raise


async def put_bucket_acl(s3: S3Request) -> web.Response:
    name = await bucket_owner(s3)
    _check_write_acp(s3, name)
    await _check_acl(s3, name)
    return web.Response(status=200)


async def get_object_acl(s3: S3Request) -> web.Response:
    return _policy(await _object_owner(s3))


async def put_object_acl(s3: S3Request) -> web.Response:
    name = await _object_owner(s3)
    _check_write_acp(s3, name)
    await _check_acl(s3, name)
    return web.Response(status=200)
