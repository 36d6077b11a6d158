"""Key names and contents as functions of (prefix, index): what ockg writes, ockv can recompute."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterator

_PATTERN_BYTES = 64 * 1024


def key_name(prefix: str, index: int) -> str:
    """Ozone's OmKeyGenerator names: PREFIX/INDEX."""
    return f"{prefix}/{index}"


def _pattern(prefix: str, index: int) -> bytes:
    seed = int.from_bytes(hashlib.sha256(f"{prefix}\0{index}".encode()).digest()[:8], "big")
    return random.Random(seed).randbytes(_PATTERN_BYTES)


def key_chunks(prefix: str, index: int, size: int | None) -> Iterator[bytes]:
    """The key's content in pieces of at most 64 KiB, so a key of any size is written or checked in
    bounded memory: a 64 KiB pseudo-random pattern seeded by (prefix, index), repeated, each repetition
    rotated by one byte so a misplaced block of the key does not verify either. `size` None: endless."""
    pattern = _pattern(prefix, index)
    left = size
    shift = 0
    while left is None or left > 0:
        piece = pattern[shift:] + pattern[:shift]
        if left is not None:
            piece = piece[:left]
            left -= len(piece)
        yield piece
        shift = (shift + 1) % len(pattern)


def key_content(prefix: str, index: int, size: int) -> bytes:
    """All `size` bytes of the key at once (see key_chunks; only for small keys)."""
    return b"".join(key_chunks(prefix, index, size))
