"""S3 server-side encryption of a key's data: what OM records of it and the cipher the clients run.

As Ozone's transparent data encryption (CryptoOutputStream over AES/CTR/NoPadding, FileEncryptionInfo in
OmKeyInfo) the data is AES-256-CTR: ciphertext is as long as the plaintext and any byte is decrypted from
its offset alone (the counter block of byte n is iv + n // 16), so a range GET, a part GET or a seek reads
only the bytes it needs. The datanodes hold ciphertext only; their chunk checksums are of ciphertext.

SSE-S3: OM makes a fresh 256-bit data key per object and keeps it wrapped under a master key version
(om/master_keys.py). SSE-C: the customer's key is the data key; OM keeps only its MD5 (Amazon's
x-amz-server-side-encryption-customer-key-MD5), which a read must match.
"""

from __future__ import annotations

import base64
import enum
import hashlib
import os
from dataclasses import dataclass

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

KEY_BYTES = 32  # AES-256
IV_BYTES = 16  # AES's block: CTR's initial counter block
AES256 = "AES256"
"""S3's name of the one algorithm (SSE-S3's x-amz-server-side-encryption, SSE-C's -customer-algorithm)."""


class SseAlgorithm(enum.IntEnum):
    """OmClientProtocol.proto's SseAlgorithm."""

    NONE = 0
    SSE_S3 = 1
    SSE_C = 2


@dataclass(frozen=True, slots=True)
class KeyEncryption:
    """How a key's data is encrypted (Ozone's FileEncryptionInfo): never the data key itself.
    `wrapped_key` and `master_key_version`: SSE-S3's; `customer_key_md5`: SSE-C's (base64, as S3 sends it)."""

    algorithm: SseAlgorithm
    iv: bytes
    wrapped_key: bytes = b""
    master_key_version: int = 0
    customer_key_md5: str = ""
    part_ivs: tuple[bytes, ...] = ()
    """A completed multipart upload's: each part's iv (KeyInfo.parts' order), its data read from there."""

    def __post_init__(self) -> None:
        for iv in (self.iv, *self.part_ivs):
            if len(iv) != IV_BYTES:
                raise ValueError(f"an SSE iv is {IV_BYTES} bytes, not {len(iv)}")


def new_iv() -> bytes:
    return os.urandom(IV_BYTES)


def new_data_key() -> bytes:
    return os.urandom(KEY_BYTES)


def key_md5(key: bytes) -> str:
    """The base64 MD5 of a key, as S3's -customer-key-MD5 header carries it."""
    return base64.b64encode(hashlib.md5(key, usedforsecurity=False).digest()).decode()


class CtrCipher:
    """AES-256-CTR of one key's data from `offset` on: encrypting and decrypting are the same XOR, and
    successive update() calls continue the key stream (a writer's pieces, a reader's sequential reads)."""

    def __init__(self, data_key: bytes, iv: bytes, offset: int = 0) -> None:
        if len(data_key) != KEY_BYTES:
            raise ValueError(f"an SSE data key is {KEY_BYTES} bytes, not {len(data_key)}")
        if offset < 0:
            raise ValueError(f"offset {offset} is negative")
        block, skip = divmod(offset, IV_BYTES)
        counter = (int.from_bytes(iv, "big") + block) % (1 << 128)  # Ozone's calculateIV: iv + n / 16
        self._context = Cipher(
            algorithms.AES(data_key), modes.CTR(counter.to_bytes(IV_BYTES, "big"))
        ).encryptor()
        self.offset = offset
        if skip:
            self._context.update(bytes(skip))

    def update(self, data: bytes | bytearray | memoryview) -> bytes:
        out = self._context.update(data)
        self.offset += len(out)
        return out


@dataclass(frozen=True, slots=True)
class SseRequest:
    """The encryption a writer asks OM for: SSE-S3 (OM makes the data key) or SSE-C (`customer_key_md5`
    names the customer's key, which OM never sees)."""

    algorithm: SseAlgorithm
    customer_key_md5: str = ""


def valid_key_md5(md5: str) -> bool:
    """Whether `md5` is the base64 of 16 bytes (what -customer-key-MD5 carries)."""
    try:
        return len(base64.b64decode(md5, validate=True)) == 16
    except ValueError:
        return False


class SseKeyError(Exception):
    """An encrypted key read or written without its key (`missing`), or SSE-C's with another customer key
    than the one it was written with: never answered as ciphertext."""

    def __init__(self, name: str, missing: bool) -> None:
        what = "without the key it is encrypted with" if missing else "with another key than its own"
        super().__init__(f"{name} is encrypted (server-side): read {what}")
        self.missing = missing
