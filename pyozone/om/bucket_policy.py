"""A bucket's S3 bucket policy, kept by OM in s3BucketPolicyTable apart from the bucket's record, as its
CORS configuration is (om/bucket_cors.py): pyozone's, Ozone's gateway has no bucket policies.

OM reads every document with the kernel's policy model (hdds/s3_policy.py) before it keeps it, as sent
(GetBucketPolicy answers what was put), so a policy the gateway cannot read is never stored. The service
checks that the caller owns the bucket (Access.bucket_owner); the row goes with its bucket
(OzoneManager.delete_bucket). OM's own ACLs are not changed by a policy: the S3 gateway applies it.
"""

from __future__ import annotations

from pyozone.hdds.s3_policy import PolicyError, parse
from pyozone.om.core import OzoneManager
from pyozone.om.exceptions import OMException, OMResultCode
from pyozone.om.metadata import S3_BUCKET_POLICY_TABLE, bucket_key


class BucketPolicyManager:
    def __init__(self, om: OzoneManager) -> None:
        self.om = om

    def put(self, volume: str, bucket: str, policy: bytes) -> None:
        """Replaces the bucket's policy; a document S3 refuses is INVALID_REQUEST, with S3's code and
        words."""
        try:
            parse(policy, bucket)
        except PolicyError as e:
            raise OMException(OMResultCode.INVALID_REQUEST, f"{e.code}: {e.message}") from None
        om = self.om
        with om.lock:
            om.info_bucket(volume, bucket)
            om.commit([(S3_BUCKET_POLICY_TABLE, bucket_key(volume, bucket), policy)])

    def get(self, volume: str, bucket: str) -> bytes | None:
        """None: the bucket has no policy."""
        self.om.info_bucket(volume, bucket)
        return self.om.store.get(S3_BUCKET_POLICY_TABLE, bucket_key(volume, bucket))

    def delete(self, volume: str, bucket: str) -> None:
        """Whether or not the bucket had one, as S3's DeleteBucketPolicy answers."""
        om = self.om
        with om.lock:
            om.info_bucket(volume, bucket)
            if om.store.get(S3_BUCKET_POLICY_TABLE, bucket_key(volume, bucket)) is not None:
                om.commit([(S3_BUCKET_POLICY_TABLE, bucket_key(volume, bucket), None)])
