"""The CRC combine functions against the CRC of the concatenation, computed by zlib, crc32c and awscrt."""

from __future__ import annotations

import zlib
from collections.abc import Callable

import crc32c
import pytest
from awscrt import checksums as crt_checksums
from hypothesis import given, settings
from hypothesis import strategies as st

from pyozone.s3g.auth.crc_combine import crc32_combine, crc32c_combine, crc64nvme_combine

Crc = Callable[[bytes], int]
ALGORITHMS: list[tuple[Crc, Callable[[int, int, int], int]]] = [
    (zlib.crc32, crc32_combine),
    (crc32c.crc32c, crc32c_combine),
    (crt_checksums.crc64nvme, crc64nvme_combine),
]


@pytest.mark.parametrize(("crc", "combine"), ALGORITHMS, ids=["crc32", "crc32c", "crc64nvme"])
@settings(max_examples=200, deadline=None)
@given(a=st.binary(max_size=300), b=st.binary(max_size=300))
def test_combine_is_the_crc_of_the_concatenation(
    crc: Crc, combine: Callable[[int, int, int], int], a: bytes, b: bytes
) -> None:
    assert combine(crc(a), crc(b), len(b)) == crc(a + b)


@pytest.mark.parametrize(("crc", "combine"), ALGORITHMS, ids=["crc32", "crc32c", "crc64nvme"])
@settings(max_examples=50, deadline=None)
@given(parts=st.lists(st.binary(max_size=200), min_size=1, max_size=6))
def test_combining_parts_in_order_is_the_crc_of_the_whole(
    crc: Crc, combine: Callable[[int, int, int], int], parts: list[bytes]
) -> None:
    combined = crc(parts[0])
    for part in parts[1:]:
        combined = combine(combined, crc(part), len(part))
    assert combined == crc(b"".join(parts))


@pytest.mark.parametrize(("crc", "combine"), ALGORITHMS, ids=["crc32", "crc32c", "crc64nvme"])
def test_a_long_second_part_is_combined_by_its_length_alone(
    crc: Crc, combine: Callable[[int, int, int], int]
) -> None:
    """A 5 MiB part (S3's least but the last): the length's squarings reach far beyond the examples."""
    a, b = b"head", bytes(range(256)) * (5 * 4096)
    assert combine(crc(a), crc(b), len(b)) == crc(a + b)
