"""OM's locks: key requests run side by side, each under its key's lock (HDDS-11898's move from volume and
bucket locks to key-prefix locks); everything else is exclusive.

- `NamespaceLock` is shared by key requests and exclusive for the rest (volumes, buckets, properties,
  multipart uploads, S3 secrets, the background services), which are rare and touch many records.
  Reentrant both ways, and the exclusive holder may take it shared.
- `key(...)`: the namespace shared plus the stripes of the named keys, taken in stripe order (a rename
  names two keys), so two requests on one key never interleave their read-check-write.
- `usage`: the short section where a key request reads its bucket's and volume's usage, checks the
  quotas, and queues its transaction: counters are read-modify-write records, and the transaction must
  enter the double buffer in the order its counters were computed.

Writers wait while the exclusive side is wanted, so a bucket deletion is not starved by a stream of key
requests; a thread already holding the shared side re-enters it without waiting (no self-deadlock).
"""

from __future__ import annotations

import threading
import zlib

KEY_LOCK_STRIPES = 1024


class NamespaceLock:
    def __init__(self) -> None:
        self._mutex = threading.Lock()
        self._cond = threading.Condition(self._mutex)
        self._readers = 0
        self._writer: int | None = None
        self._writer_depth = 0
        self._writers_waiting = 0
        self._local = threading.local()
        self._shared = _Shared(self)

    # ------------------------------------------------------------------ shared
    def acquire_shared(self) -> None:
        local = self._local
        depth = getattr(local, "depth", 0)
        if depth == 0:
            me = threading.get_ident()
            with self._mutex:  # the condition's lock, taken directly: every key request passes here
                if self._writer == me:
                    local.counted = False
                else:
                    while self._writer is not None or self._writers_waiting:
                        self._cond.wait()
                    self._readers += 1
                    local.counted = True
        local.depth = depth + 1

    def release_shared(self) -> None:
        local = self._local
        local.depth -= 1
        if local.depth == 0 and local.counted:
            with self._mutex:
                self._readers -= 1
                if self._readers == 0 and self._writers_waiting:  # only a writer waits for no readers
                    self._cond.notify_all()

    # ------------------------------------------------------------------ exclusive
    def acquire(self) -> None:
        me = threading.get_ident()
        if self._writer == me:
            self._writer_depth += 1
            return
        if getattr(self._local, "depth", 0):
            raise RuntimeError("OM lock: a key request cannot take the namespace exclusively")
        with self._cond:
            self._writers_waiting += 1
            try:
                while self._writer is not None or self._readers:
                    self._cond.wait()
            finally:
                self._writers_waiting -= 1
            self._writer = me
            self._writer_depth = 1

    def release(self) -> None:
        self._writer_depth -= 1
        if self._writer_depth == 0:
            with self._cond:
                self._writer = None
                self._cond.notify_all()

    def __enter__(self) -> NamespaceLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def shared(self) -> _Shared:
        """`with lock.shared():` (a plain context manager: every key request takes it)."""
        return self._shared


class _Shared:
    __slots__ = ("_lock",)

    def __init__(self, lock: NamespaceLock) -> None:
        self._lock = lock

    def __enter__(self) -> None:
        self._lock.acquire_shared()

    def __exit__(self, *exc: object) -> None:
        self._lock.release_shared()


class _KeyLocks:
    """The namespace shared, then the stripes in order (OMLocks.key)."""

    __slots__ = ("_namespace", "_stripes")

    def __init__(self, namespace: NamespaceLock, stripes: list[threading.RLock]) -> None:
        self._namespace = namespace
        self._stripes = stripes

    def __enter__(self) -> None:
        self._namespace.acquire_shared()
        for stripe in self._stripes:
            stripe.acquire()

    def __exit__(self, *exc: object) -> None:
        for stripe in reversed(self._stripes):
            stripe.release()
        self._namespace.release_shared()


class OMLocks:
    def __init__(self, stripes: int = KEY_LOCK_STRIPES) -> None:
        self.namespace = NamespaceLock()
        self.usage = threading.RLock()
        self._stripes = [threading.RLock() for _ in range(stripes)]

    def _stripe(self, name: str) -> int:
        return zlib.crc32(name.encode()) % len(self._stripes)

    def key(self, *names: str) -> _KeyLocks:
        """The namespace shared, then the stripe of each key name (a full /vol/bucket/key path)."""
        stripes = self._stripes
        if len(names) == 1:
            return _KeyLocks(self.namespace, [stripes[self._stripe(names[0])]])
        return _KeyLocks(self.namespace, [stripes[i] for i in sorted({self._stripe(n) for n in names})])
