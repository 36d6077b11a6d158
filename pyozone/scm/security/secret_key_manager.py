"""SCM's secret keys for block and container tokens (Ozone 1.4's SecretKeyManager).

The current key is the newest. `check_and_rotate` (every hdds.secret.key.rotate.check.duration) makes a new
one once the current is hdds.secret.key.rotate.duration old, and drops every key past its expiry
(hdds.secret.key.expiry.duration after it was made), so a token signed just before a rotation still
verifies until it expires. Every change is handed to `save` before it is used: a restarted SCM answers
with the keys it handed out. Times are wall-clock ms, as the keys carry them to OM and the datanodes.

A lone SCM keeps them in its key file; an SCM of an HA service in scm.db's `meta` record `secretKeys`
(`ReplicatedSecretKeys`, Ozone's SecretKeyStateImpl whose updateKeys is @Replicate): the leader makes and
rotates them, the log carries them, and every SCM answers with the keys the leader made, so a token OM signed
before a failover still verifies after it.
"""

from __future__ import annotations

import datetime as dt
import logging
import uuid
from collections.abc import Callable, Iterable

from pyozone.hdds.clock import Clock
from pyozone.hdds.security.secret_key import ManagedSecretKey
from pyozone.scm.store import SCMMetadataStore
from pyozone.security.config import SecurityConfig

log = logging.getLogger(__name__)

SaveKeys = Callable[[tuple[ManagedSecretKey, ...]], None]
LoadKeys = Callable[[], Iterable[ManagedSecretKey]]

SECRET_KEYS_RECORD = "secretKeys"
"""The `meta` record of an HA service's secret keys (a JSON list, Ozone's field names)."""


class ReplicatedSecretKeys:
    """An HA service's keys in scm.db: written by the leader's core (staged, carried by the log), read by
    every SCM as applied."""

    def __init__(self, store: SCMMetadataStore) -> None:
        self._meta = store.meta

    def load(self) -> tuple[ManagedSecretKey, ...]:
        data = self._meta.get(SECRET_KEYS_RECORD) or []
        return tuple(ManagedSecretKey.from_json(item) for item in data)

    def save(self, keys: tuple[ManagedSecretKey, ...]) -> None:
        self._meta.put(SECRET_KEYS_RECORD, [k.to_json() for k in keys])


class SecretKeyManager:
    def __init__(
        self,
        settings: SecurityConfig,
        clock: Clock,
        keys: Iterable[ManagedSecretKey],
        save: SaveKeys,
        load: LoadKeys | None = None,
    ) -> None:
        """`load`: where the keys are read at every use instead of the `keys` held (an HA service's
        replicated record, which the leader's `save` writes and the log brings to the others)."""
        self.rotate_ms = settings.secret_key_rotate_ms
        self.expiry_ms = settings.secret_key_expiry_ms
        self.algorithm = settings.secret_key_algorithm
        self.clock = clock
        self._save = save
        self._load = load
        self._held = tuple(keys)

    @property
    def _keys(self) -> tuple[ManagedSecretKey, ...]:
        keys = self._held if self._load is None else tuple(self._load())
        return tuple(sorted(keys, key=lambda k: k.creation_ms))

    def current(self) -> ManagedSecretKey | None:
        now = self.clock.wall_ms()
        live = [k for k in self._keys if not k.is_expired(now)]
        return live[-1] if live else None

    def get(self, key_id: uuid.UUID) -> ManagedSecretKey | None:
        now = self.clock.wall_ms()
        return next((k for k in self._keys if k.id == key_id and not k.is_expired(now)), None)

    def all(self) -> list[ManagedSecretKey]:
        now = self.clock.wall_ms()
        return [k for k in self._keys if not k.is_expired(now)]

    def check_and_rotate(self) -> bool:
        """True when a new key became current."""
        now = self.clock.wall_ms()
        keys = [k for k in self._keys if not k.is_expired(now)]
        dropped = len(self._keys) - len(keys)
        current = keys[-1] if keys else None
        rotate = current is None or now >= current.creation_ms + self.rotate_ms
        if rotate:
            keys.append(ManagedSecretKey.generate(now, self.expiry_ms, self.algorithm))
        if rotate or dropped:
            self._save(tuple(keys))
            self._held = tuple(keys)
        if dropped:
            log.info("Dropped %d expired secret key(s)", dropped)
        if rotate:
            expiry = dt.datetime.fromtimestamp(keys[-1].expiry_ms / 1000, dt.UTC).isoformat()
            log.info("Secret key %s is current; it expires at %s", keys[-1].id, expiry)
        return rotate
