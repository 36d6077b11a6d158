"""How much OM's namespace holds, counted off the event loop and kept for a while, for the metrics scrape
and the web UI's overview.

The counts come from what OM keeps already: volumes are counted in volumeTable, buckets in bucketTable, and
keys are the sum of the buckets' usedNamespace (never a keyTable scan). Open keys and pending deletions
have no kept count, so their tables are counted up to COUNT_CAP entries: past it the count says "at
least". RocksDB's own estimate (rocksdb.estimate-num-keys) is no use here: every key commit rewrites its
bucket's and volume's records, and the estimate counts each rewrite until a compaction.

A count runs on OM's executor, one at a time. It is reused while nothing has changed since it began (the
`version` the daemon gives moves with every request that may change the namespace and every run of a
deleting service) and it is younger than the caller's max age. A scrape never waits for a count (it starts
one and shows the last); the web UI's overview waits for a current one. Counts are made only when asked,
so an idle OM, or one nobody watches, never counts.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from concurrent.futures import Executor, Future
from dataclasses import dataclass

from pyozone.om.metadata import BUCKET_TABLE, DELETED_TABLE, OPEN_KEY_TABLE, VOLUME_TABLE, OMMetadataStore
from pyozone.protocol import om_records

COUNT_CAP = 100_000
"""The most entries of openKeyTable or deletedTable one count reads (~0.1 s): a lower bound past it."""


@dataclass(frozen=True, slots=True)
class NamespaceCounts:
    volumes: int
    buckets: int
    keys: int  # committed keys: the sum of the buckets' usedNamespace
    used_bytes: int  # replicated bytes of committed keys: the sum of the volumes' usedBytes
    open_keys: int  # at most COUNT_CAP
    pending_deletions: int  # deletedTable entries (blocks SCM must still delete), at most COUNT_CAP
    counted_ms: int  # wall clock of the count
    seconds: float  # how long the count took

    @property
    def open_keys_capped(self) -> bool:
        return self.open_keys >= COUNT_CAP

    @property
    def pending_deletions_capped(self) -> bool:
        return self.pending_deletions >= COUNT_CAP


def count_namespace(store: OMMetadataStore) -> NamespaceCounts:
    """One count (blocking: run it on the executor)."""
    started = time.monotonic()
    volumes = used_bytes = 0
    for _, value in store.scan(VOLUME_TABLE):
        volumes += 1
        used_bytes += om_records.decode_volume(value).used_bytes
    buckets = keys = 0
    for _, value in store.scan(BUCKET_TABLE):
        buckets += 1
        keys += om_records.decode_bucket(value).used_namespace
    return NamespaceCounts(
        volumes, buckets, keys, used_bytes,
        _capped(store, OPEN_KEY_TABLE), _capped(store, DELETED_TABLE),
        int(time.time() * 1000), time.monotonic() - started,
    )  # fmt: skip


def _capped(store: OMMetadataStore, table: str) -> int:
    n = 0
    for _ in store.scan(table):
        n += 1
        if n >= COUNT_CAP:
            break
    return n


class NamespaceCounter:
    """The last count of `store` and the count running on `executor`, if any."""

    def __init__(
        self,
        store: OMMetadataStore,
        executor: Executor,
        version: Callable[[], object] = lambda: None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._store = store
        self._executor = executor
        self._version = version
        self._clock = clock
        self._lock = threading.Lock()
        self._running: Future[NamespaceCounts] | None = None
        self._taken_at = 0.0
        self._taken_version: object = None
        self.latest: NamespaceCounts | None = None

    def refresh(self, max_age_s: float) -> Future[NamespaceCounts] | None:
        """Starts a count unless the last is current (nothing changed since it began and it is younger than
        `max_age_s`) or one is running; the running count, or None when the last will do. Never blocks (a
        scrape calls it on the event loop)."""
        with self._lock:
            if (
                self.latest is not None
                and self._taken_version == self._version()
                and self._clock() - self._taken_at < max_age_s
            ):
                return None
            if self._running is None or self._running.done():
                try:
                    self._running = self._executor.submit(self._count)
                except RuntimeError:  # the executor is shut down: OM is stopping
                    return None
            return self._running

    async def current(self, max_age_s: float) -> NamespaceCounts:
        """A current count (waiting for one if need be). A count that was running when asked may have
        begun before the latest change, so one more is made then; never more (a namespace that keeps
        changing gets the count made while it changed)."""
        for _ in range(2):
            running = self.refresh(max_age_s)
            if running is None:
                break
            await asyncio.wrap_future(running)
        if self.latest is None:
            raise RuntimeError("OM is stopping: no count of its namespace")
        return self.latest

    def _count(self) -> NamespaceCounts:
        started, version = self._clock(), self._version()
        counts = count_namespace(self._store)
        with self._lock:
            self.latest, self._taken_at, self._taken_version = counts, started, version
        return counts
