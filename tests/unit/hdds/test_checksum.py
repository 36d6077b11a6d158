"""Checksums: Ozone's encodings, round trips and the index of a damaged piece."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pyozone.hdds.checksum import (
    ChecksumData,
    ChecksumMismatch,
    ChecksumType,
    compute,
    verify,
)

COMPUTING = [t for t in ChecksumType if t is not ChecksumType.NONE]


def test_known_values_use_ozone_encoding() -> None:
    # The standard check values of "123456789", stored as 4 big-endian bytes.
    assert compute(b"123456789", ChecksumType.CRC32, 16).checksums == (bytes.fromhex("cbf43926"),)
    assert compute(b"123456789", ChecksumType.CRC32C, 16).checksums == (bytes.fromhex("e3069283"),)
    assert len(compute(b"x", ChecksumType.SHA256, 16).checksums[0]) == 32
    assert len(compute(b"x", ChecksumType.MD5, 16).checksums[0]) == 16


def test_one_checksum_per_piece_and_none_for_empty_data() -> None:
    assert len(compute(bytes(2049), ChecksumType.CRC32, 1024).checksums) == 3
    assert compute(b"", ChecksumType.CRC32, 1024).checksums == ()
    assert compute(b"abc", ChecksumType.NONE, 1024).checksums == ()


@settings(max_examples=150, deadline=None)
@given(
    data=st.binary(min_size=0, max_size=5000),
    bpc=st.integers(min_value=1, max_value=2048),
    kind=st.sampled_from(list(ChecksumType)),
)
def test_round_trip(data: bytes, bpc: int, kind: ChecksumType) -> None:
    cd = compute(data, kind, bpc)
    verify(data, cd)
    verify(memoryview(bytearray(data)), cd)
    assert ChecksumData.from_dict(cd.to_dict()) == cd


@settings(max_examples=150, deadline=None)
@given(
    data=st.binary(min_size=1, max_size=5000),
    bpc=st.integers(min_value=1, max_value=2048),
    kind=st.sampled_from(COMPUTING),
    where=st.integers(min_value=0),
    flip=st.integers(min_value=1, max_value=255),
)
def test_any_flipped_byte_is_found_in_its_piece(
    data: bytes, bpc: int, kind: ChecksumType, where: int, flip: int
) -> None:
    cd = compute(data, kind, bpc)
    damaged = bytearray(data)
    pos = where % len(data)
    damaged[pos] ^= flip
    with pytest.raises(ChecksumMismatch) as e:
        verify(bytes(damaged), cd)
    assert e.value.index == pos // bpc


@settings(max_examples=100, deadline=None)
@given(
    pieces=st.integers(min_value=1, max_value=12),
    bpc=st.integers(min_value=1, max_value=300),
    tail=st.integers(min_value=0, max_value=299),
    first=st.integers(min_value=0),
    count=st.integers(min_value=1),
    kind=st.sampled_from(COMPUTING),
)
def test_partial_reads_verify_from_a_piece_boundary(
    pieces: int, bpc: int, tail: int, first: int, count: int, kind: ChecksumType
) -> None:
    data = bytes(range(256)) * ((pieces * bpc + tail) // 256 + 1)
    data = data[: pieces * bpc + tail % bpc]
    cd = compute(data, kind, bpc)
    start = (first % len(cd.checksums)) * bpc
    end = min(len(data), start + (count % pieces + 1) * bpc)
    verify(data[start:end], cd, offset_in_chunk=start)


def test_a_range_ending_inside_a_middle_piece_is_a_caller_error_not_a_mismatch() -> None:
    """A mismatch marks a replica UNHEALTHY; a badly cut read range must not."""
    data = bytes(range(200)) * 10
    cd = compute(data, ChecksumType.CRC32, 100)
    with pytest.raises(ValueError, match="ends inside piece 1"):
        verify(data[100:150], cd, offset_in_chunk=100)
    verify(data[1900:], cd, offset_in_chunk=1900)  # the last piece may end with the chunk


@pytest.mark.parametrize(
    ("kind", "sums"),
    [(ChecksumType.NONE, (b"abcd",)), (ChecksumType.CRC32, (b"abcd",)), (ChecksumType.CRC32, (b"ab", b"cd"))],
)
def test_checksum_data_of_the_wrong_shape_is_refused(kind: ChecksumType, sums: tuple[bytes, ...]) -> None:
    with pytest.raises(ValueError, match="needs"):
        ChecksumData(kind, 100, sums).check_shape(200)


def test_data_beyond_the_checksums_is_a_mismatch() -> None:
    cd = compute(bytes(100), ChecksumType.CRC32, 100)
    with pytest.raises(ChecksumMismatch, match="runs past"):
        verify(bytes(200), cd)


def test_bad_arguments() -> None:
    cd = compute(bytes(300), ChecksumType.CRC32, 100)
    with pytest.raises(ValueError, match="boundary"):
        verify(bytes(10), cd, offset_in_chunk=50)
    with pytest.raises(ValueError, match="positive"):
        compute(b"x", ChecksumType.CRC32, 0)
    with pytest.raises(ValueError, match="whole number"):
        ChecksumData.from_dict({"type": "CRC32", "bytesPerChecksum": 4, "checksums": "AAAA"})
