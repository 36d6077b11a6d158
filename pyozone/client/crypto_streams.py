"""The key streams of an encrypted key (Ozone's CryptoOutputStream / CryptoInputStream over its key streams).

The writer encrypts each piece before the key stream sees it, so blocks, checksums, retries and rewrites
are all of ciphertext; the reader decrypts what the key stream returns from the offset it was read at
(AES-CTR: hdds/security/sse.py), so seeks, ranges and parts cost no more than on a plain key. The data key
is SSE-S3's, answered by OM to an allowed caller, or SSE-C's customer key, which the caller holds.
"""

from __future__ import annotations

import os
from bisect import bisect_right
from collections.abc import AsyncIterator
from itertools import accumulate
from typing import Any

from pyozone.client.errors import BlockReadError
from pyozone.client.key_input import KeyInputStream
from pyozone.client.key_output import KeyOutputStream
from pyozone.hdds.om_views import KeyInfo
from pyozone.hdds.security.sse import CtrCipher, KeyEncryption, SseAlgorithm, SseKeyError, key_md5


def data_key_of(encryption: KeyEncryption, name: str, data_key: bytes, customer_key: bytes | None) -> bytes:
    """The key that encrypts a key's data: SSE-S3's from OM, SSE-C's the caller's, which must be the one
    whose MD5 the key keeps (SseKeyError: missing, or another)."""
    if encryption.algorithm is SseAlgorithm.SSE_C:
        if customer_key is None:
            raise SseKeyError(name, missing=True)
        if key_md5(customer_key) != encryption.customer_key_md5:
            raise SseKeyError(name, missing=False)
        return customer_key
    if not data_key:
        raise SseKeyError(name, missing=True)
    return data_key


class CryptoKeyOutputStream:
    """A KeyOutputStream whose bytes are encrypted on the way in. Only what FORWARDED names is the inner
    stream's (what describes the write, never a way to write): a data method the key streams gain later is
    not reachable here, so it cannot send plaintext (R36 F11)."""

    FORWARDED = frozenset(
        {
            "volume", "bucket", "key", "part", "client_id", "metadata", "key_info", "condition", "written",
            "write_path", "retries", "exclude_list",
        }
    )  # fmt: skip

    def __init__(self, inner: KeyOutputStream, data_key: bytes, encryption: KeyEncryption) -> None:
        self._inner = inner
        self._cipher = CtrCipher(data_key, encryption.iv)
        self.encryption = encryption

    def __getattr__(self, name: str) -> Any:
        if name not in CryptoKeyOutputStream.FORWARDED:
            raise AttributeError(f"{type(self).__name__} has no {name!r} (an encrypted key's stream)")
        return getattr(self._inner, name)

    async def write(self, data: bytes | bytearray | memoryview) -> int:
        await self._inner.write(self._cipher.update(data))
        return len(data)

    async def close(self, within_s: float | None = None) -> KeyInfo:
        return await self._inner.close(within_s)

    async def abort(self) -> None:
        await self._inner.abort()

    async def __aenter__(self) -> CryptoKeyOutputStream:
        return self

    async def __aexit__(self, exc_type: object, exc: object, tb: object) -> None:
        await self._inner.__aexit__(exc_type, exc, tb)


class CryptoKeyInputStream:
    """A KeyInputStream whose bytes are decrypted from the offset each read starts at. A completed
    multipart upload's parts each run from an iv of their own: a read is cut at part ends."""

    def __init__(self, inner: KeyInputStream, data_key: bytes, buffer_size: int) -> None:
        """`buffer_size`: the largest piece `async for` yields (ozone.client.stream.buffer.size)."""
        encryption = inner.info.encryption
        assert encryption is not None
        self._inner = inner
        self._data_key = data_key
        self.buffer_size = buffer_size
        self.info = inner.info
        self.size = inner.size
        # (start, iv) of each stretch encrypted from one iv: the whole key, or each part
        self._starts = [0]
        self._ivs = [encryption.iv]
        if encryption.part_ivs:
            if len(encryption.part_ivs) != len(inner.info.parts):
                raise BlockReadError(
                    f"{_name(inner.info)}: {len(inner.info.parts)} parts but {len(encryption.part_ivs)} ivs"
                )
            self._starts = list(accumulate((size for _, size in inner.info.parts[:-1]), initial=0))
            self._ivs = list(encryption.part_ivs)

    def tell(self) -> int:
        return self._inner.tell()

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        return self._inner.seek(offset, whence)

    async def read(self, n: int = -1) -> bytes:
        """Up to `n` bytes (all the rest when n < 0) of plaintext from the current position."""
        begin = self.tell()
        end = self.size if n < 0 else min(self.size, begin + n)
        pieces, offset = [], begin
        try:
            while offset < end:
                index = bisect_right(self._starts, offset) - 1
                stretch_end = self._starts[index + 1] if index + 1 < len(self._starts) else self.size
                data = await self._inner.read(min(end, stretch_end) - offset)
                if not data:
                    break
                pieces.append(
                    CtrCipher(self._data_key, self._ivs[index], offset - self._starts[index]).update(data)
                )
                offset += len(data)
        except BaseException:  # a failed read hands out nothing and leaves the position, as KeyInputStream's
            self._inner.seek(begin)
            raise
        return b"".join(pieces)

    async def readall(self) -> bytes:
        return await self.read(-1)

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while self.tell() < self.size:
            yield await self.read(self.buffer_size)

    async def close(self) -> None:
        await self._inner.close()

    async def __aenter__(self) -> CryptoKeyInputStream:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


def _name(info: KeyInfo) -> str:
    return f"/{info.volume}/{info.bucket}/{info.name}"
