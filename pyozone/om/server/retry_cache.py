"""OM's retry cache (Ratis's RetryCache, ozone.om.ratis.server.retry.cache.timeout): a call's
(user, client id, call id) -> its first answer, so a call retried after a failover is answered once and
never executed twice. Every OM fills it as it applies entries (om/server/ha.py); only the leader answers
from it, and only to the same user."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from pyozone.protocol.om_ratis import CallAnswer
from pyozone.rpc.metadata import CALL_ID_METADATA, CLIENT_ID_METADATA

RETRY_CACHE_TIMEOUT_MS = 600_000
"""ozone.om.ratis.server.retry.cache.timeout's default."""
RETRY_CACHE_MAX_ENTRIES = 200_000
"""At most this many answers are kept (the oldest go first), however young: 100 s at 2,000 writes/s."""


class AnsweredStatus(Exception):
    """A call answered with a status rather than a response: an HA refusal (UNAVAILABLE with
    OMNotLeaderException's or OMLeaderNotReadyException's text) or a replayed error."""

    def __init__(self, status: str, details: str) -> None:
        super().__init__(details)
        self.status = status
        self.details = details


USER_SEPARATOR = "\x00"
"""Between the user and the client id in a retry cache key: neither metadata value may hold it."""


def call_key(context: Any, user: str = "") -> tuple[str, int] | None:
    """The call's (client id, call id) from its metadata, as Hadoop RPC's header carries them, the client
    id qualified by the authenticated `user` (another user naming the same ids is another call: Ratis's
    retry cache is per client, and a client is one user's); None when the client sends none (it talks to a
    lone OM)."""
    client_id = call_id = None
    for key, value in context.invocation_metadata() or ():
        if key == CLIENT_ID_METADATA:
            client_id = value
        elif key == CALL_ID_METADATA:
            call_id = value
    if not client_id or not call_id or not call_id.isdigit():
        return None
    return (f"{user}{USER_SEPARATOR}{client_id}" if user else client_id), int(call_id)


class RetryCache:
    """(client id, call id) -> the call's answer, for `timeout_ms` after it was applied, at most
    `max_entries` of them."""

    def __init__(
        self, timeout_ms: int, now_ms: Callable[[], float], max_entries: int = RETRY_CACHE_MAX_ENTRIES
    ) -> None:
        self._timeout_ms = timeout_ms
        self._max_entries = max_entries
        self._now_ms = now_ms
        self._entries: OrderedDict[tuple[str, int], tuple[float, CallAnswer]] = OrderedDict()

    def put(self, answer: CallAnswer) -> None:
        now = self._now_ms()
        self._entries[(answer.client_id, answer.call_id)] = (now + self._timeout_ms, answer)
        self._entries.move_to_end((answer.client_id, answer.call_id))
        while self._entries:
            expires, _ = next(iter(self._entries.values()))
            if expires > now and len(self._entries) <= self._max_entries:
                break
            self._entries.popitem(last=False)

    def get(self, key: tuple[str, int]) -> CallAnswer | None:
        found = self._entries.get(key)
        if found is None or found[0] <= self._now_ms():
            return None
        return found[1]

    def __len__(self) -> int:
        return len(self._entries)


def replay(answer: CallAnswer, method: str) -> bytes:
    """A call's first answer, as the rpc layer sends it (its bytes), or its error raised."""
    if answer.method != method:
        client = answer.client_id.rpartition(USER_SEPARATOR)[2]
        raise AnsweredStatus(
            "INVALID_ARGUMENT",
            f"INVALID_REQUEST: call {answer.call_id} of client {client} was a {answer.method}, "
            f"not a {method}: a call id names one call",
        )
    if answer.error_status:
        raise AnsweredStatus(answer.error_status, answer.error_details)
    return answer.response
