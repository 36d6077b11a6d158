"""The S3 gateway's short memory of what OM keeps per bucket and the gateway reads before it answers a
request (a CORS configuration, a bucket policy): each would otherwise cost OM a read per request, most
before the request is even authenticated.

Bounded (max_buckets, and max_bytes of the documents' text, a parsed one taking a few times that; the
oldest forgotten first) and short (ttl_ms): a change made through another gateway shows within ttl_ms;
this gateway's own changes forget the bucket at once, and an OM read that began before such a forget is
not remembered (R29's N5): it may hold what the change replaced. Concurrent requests for a bucket not
remembered share one OM read (`load`, single flight). What a lookup finds for a bucket that does not exist
is remembered too: anyone may name made-up buckets. The clock is injected, so the expiry is testable
without sleeping.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Generic, TypeVar

from pyozone.hdds.clock import Clock, SystemClock

TTL_MS = 3_000
MAX_BUCKETS = 1_024
MAX_BYTES = 8 << 20

V = TypeVar("V")

Reader = Callable[[], Awaitable[tuple[V, int]]]
"""Reads a bucket's entry from OM: what it found, and the bytes of the document kept."""


class BucketCache(Generic[V]):
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
        self._entries: OrderedDict[str, tuple[int, V, int]] = OrderedDict()
        self._bytes = 0
        self.reading: dict[str, asyncio.Future[V]] = {}
        """The OM read in flight per bucket, which later requests await instead of reading again."""

    def get(self, bucket: str) -> V | None:
        """What is remembered of the bucket; None when nothing is, or it expired."""
        found = self._entries.get(bucket)
        if found is None:
            return None
        expires_ms, value, _ = found
        if self.clock.now_ms() >= expires_ms:
            self._drop(bucket)
            return None
        return value

    async def load(self, bucket: str, read: Reader[V]) -> V:
        """What is remembered, else what `read` finds, remembered: the first request since the entry went
        reads, the others wait for it; a waiter's cancellation leaves the read to the others."""
        known = self.get(bucket)
        if known is not None:
            return known
        reading = self.reading.get(bucket)
        if reading is None:
            reading = self.reading[bucket] = asyncio.ensure_future(self._read(bucket, read))
            reading.add_done_callback(
                lambda done: self.reading.pop(bucket) if self.reading.get(bucket) is done else None
            )
        return await asyncio.shield(reading)

    async def _read(self, bucket: str, read: Reader[V]) -> V:
        found, size = await read()
        if self.reading.get(bucket) is asyncio.current_task():  # not forgotten meanwhile
            self.put(bucket, found, size)
        return found

    def put(self, bucket: str, value: V, size: int = 0) -> None:
        """`size`: the bytes of the document `value` was read from."""
        self._drop(bucket)
        self._entries[bucket] = (self.clock.now_ms() + self.ttl_ms, value, size)
        self._bytes += size
        while len(self._entries) > self.max_buckets or self._bytes > self.max_bytes:
            _, (_, _, dropped) = self._entries.popitem(last=False)
            self._bytes -= dropped

    def forget(self, bucket: str) -> None:
        """The bucket's entry changed here, or the bucket went or came: read it from OM next, and
        remember nothing of a read begun before (it may hold what the change replaced)."""
        self.reading.pop(bucket, None)
        self._drop(bucket)

    @contextmanager
    def forgetting(self, bucket: str) -> Iterator[None]:
        """Around a change of the bucket or its entry: forgotten after it, whether it succeeded or not
        (a call that failed may still have taken effect)."""
        try:
            yield
        finally:
            self.forget(bucket)

    def _drop(self, bucket: str) -> None:
        found = self._entries.pop(bucket, None)
        if found is not None:
            self._bytes -= found[2]

    def __len__(self) -> int:
        return len(self._entries)
