"""A bucket's object ownership controls: Put/Get/DeleteBucketOwnershipControls and CreateBucket's
x-amz-object-ownership. OM keeps them (putBucketOwnershipControls: om/bucket_documents.py, the document
hdds/s3_ownership.py); the gateway reads them with the bucket's policy (policy.BucketAccess.ownership).

BucketOwnerEnforced (a new bucket's, as Amazon's) disables ACLs: an ACL write other than the owner-only
ones is AccessControlListNotSupported, and those reset the ACL to the owner's alone (acls.py); switching
to it while the bucket's ACL grants anyone but the owner is InvalidBucketAclWithObjectOwnership, as
Amazon answers (R37's F2: else OM would keep enforcing grants S3 can no longer revoke).
BucketOwnerPreferred and ObjectWriter, or no controls at all after DeleteBucketOwnershipControls, leave
the bucket's and its objects' S3 ACLs in force (Ozone's native ACLs: acls.py). An object's owner is the
user who wrote it (OM's key owner) in every mode but BucketOwnerEnforced, where it is shown as the
bucket's owner.
"""

from __future__ import annotations

from aiohttp import web

from pyozone.hdds import s3_acl, s3_ownership
from pyozone.hdds.s3_ownership import OwnershipControlsError
from pyozone.hdds.security.acl import ResourceType
from pyozone.protocol.acl import ObjectPath
from pyozone.s3g.buckets import bucket_owner, on_bucket, require_owner, xml_response
from pyozone.s3g.errors import S3Error, S3ErrorCode
from pyozone.s3g.request import S3Request


async def get_bucket_ownership_controls(s3: S3Request) -> web.Response:
    """The controls; none (deleted, or a bucket not made through S3): OwnershipControlsNotFoundError, as
    Amazon answers."""
    await require_owner(s3)
    found = await on_bucket(s3, s3.gateway.client.get_bucket_ownership_controls(s3.gateway.volume, s3.bucket))
    if found is None:
        raise S3Error(S3ErrorCode.OwnershipControlsNotFoundError, BucketName=s3.bucket)
    return xml_response(found)


async def put_bucket_ownership_controls(s3: S3Request) -> web.Response:
    """An OwnershipControls of one Rule with one ObjectOwnership of Amazon's values, else MalformedXML."""
    await require_owner(s3)
    try:
        ownership = s3_ownership.parse(await s3.body.read_all())
    except OwnershipControlsError as e:
        raise S3Error(S3ErrorCode.MalformedXML, str(e)) from None
    if not ownership.acls_enabled:
        await _refuse_shared(s3)
    await write(s3, s3_ownership.document(ownership))
    return web.Response(status=200)


async def _refuse_shared(s3: S3Request) -> None:
    """InvalidBucketAclWithObjectOwnership while the bucket's ACL grants anyone but its owner (a grant S3
    shows: USER and WORLD entries; docs/differences.md has what OM keeps besides)."""
    owner = await bucket_owner(s3)
    path = ObjectPath(ResourceType.BUCKET, s3.gateway.volume, s3.bucket)
    acls = await on_bucket(s3, s3.gateway.client.get_acl(path))
    if not s3_acl.owner_only(s3_acl.from_ozone(acls, owner), owner):
        raise S3Error(S3ErrorCode.InvalidBucketAclWithObjectOwnership, BucketName=s3.bucket)


async def write(s3: S3Request, document: bytes) -> None:  # CreateBucket's too
    """Keeps the controls in OM; this gateway forgets the bucket's cached ones at once."""
    with s3.gateway.policies.forgetting(s3.bucket):
        await on_bucket(
            s3, s3.gateway.client.put_bucket_ownership_controls(s3.gateway.volume, s3.bucket, document)
        )


async def delete_bucket_ownership_controls(s3: S3Request) -> web.Response:
    """204 whether or not the bucket had controls; the bucket's ACLs apply from now on."""
    await require_owner(s3)
    with s3.gateway.policies.forgetting(s3.bucket):
        await on_bucket(s3, s3.gateway.client.delete_bucket_ownership_controls(s3.gateway.volume, s3.bucket))
    return web.Response(status=204)
