"""S3's additional checksums (x-amz-checksum-*) and Content-MD5: parsed, computed in C, compared.

A value comes base64-encoded in a header or an aws-chunked trailer. CRC64NVME (the AWS C++ SDK's default,
so pyarrow's) is computed by awscrt, the one C implementation at hand; without awscrt a request asking for
it is refused NotImplemented rather than stored unchecked.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from enum import Enum
from typing import Protocol

import crc32c
from isal import isal_zlib

try:
    from awscrt import checksums as crt_checksums
except ImportError:
    crt_checksums = None

from pyozone.s3g.errors import S3Error, S3ErrorCode


class Hasher(Protocol):
    def update(self, data: memoryview, /) -> None: ...

    def digest(self) -> bytes: ...


class _Crc32:
    def __init__(self) -> None:
        self._value = 0

    def update(self, data: memoryview) -> None:
        self._value = isal_zlib.crc32(data, self._value)  # zlib's values, ISA-L's speed

    def digest(self) -> bytes:
        return self._value.to_bytes(4, "big")


class _Crc32C:
    def __init__(self) -> None:
        self._value = 0

    def update(self, data: memoryview) -> None:
        self._value = crc32c.crc32c(data, self._value)

    def digest(self) -> bytes:
        return self._value.to_bytes(4, "big")


class _Crc64Nvme:
    def __init__(self) -> None:
        self._value = 0

    def update(self, data: memoryview) -> None:
        self._value = crt_checksums.crc64nvme(data, self._value)

    def digest(self) -> bytes:
        return self._value.to_bytes(8, "big")


class ChecksumAlgorithm(Enum):
    """S3's checksum algorithms; the value is the name S3 uses (x-amz-sdk-checksum-algorithm, messages)."""

    CRC32 = "CRC32"
    CRC32C = "CRC32C"
    CRC64NVME = "CRC64NVME"
    SHA1 = "SHA1"
    SHA256 = "SHA256"

    @property
    def header(self) -> str:
        """The header (or trailer) carrying the value, e.g. x-amz-checksum-crc32."""
        return f"x-amz-checksum-{self.value.lower()}"

    @property
    def size(self) -> int:
        return _SIZES[self]

    def hasher(self) -> Hasher:
        match self:
            case ChecksumAlgorithm.CRC32:
                return _Crc32()
            case ChecksumAlgorithm.CRC32C:
                return _Crc32C()
            case ChecksumAlgorithm.SHA1:
                return hashlib.sha1(usedforsecurity=False)
            case ChecksumAlgorithm.SHA256:
                return hashlib.sha256()
            case ChecksumAlgorithm.CRC64NVME:
                if crt_checksums is None:
                    raise S3Error(
                        S3ErrorCode.NotImplemented,
                        "The CRC64NVME checksum algorithm is not implemented by this gateway (it needs the "
                        "awscrt package); use CRC32, CRC32C, SHA1 or SHA256.",
                    )
                return _Crc64Nvme()


_SIZES = {
    ChecksumAlgorithm.CRC32: 4,
    ChecksumAlgorithm.CRC32C: 4,
    ChecksumAlgorithm.CRC64NVME: 8,
    ChecksumAlgorithm.SHA1: 20,
    ChecksumAlgorithm.SHA256: 32,
}
BY_HEADER = {algorithm.header: algorithm for algorithm in ChecksumAlgorithm}


def algorithm_named(name: str) -> ChecksumAlgorithm:
    """The algorithm x-amz-sdk-checksum-algorithm names (any case), refused as S3 does if unknown."""
    try:
        return ChecksumAlgorithm(name.upper())
    except ValueError:
        raise S3Error(
            S3ErrorCode.InvalidRequest, "Value for x-amz-sdk-checksum-algorithm header is invalid."
        ) from None


def decode_checksum(algorithm: ChecksumAlgorithm, value: str, *, trailing: bool) -> bytes:
    """The raw bytes of a base64 checksum value; a malformed one is InvalidRequest, as S3 has it."""
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raw = b""
    if len(raw) != algorithm.size:
        where = "trailing header" if trailing else "header"
        raise S3Error(S3ErrorCode.InvalidRequest, f"Value for {algorithm.header} {where} is invalid.")
    return raw


def decode_content_md5(value: str) -> bytes:
    """The 16 bytes of a Content-MD5 header; anything else is InvalidDigest."""
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raw = b""
    if len(raw) != 16:
        raise S3Error(S3ErrorCode.InvalidDigest)
    return raw


def check_content_md5(md5: bytes, content_md5: bytes) -> None:
    """The body's MD5 against its Content-MD5 (decode_content_md5's bytes): BadDigest if they differ."""
    if not hmac.compare_digest(md5, content_md5):
        raise S3Error(S3ErrorCode.BadDigest, "The Content-MD5 you specified did not match what was received.")


def mismatch(algorithm: ChecksumAlgorithm) -> S3Error:
    return S3Error(
        S3ErrorCode.BadDigest, f"The {algorithm.value} you specified did not match the calculated checksum."
    )
