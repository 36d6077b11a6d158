"""S3 ACLs as Ozone's native ACLs (the mapping: hdds/s3_acl.py): Get/PutBucketAcl and Get/PutObjectAcl read
and write OM's ACL of the bucket or key (getAcl, setAcl, as the request's user: OM checks READ_ACL and
WRITE_ACL where ACLs are on), and x-amz-acl / x-amz-grant-* on PutObject, CopyObject and CreateBucket (and
POST Object's `acl` field) are read before anything is written and sent with the write (openKey's and
createBucket's acls), so OM records the ACL in the step that commits the object or bucket, never in a second
call after it (R37's F1, F10). Its writer owns the new object (with ACLs off in OM: the entries it names) and
so may name its ACL, as Amazon's object writer; replacing an object that has no owner record (ACLs off in
OM) with an ACL needs what PutObjectAcl needs on it (R37's F7).

The gateway checks S3's default grants too, for a cluster whose OM has no ACLs: the owner (and, for an
object, the bucket's owner) may read and write an ACL; anyone else needs READ_ACP / WRITE_ACP in it (its
own user entry or WORLD). Where the bucket's ownership controls disable ACLs (BucketOwnerEnforced), an ACL
write other than the owner's FULL_CONTROL alone is AccessControlListNotSupported and one that is resets
the ACL to the owner's alone; an object's owner is then shown as the bucket's. A public grant under
BlockPublicAcls is AccessDenied."""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Awaitable

from aiohttp import web

from pyozone.client.errors import OzoneClientError
from pyozone.hdds import s3_acl
from pyozone.hdds.om_views import KeyInfo
from pyozone.hdds.s3_acl import AclError, Grant, Grantee, Permission
from pyozone.hdds.s3_public_access import PUBLIC_CANNED_ACLS
from pyozone.hdds.security.acl import Acls, ACLType, Caller, ResourceType, granted
from pyozone.protocol.acl import ObjectPath
from pyozone.s3g import buckets, objects
from pyozone.s3g.buckets import bucket_owner, xml_response
from pyozone.s3g.errors import S3Error, S3ErrorCode
from pyozone.s3g.headers import CANNED_ACL, GRANT_HEADERS, OBJECT_OWNERSHIP, OWNER_CANNED_ACLS, sets_acl
from pyozone.s3g.objects import COPY_SOURCE, copy_source
from pyozone.s3g.om_errors import s3_error
from pyozone.s3g.policy import COPIES, BucketAccess, acls_enabled, bucket_access
from pyozone.s3g.request import S3Request
from pyozone.s3g.routing import Operation

KEY_NOT_FOUND = "KEY_NOT_FOUND"
PERMISSION_DENIED = "PERMISSION_DENIED"

APPLIED = frozenset(
    {Operation.PUT_OBJECT, Operation.COPY_OBJECT, Operation.CREATE_BUCKET, Operation.PUT_BUCKET_ACL,
     Operation.PUT_OBJECT_ACL}
)  # fmt: skip
"""The operations that set the ACL x-amz-acl / x-amz-grant-* ask for; anywhere else an ACL beyond the
owner's FULL_CONTROL is NotImplemented (CreateMultipartUpload: the upload does not keep it)."""


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
    """The owner as the gateway reads it for the bucket's policy, so a requester OM would not let read the
    bucket (an anonymous reader of a public-read object) is not refused the right owner (R37's F18)."""
    access = await bucket_access(s3.gateway, bucket)
    owner = access.owner if access.bucket_exists else await bucket_owner(s3, bucket)
    if owner != expected:
        raise S3Error(S3ErrorCode.AccessDenied, f"The bucket {bucket} is not owned by {expected}.")


def acl_error(e: AclError) -> S3Error:
    return S3Error(S3ErrorCode[e.code], e.message)


def check_requested(s3: S3Request) -> None:
    """Before anything is written: the ACL headers read (InvalidArgument, InvalidRequest, NotImplemented
    as `requested` answers), and one an operation would not apply refused rather than accepted and
    ignored."""
    if s3.operation not in APPLIED and sets_acl(s3.headers):
        raise S3Error(S3ErrorCode.NotImplemented, f"ACLs on {s3.operation.value} are not implemented.")
    requested(s3, s3.user, s3.user, ResourceType.KEY)


def requested(
    s3: S3Request, owner: str, bucket_owner_name: str, resource: ResourceType
) -> tuple[Grant, ...] | None:
    """The grants x-amz-acl or x-amz-grant-* ask for (None: neither), the owner's FULL_CONTROL always among
    them (s3_acl.with_owner); both is InvalidRequest, as Amazon answers."""
    canned = s3.headers.get(CANNED_ACL)
    try:
        grants = s3_acl.header_grants(s3.headers)
        if canned is not None and grants:
            raise AclError("InvalidRequest", "Specifying both Canned ACLs and Header Grants is not allowed")
        if canned is not None:
            return s3_acl.canned(canned, owner, bucket_owner_name, resource)
    except AclError as e:
        raise acl_error(e) from None
    return s3_acl.with_owner(grants, owner) if grants else None


def form_acl(name: str) -> None:
    """POST Object's `acl` field: a canned ACL, read as x-amz-acl is (before anything is stored)."""
    try:
        s3_acl.canned(name, "", "", ResourceType.KEY)
    except AclError as e:
        raise acl_error(e) from None


async def form_object_acl(s3: S3Request, name: str) -> Acls:
    """Before the form's file is stored: as acting_user checks x-amz-acl (BlockPublicAcls: AccessDenied;
    ACLs disabled: AccessControlListNotSupported for any but the owner's), then the entries the new key is
    committed with (_object_acl)."""
    access = await bucket_access(s3.gateway, s3.bucket)
    if access.public_access_block.BlockPublicAcls and name.strip() in PUBLIC_CANNED_ACLS:
        raise S3Error(S3ErrorCode.AccessDenied, "The bucket's PublicAccessBlock blocks public ACLs.")
    if not acls_enabled(access):
        if name.strip() not in OWNER_CANNED_ACLS:
            raise S3Error(S3ErrorCode.AccessControlListNotSupported)
        return ()
    return await _object_acl(s3, access, s3_acl.canned(name, s3.acting_user, access.owner, ResourceType.KEY))


def _asks(s3: S3Request) -> bool:
    """Whether the request names an ACL (x-amz-acl or a grant header; check_requested read them)."""
    return CANNED_ACL in s3.headers or any(name.lower().startswith(GRANT_HEADERS) for name in s3.headers)


async def create_bucket(s3: S3Request) -> web.Response:
    """buckets.create_bucket with the ACL it asks for (where the new bucket's ACLs apply: buckets refuses
    any but the owner's under BucketOwnerEnforced, which is then its default), recorded by the create."""
    acls: Acls = ()
    if _asks(s3) and buckets.requested_ownership(s3.headers.get(OBJECT_OWNERSHIP)).acls_enabled:
        grants = requested(s3, s3.user, s3.user, ResourceType.BUCKET)
        assert grants is not None  # it asked
        acls = s3_acl.to_ozone(grants, ResourceType.BUCKET)
    return await buckets.create_bucket(s3, acls)


async def put_object(s3: S3Request) -> web.Response:
    """objects.put_object, committing the ACL it asks for with the key."""
    return await objects.put_object(s3, await _new_object_acl(s3))


async def copy_object(s3: S3Request) -> web.Response:
    """objects.copy_object, committing the ACL it asks for with the key (a copy's ACL is the request's,
    never its source's, as Amazon's)."""
    return await objects.copy_object(s3, await _new_object_acl(s3))


async def _new_object_acl(s3: S3Request) -> Acls:
    """Before anything is written: the entries the new key is committed with (): none named, or the
    bucket's ACLs disabled (acting_user refused any but the owner's, which the writer's defaults are)."""
    if not _asks(s3):
        return ()
    access = await bucket_access(s3.gateway, s3.bucket)
    if not acls_enabled(access):
        return ()
    grants = requested(s3, s3.acting_user, access.owner, ResourceType.KEY)
    assert grants is not None  # it asked
    return await _object_acl(s3, access, grants)


async def _object_acl(s3: S3Request, access: BucketAccess, grants: tuple[Grant, ...]) -> Acls:
    """The new key's entries, its writer (the OM caller) its owner. A key it replaces that has no owner
    record (OM's ACLs off: the new one will have none either, and is shown as the bucket owner's) needs
    what PutObjectAcl needs on it: the bucket's owner or a WRITE_ACP grant (R37's F7: else a copy onto
    itself would make another's object public). Checked before the write; a write racing it meets OM's
    own checks, the ACL being the committed key's own. A writer OM does not let read the key (a drop box's
    WRITE grantee) is one OM checks ACLs for: its key will be its own."""
    try:
        info = await s3.gateway.client.key_info(s3.gateway.volume, s3.bucket, s3.key)
    except OzoneClientError as e:
        if e.result not in (KEY_NOT_FOUND, PERMISSION_DENIED):
            raise s3_error(e, BucketName=s3.bucket, Key=s3.key) from None
        info = None
    if info is not None and not info.owner and s3.acting_user != access.owner:
        current = await _acl(s3, _path(s3, ResourceType.KEY))
        if not granted(Caller(s3.user), ACLType.WRITE_ACL, current):
            raise S3Error(S3ErrorCode.AccessDenied)
    return s3_acl.to_ozone(grants, ResourceType.KEY)


async def _acl(s3: S3Request, path: ObjectPath) -> Acls:
    try:
        return await s3.gateway.client.get_acl(path)
    except OzoneClientError as e:
        raise s3_error(e, BucketName=s3.bucket) from None


async def _set(s3: S3Request, path: ObjectPath, grants: tuple[Grant, ...]) -> None:
    """setAcl of the grants' entries, as the requester (OM checks WRITE_ACL). The current entries, read
    first, keep the rights a grantee's permissions already have (s3_acl.replace_shown); a WRITE_ACP
    grantee OM does not let read them (no READ_ACP) writes the grants' mapping alone (R37's F4)."""
    client = s3.gateway.client
    try:
        current = await _readable_acl(s3, path)
        await client.set_acl(path, s3_acl.replace_shown(current or (), grants, path.resource))
    except OzoneClientError as e:
        raise s3_error(e, BucketName=s3.bucket) from None


async def _readable_acl(s3: S3Request, path: ObjectPath) -> Acls | None:
    """The entries, or None where OM refuses the requester READ_ACL (OM then checks ACLs itself)."""
    try:
        return await s3.gateway.client.get_acl(path)
    except OzoneClientError as e:
        if e.result != PERMISSION_DENIED:
            raise
        return None


def _path(s3: S3Request, resource: ResourceType) -> ObjectPath:
    key = s3.key if resource is ResourceType.KEY else ""
    return ObjectPath(resource, s3.gateway.volume, s3.bucket, key)


async def _object_owner(s3: S3Request, access: BucketAccess) -> str:
    """The key's writer where ACLs apply, else the bucket's owner. A versionId must name the current
    version (OM keeps one ACL per key): another is NotImplemented, a delete marker's MethodNotAllowed, one
    the key lacks NoSuchVersion, a delete marker on top of the version named not NoSuchKey (R37's F16)."""
    version = s3.query.get("versionId", "")
    try:
        info = await _lookup(s3, version)
        objects.refuse_delete_marker(s3, info)
        if version and (await _lookup(s3, "")).version_id != info.version_id:
            raise S3Error(S3ErrorCode.NotImplemented, "ACLs of a noncurrent version are not implemented.")
    except OzoneClientError as e:
        raise objects.version_error(e, s3) from None
    if not acls_enabled(access) or not info.owner:
        return access.owner
    return info.owner


async def _lookup(s3: S3Request, version: str) -> KeyInfo:
    """The key's version (its latest, delete markers included, without one). A requester OM does not let
    read the key (a READ_ACP or WRITE_ACP grantee alone, R37's F4) has it looked up by the gateway itself,
    for its owner alone: the ACL call that follows is OM's to allow, as the requester, and a key that is not
    there is AccessDenied to it."""

    def lookup() -> Awaitable[KeyInfo]:
        return s3.gateway.client.key_info(
            s3.gateway.volume, s3.bucket, s3.key, version=version, delete_markers=True
        )

    try:
        return await lookup()
    except OzoneClientError as e:
        if e.result != PERMISSION_DENIED:
            raise
        try:
            return await asyncio.create_task(lookup(), context=contextvars.Context())  # acting for no one
        except OzoneClientError:
            raise e from None


async def _read(s3: S3Request, path: ObjectPath, owner: str, owners: set[str]) -> tuple[Grant, ...]:
    """The ACL's grants, if the requester may read it (READ_ACP: see the module's words); `owners` may."""
    try:
        acls = await s3.gateway.client.get_acl(path)
    except OzoneClientError as e:
        raise s3_error(e, BucketName=s3.bucket) from None
    if (
        s3.acting_user not in owners
        and not s3.gateway.settings.administrator(s3.user)  # as OM lets them (R37's F14)
        and not granted(Caller(s3.user), ACLType.READ_ACL, acls)
    ):
        raise S3Error(S3ErrorCode.AccessDenied)
    return s3_acl.from_ozone(acls, owner)


async def get_bucket_acl(s3: S3Request) -> web.Response:
    owner = await bucket_owner(s3)
    grants = await _read(s3, _path(s3, ResourceType.BUCKET), owner, {owner})
    return xml_response(s3_acl.document(owner, grants))


async def get_object_acl(s3: S3Request) -> web.Response:
    access = await bucket_access(s3.gateway, s3.bucket)
    owner = await _object_owner(s3, access)
    grants = await _read(s3, _path(s3, ResourceType.KEY), owner, {owner, access.owner})
    return xml_response(s3_acl.document(owner, grants))


async def put_bucket_acl(s3: S3Request) -> web.Response:
    access = await bucket_access(s3.gateway, s3.bucket)
    await _put(s3, _path(s3, ResourceType.BUCKET), access, access.owner)
    return web.Response(status=200)


async def put_object_acl(s3: S3Request) -> web.Response:
    access = await bucket_access(s3.gateway, s3.bucket)
    await _put(s3, _path(s3, ResourceType.KEY), access, await _object_owner(s3, access))
    return web.Response(status=200)


async def _put(s3: S3Request, path: ObjectPath, access: BucketAccess, owner: str) -> None:
    """The ACL of the body (an AccessControlPolicy) or of the headers: both is UnexpectedContent, neither
    MissingSecurityHeader, as Amazon answers (R37's F19). The policy's Owner must be the owner (changing it
    is NotImplemented)."""
    body = await s3.body.read_all()
    grants = requested(s3, owner, access.owner, path.resource)
    if body.strip():
        if grants is not None:
            raise S3Error(S3ErrorCode.UnexpectedContent)  # a header ACL takes no body
        try:
            policy = s3_acl.parse_policy(body)
        except AclError as e:
            raise acl_error(e) from None
        if policy.owner != owner:
            raise S3Error(S3ErrorCode.NotImplemented, "Changing an owner through an ACL is not implemented.")
        grants = s3_acl.with_owner(policy.grants, owner)
    elif grants is None:
        raise S3Error(S3ErrorCode.MissingSecurityHeader, "The request names no ACL.")
    if s3.acting_user not in (owner, access.owner) and not s3.gateway.settings.administrator(s3.user):
        # not the owner, acting as it by the bucket's policy, nor an administrator (R37's F14)
        try:
            current = await _readable_acl(s3, path)
        except OzoneClientError as e:
            raise s3_error(e, BucketName=s3.bucket) from None
        if current is not None and not granted(Caller(s3.user), ACLType.WRITE_ACL, current):
            raise S3Error(S3ErrorCode.AccessDenied)  # (None: OM's setAcl checks WRITE_ACL)
    if not acls_enabled(access):
        if not s3_acl.owner_only(grants, owner):
            raise S3Error(S3ErrorCode.AccessControlListNotSupported)
        grants = (Grant(Grantee(owner), Permission.FULL_CONTROL),)  # reset to it (R37's F2), never a no-op
    if access.public_access_block.BlockPublicAcls and s3_acl.is_public(grants):
        raise S3Error(S3ErrorCode.AccessDenied, "The bucket's PublicAccessBlock blocks public ACLs.")
    await _set(s3, path, grants)
