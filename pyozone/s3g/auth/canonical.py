"""The canonical request's parts as S3 rebuilds them from what it received.

Clients put different bytes on the wire for the same key (the AWS C++ SDK leaves `=`, `@`, `:` ... raw in a
path, botocore escapes them) but all sign the same canonical form, so the server decodes every path segment
and query parameter and encodes it again with AWS's unreserved set. S3 encodes the path once (no double
encoding, no `.`/`..` folding), so a key's `%2F` stays inside its segment.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol
from urllib.parse import quote, unquote_to_bytes


class Headers(Protocol):
    """A case-insensitive view of the request headers (aiohttp's CIMultiDictProxy is one)."""

    def getall(self, key: str, default: list[str]) -> list[str]: ...

    def __iter__(self) -> Iterator[str]: ...


def uri_encode(raw: bytes) -> str:
    """AWS's UriEncode: everything but A-Z a-z 0-9 - _ . ~ as %XX (upper-case hex)."""
    return quote(raw, safe="")


def header_value(headers: Headers, name: str) -> str | None:
    """A header's values joined with "," as a repeated header reads (None if absent)."""
    values = headers.getall(name, [])
    return ",".join(values) if values else None


def canonical_uri(raw_path: str) -> str:
    """The path as received, each segment decoded and encoded again; "/" when empty."""
    if not raw_path:
        return "/"
    return "/".join(uri_encode(_decode(segment)) for segment in raw_path.split("/"))


def query_pairs(raw_query: str) -> Iterator[tuple[bytes, bytes]]:
    """The decoded (name, value) pairs of a raw query; `+` is a space, a bare name has an empty value."""
    for part in raw_query.split("&"):
        if part:
            name, _, value = part.partition("=")
            yield _decode(name.replace("+", " ")), _decode(value.replace("+", " "))


def canonical_query(raw_query: str, *, exclude: str | None = None) -> str:
    """Pairs encoded and sorted by encoded name, then value; `exclude` drops a parameter (X-Amz-Signature)."""
    pairs = sorted((uri_encode(name), uri_encode(value)) for name, value in query_pairs(raw_query))
    return "&".join(f"{name}={value}" for name, value in pairs if name != exclude)


def _decode(component: str) -> bytes:
    """Percent-decoded bytes; raw bytes aiohttp could not decode (kept as surrogates) come back as sent."""
    return unquote_to_bytes(component.encode("utf-8", "surrogateescape"))


def canonical_headers(headers: Headers, signed_headers: tuple[str, ...]) -> str:
    """One `name:value\\n` line per signed header; each value trimmed with inner whitespace collapsed."""
    lines = []
    for name in signed_headers:
        values = headers.getall(name, [])
        lines.append(f"{name}:{','.join(' '.join(value.split()) for value in values)}\n")
    return "".join(lines)
