"""A bucket's S3 lifecycle configuration, kept by OM in s3BucketLifecycleTable apart from the bucket's
record, as the CORS configuration is (om/bucket_cors.py; pyozone's: Ozone's gateway has no lifecycle).

OM reads every document with the kernel's lifecycle model before it keeps it (and keeps it as
GetBucketLifecycleConfiguration answers it, hdds/s3_lifecycle.document), so the lifecycle service
(om/lifecycle.py) never meets a document it cannot read. The service checks that the caller owns the
bucket (Access.bucket_owner); the row goes with its bucket (OzoneManager.delete_bucket).
"""

from __future__ import annotations

from pyozone.hdds.s3_lifecycle import LifecycleError, document, parse
from pyozone.om.core import OzoneManager
from pyozone.om.exceptions import OMException, OMResultCode
from pyozone.om.metadata import S3_BUCKET_LIFECYCLE_TABLE, bucket_key


class BucketLifecycleManager:
    def __init__(self, om: OzoneManager) -> None:
        self.om = om

    def put(self, volume: str, bucket: str, configuration: bytes) -> None:
        """Replaces the bucket's configuration; a document S3 refuses (a transition included) is
        INVALID_REQUEST, with S3's code and words."""
        try:
            kept = document(parse(configuration))
        except LifecycleError as e:
            raise OMException(OMResultCode.INVALID_REQUEST, f"{e.code}: {e.message or e.code}") from None
        om = self.om
        with om.lock:
            om.info_bucket(volume, bucket)
            om.commit([(S3_BUCKET_LIFECYCLE_TABLE, bucket_key(volume, bucket), kept)])

    def get(self, volume: str, bucket: str) -> bytes | None:
        """None: the bucket has no configuration."""
        self.om.info_bucket(volume, bucket)
        return self.om.store.get(S3_BUCKET_LIFECYCLE_TABLE, bucket_key(volume, bucket))

    def delete(self, volume: str, bucket: str) -> None:
        """Whether or not the bucket had one, as S3's DeleteBucketLifecycle answers."""
        om = self.om
        with om.lock:
            om.info_bucket(volume, bucket)
            if om.store.get(S3_BUCKET_LIFECYCLE_TABLE, bucket_key(volume, bucket)) is not None:
                om.commit([(S3_BUCKET_LIFECYCLE_TABLE, bucket_key(volume, bucket), None)])
