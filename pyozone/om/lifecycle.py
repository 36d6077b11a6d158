"""The S3 lifecycle service: the OM leader applies each bucket's enabled lifecycle rules every
ozone.om.s3.lifecycle.service.interval, at most ozone.om.s3.lifecycle.limit.per.task actions a run
(pyozone's; modelled on Ozone's OpenKeyCleanupService, a run-once step on the leader's timer). When a
rule falls due is the kernel's (hdds/s3_lifecycle.py); this module finds what is due and does it.

A run looks at the buckets with a configuration (s3BucketLifecycleTable) and, per bucket, at the versions
of each key under its rules' prefixes and at its multipart uploads, without OM's lock; what it finds due
it plans again, and carries out, a key at a time under OM's exclusive lock, so a key written meanwhile is
judged as it is then (and a configuration changed meanwhile stops the bucket's actions). Every action is
an ordinary OM request (KeyManager.delete, MultipartManager.abort): replicated through OM's Raft on
an HA leader, its blocks to deletedTable for KeyDeletingService:
- a current version past its Expiration (Days or Date): deleted; in a versioned bucket a delete marker
  takes its place (Suspended: the `null` version goes), as a DeleteObject without a version does;
- a noncurrent version (a delete marker too) past NoncurrentDays since it became noncurrent (its
  successor's creation), beyond the NewerNoncurrentVersions kept: removed for good;
- an expired object delete marker (the key's only version left): removed;
- an incomplete multipart upload past DaysAfterInitiation: aborted.
A noncurrent version S3 Object Lock holds (legal hold, retention in force) is not due (Amazon's "Managing
S3 Lifecycle policies with Object Lock"); OM refuses its deletion anyway (om/object_lock.py).
"""

from __future__ import annotations

import heapq
import logging
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from enum import Enum

from pyozone.hdds.om_records import KeyRecord, MultipartUploadRecord
from pyozone.hdds.s3_lifecycle import LifecycleConfiguration, LifecycleError, LifecycleRun, ObjectFacts, parse
from pyozone.hdds.s3_object_lock import delete_refusal
from pyozone.om import versions
from pyozone.om.core import OzoneManager
from pyozone.om.exceptions import OMException, OMResultCode
from pyozone.om.metadata import (
    KEY_TABLE,
    MULTIPART_INFO_TABLE,
    OBJECT_VERSION_TABLE,
    S3_BUCKET_LIFECYCLE_TABLE,
    bucket_key,
)
from pyozone.om.multipart import MultipartManager
from pyozone.protocol import om_records

log = logging.getLogger(__name__)


class Action(Enum):
    EXPIRE_CURRENT = "expire current version"
    EXPIRE_NONCURRENT = "expire noncurrent version"
    REMOVE_MARKER = "remove expired object delete marker"


@dataclass(frozen=True, slots=True)
class LifecycleProgress:
    """The service's totals since OM started (read whole by the metrics scrape)."""

    runs: int = 0
    keys_expired: int = 0
    versions_expired: int = 0
    markers_removed: int = 0
    uploads_aborted: int = 0
    last_run_ms: int = 0  # wall clock; 0: no run yet
    last_run_duration_ms: int = 0

    def after(self, run: LifecycleRun, now_ms: int, duration_ms: int) -> LifecycleProgress:
        return LifecycleProgress(
            self.runs + 1,
            self.keys_expired + run.keys_expired,
            self.versions_expired + run.versions_expired,
            self.markers_removed + run.markers_removed,
            self.uploads_aborted + run.uploads_aborted,
            now_ms,
            duration_ms,
        )


@dataclass(frozen=True, slots=True)
class _Cursor:
    """Where the last run's budget ran out, so the next run resumes there rather than at the first bucket
    (a bucket always busy would starve those after it): in the bucket of s3BucketLifecycleTable's row
    `bucket`, after the key `key` (None: its keys were done; its uploads took the budget, so the next
    run starts with the bucket after it). Kept in memory on the leader: a new leader starts over."""

    bucket: str
    key: str | None


def _facts(record: KeyRecord) -> ObjectFacts:
    return ObjectFacts(record.key, record.data_size, record.tags, record.creation_ms)


class S3LifecycleService:
    def __init__(self, om: OzoneManager) -> None:
        self.om = om
        self.multipart = MultipartManager(om)
        self.progress = LifecycleProgress()
        self._cursor: _Cursor | None = None
        self._running = threading.Lock()
        """One run at a time (the timer's and runS3Lifecycle's both run on OM's executor): the cursor and
        `progress` are read and written by one run only."""

    def run_once(self, now_ms: int = 0) -> LifecycleRun:
        """One run, judged at `now_ms` (0: OM's wall clock)."""
        clock = self.om.clock
        with self._running:
            started = clock.now_ms()
            when = now_ms or clock.wall_ms()
            run = self._run(when)
            self.progress = self.progress.after(run, clock.wall_ms(), clock.now_ms() - started)
        if run.actions:
            log.info("S3 lifecycle: %s", run)
        return run

    def _order(self) -> Iterator[tuple[str, bytes, str | None]]:
        """The buckets with a configuration (row name, document, the key to resume after), from where the
        last run stopped round to it: that bucket after its last key looked at, those after it, those
        before it, and that bucket's keys from the start (only reached with budget left)."""
        store, table = self.om.store, S3_BUCKET_LIFECYCLE_TABLE
        cursor, self._cursor = self._cursor, None
        if cursor is None:
            yield from ((name, value, None) for name, value in store.scan(table))
            return
        if cursor.key is not None:
            value = store.get(table, cursor.bucket)
            if value is not None:
                yield cursor.bucket, value, cursor.key
        yield from ((name, value, None) for name, value in store.scan(table, start_after=cursor.bucket))
        for name, value in store.scan(table):
            if name > cursor.bucket:
                break
            yield name, value, None

    def _run(self, now_ms: int) -> LifecycleRun:
        budget = self.om.settings.s3_lifecycle_limit
        total = LifecycleRun()
        for name, value, after in self._order():
            if total.actions >= budget:
                break
            _, volume, bucket = name.split("/", 2)
            config = self._config(name, value)
            if config is None:
                continue
            run, stopped = self._bucket(volume, bucket, value, config, now_ms, budget - total.actions, after)
            total = LifecycleRun(
                total.keys_expired + run.keys_expired,
                total.versions_expired + run.versions_expired,
                total.markers_removed + run.markers_removed,
                total.uploads_aborted + run.uploads_aborted,
            )
            if stopped is not None or total.actions >= budget:  # the next run resumes here
                self._cursor = _Cursor(name, stopped or None)
        return total

    @staticmethod
    def _config(name: str, value: bytes) -> LifecycleConfiguration | None:
        try:
            config = parse(value, limit=None)
        except LifecycleError as e:  # OM checked it before keeping it: a newer OM's, say
            log.warning("S3 lifecycle: bucket %s: its configuration is unreadable (%s); skipped", name, e)
            return None
        return config if any(r.enabled for r in config.rules) else None

    def _bucket(
        self,
        volume: str,
        bucket: str,
        kept: bytes,
        config: LifecycleConfiguration,
        now_ms: int,
        budget: int,
        after: str | None = None,
    ) -> tuple[LifecycleRun, str | None]:
        """What the bucket's due actions, at most `budget`, did (its keys after `after` only), and where
        the budget ran out: the last key looked at, "" in its uploads, None when it did not."""
        keys: list[str] = []
        found = 0
        stopped: str | None = None
        for key, current, older in self._versions(volume, bucket, config.key_prefixes(), after):
            if found >= budget:
                stopped = keys[-1]
                break
            due = len(_due(key, current, older, config, now_ms))
            if due:
                keys.append(key)
                found += due
        due_uploads = [
            (record.key, record.upload_id)
            for record in self._uploads(volume, bucket, config.upload_prefixes())
            if config.upload_aborts(record.key, record.creation_ms, now_ms)
        ]
        uploads = due_uploads[: max(0, budget - found)]
        if stopped is None and len(uploads) < len(due_uploads):
            stopped = keys[-1] if found >= budget and keys else ""
        if not keys and not uploads:
            return LifecycleRun(), stopped
        counts = dict.fromkeys(Action, 0)
        aborted = 0
        om = self.om
        for key in keys:
            with om.lock:  # planned again, and carried out, with nothing written meanwhile; a key at a time
                if om.store.get(S3_BUCKET_LIFECYCLE_TABLE, bucket_key(volume, bucket)) != kept:
                    break  # changed or deleted since: the next run reads the new one
                for action, version in self._plan(volume, bucket, key, config, now_ms)[
                    : budget - sum(counts.values())
                ]:
                    try:
                        om.keys.delete(volume, bucket, key, version=version)
                    except OMException as e:  # S3 Object Lock holds it by OM's clock (om/object_lock.py)
                        if e.code is not OMResultCode.PERMISSION_DENIED:
                            raise
                        continue
                    counts[action] += 1
        for key, upload_id in uploads:
            with om.lock:
                if om.store.get(S3_BUCKET_LIFECYCLE_TABLE, bucket_key(volume, bucket)) != kept:
                    break  # as above
                try:
                    self.multipart.abort(volume, bucket, key, upload_id)
                except OMException as e:
                    if e.code is not OMResultCode.NO_SUCH_MULTIPART_UPLOAD_ERROR:
                        raise
                    continue  # completed or aborted meanwhile
                aborted += 1
        run = LifecycleRun(
            counts[Action.EXPIRE_CURRENT],
            counts[Action.EXPIRE_NONCURRENT],
            counts[Action.REMOVE_MARKER],
            aborted,
        )
        return run, stopped

    def _versions(
        self, volume: str, bucket: str, prefixes: tuple[str, ...], after: str | None = None
    ) -> Iterator[tuple[str, KeyRecord | None, list[KeyRecord]]]:
        """Each key under `prefixes` (disjoint, in order), after the key `after` if given, with its current
        version (None: none) and its other versions newest first: one merged scan of keyTable and
        objectVersionTable per prefix (a key's current version, named by the key alone, sorts before its
        others)."""
        base = bucket_key(volume, bucket) + "/"
        store = self.om.store
        start = None if after is None else base + after
        for prefix in prefixes:
            entries = heapq.merge(
                ((name, True, value) for name, value in store.scan(KEY_TABLE, base + prefix, start)),
                (
                    (name, False, value)
                    for name, value in store.scan(OBJECT_VERSION_TABLE, base + prefix, start)
                ),
                key=lambda entry: entry[0],
            )
            key, current, older = "", None, []
            for name, is_current, value in entries:
                if not is_current and name.endswith(versions.NULL_POINTER):
                    continue  # the null version's pointer row (versions.py), not a version
                name_key = name[len(base) :].split("\x00", 1)[0]
                if name_key == after:
                    continue  # `after`'s own versions (named after it), without its current one
                if name_key != key and (current is not None or older):
                    yield key, current, older
                    current, older = None, []
                key = name_key
                record = om_records.decode_key(value)
                if is_current:
                    current = record
                else:
                    older.append(record)
            if current is not None or older:
                yield key, current, older

    def _uploads(
        self, volume: str, bucket: str, prefixes: tuple[str, ...]
    ) -> Iterator[MultipartUploadRecord]:
        base = bucket_key(volume, bucket) + "/"
        for prefix in prefixes:
            for _, value in self.om.store.scan(MULTIPART_INFO_TABLE, base + prefix):
                yield om_records.decode_multipart(value)

    def _plan(
        self, volume: str, bucket: str, key: str, config: LifecycleConfiguration, now_ms: int
    ) -> list[tuple[Action, str]]:
        """What is due for the key's versions at `now_ms`, as om.db holds them now."""
        current = self.om.keys.find(volume, bucket, key)
        older = list(versions.older_versions(self.om.store, volume, bucket, key))
        return _due(key, current, older, config, now_ms)


def _due(
    key: str, current: KeyRecord | None, older: list[KeyRecord], config: LifecycleConfiguration, now_ms: int
) -> list[tuple[Action, str]]:
    """What is due at `now_ms` for a key of current version `current` (None: none) and other versions
    `older`, newest first: (action, version id; "" for the current one)."""
    due: list[tuple[Action, str]] = []
    if current is not None and config.current_expires(_facts(current), now_ms):
        due.append((Action.EXPIRE_CURRENT, ""))
    successor = current.creation_ms if current is not None else None
    newer = 0  # noncurrent versions newer than the one looked at
    for record in older:
        if successor is None:  # a delete marker is the key's latest version
            if len(older) == 1 and config.removes_marker(key, record.creation_ms, now_ms):
                due.append((Action.REMOVE_MARKER, record.version_id))
        else:
            locked = delete_refusal(record.retention, record.legal_hold, now_ms, bypass=False)
            if not locked and config.noncurrent_expires(_facts(record), successor, newer, now_ms):
                due.append((Action.EXPIRE_NONCURRENT, record.version_id))
            newer += 0 if record.delete_marker else 1
        successor = record.creation_ms
    return due
