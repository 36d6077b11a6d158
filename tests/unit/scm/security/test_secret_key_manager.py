"""Secret key rotation on a ManualClock: a new key every rotate duration, old ones kept until they
expire, every change saved before it is used."""

from __future__ import annotations

import uuid

from pyozone.config import OzoneConfiguration
from pyozone.hdds.clock import ManualClock
from pyozone.hdds.security.secret_key import ManagedSecretKey
from pyozone.hdds.security.x509 import CertRole, Identity
from pyozone.scm.security.secret_key_manager import SecretKeyManager
from pyozone.security.config import SecurityConfig

H = 3_600_000
SETTINGS = SecurityConfig.from_conf(
    OzoneConfiguration(
        {
            "ozone.security.enabled": "true",
            "hdds.secret.key.rotate.duration": "1h",
            "hdds.secret.key.expiry.duration": "3h",
            "hdds.secret.key.rotate.check.duration": "10m",
            "hdds.block.token.expiry.time": "1h",
            "hdds.x509.expired.certificate.check.interval": "1h",
        }
    )
)
OM = Identity(CertRole.OM, "om", "h")


class Saved:
    def __init__(self) -> None:
        self.versions: list[tuple[ManagedSecretKey, ...]] = []

    def __call__(self, keys: tuple[ManagedSecretKey, ...]) -> None:
        self.versions.append(keys)


def manager(clock: ManualClock, keys: tuple[ManagedSecretKey, ...] = ()) -> tuple[SecretKeyManager, Saved]:
    saved = Saved()
    return SecretKeyManager(SETTINGS, clock, keys, saved), saved


def test_the_first_check_makes_a_key_and_saves_it() -> None:
    clock = ManualClock()
    keys, saved = manager(clock)
    assert keys.current() is None
    assert keys.check_and_rotate()
    current = keys.current()
    assert current is not None and saved.versions == [(current,)]
    assert current.creation_ms == clock.wall_ms() and current.expiry_ms == clock.wall_ms() + 3 * H


def test_rotation_after_the_rotate_duration_keeps_older_keys_until_they_expire() -> None:
    clock = ManualClock()
    keys, saved = manager(clock)
    keys.check_and_rotate()
    first = keys.current()
    clock.advance(H - 1)
    assert not keys.check_and_rotate() and keys.current() == first and len(saved.versions) == 1
    clock.advance(1)
    assert keys.check_and_rotate()
    second = keys.current()
    assert second != first and [k.id for k in keys.all()] == [first.id, second.id]
    assert keys.get(first.id) == first  # a token signed with the first still verifies
    clock.advance(2 * H)  # the first is 3 h old: expired
    keys.check_and_rotate()
    assert keys.get(first.id) is None and first not in keys.all()
    assert first not in saved.versions[-1]


def test_expired_keys_are_never_answered_even_between_checks() -> None:
    clock = ManualClock()
    keys, _ = manager(clock)
    keys.check_and_rotate()
    only = keys.current()
    clock.advance(3 * H)
    assert keys.current() is None and keys.get(only.id) is None and keys.all() == []


def test_keys_loaded_at_start_are_reused_while_current() -> None:
    clock = ManualClock(start_ms=0)
    old = ManagedSecretKey.generate(clock.wall_ms() - H // 2, 3 * H)
    keys, saved = manager(clock, (old,))
    assert not keys.check_and_rotate() and keys.current() == old and saved.versions == []


def test_a_stale_loaded_key_is_rotated_at_start() -> None:
    clock = ManualClock()
    stale = ManagedSecretKey.generate(clock.wall_ms() - 2 * H, 3 * H)
    keys, saved = manager(clock, (stale,))
    assert keys.check_and_rotate() and keys.current() != stale
    assert [k.id for k in saved.versions[-1]] == [stale.id, keys.current().id]


def test_unknown_id_is_none() -> None:
    keys, _ = manager(ManualClock())
    keys.check_and_rotate()
    assert keys.get(uuid.uuid4()) is None
