"""Duration and size parsing, as Hadoop's getTimeDuration and Ozone's StorageUnit."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pyozone.config.units import (
    MAX_DURATION_MS,
    MAX_SIZE_BYTES,
    OutOfRangeError,
    parse_duration_ms,
    parse_size_bytes,
)

FACTORS = {"ms": 1, "s": 1_000, "m": 60_000, "h": 3_600_000}


@pytest.mark.parametrize(
    ("text", "ms"),
    [
        ("250ms", 250),
        ("30s", 30_000),
        ("5m", 300_000),
        ("2h", 7_200_000),
        ("1d", 86_400_000),
        ("66S", 66_000),
        (" 10 m ", 600_000),
        ("1.5s", 1_500),
        ("0", 0),
        ("-1s", -1_000),
    ],
)
def test_duration_units(text: str, ms: int) -> None:
    assert parse_duration_ms(text) == ms


def test_bare_duration_uses_the_default_unit() -> None:
    assert parse_duration_ms("600000") == 600_000
    assert parse_duration_ms("1", default_unit="s") == 1_000


@pytest.mark.parametrize("text", ["", "abc", "5 minutes", "5x", "1e3s", "s", "--5s", "5m5s"])
def test_duration_garbage_rejected(text: str) -> None:
    with pytest.raises(ValueError):
        parse_duration_ms(text)


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("512", 512),
        ("512B", 512),
        ("16KB", 16 << 10),
        ("256MB", 256 << 20),
        ("5GB", 5 << 30),
        ("1TB", 1 << 40),
        ("1gb", 1 << 30),
        ("0B", 0),
        ("0.5KB", 512),
    ],
)
def test_size_units_are_binary(text: str, size: int) -> None:
    assert parse_size_bytes(text) == size


@pytest.mark.parametrize("text", ["", "big", "5XB", "5 G B", "MB"])
def test_size_garbage_rejected(text: str) -> None:
    with pytest.raises(ValueError):
        parse_size_bytes(text)


@given(st.integers(min_value=0), st.sampled_from(sorted(FACTORS)))
def test_duration_is_exact_up_to_the_limit(n: int, unit: str) -> None:
    if n * FACTORS[unit] <= MAX_DURATION_MS:
        assert parse_duration_ms(f"{n}{unit}") == n * FACTORS[unit]
    else:
        with pytest.raises(OutOfRangeError):
            parse_duration_ms(f"{n}{unit}")


@pytest.mark.parametrize("text", ["99999999999999999999d", "36501d", "-36501d", "3153600000001"])
def test_durations_beyond_any_timeout_are_out_of_range(text: str) -> None:
    """A duration becomes a Python timeout (threading.TIMEOUT_MAX is about 292 years): 100 years at most."""
    with pytest.raises(OutOfRangeError, match="at most 36500d"):
        parse_duration_ms(text)
    assert parse_duration_ms("36500d") == MAX_DURATION_MS


@pytest.mark.parametrize("text", ["99999999999999999999999PB", "8192PB", "9223372036854775808"])
def test_sizes_beyond_64_bits_are_out_of_range(text: str) -> None:
    with pytest.raises(OutOfRangeError, match="out of range"):
        parse_size_bytes(text)
    assert parse_size_bytes(str(MAX_SIZE_BYTES)) == MAX_SIZE_BYTES


@pytest.mark.parametrize(
    ("text", "ms"),
    [
        ("P365D", 365 * 86_400_000),
        ("P28D", 28 * 86_400_000),
        ("PT30S", 30_000),
        ("PT0.5S", 500),
        ("P1DT2H3M4S", ((24 + 2) * 60 + 3) * 60_000 + 4_000),
        ("pt10m", 600_000),
    ],
)
def test_iso_8601_durations_as_ozone_writes_its_certificate_keys(text: str, ms: int) -> None:
    assert parse_duration_ms(text) == ms


@pytest.mark.parametrize("text", ["P", "PT", "P1Y", "P1M", "PT1D", "P1DT", "P-1D", "P1H"])
def test_malformed_iso_8601_durations_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match="ISO-8601"):
        parse_duration_ms(text)


def test_iso_8601_duration_past_the_limit_is_out_of_range() -> None:
    with pytest.raises(OutOfRangeError):
        parse_duration_ms("P40000D")
