"""A sans-IO decoder of `aws-chunked` bodies, signed chunk by chunk or unsigned, with optional trailers.

Wire form: `hex-size[;chunk-signature=SIG]\\r\\n DATA \\r\\n` ... then a 0-size chunk, trailer lines
(`name:value\\r\\n`, `x-amz-trailer-signature:SIG\\r\\n` when signed) and an empty line. Each chunk signature
chains from the previous one, starting at the request's seed signature, so neither chunks nor trailers can be
dropped, reordered or altered. Data comes out as memoryviews into the fed input (no copy); only chunk header
and trailer lines are buffered, each bounded by `MAX_LINE`. Data is handed out before its chunk's signature
is checked (a chunk can be large), so the caller commits nothing until `finish()` returns.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from enum import Enum, auto

from pyozone.s3g.errors import S3Error, S3ErrorCode

MAX_LINE = 1024  # a signed chunk header is ~90 bytes and a checksum trailer ~70; refuse longer lines
MAX_TRAILERS = 16
TRAILER_SIGNATURE = "x-amz-trailer-signature"
_EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()
_SIZE = re.compile(rb"[0-9a-fA-F]{1,16}")
_CHUNK_SIGNATURE = re.compile(rb"chunk-signature=([0-9a-f]{64})")


class ChunkChain:
    """The chain of chunk signatures (AWS4-HMAC-SHA256-PAYLOAD, then -TRAILER) from a seed signature."""

    def __init__(self, key: bytes, amz_date: str, scope: str, seed_signature: str) -> None:
        self._key = key
        self._prefix = f"{amz_date}\n{scope}\n"
        self.previous = seed_signature

    def chunk(self, data_sha256_hex: str) -> str:
        """The next chunk's signature over its data's SHA-256; the chain advances to it."""
        return self._advance(
            f"AWS4-HMAC-SHA256-PAYLOAD\n{self._prefix}{self.previous}\n{_EMPTY_SHA256}\n{data_sha256_hex}"
        )

    def trailer(self, canonical_trailers: str) -> str:
        """The trailer's signature over its `name:value\\n` lines (latin-1: the bytes as received)."""
        digest = hashlib.sha256(canonical_trailers.encode("latin-1")).hexdigest()
        return self._advance(f"AWS4-HMAC-SHA256-TRAILER\n{self._prefix}{self.previous}\n{digest}")

    def _advance(self, string_to_sign: str) -> str:
        self.previous = hmac.new(self._key, string_to_sign.encode(), hashlib.sha256).hexdigest()
        return self.previous


class _State(Enum):
    SIZE = auto()
    DATA = auto()
    DATA_END = auto()
    TRAILER = auto()
    DONE = auto()


class AwsChunkedDecoder:
    """Decode one aws-chunked body fed in pieces of any size; `chain` set means chunks must be signed."""

    def __init__(
        self,
        *,
        chain: ChunkChain | None,
        declared_trailers: frozenset[str],
        signed_trailer: bool,
        decoded_length: int | None,
    ) -> None:
        self._chain = chain
        self._declared = declared_trailers
        self._signed_trailer = signed_trailer
        self._decoded_length = decoded_length
        self._state = _State.SIZE
        self._pending = b""
        self._remaining = 0
        self._decoded = 0
        self._chunk_signature = ""
        self._chunk_hash = hashlib.sha256()
        self._trailers: dict[str, str] = {}
        self._trailer_signature: str | None = None

    def feed(self, data: bytes | bytearray | memoryview) -> list[memoryview]:
        """Decode a piece of the body; returns the data pieces in it (views into `data`)."""
        view = memoryview(data).cast("B")
        out: list[memoryview] = []
        pos, end = 0, len(view)
        while pos < end:
            if self._state is _State.DATA:
                take = min(self._remaining, end - pos)
                piece = view[pos : pos + take]
                if self._chain is not None:
                    self._chunk_hash.update(piece)
                out.append(piece)
                pos += take
                self._remaining -= take
                if not self._remaining:
                    self._end_of_chunk_data()
                continue
            if self._state is _State.DONE:
                raise _malformed("data after the end of the body")
            line, pos = self._read_line(view, pos)
            if line is None:
                break
            match self._state:
                case _State.SIZE:
                    self._chunk_header(line)
                case _State.DATA_END:
                    if line:
                        raise _malformed("a chunk's data is longer than its declared size")
                    self._state = _State.SIZE
                case _State.TRAILER:
                    self._trailer_line(line)
        return out

    def finish(self) -> dict[str, str]:
        """Check the body ended where it should; returns the trailers (name -> value, no signature)."""
        if self._state is not _State.DONE:
            raise S3Error(S3ErrorCode.IncompleteBody, "The aws-chunked body ended before its final chunk.")
        return dict(self._trailers)

    def _read_line(self, view: memoryview, pos: int) -> tuple[bytes | None, int]:
        """A CRLF-terminated line from the pending bytes and `view[pos:]`, or None while incomplete."""
        held = len(self._pending)
        joined = self._pending + bytes(view[pos : pos + MAX_LINE + 2 - held])
        at = joined.find(b"\r\n")
        if at < 0:
            if len(joined) > MAX_LINE + 1:
                raise _malformed(f"a chunk header or trailer line is longer than {MAX_LINE} bytes")
            self._pending = joined
            return None, len(view)
        self._pending = b""
        return joined[:at], pos + at + 2 - held

    def _chunk_header(self, line: bytes) -> None:
        size_text, _, extension = line.partition(b";")
        if not _SIZE.fullmatch(size_text):
            raise _malformed(f"bad chunk size {size_text[:32]!r}")
        size = int(size_text, 16)
        if self._chain is not None:
            signature = _CHUNK_SIGNATURE.fullmatch(extension)
            if signature is None:
                raise _malformed("a chunk lacks its chunk-signature")
            self._chunk_signature = signature.group(1).decode()
        if self._decoded_length is not None and self._decoded + size > self._decoded_length:
            raise _length_error("longer")
        self._decoded += size
        if size:
            self._remaining = size
            self._state = _State.DATA
            return
        self._end_of_chunk_data()
        if self._decoded_length is not None and self._decoded != self._decoded_length:
            raise _length_error("shorter")
        self._state = _State.TRAILER

    def _end_of_chunk_data(self) -> None:
        if self._chain is not None:
            expected = self._chain.chunk(self._chunk_hash.hexdigest())
            _check_signature(expected, self._chunk_signature)
            self._chunk_hash = hashlib.sha256()
        self._state = _State.DATA_END

    def _trailer_line(self, line: bytes) -> None:
        if not line:
            self._end_of_trailers()
            return
        if self._trailer_signature is not None:
            raise _malformed("a trailer follows x-amz-trailer-signature")
        name_bytes, colon, value_bytes = line.partition(b":")
        name = name_bytes.decode("latin-1").strip().lower()
        value = value_bytes.decode("latin-1").strip()
        if not colon:
            raise _malformed(f"bad trailer line {line[:64]!r}")
        if name == TRAILER_SIGNATURE and self._signed_trailer:
            self._trailer_signature = value
            return
        if name not in self._declared:
            raise S3Error(S3ErrorCode.InvalidRequest, f"The trailer {name} is not declared in x-amz-trailer.")
        if name in self._trailers or len(self._trailers) >= MAX_TRAILERS:
            raise _malformed(f"the trailer {name} is repeated or there are too many trailers")
        self._trailers[name] = value

    def _end_of_trailers(self) -> None:
        missing = sorted(self._declared - self._trailers.keys())
        if missing:
            raise S3Error(
                S3ErrorCode.InvalidRequest,
                f"The trailer {', '.join(missing)} was declared in x-amz-trailer but not sent.",
            )
        if self._signed_trailer and self._chain is not None:
            if self._trailer_signature is None:
                raise _malformed("the trailers lack x-amz-trailer-signature")
            canonical = "".join(f"{name}:{value}\n" for name, value in self._trailers.items())
            _check_signature(self._chain.trailer(canonical), self._trailer_signature)
        self._state = _State.DONE


def _check_signature(expected: str, provided: str) -> None:
    if not hmac.compare_digest(expected.encode(), provided.encode("utf-8", "replace")):
        raise S3Error(S3ErrorCode.SignatureDoesNotMatch)


def _length_error(which: str) -> S3Error:
    return S3Error(S3ErrorCode.IncompleteBody, f"The body is {which} than x-amz-decoded-content-length.")


def _malformed(detail: str) -> S3Error:
    return S3Error(S3ErrorCode.InvalidRequest, f"The aws-chunked body is malformed: {detail}.")
