"""A bucket's S3 configuration documents (CORS, lifecycle, policy, PublicAccessBlock, default encryption,
ownership controls), each kept by OM in a table of its own apart from the bucket's record (pyozone's: Ozone's
gateway has none of them). Apart, because the record travels with every listing, every key commit and every
setBucketProperty answer, and a document may be tens of kilobytes.

OM reads every document with its kernel model before it keeps it (hdds/s3_cors.py, s3_lifecycle.py,
s3_policy.py, s3_public_access.py, s3_ownership.py) and keeps it as the Get call answers it, so no document a
reader cannot read is ever stored (a policy is kept as sent, as GetBucketPolicy answers it). A public policy
is refused under the bucket's BlockPublicPolicy in the step that would keep it, under OM's lock, so no
concurrent PutPublicAccessBlock slips between the check and the write. The service checks that the caller owns
the bucket (Access.bucket_owner); the rows go with their bucket (BucketManager.delete). OM's own ACLs
are not changed by any of them: the S3 gateway applies policies.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from pyozone.hdds import (
    s3_acl,
    s3_cors,
    s3_encryption,
    s3_lifecycle,
    s3_ownership,
    s3_policy,
    s3_public_access,
)
from pyozone.om.core import OzoneManager
from pyozone.om.exceptions import OMException, OMResultCode
from pyozone.om.master_keys import KEYSTORE_KEY
from pyozone.om.metadata import (
    BUCKET_TABLE,
    S3_BUCKET_CORS_TABLE,
    S3_BUCKET_ENCRYPTION_TABLE,
    S3_BUCKET_LIFECYCLE_TABLE,
    S3_BUCKET_OWNERSHIP_CONTROLS_TABLE,
    S3_BUCKET_POLICY_TABLE,
    S3_BUCKET_PUBLIC_ACCESS_BLOCK_TABLE,
    bucket_key,
)
from pyozone.protocol import om_records

Reader = Callable[[bytes, str], bytes]
"""A document as sent and its bucket's name -> the document as kept; S3's refusal raised as OMException."""


class BucketDocuments:
    """One kind of document: its table, and how a document is read before it is kept."""

    def __init__(self, om: OzoneManager, table: str, read: Reader) -> None:
        self.om = om
        self.table = table
        self.read = read

    def put(self, volume: str, bucket: str, body: bytes) -> None:
        """Replaces the bucket's document; one S3 refuses is INVALID_REQUEST, with S3's code and words."""
        kept = self.read(body, bucket)
        om = self.om
        with om.lock:
            om.bucket_info(volume, bucket)
            self._check(volume, bucket, kept)
            om.commit([(self.table, bucket_key(volume, bucket), kept)])

    def _check(self, volume: str, bucket: str, kept: bytes) -> None:
        """What the bucket's other documents say about this one, under OM's lock (nothing by default)."""

    def get(self, volume: str, bucket: str) -> bytes | None:
        """None: the bucket has none."""
        self.om.bucket_info(volume, bucket)
        return self.om.store.get(self.table, bucket_key(volume, bucket))

    def delete(self, volume: str, bucket: str) -> None:
        """Whether or not the bucket had one, as S3's Delete calls answer."""
        om = self.om
        with om.lock:
            om.bucket_info(volume, bucket)
            if om.store.get(self.table, bucket_key(volume, bucket)) is not None:
                om.commit([(self.table, bucket_key(volume, bucket), None)])


class BucketPolicies(BucketDocuments):
    """Policies: a public one is PERMISSION_DENIED (S3's AccessDenied) under the bucket's
    BlockPublicPolicy."""

    def __init__(self, om: OzoneManager) -> None:
        super().__init__(om, S3_BUCKET_POLICY_TABLE, _policy)

    def _check(self, volume: str, bucket: str, kept: bytes) -> None:
        block = self.om.store.get(S3_BUCKET_PUBLIC_ACCESS_BLOCK_TABLE, bucket_key(volume, bucket))
        if block is None or not s3_public_access.parse(block).BlockPublicPolicy:
            return
        if s3_policy.is_public(s3_policy.parse(kept, bucket, limit=None)):
            raise OMException(
                OMResultCode.PERMISSION_DENIED,
                f"The policy makes bucket {volume}/{bucket} public and its PublicAccessBlock blocks public "
                "policies (BlockPublicPolicy).",
            )


def _refused(code: str, message: str) -> OMException:
    return OMException(OMResultCode.INVALID_REQUEST, f"{code}: {message or code}")


def _cors(body: bytes, bucket: str) -> bytes:
    try:
        return s3_cors.document(s3_cors.parse(body))
    except s3_cors.CORSError as e:
        raise _refused(e.code, e.message) from None


def _lifecycle(body: bytes, bucket: str) -> bytes:
    try:
        return s3_lifecycle.document(s3_lifecycle.parse(body))
    except s3_lifecycle.LifecycleError as e:
        raise _refused(e.code, e.message) from None


def _policy(body: bytes, bucket: str) -> bytes:
    try:
        s3_policy.parse(body, bucket)
    except s3_policy.PolicyError as e:
        raise _refused(e.code, e.message) from None
    return body


def _public_access_block(body: bytes, bucket: str) -> bytes:
    try:
        return s3_public_access.document(s3_public_access.parse(body))
    except s3_public_access.PublicAccessBlockError as e:
        raise _refused(e.code, str(e)) from None


def _encryption(body: bytes, bucket: str) -> bytes:
    try:
        return s3_encryption.document(s3_encryption.parse(body))
    except s3_encryption.EncryptionConfigError as e:
        raise _refused(e.code, e.message) from None


class BucketEncryptions(BucketDocuments):
    """Default encryptions: refused (INVALID_KMS_PROVIDER) where OM has no master keystore, whose keys
    every write into the bucket would then need.

    Beside the document, the bucket's record says it has one (BucketRecord.sse_default), in the same
    transaction: openKey reads the record, never this table."""

    def __init__(self, om: OzoneManager) -> None:
        super().__init__(om, S3_BUCKET_ENCRYPTION_TABLE, _encryption)

    def put(self, volume: str, bucket: str, body: bytes) -> None:
        kept = self.read(body, bucket)
        om = self.om
        if om.master_keys is None:
            raise OMException(
                OMResultCode.INVALID_KMS_PROVIDER, f"{bucket}: no SSE master keystore ({KEYSTORE_KEY})"
            )
        with om.lock:
            parent = replace(om.bucket_info(volume, bucket), sse_default=True)
            name = bucket_key(volume, bucket)
            om.commit([(self.table, name, kept), (BUCKET_TABLE, name, om_records.encode_bucket(parent))])

    def delete(self, volume: str, bucket: str) -> None:
        om = self.om
        with om.lock:
            parent = om.bucket_info(volume, bucket)
            name = bucket_key(volume, bucket)
            if om.store.get(self.table, name) is not None or parent.sse_default:
                encoded = om_records.encode_bucket(replace(parent, sse_default=False))
                om.commit([(self.table, name, None), (BUCKET_TABLE, name, encoded)])


def cors(om: OzoneManager) -> BucketDocuments:
    return BucketDocuments(om, S3_BUCKET_CORS_TABLE, _cors)


def lifecycle(om: OzoneManager) -> BucketDocuments:
    return BucketDocuments(om, S3_BUCKET_LIFECYCLE_TABLE, _lifecycle)


def public_access_block(om: OzoneManager) -> BucketDocuments:
    """A PublicAccessBlock changes no policy already kept (as Amazon's: BlockPublicPolicy refuses later
    puts)."""
    return BucketDocuments(om, S3_BUCKET_PUBLIC_ACCESS_BLOCK_TABLE, _public_access_block)


def _ownership_controls(body: bytes, bucket: str) -> bytes:
    try:
        return s3_ownership.document(s3_ownership.parse(body))
    except s3_ownership.OwnershipControlsError as e:
        raise _refused(e.code, str(e)) from None


class OwnershipControls(BucketDocuments):
    """Ownership controls: whether the bucket's S3 ACLs apply (hdds/s3_ownership.py). BucketOwnerEnforced is
    refused while the bucket's ACL grants anyone but its owner (InvalidBucketAclWithObjectOwnership, as
    Amazon's), judged here under OM's lock, so no PutBucketAcl slips between the gateway's look and the
    write (the session's reread)."""

    def __init__(self, om: OzoneManager) -> None:
        super().__init__(om, S3_BUCKET_OWNERSHIP_CONTROLS_TABLE, _ownership_controls)

    def _check(self, volume: str, bucket: str, kept: bytes) -> None:
        if s3_ownership.parse(kept).acls_enabled:
            return
        record = self.om.bucket_info(volume, bucket)
        if not s3_acl.owner_only(s3_acl.from_ozone(record.acls, record.owner), record.owner):
            raise _refused(
                "InvalidBucketAclWithObjectOwnership",
                "Bucket cannot have ACLs set with ObjectOwnership's BucketOwnerEnforced setting",
            )


def ownership_controls(om: OzoneManager) -> BucketDocuments:
    return OwnershipControls(om)
