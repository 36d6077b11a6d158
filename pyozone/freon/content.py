"""Key names and contents as functions of (prefix, index): what ockg writes, ockv can recompute."""

from __future__ import annotations

import hashlib
import random

_PATTERN_BYTES = 64 * 1024


def key_name(prefix: str, index: int) -> str:
    """Ozone's OmKeyGenerator names: PREFIX/INDEX."""
    return f"{prefix}/{index}"


def _pattern(prefix: str, index: int) -> bytes:
    seed = int.from_bytes(hashlib.sha256(f"{prefix}\0{index}".encode()).digest()[:8], "big")
    return random.Random(seed).randbytes(_PATTERN_BYTES)


def key_content(prefix: str, index: int, size: int) -> bytes:
    """`size` bytes unique to the key: a 64 KiB pseudo-random pattern seeded by (prefix, index), repeated,
    each repetition rotated by one byte so a misplaced block of the key does not verify either."""
    pattern = _pattern(prefix, index)
    out = bytearray()
    shift = 0
    while len(out) < size:
        out += pattern[shift:] + pattern[:shift]
        shift = (shift + 1) % len(pattern)
    del out[size:]
    return bytes(out)
