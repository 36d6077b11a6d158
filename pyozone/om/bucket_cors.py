"""A bucket's S3 CORS configuration, kept by OM in s3BucketCorsTable apart from the bucket's record
(pyozone's: Ozone's gateway has no bucket CORS). Apart, because the record travels with every listing,
every key commit and every setBucketProperty answer, and a configuration may be 64 KB.

OM reads every document with the kernel's CORS model before it keeps it (and keeps it as GetBucketCors
answers it, hdds/s3_cors.document), so a document the gateway cannot read is never stored. The service
checks that the caller owns the bucket (Access.bucket_owner); the table's row goes with its bucket
(OzoneManager.delete_bucket).
"""

from __future__ import annotations

from pyozone.hdds.s3_cors import CORSError, document, parse
from pyozone.om.core import OzoneManager
from pyozone.om.exceptions import OMException, OMResultCode
from pyozone.om.metadata import S3_BUCKET_CORS_TABLE, bucket_key


class BucketCorsManager:
    def __init__(self, om: OzoneManager) -> None:
        self.om = om

    def put(self, volume: str, bucket: str, configuration: bytes) -> None:
        """Replaces the bucket's configuration; a document S3 refuses is INVALID_REQUEST, with S3's code
        and words."""
        try:
            kept = document(parse(configuration))
        except CORSError as e:
            raise OMException(OMResultCode.INVALID_REQUEST, f"{e.code}: {e.message or e.code}") from None
        om = self.om
        with om.lock:
            om.info_bucket(volume, bucket)
            om.commit([(S3_BUCKET_CORS_TABLE, bucket_key(volume, bucket), kept)])

    def get(self, volume: str, bucket: str) -> bytes | None:
        """None: the bucket has no configuration."""
        self.om.info_bucket(volume, bucket)
        return self.om.store.get(S3_BUCKET_CORS_TABLE, bucket_key(volume, bucket))

    def delete(self, volume: str, bucket: str) -> None:
        """Whether or not the bucket had one, as S3's DeleteBucketCors answers."""
        om = self.om
        with om.lock:
            om.info_bucket(volume, bucket)
            if om.store.get(S3_BUCKET_CORS_TABLE, bucket_key(volume, bucket)) is not None:
                om.commit([(S3_BUCKET_CORS_TABLE, bucket_key(volume, bucket), None)])
