"""The encrypted key streams (issue 33, item 7): what the writer hands the key stream is ciphertext, and
the reader gives back the plaintext from any offset, across a multipart key's parts (each from its own iv)."""

from __future__ import annotations

import asyncio
import os
from typing import Any

import pytest

from pyozone.client.crypto_streams import CryptoKeyInputStream, CryptoKeyOutputStream, data_key_of
from pyozone.client.errors import BlockReadError
from pyozone.client.sync import KeyReader, _Loop
from pyozone.hdds.ids import RATIS_THREE
from pyozone.hdds.om_views import KeyInfo
from pyozone.hdds.security.sse import CtrCipher, KeyEncryption, SseAlgorithm, SseKeyError, key_md5, new_iv

KEY = os.urandom(32)


class Stored:
    """A key stream over bytes in memory: what a KeyInputStream reads, what a KeyOutputStream writes."""

    def __init__(self, data: bytes = b"", info: KeyInfo | None = None) -> None:
        self.data = bytearray(data)
        self.info = info
        self.size = len(data)
        self.pos = 0

    def tell(self) -> int:
        return self.pos

    def seek(self, offset: int, whence: int = 0) -> int:
        self.pos = offset
        return offset

    async def read(self, n: int = -1) -> bytes:
        end = self.size if n < 0 else min(self.size, self.pos + n)
        piece, self.pos = bytes(self.data[self.pos : end]), end
        return piece

    async def write(self, data: Any) -> int:
        self.data += bytes(data)
        return len(data)

    async def close(self) -> None:
        pass


def info(size: int, encryption: KeyEncryption, parts: tuple[tuple[int, int], ...] = ()) -> KeyInfo:
    return KeyInfo("v", "b", "k", size, 0, 0, RATIS_THREE, parts=parts, encryption=encryption)


def test_the_writer_hands_on_ciphertext_and_the_reader_reads_any_range() -> None:
    data = os.urandom(10_000)
    encryption = KeyEncryption(SseAlgorithm.SSE_S3, new_iv())
    stored = Stored()
    out = CryptoKeyOutputStream(stored, KEY, encryption)  # type: ignore[arg-type]

    async def body() -> None:
        for i in range(0, len(data), 777):
            await out.write(data[i : i + 777])
        assert bytes(stored.data) != data and len(stored.data) == len(data)
        reader = CryptoKeyInputStream(Stored(bytes(stored.data), info(len(data), encryption)), KEY, 4096)  # type: ignore[arg-type]
        assert await reader.readall() == data
        for start, n in ((0, 1), (15, 2), (4095, 3000), (9_999, 10)):
            reader.seek(start)
            assert await reader.read(n) == data[start : start + n]
        reader.seek(0)
        assert b"".join([piece async for piece in reader]) == data

    asyncio.run(body())


def test_a_multipart_key_is_read_part_by_part_from_each_parts_iv() -> None:
    sizes = (300, 500, 7)
    ivs = tuple(new_iv() for _ in sizes)
    plain = [os.urandom(n) for n in sizes]
    cipher = b"".join(CtrCipher(KEY, iv).update(p) for iv, p in zip(ivs, plain, strict=True))
    data = b"".join(plain)
    encryption = KeyEncryption(SseAlgorithm.SSE_S3, new_iv(), part_ivs=ivs)
    parts = tuple(zip((1, 2, 3), sizes, strict=True))
    reader = CryptoKeyInputStream(Stored(cipher, info(len(data), encryption, parts)), KEY, 64)  # type: ignore[arg-type]

    async def body() -> None:
        assert await reader.read() == data
        reader.seek(290)  # across all three parts
        assert await reader.read(520) == data[290:810]

    asyncio.run(body())


class Failing(Stored):
    """Stored whose reads past `fail_from` fail, leaving the position (as KeyInputStream's)."""

    def __init__(self, data: bytes, info: KeyInfo, fail_from: int) -> None:
        super().__init__(data, info)
        self.fail_from = fail_from

    async def read(self, n: int = -1) -> bytes:
        end = self.size if n < 0 else min(self.size, self.pos + n)
        if end > self.fail_from:
            raise BlockReadError("a datanode died mid-range")
        return await super().read(n)


def test_a_failed_read_of_a_multipart_key_leaves_the_position() -> None:
    """A read over a part end that fails in its second part hands out nothing and leaves the position,
    so a retry reads the first part's bytes again (it used to move past them and drop them)."""
    ivs = (new_iv(), new_iv())
    plain = os.urandom(200)
    cipher = CtrCipher(KEY, ivs[0]).update(plain[:100]) + CtrCipher(KEY, ivs[1]).update(plain[100:])
    encryption = KeyEncryption(SseAlgorithm.SSE_S3, new_iv(), part_ivs=ivs)
    stored = Failing(cipher, info(200, encryption, ((1, 100), (2, 100))), fail_from=150)
    reader = CryptoKeyInputStream(stored, KEY, 64)  # type: ignore[arg-type]

    async def body() -> None:
        reader.seek(20)
        with pytest.raises(BlockReadError):
            await reader.read(200)
        assert reader.tell() == 20
        stored.fail_from = 200
        assert await reader.read(200) == plain[20:]

    asyncio.run(body())


def test_sse_c_needs_its_own_key() -> None:
    customer = os.urandom(32)
    encryption = KeyEncryption(SseAlgorithm.SSE_C, new_iv(), customer_key_md5=key_md5(customer))
    assert data_key_of(encryption, "/v/b/k", b"", customer) == customer
    with pytest.raises(SseKeyError) as missing:
        data_key_of(encryption, "/v/b/k", b"", None)
    assert missing.value.missing and "encrypted" in str(missing.value)
    with pytest.raises(SseKeyError) as other:
        data_key_of(encryption, "/v/b/k", b"", os.urandom(32))
    assert not other.value.missing
    with pytest.raises(SseKeyError):  # SSE-S3 without the data key OM would answer
        data_key_of(KeyEncryption(SseAlgorithm.SSE_S3, new_iv()), "/v/b/k", b"", None)


def test_the_sync_reader_iterates_an_encrypted_key() -> None:
    """R36 F7: `pyozone sh key cat` iterates a KeyReader, over a CryptoKeyInputStream for an encrypted key."""
    data = os.urandom(10_000)
    encryption = KeyEncryption(SseAlgorithm.SSE_S3, new_iv())
    ciphertext = CtrCipher(KEY, encryption.iv).update(data)
    loop = _Loop()
    try:
        stream = CryptoKeyInputStream(Stored(ciphertext, info(len(data), encryption)), KEY, 4096)  # type: ignore[arg-type]
        pieces = list(KeyReader(loop, stream))
    finally:
        loop.stop()
    assert b"".join(pieces) == data and [len(p) for p in pieces] == [4096, 4096, 1808]


def test_the_encrypting_stream_forwards_no_way_to_write_around_it() -> None:
    """R36 F11: what describes the write is the inner stream's; anything else (a data method the key
    streams gain later) is not reachable through the wrapper, so no plaintext can pass by it."""
    stored = Stored()
    stored.written = 7  # type: ignore[attr-defined]
    stored.write_vectored = stored.write  # type: ignore[attr-defined]
    out = CryptoKeyOutputStream(stored, KEY, KeyEncryption(SseAlgorithm.SSE_S3, new_iv()))  # type: ignore[arg-type]
    assert out.written == 7
    with pytest.raises(AttributeError, match="write_vectored"):
        out.write_vectored  # noqa: B018
