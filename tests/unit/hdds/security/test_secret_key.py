"""Secret keys sign tokens; a signature verifies under its key only."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pyozone.hdds.security.secret_key import ManagedSecretKey

KEY = ManagedSecretKey.generate(now_ms=1_000, lifetime_ms=9 * 86_400_000)


@given(st.binary(max_size=256))
def test_signature_verifies_under_its_key_only(data: bytes) -> None:
    other = ManagedSecretKey.generate(now_ms=1_000, lifetime_ms=1)
    assert KEY.is_valid_signature(data, KEY.sign(data))
    assert not other.is_valid_signature(data, KEY.sign(data))
    assert not KEY.is_valid_signature(data + b"x", KEY.sign(data))


def test_expiry_is_exclusive_of_the_expiry_instant() -> None:
    assert not KEY.is_expired(KEY.expiry_ms - 1)
    assert KEY.is_expired(KEY.expiry_ms)


def test_json_round_trip_and_bad_records() -> None:
    assert ManagedSecretKey.from_json(KEY.to_json()) == KEY
    with pytest.raises(ValueError, match="not a secret key record"):
        ManagedSecretKey.from_json({"id": "nope"})
    with pytest.raises(ValueError, match=r"hdds\.secret\.key\.algorithm"):
        ManagedSecretKey(KEY.id, 0, 1, "HmacMD4", KEY.encoded)
