"""The block token in datastream headers: carried as the encodedToken, kept down the chain, absent (the
wire unchanged) without one, bounded."""

from __future__ import annotations

import json

import pytest

from pyozone.hdds.checksum import ChecksumType
from pyozone.protocol import datastream as ds
from pyozone.protocol.tokens import MAX_ENCODED_TOKEN

HOPS = (ds.Hop("b", "127.0.0.2", 9001), ds.Hop("c", "127.0.0.3", 9002))
WRITE = ds.WriteHeader(7, 1, "pipeline", ChecksumType.CRC32, 1024, HOPS, 0, "dG9rZW4")
READ = ds.ReadHeader(7, 1, 3, 0, 4096, "dG9rZW4")


def roundtrip(header: ds.WriteHeader | ds.ReadHeader) -> ds.WriteHeader | ds.ReadHeader:
    raw = ds.encode_header(header)
    op, length = ds.decode_preamble(raw[: ds.PREAMBLE.size])
    return ds.decode_header(op, raw[ds.PREAMBLE.size : ds.PREAMBLE.size + length])


def body(header: ds.WriteHeader | ds.ReadHeader) -> dict[str, object]:
    return json.loads(ds.encode_header(header)[ds.PREAMBLE.size :])  # type: ignore[no-any-return]


def test_headers_carry_the_token_and_the_chain_keeps_it() -> None:
    assert roundtrip(WRITE) == WRITE and roundtrip(READ) == READ
    assert WRITE.forwarded().token == WRITE.token and WRITE.forwarded().chain == HOPS[1:]


def test_no_token_sends_no_field() -> None:
    for header in (ds.WriteHeader(7, 1, "p", ChecksumType.NONE, 1), ds.ReadHeader(7, 1, 0, 0, 1)):
        assert "token" not in body(header) and roundtrip(header).token == ""


@pytest.mark.parametrize("bad", ["", 7, "x" * (MAX_ENCODED_TOKEN + 1)])
def test_a_bad_token_field_is_a_protocol_error(bad: object) -> None:
    raw = json.dumps({**body(READ), "token": bad}).encode()
    with pytest.raises(ds.StreamProtocolError, match=r"header\.token"):
        ds.decode_header(ds.Op.READ, raw)
