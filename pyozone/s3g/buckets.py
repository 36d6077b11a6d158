"""Bucket operations: S3 buckets are the buckets of the gateway's volume (ozone.s3g.volume.name)."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TypeVar

from aiohttp import web

from pyozone.client.errors import OzoneClientError
from pyozone.hdds import s3_ownership
from pyozone.hdds.om_views import BucketInfo
from pyozone.hdds.s3_object_lock import LOCK_NOT_RECREATED, VERSIONING_LOCKED
from pyozone.hdds.s3_ownership import ObjectOwnership, OwnershipControlsError
from pyozone.hdds.security.acl import Acls
from pyozone.s3g import xml
from pyozone.s3g.errors import S3Error, S3ErrorCode
from pyozone.s3g.headers import OBJECT_OWNERSHIP, sets_acl
from pyozone.s3g.lock_headers import bucket_lock_requested
from pyozone.s3g.om_errors import s3_error
from pyozone.s3g.request import MAX_LIST_ENTRIES, S3Request

T = TypeVar("T")

XML = "application/xml"
REGION = "us-east-1"
"""The gateway's one region."""


def xml_response(body: bytes, status: int = 200, **headers: str) -> web.Response:
    return web.Response(body=body, status=status, content_type=XML, headers=headers)


def owner(name: str) -> xml.ET.Element:
    return xml.el("Owner", None, xml.el("ID", name), xml.el("DisplayName", name))


async def list_buckets(s3: S3Request) -> web.Response:
    """The requester's buckets, as Amazon lists them (a bucket is its creator's: create_bucket), by name: at
    most max-buckets (1000), after continuation-token (the last name of the page before), starting with
    prefix; bucket-region other than us-east-1, the gateway's one region, lists none."""
    client = s3.gateway.client
    prefix, token = s3.query.get("prefix", ""), s3.query.get("continuation-token", "")
    limit = min(s3.int_query("max-buckets", MAX_LIST_ENTRIES, 1, 10_000), MAX_LIST_ENTRIES)
    buckets: list[BucketInfo] = []
    if s3.query.get("bucket-region", REGION) == REGION:
        try:
            buckets = await client.list_buckets(s3.gateway.volume, prefix, token, limit + 1, owner=s3.user)
        except OzoneClientError as e:
            raise s3_error(e) from None
    page = buckets[:limit]
    entries = (
        xml.el("Bucket", None, xml.el("Name", b.name), xml.el("CreationDate", xml.iso_time(b.creation_time)))
        for b in page
    )
    return xml_response(
        xml.document(
            "ListAllMyBucketsResult",
            owner(s3.user),
            xml.group("Buckets", entries),
            xml.el("ContinuationToken", page[-1].name) if len(buckets) > limit else None,
            xml.el("Prefix", prefix) if prefix else None,
        )
    )


async def create_bucket(s3: S3Request, acls: Acls = ()) -> web.Response:
    """The bucket is owned by the S3 user who creates it, as Ozone's gateway creates it as that user. S3's
    names are global: another user's bucket is BucketAlreadyExists. Its ownership controls (x-amz-object-
    ownership, BucketOwnerEnforced by default) are kept by the same OM step, so a bucket made here always
    has some, even when a retry finds it made.
    `acls`: its whole ACL, recorded by the create (acls.py; none: its creator's defaults)."""
    lock = bucket_lock_requested(s3.headers)  # created versioned with S3 Object Lock (om/object_lock.py)
    ownership = requested_ownership(s3.headers.get(OBJECT_OWNERSHIP))
    if not ownership.acls_enabled and sets_acl(s3.headers):
        raise S3Error(S3ErrorCode.InvalidBucketAclWithObjectOwnership)
    body = await s3.body.read_all()
    if body.strip():
        config = xml.parse(body, "CreateBucketConfiguration")
        region = config.findtext("LocationConstraint")
        if region not in (None, "", "us-east-1"):
            raise S3Error(S3ErrorCode.InvalidArgument, f"Unsupported location constraint {region!r}")
    # a new bucket of an old name: not the old one's CORS rules (R29's N2), policy or owner
    with s3.gateway.cors.forgetting(s3.bucket), s3.gateway.policies.forgetting(s3.bucket):
        try:  # made with its owner in one call: never a bucket without its owner, nor a race to own it
            await s3.gateway.client.create_bucket(
                s3.gateway.volume,
                s3.bucket,
                owner=s3.user,
                object_lock=lock,
                acls=acls,
                ownership_controls=s3_ownership.document(ownership),
            )
        except OzoneClientError as e:
            error = s3_error(e, BucketName=s3.bucket)
            if error.code is not S3ErrorCode.BucketAlreadyExists:
                raise error from None
            existing = await _own_bucket(s3)
            if existing is None:
                raise error from None
            # yours already: us-east-1 answers 200 (BucketAlreadyOwnedByYou in every other region), unless
            # it asks for the Object Lock the bucket lacks: 200 would promise a WORM bucket (R35's F5)
            if lock and existing.object_lock is None:
                raise S3Error(
                    S3ErrorCode.InvalidBucketState, LOCK_NOT_RECREATED, BucketName=s3.bucket
                ) from None
            return web.Response(status=200, headers={"Location": f"/{s3.bucket}"})
    return web.Response(status=200, headers={"Location": f"/{s3.bucket}"})


def requested_ownership(value: str | None) -> ObjectOwnership:
    """CreateBucket's x-amz-object-ownership (absent: Amazon's default, BucketOwnerEnforced); another value
    is InvalidArgument."""
    if value is None:
        return s3_ownership.DEFAULT
    try:
        return s3_ownership.ownership(value)
    except OwnershipControlsError as e:
        raise S3Error(S3ErrorCode.InvalidArgument, str(e), ArgumentName=OBJECT_OWNERSHIP) from None


async def bucket_owner(s3: S3Request, name: str | None = None) -> str:
    """The owner in OM of the request's bucket (or of bucket `name`): the S3 user who created it."""
    name = name or s3.bucket
    try:
        bucket = await s3.gateway.client.bucket_info(s3.gateway.volume, name)
    except OzoneClientError as e:
        raise s3_error(e, BucketName=name) from None
    return bucket.owner


async def require_owner(s3: S3Request, by_policy: bool = True) -> None:
    """The bucket's configuration (CORS, lifecycle, versioning, ownership controls, policy,
    PublicAccessBlock) is its owner's; another user's is AccessDenied, as Amazon's default answers, but for
    an administrator (ozone.administrators, as OM lets them: R34's F8) and, `by_policy`, a user the
    bucket's policy allows the action (the request then acts as the owner: R34's F10; never for the policy
    and PublicAccessBlock themselves, which Amazon keeps to the owner's account). OM checks it too where
    ACLs are on; this holds on a cluster without them."""
    owner = await bucket_owner(s3)
    if owner not in (s3.user, s3.acting_user if by_policy else s3.user) and not (
        s3.gateway.settings.administrator(s3.user)
    ):
        raise S3Error(S3ErrorCode.AccessDenied)


async def on_bucket(s3: S3Request, call: Awaitable[T]) -> T:
    """An OM call about the request's bucket, a refusal in S3's words."""
    try:
        return await call
    except OzoneClientError as e:
        raise s3_error(e, BucketName=s3.bucket) from None


async def _own_bucket(s3: S3Request) -> BucketInfo | None:
    """The request's bucket if the caller owns it (None: another's, gone again, or not readable)."""
    try:
        bucket = await s3.gateway.client.bucket_info(s3.gateway.volume, s3.bucket)
    except OzoneClientError:
        return None
    return bucket if bucket.owner == s3.user else None


async def head_bucket(s3: S3Request) -> web.Response:
    try:
        await s3.gateway.client.bucket_info(s3.gateway.volume, s3.bucket)
    except OzoneClientError as e:
        raise s3_error(e, BucketName=s3.bucket) from None
    return web.Response(status=200, headers={"x-amz-bucket-region": "us-east-1"})


async def delete_bucket(s3: S3Request) -> web.Response:
    """OM deletes the bucket's CORS configuration and policy with it; this gateway forgets them at once, so
    a bucket of the same name created after does not answer with the old owner's rules (R29's N2)."""
    with s3.gateway.cors.forgetting(s3.bucket), s3.gateway.policies.forgetting(s3.bucket):
        try:
            await s3.gateway.client.delete_bucket(s3.gateway.volume, s3.bucket)
        except OzoneClientError as e:
            raise s3_error(e, BucketName=s3.bucket) from None
    return web.Response(status=204)


async def get_bucket_location(s3: S3Request) -> web.Response:
    await head_bucket(s3)
    return xml_response(xml.document("LocationConstraint"))  # empty: us-east-1, as S3 writes it


async def owned_bucket(s3: S3Request) -> BucketInfo:
    """The bucket, if the requester owns it, acts as its owner by the bucket's policy or is an
    administrator (require_owner); another user's is AccessDenied."""
    try:
        bucket = await s3.gateway.client.bucket_info(s3.gateway.volume, s3.bucket)
    except OzoneClientError as e:
        raise s3_error(e, BucketName=s3.bucket) from None
    if bucket.owner not in (s3.user, s3.acting_user) and not s3.gateway.settings.administrator(s3.user):
        raise S3Error(S3ErrorCode.AccessDenied)
    return bucket


async def get_bucket_versioning(s3: S3Request) -> web.Response:
    """The bucket's state; a bucket never versioned answers an empty configuration, as Amazon's."""
    state = (await owned_bucket(s3)).versioning
    return xml_response(xml.document("VersioningConfiguration", xml.el("Status", state) if state else None))


VERSIONING_STATES = ("Enabled", "Suspended")


async def put_bucket_versioning(s3: S3Request) -> web.Response:
    """Status Enabled or Suspended (a bucket once versioned never goes back to unversioned: no Status says
    so); MfaDelete Enabled is NotImplemented (no MFA devices), Disabled what every bucket is. OM keeps the
    state with the bucket and checks ownership again (om/versions.py)."""
    bucket = await owned_bucket(s3)
    config = xml.parse(await s3.body.read_all(), "VersioningConfiguration")
    status = config.findtext("Status")
    mfa = config.findtext("MfaDelete")
    if (status is not None and status not in VERSIONING_STATES) or mfa not in (None, "Enabled", "Disabled"):
        raise S3Error(S3ErrorCode.MalformedXML)
    if mfa == "Enabled":
        raise S3Error(S3ErrorCode.NotImplemented, "MFA delete is not implemented.")
    if bucket.object_lock is not None and status == "Suspended":  # OM refuses it too
        raise S3Error(S3ErrorCode.InvalidBucketState, VERSIONING_LOCKED, BucketName=s3.bucket)
    if status is not None:
        try:
            await s3.gateway.client.om.set_bucket_versioning(s3.gateway.volume, s3.bucket, status)
        except OzoneClientError as e:
            raise s3_error(e, BucketName=s3.bucket) from None
    return web.Response(status=200)
