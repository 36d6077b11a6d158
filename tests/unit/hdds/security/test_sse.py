"""SSE's cipher (issue 33, item 7): AES-256-CTR from any offset is the same bytes as from the start, which
a range GET, a part GET and a seek rely on; Amazon's key MD5 form."""

from __future__ import annotations

import base64
import hashlib
import os

import pytest

from pyozone.hdds.security.sse import (
    IV_BYTES,
    CtrCipher,
    KeyEncryption,
    SseAlgorithm,
    key_md5,
    valid_key_md5,
)

KEY = bytes(range(32))
IV = bytes([0xFF] * 8 + [0xFF] * 7 + [0xF0])  # the counter wraps past 2**128 within the first 256 bytes
DATA = os.urandom(1000)


def test_decrypting_from_any_offset_gives_the_plaintext_from_there() -> None:
    whole = CtrCipher(KEY, IV).update(DATA)
    assert whole != DATA and len(whole) == len(DATA)
    for offset in (0, 1, 15, 16, 17, 255, 256, 999):
        assert CtrCipher(KEY, IV, offset).update(whole[offset:]) == DATA[offset:]


def test_pieces_of_any_size_continue_the_key_stream() -> None:
    cipher = CtrCipher(KEY, IV)
    pieces = [cipher.update(DATA[a:b]) for a, b in ((0, 3), (3, 3), (3, 40), (40, 1000))]
    assert b"".join(pieces) == CtrCipher(KEY, IV).update(DATA)
    assert cipher.offset == len(DATA)


def test_the_data_key_and_iv_and_offset_are_checked() -> None:
    with pytest.raises(ValueError, match="32 bytes, not 16"):
        CtrCipher(KEY[:16], IV)
    with pytest.raises(ValueError, match="negative"):
        CtrCipher(KEY, IV, -1)
    with pytest.raises(ValueError, match=f"{IV_BYTES} bytes, not 3"):
        KeyEncryption(SseAlgorithm.SSE_S3, b"abc")


def test_a_key_md5_is_amazons_base64_digest() -> None:
    assert key_md5(KEY) == base64.b64encode(hashlib.md5(KEY).digest()).decode()
    assert valid_key_md5(key_md5(KEY))
    assert not valid_key_md5("not base64!")
    assert not valid_key_md5(base64.b64encode(b"short").decode())
