"""How a bucket's policy decides a request at the gateway (the rules themselves: hdds/s3_policy.py): every
operation's s3: action and resource (ACTIONS, one table), the condition keys a request carries, and whom
the request then acts as in OM.

- An applicable Deny is AccessDenied, whoever asks (the owner too, as Amazon has it).
- An applicable Allow lets the request in and runs it as the bucket's owner, whose rights bound what the
  policy can grant: OM's ACLs see the owner (an anonymous request has no user of its own to act as).
- Otherwise (DEFAULT) a signed request acts as its own user, OM's ACLs deciding; an anonymous one is
  AccessDenied, but for a read or a listing (ANONYMOUS_READS), which acts as OM's anonymous caller
  (hdds/security/acl.S3_ANONYMOUS): OM lets it do only what the object's own WORLD entry grants (S3's
  AllUsers READ), ACLs on or off. An Object Lock read (LOCK_READS) is AccessDenied there but for the
  bucket's owner and administrators: no ACL grants it.

A copy (CopyObject, UploadPartCopy) reads its source as the user it acts as: it acts as the owner only when
the source bucket's policy allows the read too and both buckets have the same owner, so a grant to write
one bucket never reads another. DeleteObjects is decided per key (key_denied): a Deny refuses that key;
an Allow does not act as the owner there (the request has one user for all its keys). The gateway reads
each bucket's owner, policy and PublicAccessBlock as itself, through a short cache (bucket_cache.py); a
policy or block OM keeps that this gateway cannot read refuses everyone but the owner, rather than be
ignored.

The bucket's PublicAccessBlock (hdds/s3_public_access.py): RestrictPublicBuckets makes a public policy's
Allow grant anonymous requests nothing (pyozone has one account, so every signed user is "within the
account"); BlockPublicAcls refuses a request that sets a public canned ACL or grant (AccessDenied);
BlockPublicPolicy is OM's (om/bucket_documents.py); IgnorePublicAcls keeps anonymous requests from acting
on public ACLs (signed users' access stays OM's to decide, WORLD entries included).
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, NoReturn
from urllib.parse import unquote

from aiohttp import web
from multidict import CIMultiDictProxy

from pyozone.client.errors import OzoneClientError
from pyozone.hdds import s3_ownership, s3_public_access
from pyozone.hdds.s3_object_lock import LEGAL_HOLD_HEADER, MODE_HEADER, UNTIL_HEADER
from pyozone.hdds.s3_ownership import ObjectOwnership, OwnershipControlsError
from pyozone.hdds.s3_policy import (
    Decision,
    Policy,
    PolicyError,
    RequestContext,
    bucket_arn,
    evaluate,
    is_public,
    object_arn,
    parse,
)
from pyozone.hdds.s3_public_access import NONE, PUBLIC_CANNED_ACLS, PublicAccessBlock, PublicAccessBlockError
from pyozone.hdds.security.acl import S3_ANONYMOUS
from pyozone.s3g.bucket_cache import BucketCache
from pyozone.s3g.errors import S3Error, S3ErrorCode
from pyozone.s3g.headers import sets_acl
from pyozone.s3g.om_errors import s3_error
from pyozone.s3g.routing import Operation, Target

if TYPE_CHECKING:
    from pyozone.s3g.request import Gateway  # which holds a PolicyCache

log = logging.getLogger(__name__)

_O = Operation
ACTIONS: MappingProxyType[Operation, str | None] = MappingProxyType(
    {
        _O.LIST_BUCKETS: None, _O.CREATE_BUCKET: None, _O.OPTIONS_OBJECT: None,  # no bucket's policy
        _O.HEAD_BUCKET: "s3:ListBucket", _O.DELETE_BUCKET: "s3:DeleteBucket",
        _O.GET_BUCKET_LOCATION: "s3:GetBucketLocation", _O.GET_BUCKET_VERSIONING: "s3:GetBucketVersioning",
        _O.PUT_BUCKET_VERSIONING: "s3:PutBucketVersioning",
        _O.GET_OBJECT_ATTRIBUTES: "s3:GetObjectAttributes",
        _O.GET_BUCKET_ACL: "s3:GetBucketAcl", _O.PUT_BUCKET_ACL: "s3:PutBucketAcl",
        _O.GET_BUCKET_CORS: "s3:GetBucketCORS", _O.PUT_BUCKET_CORS: "s3:PutBucketCORS",
        _O.DELETE_BUCKET_CORS: "s3:PutBucketCORS", _O.GET_BUCKET_POLICY: "s3:GetBucketPolicy",
        _O.GET_BUCKET_LIFECYCLE: "s3:GetLifecycleConfiguration",
        _O.PUT_BUCKET_LIFECYCLE: "s3:PutLifecycleConfiguration",
        _O.DELETE_BUCKET_LIFECYCLE: "s3:PutLifecycleConfiguration",  # Amazon's: no action of its own
        _O.PUT_BUCKET_POLICY: "s3:PutBucketPolicy", _O.DELETE_BUCKET_POLICY: "s3:DeleteBucketPolicy",
        _O.GET_BUCKET_POLICY_STATUS: "s3:GetBucketPolicyStatus",
        _O.GET_PUBLIC_ACCESS_BLOCK: "s3:GetBucketPublicAccessBlock",
        _O.PUT_PUBLIC_ACCESS_BLOCK: "s3:PutBucketPublicAccessBlock",
        _O.DELETE_PUBLIC_ACCESS_BLOCK: "s3:PutBucketPublicAccessBlock",
        _O.GET_BUCKET_ENCRYPTION: "s3:GetEncryptionConfiguration",
        _O.PUT_BUCKET_ENCRYPTION: "s3:PutEncryptionConfiguration",
        _O.DELETE_BUCKET_ENCRYPTION: "s3:PutEncryptionConfiguration",  # Amazon's: no action of its own
        _O.GET_BUCKET_OWNERSHIP_CONTROLS: "s3:GetBucketOwnershipControls",
        _O.PUT_BUCKET_OWNERSHIP_CONTROLS: "s3:PutBucketOwnershipControls",
        _O.DELETE_BUCKET_OWNERSHIP_CONTROLS: "s3:PutBucketOwnershipControls",
        _O.LIST_OBJECTS: "s3:ListBucket",
        _O.LIST_OBJECTS_V2: "s3:ListBucket", _O.LIST_OBJECT_VERSIONS: "s3:ListBucketVersions",
        _O.LIST_MULTIPART_UPLOADS: "s3:ListBucketMultipartUploads", _O.DELETE_OBJECTS: "s3:DeleteObject",
        _O.PUT_OBJECT: "s3:PutObject", _O.POST_OBJECT: "s3:PutObject", _O.COPY_OBJECT: "s3:PutObject",
        _O.GET_OBJECT: "s3:GetObject", _O.HEAD_OBJECT: "s3:GetObject", _O.DELETE_OBJECT: "s3:DeleteObject",
        _O.GET_OBJECT_TAGGING: "s3:GetObjectTagging", _O.PUT_OBJECT_TAGGING: "s3:PutObjectTagging",
        _O.DELETE_OBJECT_TAGGING: "s3:DeleteObjectTagging", _O.GET_OBJECT_ACL: "s3:GetObjectAcl",
        _O.PUT_OBJECT_ACL: "s3:PutObjectAcl", _O.CREATE_MULTIPART_UPLOAD: "s3:PutObject",
        _O.UPLOAD_PART: "s3:PutObject", _O.UPLOAD_PART_COPY: "s3:PutObject",
        _O.COMPLETE_MULTIPART_UPLOAD: "s3:PutObject", _O.ABORT_MULTIPART_UPLOAD: "s3:AbortMultipartUpload",
        _O.LIST_PARTS: "s3:ListMultipartUploadParts",
        _O.GET_OBJECT_LOCK_CONFIGURATION: "s3:GetBucketObjectLockConfiguration",
        _O.PUT_OBJECT_LOCK_CONFIGURATION: "s3:PutBucketObjectLockConfiguration",
        _O.GET_OBJECT_RETENTION: "s3:GetObjectRetention", _O.PUT_OBJECT_RETENTION: "s3:PutObjectRetention",
        _O.GET_OBJECT_LEGAL_HOLD: "s3:GetObjectLegalHold", _O.PUT_OBJECT_LEGAL_HOLD: "s3:PutObjectLegalHold",
    }
)  # fmt: skip
"""Each operation's action ("Actions, resources, and condition keys for Amazon S3"); its resource is the
object's ARN when the request names a key, else the bucket's."""
VERSION_ACTIONS = MappingProxyType(
    {"s3:GetObject": "s3:GetObjectVersion", "s3:DeleteObject": "s3:DeleteObjectVersion",
     "s3:GetObjectTagging": "s3:GetObjectVersionTagging", "s3:PutObjectTagging": "s3:PutObjectVersionTagging",
     "s3:DeleteObjectTagging": "s3:DeleteObjectVersionTagging", "s3:GetObjectAcl": "s3:GetObjectVersionAcl",
     "s3:PutObjectAcl": "s3:PutObjectVersionAcl", "s3:GetObjectAttributes": "s3:GetObjectVersionAttributes"}
)  # fmt: skip
"""The action of a request naming a versionId."""
COPIES = frozenset({Operation.COPY_OBJECT, Operation.UPLOAD_PART_COPY})
ANONYMOUS_READS = frozenset(
    {Operation.GET_OBJECT, Operation.HEAD_OBJECT, Operation.LIST_OBJECTS, Operation.LIST_OBJECTS_V2,
     Operation.LIST_OBJECT_VERSIONS, Operation.HEAD_BUCKET}
)  # fmt: skip
"""What an anonymous request no policy decides may still do, as OM's anonymous caller (S3_ANONYMOUS):
read an object or list a bucket (its keys or its versions: Amazon's bucket READ grants s3:ListBucket and
s3:ListBucketVersions) whose ACL grants AllUsers READ (OM's WORLD entry), unless the bucket's
PublicAccessBlock ignores public ACLs or its ownership controls disable ACLs."""
LOCK_READS = frozenset(
    {Operation.GET_OBJECT_RETENTION, Operation.GET_OBJECT_LEGAL_HOLD, Operation.GET_OBJECT_LOCK_CONFIGURATION}
)
"""Object Lock reads: Amazon's s3:GetObjectRetention, s3:GetObjectLegalHold and
s3:GetBucketObjectLockConfiguration, which no ACL grants (READ is s3:GetObject and s3:GetObjectVersion):
the bucket's owner's, an administrator's (as OM lets them), or whom the bucket's policy allows, whatever
Ozone ACLs grant."""
ACL_WRITES = frozenset(
    {Operation.PUT_OBJECT, Operation.COPY_OBJECT, Operation.CREATE_MULTIPART_UPLOAD, Operation.POST_OBJECT,
     Operation.PUT_BUCKET_ACL, Operation.PUT_OBJECT_ACL}
)  # fmt: skip
"""The operations that set an ACL from x-amz-acl or x-amz-grant-* (POST Object: its `acl` field)."""
TAGGING = "x-amz-tagging"
TAGGING_WRITES = frozenset(
    {Operation.PUT_OBJECT, Operation.COPY_OBJECT, Operation.CREATE_MULTIPART_UPLOAD, Operation.POST_OBJECT}
)
"""The writes that set tags from x-amz-tagging (s3:PutObjectTagging besides their own action, as Amazon)."""
LOCK_WRITES = frozenset({Operation.PUT_OBJECT, Operation.COPY_OBJECT, Operation.CREATE_MULTIPART_UPLOAD})
"""The writes that set a version's Object Lock from x-amz-object-lock-* (POST Object refuses those fields)."""


def lock_actions(operation: Operation, headers: Mapping[str, str]) -> tuple[str, ...]:
    """What a write's x-amz-object-lock-* headers need besides its own action, as Amazon's:
    s3:PutObjectRetention for a mode or date, s3:PutObjectLegalHold for a legal hold."""
    if operation not in LOCK_WRITES:
        return ()
    needed = []
    if MODE_HEADER in headers or UNTIL_HEADER in headers:
        needed.append("s3:PutObjectRetention")
    if LEGAL_HOLD_HEADER in headers:
        needed.append("s3:PutObjectLegalHold")
    return tuple(needed)


OWNER_ALWAYS = frozenset(
    {Operation.GET_BUCKET_POLICY, Operation.PUT_BUCKET_POLICY, Operation.DELETE_BUCKET_POLICY,
     Operation.GET_BUCKET_POLICY_STATUS}
)  # fmt: skip
"""What no policy refuses the bucket's owner (Amazon's root user keeps them: a Deny of s3:* for "*" must
not leave a bucket nobody can repair)."""


@dataclass(frozen=True, slots=True)
class BucketAccess:
    """What a lookup found: the bucket's owner, policy (None: it has none), PublicAccessBlock and object
    ownership (None: no controls, ACLs apply), whether OM keeps a policy or block this gateway cannot read,
    or that there is no such bucket."""

    owner: str
    policy: Policy | None
    public_access_block: PublicAccessBlock = NONE
    ownership: ObjectOwnership | None = s3_ownership.DEFAULT
    unreadable: bool = False
    bucket_exists: bool = True

    @property
    def restricted(self) -> bool:
        """RestrictPublicBuckets over a public policy: the policy grants anonymous requests nothing."""
        return (
            self.public_access_block.RestrictPublicBuckets
            and self.policy is not None
            and is_public(self.policy)
        )


NO_BUCKET = BucketAccess("", None, bucket_exists=False)


class PolicyCache(BucketCache[BucketAccess]):
    """Buckets' owners, policies and PublicAccessBlocks, TTL_MS at a time; this gateway's changes of them,
    CreateBucket and DeleteBucket forget the bucket at once."""


async def bucket_access(gateway: Gateway, bucket: str) -> BucketAccess:
    return await gateway.policies.load(bucket, lambda: _read(gateway, bucket))


async def _read(gateway: Gateway, bucket: str) -> tuple[BucketAccess, int]:
    client, volume = gateway.client, gateway.volume
    try:
        info, text, block, controls = await asyncio.gather(  # independent OM reads: one round trip's wait
            client.bucket_info(volume, bucket),
            client.get_bucket_policy(volume, bucket),
            client.get_bucket_public_access_block(volume, bucket),
            client.get_bucket_ownership_controls(volume, bucket),
        )
        owner = info.owner
    except OzoneClientError as e:
        error = s3_error(e, BucketName=bucket)
        if error.code is S3ErrorCode.NoSuchBucket:
            return NO_BUCKET, 0
        raise error from None  # a name OM refuses is InvalidBucketName, as the handler would answer
    size = len(text or b"") + len(block or b"") + len(controls or b"")
    try:
        policy = parse(text, bucket, limit=None) if text is not None else None
        public_access_block = s3_public_access.parse(block) if block is not None else NONE
        ownership = s3_ownership.parse(controls) if controls is not None else None
    except (PolicyError, PublicAccessBlockError, OwnershipControlsError) as e:
        log.warning("bucket %s: its policy is unreadable (%s); refusing all but its owner", bucket, e)
        return BucketAccess(owner, None, unreadable=True), size
    return BucketAccess(owner, policy, public_access_block, ownership), size


def action(operation: Operation, where: Target) -> str | None:
    name = ACTIONS[operation]
    if name is not None and where.query.get("versionId") not in (None, ""):
        return VERSION_ACTIONS.get(name, name)
    return name


def condition_values(
    http: web.Request,
    headers: CIMultiDictProxy[str],
    query: dict[str, str] | MappingProxyType[str, str],
    user: str | None,
) -> dict[str, tuple[str, ...]]:
    """The condition keys (hdds/s3_policy.CONDITION_KEYS) this request carries; a key it does not carry is
    absent, as Amazon leaves it."""
    values: dict[str, tuple[str, ...]] = {"aws:securetransport": ("true" if http.secure else "false",)}
    if http.remote:
        values["aws:sourceip"] = (_source_ip(http.remote),)
    for key, header in _HEADER_KEYS:
        if header in headers:
            values[key] = tuple(headers.getall(header))
    for key in ("prefix", "delimiter", "max-keys"):
        if key in query:
            values["s3:" + key] = (query[key],)
    if user is not None:
        values["aws:username"] = values["aws:userid"] = (user,)
        values["s3:signatureversion"] = ("AWS4-HMAC-SHA256",)
        values["s3:authtype"] = ("REST-QUERY-STRING" if "X-Amz-Signature" in query else "REST-HEADER",)
    return values


def _source_ip(remote: str) -> str:
    """The peer's address; an IPv4 one written as IPv6 (::ffff:a.b.c.d, a dual-stack socket's) as IPv4,
    so an IPv4 SourceIp condition sees it (R34's F5)."""
    try:
        address = ipaddress.ip_address(remote)
    except ValueError:
        return remote
    mapped = address.ipv4_mapped if isinstance(address, ipaddress.IPv6Address) else None
    return str(mapped) if mapped is not None else remote


_HEADER_KEYS = (
    ("aws:referer", "Referer"), ("aws:useragent", "User-Agent"), ("s3:x-amz-acl", "x-amz-acl"),
    ("s3:x-amz-content-sha256", "x-amz-content-sha256"),
)  # fmt: skip


def acls_enabled(bucket: BucketAccess) -> bool:
    """Whether the bucket's S3 ACLs apply: its ownership controls are not BucketOwnerEnforced."""
    return bucket.ownership is None or bucket.ownership.acls_enabled


@dataclass(frozen=True, slots=True)
class _Decided:
    decision: Decision
    owner: str
    bucket: BucketAccess


async def _decide(
    gateway: Gateway,
    bucket: str,
    name: str,
    resource: str,
    user: str | None,
    values: dict[str, tuple[str, ...]],
) -> _Decided:
    found = await bucket_access(gateway, bucket)
    if not found.bucket_exists:
        raise S3Error(S3ErrorCode.NoSuchBucket, BucketName=bucket)
    if found.unreadable:
        return _Decided(Decision.DEFAULT if user == found.owner else Decision.DENY, found.owner, found)
    decision = evaluate(found.policy, RequestContext(user, name, resource, values))
    if decision is Decision.ALLOW and user is None and found.restricted:
        decision = Decision.DEFAULT
    return _Decided(decision, found.owner, found)


async def refuse_anonymous(gateway: Gateway, bucket: str) -> NoReturn:
    """What an anonymous request no policy can let in gets: NoSuchBucket for a bucket that does not exist
    (as S3 answers even an anonymous request), else AccessDenied."""
    if not (await bucket_access(gateway, bucket)).bucket_exists:
        raise S3Error(S3ErrorCode.NoSuchBucket, BucketName=bucket)
    raise S3Error(S3ErrorCode.AccessDenied)


async def acting_user(
    gateway: Gateway,
    http: web.Request,
    where: Target,
    operation: Operation,
    user: str | None,
    headers: CIMultiDictProxy[str],
) -> str:
    """Whom the request acts as in OM, or AccessDenied (`user` None: an anonymous request). A bucket that
    does not exist is NoSuchBucket, as S3 answers even an anonymous request."""
    name = action(operation, where)
    if name is None or where.bucket is None or operation is Operation.DELETE_OBJECTS:
        if user is None:
            raise S3Error(S3ErrorCode.AccessDenied)
        return user  # DeleteObjects: its keys are decided one by one (key_denied)
    values = condition_values(http, headers, where.query, user)
    if operation is Operation.POST_OBJECT and user is not None:  # signed in its form (R34's F11)
        values["s3:authtype"] = ("POST",)
    resource = object_arn(where.bucket, where.key) if where.key is not None else bucket_arn(where.bucket)
    decided = await _decide(gateway, where.bucket, name, resource, user, values)
    if user is not None and user == decided.owner and operation in OWNER_ALWAYS:
        return user
    if decided.decision is Decision.DENY:
        raise S3Error(S3ErrorCode.AccessDenied)
    if decided.bucket.public_access_block.BlockPublicAcls and sets_public_acl(headers):
        raise S3Error(S3ErrorCode.AccessDenied, "The bucket's PublicAccessBlock blocks public ACLs.")
    if operation in ACL_WRITES and not acls_enabled(decided.bucket) and sets_acl(headers):
        raise S3Error(S3ErrorCode.AccessControlListNotSupported)
    elevate = decided.decision is Decision.ALLOW
    if operation in COPIES:
        source = _copy_source(headers)
        if source is None:  # no source a copy can read: the handler refuses it, acting as no one else
            elevate = False
        else:
            reading = "s3:GetObjectVersion" if source[2] else "s3:GetObject"  # R34's F2
            read = await _decide(gateway, source[0], reading, object_arn(*source[:2]), user, values)
            if read.decision is Decision.DENY:
                raise S3Error(S3ErrorCode.AccessDenied)
            elevate = elevate and read.decision is Decision.ALLOW and read.owner == decided.owner
    form_tags = operation is Operation.POST_OBJECT and "tagging" in headers  # a form's field
    if (TAGGING in headers or form_tags) and operation in TAGGING_WRITES:  # the tags it sets: R34's F13
        tagging = await _decide(gateway, where.bucket, "s3:PutObjectTagging", resource, user, values)
        if tagging.decision is Decision.DENY:
            raise S3Error(S3ErrorCode.AccessDenied)
    for lock_action in lock_actions(operation, headers):  # the lock it sets (R35's F3)
        locking = await _decide(gateway, where.bucket, lock_action, resource, user, values)
        if locking.decision is Decision.DENY:
            raise S3Error(S3ErrorCode.AccessDenied)
        elevate = elevate and locking.decision is Decision.ALLOW  # else OM decides: its owner's alone
    if elevate:
        return decided.owner
    if operation in LOCK_READS and user != decided.owner and not gateway.settings.administrator(user or ""):
        raise S3Error(S3ErrorCode.AccessDenied)
    if user is None:
        if (
            operation in ANONYMOUS_READS
            and "versionId" not in where.query  # OM keeps a key's ACL, not a version's
            and not decided.bucket.public_access_block.IgnorePublicAcls
            and acls_enabled(decided.bucket)  # BucketOwnerEnforced: ACLs grant nothing, as Amazon's
        ):
            return S3_ANONYMOUS  # OM lets it read what a WORLD entry of the object itself grants
        raise S3Error(S3ErrorCode.AccessDenied)
    return user


async def read_as_public(gateway: Gateway, where: Target, operation: Operation) -> bool:
    """Whether a signed read OM refused may be served as the anonymous caller (S3_ANONYMOUS) would be
    (R37's F8): Amazon's AllUsers is "anyone in the world, authenticated or not", so a signed user gets at
    least what an unsigned request gets, a public-read object in a private bucket among it."""
    if operation not in ANONYMOUS_READS or where.bucket is None or "versionId" in where.query:
        return False
    bucket = await bucket_access(gateway, where.bucket)
    return not bucket.public_access_block.IgnorePublicAcls and acls_enabled(bucket)


def sets_public_acl(headers: CIMultiDictProxy[str]) -> bool:
    """A canned ACL or a grant header that grants AllUsers or AuthenticatedUsers (BlockPublicAcls)."""
    if headers.get("x-amz-acl", "").strip().lower() in PUBLIC_CANNED_ACLS:
        return True
    return any(
        name.lower().startswith("x-amz-grant-") and _PUBLIC_GROUPS.search(value)
        for name, value in headers.items()
    )


_PUBLIC_GROUPS = re.compile(r"acs\.amazonaws\.com/groups/global/(AllUsers|AuthenticatedUsers)", re.IGNORECASE)


def _copy_source(headers: CIMultiDictProxy[str]) -> tuple[str, str, str] | None:
    """x-amz-copy-source's (bucket, key, versionId or ""), as objects.copy_source reads it; None: it names
    none."""
    path, _, query = headers.get("x-amz-copy-source", "").partition("?")
    bucket, _, key = unquote(path).lstrip("/").partition("/")
    version = query.partition("=")[2] if query.startswith("versionId=") else ""
    return (bucket, key, version) if bucket and key else None


async def holds(
    gateway: Gateway,
    http: web.Request,
    headers: CIMultiDictProxy[str],
    where: Target,
    key: str,
    user: str | None,
    name: str,
) -> bool:
    """Whether `user` holds the action `name` on `key` of the request's bucket, for the actions no ACL
    grants (s3:BypassGovernanceRetention, s3:GetObjectRetention, s3:GetObjectLegalHold): the bucket's
    owner and an administrator unless its policy denies it, anyone else where the policy allows it;
    `user` None: an unsigned request, judged as one (the policy's conditions, RestrictPublicBuckets).
    OM decides again by its own ACLs where it acts on them (om/access.py: the owner or an administrator)."""
    assert where.bucket is not None
    values = condition_values(http, headers, where.query, user)
    resource = object_arn(where.bucket, key)
    decided = await _decide(gateway, where.bucket, name, resource, user, values)
    if decided.decision is Decision.DENY:
        return False
    if decided.decision is Decision.ALLOW:
        return True
    return user is not None and (user == decided.owner or gateway.settings.administrator(user))


async def key_denied(
    gateway: Gateway,
    bucket: str,
    key: str,
    version: str | None,
    user: str,
    values: dict[str, tuple[str, ...]],
) -> bool:
    """Whether the bucket's policy denies `user` the deletion of one key (or one version) of a
    DeleteObjects: s3:DeleteObject, or s3:DeleteObjectVersion with a VersionId. `values`: the request's
    condition_values, read once for all its keys."""
    name = "s3:DeleteObject" if version in (None, "") else "s3:DeleteObjectVersion"
    decided = await _decide(gateway, bucket, name, object_arn(bucket, key), user, values)
    return decided.decision is Decision.DENY
