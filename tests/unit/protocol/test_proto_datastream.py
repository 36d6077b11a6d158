"""The datastream codec (write pipeline V2's wire): headers round trip, and every malformed frame raises
StreamProtocolError naming what is wrong, since the datanode answers exactly that and closes the stream."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pyozone.hdds.checksum import ChecksumType
from pyozone.hdds.locations import DatanodeRef, KeyLocation, PipelineRef
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from pyozone.protocol import datastream as ds
from pyozone.protocol.data import result_name
from pyozone.protocol.datastream import StreamProtocolError

CRC32_16K = ds.WriteHeader(1, 2, "pipeline-1", ChecksumType.CRC32, 16 * 1024)
NO_SUMS = ds.WriteHeader(1, 2, "pipeline-1", ChecksumType.NONE, 16 * 1024)

# ------------------------------------------------------------------ strategies
TEXT = st.characters(exclude_categories=("Cs",))  # what UTF-8 encodes (messages go as UTF-8)
ids = st.integers(1, (1 << 63) - 1)
counts = st.integers(0, (1 << 63) - 1)
names = st.text(min_size=1, max_size=40)
hops = st.builds(
    ds.Hop, st.text(min_size=1, max_size=64), st.text(min_size=1, max_size=255), st.integers(1, 65535)
)
write_headers = st.builds(
    ds.WriteHeader,
    ids,
    ids,
    names,
    st.sampled_from(ChecksumType),
    st.integers(1, ds.MAX_PACKET_BYTES),
    st.lists(hops, max_size=ds.MAX_CHAIN).map(tuple),
)
read_headers = st.builds(ds.ReadHeader, ids, ids, counts, counts, st.integers(0, ds.MAX_PACKET_BYTES))
ascii_names = st.text("abcdefghijklmnopqrstuvwxyz0123456789.-", min_size=1, max_size=36)
small_write_headers = st.builds(
    ds.WriteHeader,
    ids,
    ids,
    ascii_names,
    st.sampled_from(ChecksumType),
    st.integers(1, ds.MAX_PACKET_BYTES),
    st.lists(st.builds(ds.Hop, ascii_names, ascii_names, st.integers(1, 65535)), max_size=ds.MAX_CHAIN).map(
        tuple
    ),
)


def decode(frame: bytes) -> ds.WriteHeader | ds.ReadHeader:
    """A whole connection opening, as the datanode reads it: preamble, then exactly the header's bytes."""
    op, length = ds.decode_preamble(frame[: ds.PREAMBLE.size])
    body = frame[ds.PREAMBLE.size :]
    assert len(body) == length
    return ds.decode_header(op, body)


def raises(problem: str) -> Any:
    """StreamProtocolError whose message contains `problem` (it always starts with "datastream: ")."""
    return pytest.raises(StreamProtocolError, match=f"^datastream: .*{re.escape(problem)}")


# ------------------------------------------------------------------ round trips
@settings(max_examples=200, deadline=None)
@given(write_headers | read_headers)
def test_header_round_trips_or_is_refused_as_too_long(header: ds.WriteHeader | ds.ReadHeader) -> None:
    """Any valid header either comes back equal or, escaped past MAX_HEADER_BYTES, is refused at encode."""
    try:
        frame = ds.encode_header(header)
    except StreamProtocolError as e:
        assert f"above {ds.MAX_HEADER_BYTES}" in str(e)
        return
    assert len(frame) <= ds.PREAMBLE.size + ds.MAX_HEADER_BYTES
    assert decode(frame) == header


@settings(max_examples=200, deadline=None)
@given(small_write_headers | read_headers)
def test_headers_of_plain_names_always_round_trip(header: ds.WriteHeader | ds.ReadHeader) -> None:
    assert decode(ds.encode_header(header)) == header


@settings(max_examples=100, deadline=None)
@given(small_write_headers)
def test_forwarded_header_drops_the_first_hop(header: ds.WriteHeader) -> None:
    forwarded = decode(ds.encode_header(header.forwarded()))
    assert isinstance(forwarded, ds.WriteHeader)
    assert forwarded.chain == header.chain[1:]
    assert (forwarded.container_id, forwarded.local_id, forwarded.pipeline_id) == (
        header.container_id,
        header.local_id,
        header.pipeline_id,
    )


def test_header_above_the_limit_is_refused_at_encode() -> None:
    euros = "\u20ac" * 255  # JSON escapes each to 6 bytes
    huge = ds.WriteHeader(1, 1, euros, ChecksumType.CRC32, 1, (ds.Hop("u", euros, 1),) * ds.MAX_CHAIN)
    with raises(f"is above {ds.MAX_HEADER_BYTES}"):
        ds.encode_header(huge)


@settings(max_examples=200, deadline=None)
@given(
    st.integers(1, 65535),
    st.integers(0, (1 << 64) - 1),
    st.integers(0, 255),
    st.text(TEXT, max_size=ds.MAX_MESSAGE_BYTES),
)
def test_ack_round_trips(result: int, acked: int, member: int, message: str) -> None:
    frame = ds.encode_ack(result, acked, member, message)
    ack, length = ds.decode_ack_frame(frame[: ds.ACK.size])
    assert ack == ds.Ack(result, acked, member)
    raw = frame[ds.ACK.size :]
    assert len(raw) == length
    if len(message.encode("utf-8", "replace")) <= ds.MAX_MESSAGE_BYTES:
        assert raw.decode() == message


def test_ack_message_is_cut_to_the_limit_and_member_to_a_byte() -> None:
    frame = ds.encode_ack(ds.SUCCESS, 5, 300, "x" * (ds.MAX_MESSAGE_BYTES + 10))
    ack, length = ds.decode_ack_frame(frame[: ds.ACK.size])
    assert ack.ok and ack.member == 255 and length == ds.MAX_MESSAGE_BYTES
    assert len(frame) == ds.ACK.size + ds.MAX_MESSAGE_BYTES


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 65535), st.integers(0, ds.MAX_PACKET_BYTES), st.text(TEXT, max_size=200))
def test_read_reply_round_trips(result: int, length: int, message: str) -> None:
    frame = ds.encode_read_reply(result, length, message)
    got, got_length, message_length = ds.decode_read_reply(frame[: ds.READ_REPLY.size])
    assert (got, got_length) == (result, length)
    assert frame[ds.READ_REPLY.size :].decode() == message and message_length == len(message.encode())


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(ChecksumType), st.integers(1, 64 * 1024), st.integers(1, ds.MAX_PACKET_BYTES))
def test_data_packet_with_whole_checksums_round_trips(kind: ChecksumType, per: int, length: int) -> None:
    header = ds.WriteHeader(1, 1, "p", kind, per)
    sums = header.checksum_bytes(length)
    packet = ds.decode_packet(ds.encode_packet(ds.PacketKind.DATA, 77, length, sums), header, 77)
    assert packet == ds.Packet(ds.PacketKind.DATA, 77, length, sums)


def test_checksum_bytes_counts_whole_pieces() -> None:
    assert CRC32_16K.checksum_bytes(1) == 4
    assert CRC32_16K.checksum_bytes(16 * 1024) == 4
    assert CRC32_16K.checksum_bytes(16 * 1024 + 1) == 8
    assert ds.WriteHeader(1, 1, "p", ChecksumType.SHA256, 10).checksum_bytes(25) == 3 * 32
    assert NO_SUMS.checksum_bytes(1 << 20) == 0


def test_end_packet_decodes() -> None:
    frame = ds.encode_packet(ds.PacketKind.END, 100, 0, 0)
    assert ds.decode_packet(frame, CRC32_16K, 100) == ds.Packet(ds.PacketKind.END, 100, 0, 0)


# ------------------------------------------------------------------ malformed preambles
def preamble(
    magic: bytes = ds.MAGIC, version: int = ds.VERSION, op: int = ds.Op.WRITE, length: int = 10
) -> bytes:
    return ds.PREAMBLE.pack(magic, version, op, length)


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        (preamble(magic=b"GET "), "not a datastream connection (starts b'GET '"),
        (preamble(magic=b"\x00\x00\x00\x00"), "not a datastream connection"),
        (preamble(version=0), "version 0 is not supported"),
        (preamble(version=2), "version 2 is not supported"),
        (preamble(op=0), "unknown op 0"),
        (preamble(op=3), "unknown op 3"),
        (preamble(length=0), f"header length 0 is outside 1..{ds.MAX_HEADER_BYTES}"),
        (preamble(length=ds.MAX_HEADER_BYTES + 1), f"header length {ds.MAX_HEADER_BYTES + 1} is outside"),
        (preamble(length=65535), "header length 65535 is outside"),
    ],
)
def test_bad_preamble(raw: bytes, problem: str) -> None:
    with raises(problem):
        ds.decode_preamble(raw)


def test_preamble_at_the_limits_decodes() -> None:
    assert ds.decode_preamble(preamble(op=ds.Op.READ, length=1)) == (ds.Op.READ, 1)
    assert ds.decode_preamble(preamble(length=ds.MAX_HEADER_BYTES)) == (ds.Op.WRITE, ds.MAX_HEADER_BYTES)


# ------------------------------------------------------------------ malformed headers
WRITE_BODY: dict[str, Any] = {
    "container": 1,
    "local": 2,
    "pipeline": "pipeline-1",
    "checksum": "CRC32",
    "bytesPerChecksum": 16384,
    "chain": [["uuid-2", "dn2", 9860]],
}
READ_BODY: dict[str, Any] = {"container": 1, "local": 2, "bcsid": 0, "offset": 0, "length": 10}
MISSING = object()


def body(base: dict[str, Any], **changes: Any) -> bytes:
    merged = {**base, **changes}
    return json.dumps({k: v for k, v in merged.items() if v is not MISSING}).encode()


def test_valid_bodies_decode() -> None:
    assert ds.decode_header(ds.Op.WRITE, body(WRITE_BODY)) == ds.WriteHeader(
        1, 2, "pipeline-1", ChecksumType.CRC32, 16384, (ds.Hop("uuid-2", "dn2", 9860),)
    )
    assert ds.decode_header(ds.Op.READ, body(READ_BODY)) == ds.ReadHeader(1, 2, 0, 0, 10)


@pytest.mark.parametrize("op", [ds.Op.WRITE, ds.Op.READ])
@pytest.mark.parametrize(
    "raw",
    [b"{not json", b"", b"\xff\xfe\x00garbage", b'{"container": 1', b"{'container': 1}", b"NaN NaN"],
)
def test_header_that_is_not_json(op: ds.Op, raw: bytes) -> None:
    with raises("header is not JSON"):
        ds.decode_header(op, raw)


def test_deeply_nested_header_is_not_json() -> None:
    with raises("header is not JSON"):
        ds.decode_header(ds.Op.WRITE, b"[" * ds.MAX_HEADER_BYTES)


@pytest.mark.parametrize("op", [ds.Op.WRITE, ds.Op.READ])
@pytest.mark.parametrize("raw", [b"[1, 2]", b"42", b'"container"', b"null", b"true", b"[]"])
def test_header_that_is_not_an_object(op: ds.Op, raw: bytes) -> None:
    with raises("header is not a JSON object"):
        ds.decode_header(op, raw)


BAD_INTEGERS = [MISSING, None, -1, "1", 1.0, True, [1], {"v": 1}, 1 << 63]


@pytest.mark.parametrize("value", [*BAD_INTEGERS, 0])
@pytest.mark.parametrize("field", ["container", "local"])
@pytest.mark.parametrize(("op", "base"), [(ds.Op.WRITE, WRITE_BODY), (ds.Op.READ, READ_BODY)])
def test_bad_block_id(op: ds.Op, base: dict[str, Any], field: str, value: Any) -> None:
    shown = repr(None if value is MISSING else value)
    with raises(f"header.{field} {shown} is not an integer in 1..{(1 << 63) - 1}"):
        ds.decode_header(op, body(base, **{field: value}))


@pytest.mark.parametrize("value", BAD_INTEGERS)
@pytest.mark.parametrize("field", ["bcsid", "offset"])
def test_bad_read_position(field: str, value: Any) -> None:
    with raises(f"header.{field} "):
        ds.decode_header(ds.Op.READ, body(READ_BODY, **{field: value}))


@pytest.mark.parametrize("value", [MISSING, -1, "10", 1.5, False, ds.MAX_PACKET_BYTES + 1])
def test_bad_read_length(value: Any) -> None:
    with raises(f"is not an integer in 0..{ds.MAX_PACKET_BYTES}"):
        ds.decode_header(ds.Op.READ, body(READ_BODY, length=value))


@pytest.mark.parametrize("value", [MISSING, 0, -16, "16384", 16.0, True, ds.MAX_PACKET_BYTES + 1])
def test_bad_bytes_per_checksum(value: Any) -> None:
    with raises(f"header.bytesPerChecksum {None if value is MISSING else value!r} is not an integer in 1.."):
        ds.decode_header(ds.Op.WRITE, body(WRITE_BODY, bytesPerChecksum=value))


@pytest.mark.parametrize("value", [MISSING, None, "", "x" * 256, 7, ["p"]])
def test_bad_pipeline(value: Any) -> None:
    with raises("header.pipeline must be a string of 1..255 characters"):
        ds.decode_header(ds.Op.WRITE, body(WRITE_BODY, pipeline=value))


@pytest.mark.parametrize("value", [MISSING, None, "CRC64", "crc32", "", 2, 1.0])
def test_unknown_checksum_name(value: Any) -> None:
    shown = repr(None if value is MISSING else value)
    with raises(f"header.checksum {shown} is not a checksum type"):
        ds.decode_header(ds.Op.WRITE, body(WRITE_BODY, checksum=value))


@pytest.mark.parametrize("value", [["CRC32"], {"name": "CRC32"}])
def test_unhashable_checksum_name(value: Any) -> None:
    with raises("is not a checksum type"):
        ds.decode_header(ds.Op.WRITE, body(WRITE_BODY, checksum=value))


@pytest.mark.parametrize(
    "value",
    [MISSING, None, "dn2", {"0": ["u", "h", 1]}, 3, [["u", "h", 1]] * (ds.MAX_CHAIN + 1)],
)
def test_bad_chain(value: Any) -> None:
    with raises(f"header.chain must be a list of at most {ds.MAX_CHAIN} members"):
        ds.decode_header(ds.Op.WRITE, body(WRITE_BODY, chain=value))


def test_chain_of_the_most_members_decodes() -> None:
    header = ds.decode_header(ds.Op.WRITE, body(WRITE_BODY, chain=[["u", "h", 1]] * ds.MAX_CHAIN))
    assert isinstance(header, ds.WriteHeader) and len(header.chain) == ds.MAX_CHAIN


@pytest.mark.parametrize(
    ("hop", "problem"),
    [
        ("uuid dn2 9860", "header.chain[1] must be [uuid, host, port]"),
        (["uuid", "dn2"], "header.chain[1] must be [uuid, host, port]"),
        (["uuid", "dn2", 9860, "extra"], "header.chain[1] must be [uuid, host, port]"),
        ({"uuid": "u", "host": "h", "port": 1}, "header.chain[1] must be [uuid, host, port]"),
        (["uuid", "dn2", 0], "header.chain[1] port 0 is not a port"),
        (["uuid", "dn2", -1], "header.chain[1] port -1 is not a port"),
        (["uuid", "dn2", 65536], "header.chain[1] port 65536 is not a port"),
        (["uuid", "dn2", "9860"], "header.chain[1] port '9860' is not a port"),
        (["uuid", "dn2", 9860.0], "header.chain[1] port 9860.0 is not a port"),
        (["uuid", "dn2", True], "header.chain[1] port True is not a port"),
        (["uuid", "dn2", None], "header.chain[1] port None is not a port"),
        (["", "dn2", 9860], "header.chain[1] uuid must be a string of 1..64 characters"),
        (["u" * 65, "dn2", 9860], "header.chain[1] uuid must be a string of 1..64 characters"),
        ([5, "dn2", 9860], "header.chain[1] uuid must be a string"),
        (["uuid", "", 9860], "header.chain[1] host must be a string of 1..255 characters"),
        (["uuid", "h" * 256, 9860], "header.chain[1] host must be a string of 1..255 characters"),
        (["uuid", None, 9860], "header.chain[1] host must be a string"),
    ],
)
def test_bad_hop(hop: Any, problem: str) -> None:
    chain = [["uuid-1", "dn1", 9860], hop]
    with raises(problem):
        ds.decode_header(ds.Op.WRITE, body(WRITE_BODY, chain=chain))


# ------------------------------------------------------------------ malformed packets
@pytest.mark.parametrize("kind", [0, 3, 255])
def test_packet_of_unknown_kind(kind: int) -> None:
    with raises(f"unknown packet kind {kind}"):
        ds.decode_packet(ds.PACKET.pack(kind, 0, 10, 4), CRC32_16K, 0)


@pytest.mark.parametrize(
    ("kind", "offset", "expected"), [(1, 0, 10), (1, 20, 10), (2, 5, 10), (1, 1 << 40, 0)]
)
def test_packet_at_the_wrong_offset(kind: int, offset: int, expected: int) -> None:
    with raises(f"packet at offset {offset}; the block has {expected} bytes so far"):
        ds.decode_packet(ds.PACKET.pack(kind, offset, 10, 4), CRC32_16K, expected)


@pytest.mark.parametrize("length", [0, ds.MAX_PACKET_BYTES + 1, (1 << 32) - 1])
def test_packet_length_out_of_bounds(length: int) -> None:
    with raises(f"packet length {length} is outside 1..{ds.MAX_PACKET_BYTES}"):
        ds.decode_packet(ds.PACKET.pack(ds.PacketKind.DATA, 0, length, 0), NO_SUMS, 0)


@pytest.mark.parametrize(
    ("header", "length", "sums", "expected"),
    [
        (CRC32_16K, 16 * 1024 + 1, 4, 8),
        (CRC32_16K, 1, 0, 4),
        (CRC32_16K, 100, 5, 4),
        (NO_SUMS, 100, 4, 0),
        (ds.WriteHeader(1, 2, "p", ChecksumType.SHA256, 512), 1024, 32, 64),
    ],
)
def test_packet_with_the_wrong_checksum_byte_count(
    header: ds.WriteHeader, length: int, sums: int, expected: int
) -> None:
    name = header.checksum_type.name
    with raises(f"packet of {length} bytes carries {sums} checksum bytes, not {expected} ({name} per"):
        ds.decode_packet(ds.PACKET.pack(ds.PacketKind.DATA, 0, length, sums), header, 0)


@pytest.mark.parametrize(("length", "sums"), [(1, 0), (0, 4), (10, 4)])
def test_end_packet_with_data(length: int, sums: int) -> None:
    with raises("an END packet carries no data"):
        ds.decode_packet(ds.PACKET.pack(ds.PacketKind.END, 0, length, sums), CRC32_16K, 0)


# ------------------------------------------------------------------ malformed answers
@pytest.mark.parametrize("length", [ds.MAX_MESSAGE_BYTES + 1, 65535])
def test_ack_with_too_long_a_message(length: int) -> None:
    with raises(f"ack message of {length} bytes is above {ds.MAX_MESSAGE_BYTES}"):
        ds.decode_ack_frame(ds.ACK.pack(ds.SUCCESS, 0, 0, length))


def test_ack_with_the_longest_message_decodes() -> None:
    ack, length = ds.decode_ack_frame(ds.ACK.pack(7, 9, 2, ds.MAX_MESSAGE_BYTES))
    assert (ack, length) == (ds.Ack(7, 9, 2), ds.MAX_MESSAGE_BYTES) and not ack.ok


@pytest.mark.parametrize(
    ("length", "message"), [(ds.MAX_PACKET_BYTES + 1, 0), (0, ds.MAX_MESSAGE_BYTES + 1), (1 << 63, 65535)]
)
def test_read_reply_out_of_bounds(length: int, message: int) -> None:
    with raises(f"read reply of {length} data and {message} message bytes is out of bounds"):
        ds.decode_read_reply(ds.READ_REPLY.pack(1, length, message))


def test_stream_protocol_error_is_a_protocol_error() -> None:
    from pyozone.hdds.errors import ProtocolError

    error = StreamProtocolError("x")
    assert isinstance(error, ProtocolError) and isinstance(error, ValueError) and error.field == "datastream"


# ------------------------------------------------------------------ results and V2's putBlock
def test_result_numbers_are_the_container_protocols_and_an_unknown_one_is_named_by_number() -> None:
    assert result_name(ds.SUCCESS) == "SUCCESS"
    assert result_name(ds.result_number("CLOSED_CONTAINER_IO")) == "CLOSED_CONTAINER_IO"
    assert result_name(ds.MALFORMED_REQUEST) == "MALFORMED_REQUEST"
    assert result_name(999) == "RESULT_999"


def test_put_block_goes_to_the_pipeline_with_the_blocks_token() -> None:
    member = DatanodeRef("dn-1", "dn1", "127.0.0.1", 9000, 9001)
    location = KeyLocation(5, 6, 0, 0, 0, PipelineRef("pipeline-1", (member,), "dn-1"), token="tok")
    block = pb.BlockData(blockID=pb.DatanodeBlockID(containerID=5, localID=6))
    request = ds.put_block_request(location, block, eof=True)
    assert (request.cmdType, request.containerID, request.pipelineID) == (pb.PutBlock, 5, "pipeline-1")
    assert request.encodedToken == "tok"
    assert request.putBlock.blockData == block and request.putBlock.eof
    assert ds.ACKED.result == pb.SUCCESS
