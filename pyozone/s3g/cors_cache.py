"""The S3 gateway's short memory of buckets' CORS configurations: a browser sends Origin on every
cross-origin request, and each would otherwise cost OM a getBucketCors before it is even authenticated.

Bounded (MAX_BUCKETS, and MAX_BYTES of the documents' text, a parsed one taking a few times that; the
oldest forgotten first) and short (TTL_MS): a change made through another gateway shows within TTL_MS;
this gateway's own PutBucketCors, DeleteBucketCors, CreateBucket and DeleteBucket forget the bucket at
once, and an OM read that began before such a forget is not remembered (`generation`, R29's N5): it may
hold what the change replaced. Concurrent requests for a bucket not remembered share one OM read
(`reading`, single flight). The clock is injected, so the expiry is testable without sleeping.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict

from pyozone.hdds.clock import Clock, SystemClock
from pyozone.hdds.s3_cors import CORSConfiguration

TTL_MS = 3_000
MAX_BUCKETS = 1_024
MAX_BYTES = 8 << 20


class CorsCache:
    def __init__(
        self,
        clock: Clock | None = None,
        ttl_ms: int = TTL_MS,
        max_buckets: int = MAX_BUCKETS,
        max_bytes: int = MAX_BYTES,
    ) -> None:
        self.clock = clock or SystemClock()
        self.ttl_ms = ttl_ms
        self.max_buckets = max_buckets
        self.max_bytes = max_bytes
        self._entries: OrderedDict[str, tuple[int, CORSConfiguration | None, int]] = OrderedDict()
        self._bytes = 0
        self.generation = 0
        """Bumped by every forget: a reader passes the value it saw before asking OM to `put`."""
        self.reading: dict[str, asyncio.Future[CORSConfiguration | None]] = {}
        """The OM read in flight per bucket, which later requests await instead of reading again."""

    def get(self, bucket: str) -> tuple[bool, CORSConfiguration | None]:
        """(known, configuration): known False when the bucket is not remembered or expired."""
        found = self._entries.get(bucket)
        if found is None:
            return False, None
        expires_ms, config, _ = found
        if self.clock.now_ms() >= expires_ms:
            self._drop(bucket)
            return False, None
        return True, config

    def put(
        self, bucket: str, config: CORSConfiguration | None, size: int = 0, generation: int | None = None
    ) -> None:
        """`size`: the bytes of the document `config` was read from; `generation`: `self.generation` when
        the read began; a forget since then means the read may be stale, and it is not remembered."""
        if generation is not None and generation != self.generation:
            return
        self._drop(bucket)
        self._entries[bucket] = (self.clock.now_ms() + self.ttl_ms, config, size)
        self._bytes += size
        while len(self._entries) > self.max_buckets or self._bytes > self.max_bytes:
            _, (_, _, dropped) = self._entries.popitem(last=False)
            self._bytes -= dropped

    def forget(self, bucket: str) -> None:
        """The bucket's configuration changed here, or the bucket went or came: read it from OM next."""
        self.generation += 1
        self.reading.pop(bucket, None)  # a request from now on reads again
        self._drop(bucket)

    def _drop(self, bucket: str) -> None:
        found = self._entries.pop(bucket, None)
        if found is not None:
            self._bytes -= found[2]

    def __len__(self) -> int:
        return len(self._entries)
