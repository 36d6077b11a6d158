"""The S3 gateway's short memory of buckets' CORS configurations (bucket_cache.py): a browser sends Origin
on every cross-origin request, and each would otherwise cost OM a getBucketCors before it is even
authenticated. This gateway's own PutBucketCors, DeleteBucketCors, CreateBucket and DeleteBucket forget
the bucket at once. A bucket that does not exist is remembered too (NO_BUCKET): anyone may send Origins or
preflights for made-up names.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyozone.hdds.s3_cors import CORSConfiguration
from pyozone.s3g.bucket_cache import BucketCache


@dataclass(frozen=True, slots=True)
class BucketCors:
    """What a lookup found: the bucket's configuration (None: it has none), or no bucket at all."""

    config: CORSConfiguration | None
    bucket_exists: bool = True


NO_BUCKET = BucketCors(None, bucket_exists=False)


class CorsCache(BucketCache[BucketCors]):
    """Buckets' CORS configurations, TTL_MS at a time."""
