"""A bucket's object ownership controls: Put/Get/DeleteBucketOwnershipControls. Every bucket is
BucketOwnerEnforced, as OM keeps no owner per key (an object is its bucket owner's: acls.py), so there is
nothing to keep: GetBucketOwnershipControls answers BucketOwnerEnforced, a Put of it is accepted and
changes nothing, and what would change it (BucketOwnerPreferred or ObjectWriter, which need an owner per
object, or a Delete, which would leave ACLs to decide) is NotImplemented rather than accepted and
ignored. Unlike Amazon's BucketOwnerEnforced, ACL writes of `private` are accepted as ever (acls.py):
tools send it by default."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from aiohttp import web

from pyozone.s3g import xml
from pyozone.s3g.buckets import require_owner, xml_response
from pyozone.s3g.errors import S3Error, S3ErrorCode
from pyozone.s3g.headers import BUCKET_OWNER_ENFORCED
from pyozone.s3g.request import S3Request

OWNERSHIPS = frozenset({BUCKET_OWNER_ENFORCED, "BucketOwnerPreferred", "ObjectWriter"})
"""Amazon's ObjectOwnership values."""


async def get_bucket_ownership_controls(s3: S3Request) -> web.Response:
    await require_owner(s3)
    rule = xml.el("Rule", None, xml.el("ObjectOwnership", BUCKET_OWNER_ENFORCED))
    return xml_response(xml.document("OwnershipControls", rule))


async def put_bucket_ownership_controls(s3: S3Request) -> web.Response:
    """An OwnershipControls of one Rule with one ObjectOwnership of Amazon's values, else MalformedXML."""
    await require_owner(s3)
    ownership = _ownership(await s3.body.read_all())
    if ownership != BUCKET_OWNER_ENFORCED:
        raise S3Error(
            S3ErrorCode.NotImplemented,
            f"Object ownership {ownership} is not implemented; every bucket is {BUCKET_OWNER_ENFORCED}.",
        )
    return web.Response(status=200)


async def delete_bucket_ownership_controls(s3: S3Request) -> web.Response:
    await require_owner(s3)
    raise S3Error(
        S3ErrorCode.NotImplemented,
        f"Deleting ownership controls is not implemented; every bucket is {BUCKET_OWNER_ENFORCED}.",
    )


def _ownership(body: bytes) -> str:
    try:
        root = ET.fromstring(body)  # expat: no external entities
    except (ET.ParseError, LookupError, ValueError):
        raise S3Error(S3ErrorCode.MalformedXML) from None
    rules = list(root)
    if _local(root.tag) != "OwnershipControls" or len(rules) != 1 or _local(rules[0].tag) != "Rule":
        raise S3Error(S3ErrorCode.MalformedXML)
    values = list(rules[0])
    if len(values) != 1 or _local(values[0].tag) != "ObjectOwnership" or len(values[0]):
        raise S3Error(S3ErrorCode.MalformedXML)
    value = (values[0].text or "").strip()
    if value not in OWNERSHIPS:
        raise S3Error(S3ErrorCode.MalformedXML, f"{value!r} is not an ObjectOwnership.")
    return value


def _local(tag: object) -> str:
    return str(tag).rsplit("}", 1)[-1]
