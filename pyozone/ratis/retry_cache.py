"""The retry cache (Ratis's RetryCacheImpl): every member remembers the result of each client call it
applied, by the call's client id and call id, for `raft.server.retrycache.expirytime` after applying it.

A client that lost its answer (a failover, a lost reply) retries the same call, perhaps on another member;
if that member applied it, the retry is answered with the original result instead of applying it twice.
Entries name their call (`LogEntry.client_id/call_id`), so followers fill the cache as they apply, and a new
leader knows every call its predecessor applied. Entries expire by the injected clock, oldest first, so the
cache holds at most what was applied within the expiry time.

Not kept across a restart (as Ratis): a member that restarts from a snapshot knows only the calls it applies
after it, so a call applied before the snapshot and retried after such a restart is applied again.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass


@dataclass(frozen=True)
class CachedResult:
    index: int
    result: object
    applied_ms: int


class RetryCache:
    def __init__(self, expiry_ms: int) -> None:
        self._expiry_ms = expiry_ms
        self._entries: OrderedDict[tuple[str, int], CachedResult] = OrderedDict()

    def record(self, client_id: str, call_id: int, index: int, result: object, now_ms: int) -> None:
        self._expire(now_ms)
        self._entries.setdefault((client_id, call_id), CachedResult(index, result, now_ms))

    def get(self, client_id: str, call_id: int, now_ms: int) -> CachedResult | None:
        self._expire(now_ms)
        return self._entries.get((client_id, call_id))

    def __len__(self) -> int:
        return len(self._entries)

    def _expire(self, now_ms: int) -> None:
        while self._entries:
            key, oldest = next(iter(self._entries.items()))
            if now_ms - oldest.applied_ms < self._expiry_ms:
                return
            del self._entries[key]
