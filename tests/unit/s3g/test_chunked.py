"""The aws-chunked decoder: AWS's published example, any split of the input, truncation, corruption, and
each framing or signature fault refused with S3's code."""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Sequence
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from multidict import CIMultiDict

from pyozone.s3g.auth import sigv4
from pyozone.s3g.auth.chunked import MAX_LINE, AwsChunkedDecoder, ChunkChain
from pyozone.s3g.auth.payload import open_payload
from pyozone.s3g.errors import S3Error, S3ErrorCode

# AWS's example of a STREAMING-AWS4-HMAC-SHA256-PAYLOAD upload (S3 API reference, "sigv4-streaming").
AWS_KEY = sigv4.signing_key("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "20130524", "us-east-1", "s3")
AWS_SEED = "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9"
AWS_CHUNK_SIGNATURES = [
    "ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648",
    "0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497",
    "b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9",
]
SCOPE = "20130524/us-east-1/s3/aws4_request"
AMZ_DATE = "20130524T000000Z"


def aws_example_request() -> tuple[CIMultiDict[str], bytes]:
    signed_headers = (
        "content-encoding;content-length;host;x-amz-content-sha256;x-amz-date;x-amz-decoded-content-length;"
        "x-amz-storage-class"
    )
    headers = CIMultiDict(
        {
            "Host": "s3.amazonaws.com",
            "x-amz-date": AMZ_DATE,
            "x-amz-storage-class": "REDUCED_REDUNDANCY",
            "Authorization": f"AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/{SCOPE},"
            f"SignedHeaders={signed_headers},Signature={AWS_SEED}",
            "x-amz-content-sha256": sigv4.STREAMING_PAYLOAD,
            "Content-Encoding": "aws-chunked",
            "x-amz-decoded-content-length": "66560",
            "Content-Length": "66824",
        }
    )
    body = b"".join(
        b"%x;chunk-signature=%s\r\n%s\r\n" % (size, signature.encode(), b"a" * size)
        for size, signature in zip([65536, 1024, 0], AWS_CHUNK_SIGNATURES, strict=True)
    )
    return headers, body


def test_aws_published_example_verifies_and_decodes() -> None:
    headers, body = aws_example_request()
    assert len(body) == 66824
    signed = sigv4.parse("", headers, datetime(2013, 5, 24, 0, 5, tzinfo=UTC))
    sigv4.verify(signed, AWS_KEY, "PUT", "/examplebucket/chunkObject.txt", "", headers)
    payload = open_payload(signed, AWS_KEY, headers)
    data = b"".join(
        bytes(piece)
        for start in range(0, len(body), 1000)
        for piece in payload.feed(body[start : start + 1000])
    )
    assert data == b"a" * 66560
    digests = payload.finish()
    assert digests.length == 66560 and digests.md5_hex == hashlib.md5(data).hexdigest()


def encode(
    chunks: Sequence[bytes],
    *,
    signed: bool,
    trailers: dict[str, str] | None = None,
    chunk_extension: bytes = b"",
) -> bytes:
    """An aws-chunked body as SDKs write it (signed from the seed, or unsigned), ending in a 0-size chunk."""
    chain = ChunkChain(AWS_KEY, AMZ_DATE, SCOPE, AWS_SEED) if signed else None
    out = bytearray()
    for data in [*chunks, b""]:
        extension = (
            b";chunk-signature=%s" % chain.chunk(hashlib.sha256(data).hexdigest()).encode() if chain else b""
        )
        out += b"%x%s\r\n" % (len(data), extension or chunk_extension)
        if data:
            out += data + b"\r\n"
    for name, value in (trailers or {}).items():
        out += f"{name}:{value}\r\n".encode()
    if chain and trailers is not None:
        canonical = "".join(f"{name}:{value}\n" for name, value in trailers.items())
        out += f"x-amz-trailer-signature:{chain.trailer(canonical)}\r\n".encode()
    return bytes(out + b"\r\n")


def decoder(
    *, signed: bool, trailers: frozenset[str] = frozenset(), length: int | None = None
) -> AwsChunkedDecoder:
    chain = ChunkChain(AWS_KEY, AMZ_DATE, SCOPE, AWS_SEED) if signed else None
    return AwsChunkedDecoder(
        chain=chain,
        declared_trailers=trailers,
        signed_trailer=signed and bool(trailers),
        decoded_length=length,
    )


def run(target: AwsChunkedDecoder, body: bytes, cuts: Sequence[int] = ()) -> tuple[bytes, dict[str, str]]:
    edges = [0, *sorted(cut % (len(body) + 1) for cut in cuts), len(body)]
    data = bytearray()
    for start, end in itertools.pairwise(edges):
        for piece in target.feed(body[start:end]):
            data += piece
    return bytes(data), target.finish()


def refused(code: S3ErrorCode, target: AwsChunkedDecoder, body: bytes) -> S3Error:
    with pytest.raises(S3Error) as caught:
        run(target, body)
    assert caught.value.code is code, caught.value.message
    return caught.value


BODIES = st.lists(st.binary(max_size=300), max_size=5).map(lambda chunks: [c for c in chunks if c])
TRAILER = {"x-amz-checksum-crc32": "NhCmhg=="}


@settings(max_examples=100, deadline=None)
@given(
    chunks=BODIES,
    signed=st.booleans(),
    with_trailer=st.booleans(),
    cuts=st.lists(st.integers(0, 4000), max_size=12),
)
def test_any_split_of_the_input_gives_the_same_output(
    chunks: list[bytes], signed: bool, with_trailer: bool, cuts: list[int]
) -> None:
    trailers = TRAILER if with_trailer else None
    body = encode(chunks, signed=signed, trailers=trailers)
    declared = frozenset(TRAILER) if with_trailer else frozenset()
    total = sum(map(len, chunks))
    data, received = run(decoder(signed=signed, trailers=declared, length=total), body, cuts)
    assert data == b"".join(chunks)
    assert received == (trailers or {})


@settings(max_examples=100, deadline=None)
@given(chunks=BODIES, signed=st.booleans(), cut=st.integers(0, 4000))
def test_a_truncated_body_is_incomplete(chunks: list[bytes], signed: bool, cut: int) -> None:
    body = encode(chunks, signed=signed)
    with pytest.raises(S3Error) as caught:
        run(decoder(signed=signed), body[: cut % len(body)])
    assert caught.value.code is S3ErrorCode.IncompleteBody


@settings(max_examples=60, deadline=None)
@given(chunks=BODIES.filter(bool), at=st.integers(0, 4000), bit=st.integers(0, 7))
def test_a_corrupted_signed_body_is_refused_or_means_the_same(chunks: list[bytes], at: int, bit: int) -> None:
    body = bytearray(encode(chunks, signed=True, trailers=TRAILER))
    body[at % len(body)] ^= 1 << bit
    try:
        data, trailers = run(decoder(signed=True, trailers=frozenset(TRAILER)), bytes(body))
    except S3Error:
        return
    assert data == b"".join(chunks) and trailers == TRAILER  # e.g. a hex digit's case flipped


def test_data_pieces_are_views_into_the_input() -> None:
    body = encode([b"x" * 100, b"y" * 50], signed=False)
    pieces = decoder(signed=False).feed(body)
    assert [bytes(piece) for piece in pieces] == [b"x" * 100, b"y" * 50]
    assert all(piece.obj is body for piece in pieces)


def test_framing_faults() -> None:
    good = encode([b"abc"], signed=False)
    malformed = [
        b"zz\r\nabc\r\n0\r\n\r\n",
        b"0x3\r\nabc\r\n0\r\n\r\n",
        b"3\r\nabcd\r\n0\r\n\r\n",
        b"1" * (MAX_LINE + 2),
        b"3\r\nabc\r\n0\r\nno-colon\r\n\r\n",
        good + b"extra",
    ]
    for body in malformed:
        refused(S3ErrorCode.InvalidRequest, decoder(signed=False), body)
    refused(S3ErrorCode.InvalidRequest, decoder(signed=True), good)  # no chunk-signature
    refused(S3ErrorCode.IncompleteBody, decoder(signed=False, length=2), good)
    refused(S3ErrorCode.IncompleteBody, decoder(signed=False, length=4), good)
    assert run(decoder(signed=False), encode([b"abc"], signed=False, chunk_extension=b";ext=1"))[0] == b"abc"


def test_signature_faults() -> None:
    one, two = encode([b"one"], signed=True), encode([b"one", b"two"], signed=True)
    refused(S3ErrorCode.SignatureDoesNotMatch, decoder(signed=True), one.replace(b"one", b"One"))
    lines = two.split(b"\r\n")
    swapped = b"\r\n".join([lines[2], lines[3], lines[0], lines[1], *lines[4:]])
    refused(S3ErrorCode.SignatureDoesNotMatch, decoder(signed=True), swapped)
    dropped = b"\r\n".join(lines[2:])
    refused(S3ErrorCode.SignatureDoesNotMatch, decoder(signed=True), dropped)
    trailers = frozenset(TRAILER)
    signed = encode([b"one"], signed=True, trailers=TRAILER)
    refused(
        S3ErrorCode.SignatureDoesNotMatch,
        decoder(signed=True, trailers=trailers),
        signed.replace(b"NhCm", b"AhCm"),
    )
    unsigned_trailer = encode([b"one"], signed=True).replace(
        b"\r\n\r\n", b"\r\nx-amz-checksum-crc32:NhCmhg==\r\n\r\n"
    )
    refused(S3ErrorCode.InvalidRequest, decoder(signed=True, trailers=trailers), unsigned_trailer)


def test_trailer_faults() -> None:
    body = encode([b"one"], signed=False, trailers=TRAILER)
    refused(S3ErrorCode.InvalidRequest, decoder(signed=False), body)  # not declared
    refused(
        S3ErrorCode.InvalidRequest, decoder(signed=False, trailers=frozenset({"x-amz-checksum-sha256"})), body
    )
    both = frozenset({*TRAILER, "x-amz-checksum-sha256"})
    refused(S3ErrorCode.InvalidRequest, decoder(signed=False, trailers=both), body)  # declared, not sent
    repeated = body.replace(b"\r\n\r\n", b"\r\nx-amz-checksum-crc32:NhCmhg==\r\n\r\n")
    refused(S3ErrorCode.InvalidRequest, decoder(signed=False, trailers=frozenset(TRAILER)), repeated)
