"""SCM's secret keys for block and container tokens (Ozone 1.4's SecretKeyManager).

The current key is the newest. `check_and_rotate` (every hdds.secret.key.rotate.check.duration) makes a new
one once the current is hdds.secret.key.rotate.duration old, and drops every key past its expiry
(hdds.secret.key.expiry.duration after it was made), so a token signed just before a rotation still
verifies until it expires. Every change is handed to `save` before it is used: a restarted SCM answers
with the keys it handed out. Times are wall-clock ms, as the keys carry them to OM and the datanodes.
"""

from __future__ import annotations

import datetime as dt
import logging
import uuid
from collections.abc import Callable, Iterable

from pyozone.hdds.clock import Clock
from pyozone.hdds.security.secret_key import ManagedSecretKey
from pyozone.security.config import SecurityConfig

log = logging.getLogger(__name__)

SaveKeys = Callable[[tuple[ManagedSecretKey, ...]], None]


class SecretKeyManager:
    def __init__(
        self, settings: SecurityConfig, clock: Clock, keys: Iterable[ManagedSecretKey], save: SaveKeys
    ) -> None:
        self.rotate_ms = settings.secret_key_rotate_ms
        self.expiry_ms = settings.secret_key_expiry_ms
        self.algorithm = settings.secret_key_algorithm
        self.clock = clock
        self._save = save
        self._keys = tuple(sorted(keys, key=lambda k: k.creation_ms))

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
            self._keys = tuple(keys)
        if dropped:
            log.info("Dropped %d expired secret key(s)", dropped)
        if rotate:
            expiry = dt.datetime.fromtimestamp(keys[-1].expiry_ms / 1000, dt.UTC).isoformat()
            log.info("Secret key %s is current; it expires at %s", keys[-1].id, expiry)
        return rotate
