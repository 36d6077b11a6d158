"""A request body's integrity, checked as it streams: the signed SHA-256, aws-chunked framing and signatures,
x-amz-checksum-* (header or trailer) and Content-MD5.

`open_payload` reads the headers once and refuses malformed values before any body byte is read. `feed`
returns the data pieces to store, `finish` checks everything the end of the body decides and returns the
digests the gateway stores and echoes (always the MD5 for the ETag). The body is never held; nothing of it
is trustworthy until `finish` returns, so the gateway commits the key only then.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Iterable
from dataclasses import dataclass

from pyozone.s3g.auth.canonical import Headers, header_value
from pyozone.s3g.auth.checksums import (
    BY_HEADER,
    ChecksumAlgorithm,
    Hasher,
    algorithm_named,
    check_content_md5,
    decode_checksum,
    decode_content_md5,
    mismatch,
)
from pyozone.s3g.auth.chunked import AwsChunkedDecoder, ChunkChain
from pyozone.s3g.auth.sigv4 import (
    STREAMING_PAYLOAD,
    STREAMING_PAYLOAD_TRAILER,
    STREAMING_UNSIGNED_PAYLOAD_TRAILER,
    UNSIGNED_PAYLOAD,
    SignedRequest,
)
from pyozone.s3g.errors import S3Error, S3ErrorCode
from pyozone.s3g.numbers import decimal

_BAD_SDK_ALGORITHM = "Value for x-amz-sdk-checksum-algorithm header is invalid."
STREAMING = frozenset({STREAMING_PAYLOAD, STREAMING_PAYLOAD_TRAILER, STREAMING_UNSIGNED_PAYLOAD_TRAILER})


@dataclass(frozen=True)
class PayloadDigests:
    """What a verified body was: its decoded length, MD5 (hex, the ETag) and checksums (base64)."""

    length: int
    md5_hex: str
    checksums: dict[ChecksumAlgorithm, str]


@dataclass(frozen=True)
class _Expected:
    """A checksum the client sent (`value`), or will send in a trailer (`value` None)."""

    algorithm: ChecksumAlgorithm
    value: bytes | None


class Payload:
    """One request body's checks; feed it the body as received, then call finish."""

    def __init__(
        self,
        decoder: AwsChunkedDecoder | None,
        content_length: int | None,
        sha256_hex: str | None,
        content_md5: bytes | None,
        expected: _Expected | None,
        algorithms: Iterable[ChecksumAlgorithm],
        md5: bool = True,
    ) -> None:
        """`md5` False: the body is not the object (POST Object's form, whose file the handler hashes);
        its md5_hex is then empty."""
        self._decoder = decoder
        self._content_length = content_length
        self._sha256_hex = sha256_hex
        self._sha256 = hashlib.sha256() if sha256_hex is not None else None
        self._content_md5 = content_md5
        self._expected = expected
        self._md5 = hashlib.md5(usedforsecurity=False) if md5 else None
        self._hashers: dict[ChecksumAlgorithm, Hasher] = {each: each.hasher() for each in algorithms}
        self._length = 0

    @property
    def checksum_algorithm(self) -> ChecksumAlgorithm | None:
        """The algorithm of the checksum the client sent or declared as a trailer (None: no checksum)."""
        return self._expected.algorithm if self._expected is not None else None

    def feed(self, data: bytes | bytearray | memoryview) -> list[memoryview]:
        """Take the next piece of the body as received; returns the object data in it (views, no copy)."""
        pieces = self._decoder.feed(data) if self._decoder is not None else [memoryview(data).cast("B")]
        for piece in pieces:
            if self._md5 is not None:
                self._md5.update(piece)
            if self._sha256 is not None:
                self._sha256.update(piece)
            for hasher in self._hashers.values():
                hasher.update(piece)
            self._length += len(piece)
        if self._content_length is not None and self._length > self._content_length:
            raise S3Error(S3ErrorCode.IncompleteBody, "The body is longer than the Content-Length.")
        return pieces

    def finish(self) -> PayloadDigests:
        """Check the complete body; refuses with S3's code for the first check that fails."""
        trailers = self._decoder.finish() if self._decoder is not None else {}
        if self._content_length is not None and self._length != self._content_length:
            raise S3Error(S3ErrorCode.IncompleteBody)
        if self._sha256 is not None and self._sha256.hexdigest() != self._sha256_hex:
            raise S3Error(
                S3ErrorCode.XAmzContentSHA256Mismatch,
                ClientComputedContentSHA256=self._sha256_hex or "",
                S3ComputedContentSHA256=self._sha256.hexdigest(),
            )
        md5 = self._md5.digest() if self._md5 is not None else b""
        if self._content_md5 is not None:
            check_content_md5(md5, self._content_md5)
        digests = {algorithm: hasher.digest() for algorithm, hasher in self._hashers.items()}
        if self._expected is not None:
            algorithm = self._expected.algorithm
            value = self._expected.value
            if value is None:
                value = decode_checksum(algorithm, trailers[algorithm.header], trailing=True)
            if not hmac.compare_digest(digests[algorithm], value):
                raise mismatch(algorithm)
        return PayloadDigests(
            length=self._length,
            md5_hex=md5.hex(),
            checksums={algorithm: base64.b64encode(raw).decode() for algorithm, raw in digests.items()},
        )


def anonymous_payload(headers: Headers) -> Payload:
    """An anonymous request's body (one a bucket policy lets in): nothing signs it, so no aws-chunked
    encoding and no x-amz-content-sha256 to hold it to; Content-MD5 and x-amz-checksum-* are checked as
    a signed request's."""
    if header_value(headers, "x-amz-content-sha256") in STREAMING:
        raise S3Error(S3ErrorCode.AccessDenied, "An aws-chunked body must be signed.")
    expected = _expected_checksum(headers, frozenset())
    md5_header = header_value(headers, "content-md5")
    content_md5 = decode_content_md5(md5_header) if md5_header is not None else None
    algorithms = [expected.algorithm] if expected is not None else []
    return Payload(None, _length(headers, "content-length"), None, content_md5, expected, algorithms)


def open_payload(
    signed: SignedRequest, key: bytes, headers: Headers, *, also: Iterable[ChecksumAlgorithm] = ()
) -> Payload:
    """The checks for this request's body, chosen by its x-amz-content-sha256 (`signed.payload_hash`).

    `key` is the signing key `verify` accepted (it signs aws-chunked chunks); `also` names checksums to
    compute even if the client sent none (e.g. the algorithm a multipart upload was created with).
    """
    declared = _declared_trailers(headers) if signed.payload_hash in STREAMING else frozenset()
    expected = _expected_checksum(headers, declared)
    algorithms = dict.fromkeys(also)
    if expected is not None:
        algorithms[expected.algorithm] = None
    md5_header = header_value(headers, "content-md5")
    content_md5 = decode_content_md5(md5_header) if md5_header is not None else None
    if signed.payload_hash not in STREAMING:
        sha256_hex = None if signed.payload_hash == UNSIGNED_PAYLOAD else signed.payload_hash.lower()
        length = _length(headers, "content-length")
        return Payload(None, length, sha256_hex, content_md5, expected, algorithms)
    decoded_length = _length(headers, "x-amz-decoded-content-length")
    if decoded_length is None and signed.payload_hash != STREAMING_UNSIGNED_PAYLOAD_TRAILER:
        raise S3Error(S3ErrorCode.MissingContentLength, "x-amz-decoded-content-length is required.")
    chain = (
        None
        if signed.payload_hash == STREAMING_UNSIGNED_PAYLOAD_TRAILER
        else ChunkChain(key, signed.amz_date, signed.scope, signed.signature)
    )
    decoder = AwsChunkedDecoder(
        chain=chain,
        declared_trailers=declared,
        signed_trailer=signed.payload_hash == STREAMING_PAYLOAD_TRAILER,
        decoded_length=decoded_length,
    )
    return Payload(decoder, None, None, content_md5, expected, algorithms)


def stored_content_encoding(content_encoding: str | None) -> str | None:
    """Content-Encoding as S3 stores it: without the aws-chunked transfer coding (None if nothing is left)."""
    if content_encoding is None:
        return None
    codings = (coding.strip() for coding in content_encoding.split(","))
    kept = [coding for coding in codings if coding.lower() != "aws-chunked"]
    return ",".join(kept) if any(kept) else None


def _declared_trailers(headers: Headers) -> frozenset[str]:
    value = header_value(headers, "x-amz-trailer") or ""
    return frozenset(name.strip().lower() for name in value.split(",") if name.strip())


def _expected_checksum(headers: Headers, declared: frozenset[str]) -> _Expected | None:
    """The one x-amz-checksum-* the client sent or declared, checked against x-amz-sdk-checksum-algorithm."""
    found = [
        _Expected(algorithm, decode_checksum(algorithm, value, trailing=False))
        for name, algorithm in BY_HEADER.items()
        if (value := header_value(headers, name)) is not None
    ]
    found += [_Expected(BY_HEADER[name], None) for name in sorted(declared) if name in BY_HEADER]
    if len(found) > 1:
        raise S3Error(
            S3ErrorCode.InvalidRequest,
            "Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed.",
        )
    sdk_algorithm = header_value(headers, "x-amz-sdk-checksum-algorithm")
    if sdk_algorithm is not None:
        named = algorithm_named(sdk_algorithm)
        if not found:
            raise S3Error(
                S3ErrorCode.InvalidRequest,
                "x-amz-sdk-checksum-algorithm specified, but no corresponding x-amz-checksum-* or "
                "x-amz-trailer headers were found.",
            )
        if found[0].algorithm is not named:
            raise S3Error(S3ErrorCode.InvalidRequest, _BAD_SDK_ALGORITHM)
    return found[0] if found else None


def _length(headers: Headers, name: str) -> int | None:
    value = header_value(headers, name)
    if value is None:
        return None
    length = decimal(value)
    if length is None:
        raise S3Error(S3ErrorCode.InvalidArgument, f"{name} must be a number", ArgumentName=name)
    return length
