"""A bucket's S3 bucket policy and PublicAccessBlock, kept by OM in s3BucketPolicyTable and
s3BucketPublicAccessBlockTable apart from the bucket's record, as its CORS configuration is
(om/bucket_cors.py): pyozone's, Ozone's gateway has neither.

OM reads every document with the kernel's models (hdds/s3_policy.py, hdds/s3_public_access.py) before it
keeps it: a policy as sent (GetBucketPolicy answers what was put), a PublicAccessBlock as
GetPublicAccessBlock answers it, so nothing the gateway cannot read is stored. A public policy is refused
under the bucket's BlockPublicPolicy in the step that would keep it, under OM's lock, so no concurrent
PutPublicAccessBlock slips between the check and the write. The service checks that the caller owns the
bucket (Access.bucket_owner); the rows go with their bucket (OzoneManager.delete_bucket). OM's own ACLs
are not changed by either: the S3 gateway applies them.
"""

from __future__ import annotations

from pyozone.hdds import s3_public_access
from pyozone.hdds.s3_policy import PolicyError, is_public, parse
from pyozone.hdds.s3_public_access import PublicAccessBlock, PublicAccessBlockError
from pyozone.om.core import OzoneManager
from pyozone.om.exceptions import OMException, OMResultCode
from pyozone.om.metadata import S3_BUCKET_POLICY_TABLE, S3_BUCKET_PUBLIC_ACCESS_BLOCK_TABLE, bucket_key


class BucketPolicyManager:
    def __init__(self, om: OzoneManager) -> None:
        self.om = om

    def put(self, volume: str, bucket: str, policy: bytes) -> None:
        """Replaces the bucket's policy; a document S3 refuses is INVALID_REQUEST, with S3's code and
        words; a public one under BlockPublicPolicy is PERMISSION_DENIED (S3's AccessDenied)."""
        try:
            public = is_public(parse(policy, bucket))
        except PolicyError as e:
            raise OMException(OMResultCode.INVALID_REQUEST, f"{e.code}: {e.message}") from None
        om = self.om
        with om.lock:
            om.info_bucket(volume, bucket)
            if public and self._public_access_block(volume, bucket).BlockPublicPolicy:
                raise OMException(
                    OMResultCode.PERMISSION_DENIED,
                    f"The policy makes bucket {volume}/{bucket} public and its PublicAccessBlock blocks "
                    "public policies (BlockPublicPolicy).",
                )
            om.commit([(S3_BUCKET_POLICY_TABLE, bucket_key(volume, bucket), policy)])

    def get(self, volume: str, bucket: str) -> bytes | None:
        """None: the bucket has no policy."""
        self.om.info_bucket(volume, bucket)
        return self.om.store.get(S3_BUCKET_POLICY_TABLE, bucket_key(volume, bucket))

    def delete(self, volume: str, bucket: str) -> None:
        """Whether or not the bucket had one, as S3's DeleteBucketPolicy answers."""
        self._delete(S3_BUCKET_POLICY_TABLE, volume, bucket)

    def put_public_access_block(self, volume: str, bucket: str, configuration: bytes) -> None:
        """Replaces the bucket's PublicAccessBlock; a document S3 refuses is INVALID_REQUEST. It changes no
        policy already kept (as Amazon's: BlockPublicPolicy refuses later puts)."""
        try:
            kept = s3_public_access.document(s3_public_access.parse(configuration))
        except PublicAccessBlockError as e:
            raise OMException(OMResultCode.INVALID_REQUEST, f"{e.code}: {e}") from None
        om = self.om
        with om.lock:
            om.info_bucket(volume, bucket)
            om.commit([(S3_BUCKET_PUBLIC_ACCESS_BLOCK_TABLE, bucket_key(volume, bucket), kept)])

    def get_public_access_block(self, volume: str, bucket: str) -> bytes | None:
        """None: the bucket has none."""
        self.om.info_bucket(volume, bucket)
        return self.om.store.get(S3_BUCKET_PUBLIC_ACCESS_BLOCK_TABLE, bucket_key(volume, bucket))

    def delete_public_access_block(self, volume: str, bucket: str) -> None:
        self._delete(S3_BUCKET_PUBLIC_ACCESS_BLOCK_TABLE, volume, bucket)

    def _public_access_block(self, volume: str, bucket: str) -> PublicAccessBlock:
        kept = self.om.store.get(S3_BUCKET_PUBLIC_ACCESS_BLOCK_TABLE, bucket_key(volume, bucket))
        return s3_public_access.parse(kept) if kept is not None else s3_public_access.NONE

    def _delete(self, table: str, volume: str, bucket: str) -> None:
        om = self.om
        with om.lock:
            om.info_bucket(volume, bucket)
            if om.store.get(table, bucket_key(volume, bucket)) is not None:
                om.commit([(table, bucket_key(volume, bucket), None)])
