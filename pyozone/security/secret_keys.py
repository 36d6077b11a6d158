"""SecretKeyCache: SCM's secret keys as OM and a datanode hold them (Ozone's SecretKeySignerClient and
SecretKeyVerifierClient in one).

Signing (`current`): the key SCM names current, asked for again once it is `hdds.secret.key.rotate.duration`
old, when SCM has made its successor; until SCM has (it rotates on its own check interval), at most once
per `recheck_ms`. A signer never uses a key past its expiry: SCM unreachable then is an error.

Verifying (`get`): keys by id. A token naming a key not held here refreshes the whole list from SCM (a
handful of keys: one a day for nine days), at most once per `miss_refresh_ms` whatever ids are asked: a
stream of forged ids costs SCM one call per window, not one per request. Keys SCM dropped go from here at
the next refresh.

Thread-safe and blocking (each miss may call SCM): call it from worker threads, or check `knows` first on
an event loop.
"""

from __future__ import annotations

import logging
import threading
import uuid
from typing import Protocol

from pyozone.common.tls import TlsStore
from pyozone.config import OzoneConfiguration
from pyozone.framework.scm_security import SCMSecurityClient, scm_security_nodes
from pyozone.hdds.clock import Clock, SystemClock
from pyozone.hdds.security.errors import SecurityError
from pyozone.hdds.security.secret_key import ManagedSecretKey

log = logging.getLogger(__name__)

RECHECK_MS = 60_000
"""How often a signer asks SCM again for the current key while SCM has not rotated an old one."""
MISS_REFRESH_MS = 5_000
"""How often a verifier asks SCM for its keys when a token names one not held."""


class SecretKeySource(Protocol):
    """What the cache asks SCM (SCMSecurityClient's secret-key calls)."""

    def get_current_secret_key(self) -> ManagedSecretKey: ...

    def get_all_secret_keys(self) -> list[ManagedSecretKey]: ...

    def close(self) -> None: ...


class RenewingSecretKeySource:
    """SCM's security client for a cache that lives as long as its daemon: its channel presents the
    daemon's renewed certificate on its next connection (rpc.Channel follows the TlsStore's generation),
    since a reconnect with the first one fails once it expired."""

    def __init__(self, conf: OzoneConfiguration, certificate: TlsStore) -> None:
        self._client = SCMSecurityClient(scm_security_nodes(conf), certificate)

    def get_current_secret_key(self) -> ManagedSecretKey:
        return self._client.get_current_secret_key()

    def get_all_secret_keys(self) -> list[ManagedSecretKey]:
        return self._client.get_all_secret_keys()

    def close(self) -> None:
        self._client.close()


class SecretKeyCache:
    def __init__(
        self,
        client: SecretKeySource,
        clock: Clock,
        rotation_ms: int,
        recheck_ms: int = RECHECK_MS,
        miss_refresh_ms: int = MISS_REFRESH_MS,
    ) -> None:
        if rotation_ms <= 0:
            raise ValueError(f"hdds.secret.key.rotate.duration must be positive, got {rotation_ms} ms")
        self._client = client
        self._clock = clock
        self.rotation_ms = rotation_ms
        self.recheck_ms = recheck_ms
        self.miss_refresh_ms = miss_refresh_ms
        self._current: ManagedSecretKey | None = None
        self._current_asked_ms = 0
        self._keys: dict[uuid.UUID, ManagedSecretKey] = {}
        self._refreshed_ms: int | None = None
        self._signing = threading.Lock()
        self._refreshing = threading.Lock()

    @classmethod
    def connect(cls, conf: OzoneConfiguration, certificate: TlsStore) -> SecretKeyCache:
        """A daemon's cache over SCM's security protocol, reached with the daemon's certificate (SCM
        answers secret-key calls to OM and datanode certificates only). `close` ends the connection."""
        client = RenewingSecretKeySource(conf, certificate)
        return cls(client, SystemClock(), conf.get("hdds.secret.key.rotate.duration"))

    def close(self) -> None:
        self._client.close()

    def current(self) -> ManagedSecretKey:
        """The key to sign with now; SecurityError when SCM cannot give one and none held is usable."""
        with self._signing:
            now = self._clock.wall_ms()
            key = self._current
            if key is not None and not key.is_expired(now):
                fresh = now < key.creation_ms + self.rotation_ms
                if fresh or now < self._current_asked_ms + self.recheck_ms:
                    return key
            try:
                fetched = self._client.get_current_secret_key()
            except SecurityError as e:
                if key is None or key.is_expired(now):
                    raise
                log.warning("SCM gave no current secret key (%s); signing with %s a while longer", e, key.id)
                self._current_asked_ms = now
                return key
            if key is None or fetched.id != key.id:
                log.info("signing tokens with secret key %s (made at %d)", fetched.id, fetched.creation_ms)
            self._current, self._current_asked_ms = fetched, now
            self._keys[fetched.id] = fetched
            return fetched

    def get(self, key_id: uuid.UUID) -> ManagedSecretKey | None:
        """The key with `key_id` (expired or not: the verifier says so), or None when SCM has no such key."""
        key = self._keys.get(key_id)
        if key is not None:
            return key
        with self._refreshing:
            key = self._keys.get(key_id)
            if key is not None or not self._may_refresh():
                return key
            self._refreshed_ms = self._clock.now_ms()
            try:
                keys = self._client.get_all_secret_keys()
            except SecurityError as e:
                log.warning("cannot fetch the secret keys from SCM for key %s: %s", key_id, e)
                return None
            held = {k.id: k for k in keys}
            if self._current is not None:
                held.setdefault(self._current.id, self._current)
            self._keys = held
            return held.get(key_id)

    def knows(self, key_id: uuid.UUID) -> bool:
        """Whether `get(key_id)` answers without calling SCM (it holds the key, or asked SCM lately)."""
        return key_id in self._keys or not self._may_refresh()

    def _may_refresh(self) -> bool:
        last = self._refreshed_ms
        return last is None or self._clock.now_ms() >= last + self.miss_refresh_ms
