"""Parsing of Hadoop-style duration and size values ("30s", "5m", "256MB", "1GB")."""

from __future__ import annotations

import re
from fractions import Fraction

_DURATION_UNITS_MS = {
    "ns": Fraction(1, 1_000_000),
    "us": Fraction(1, 1_000),
    "ms": 1,
    "s": 1_000,
    "m": 60_000,
    "min": 60_000,
    "h": 3_600_000,
    "d": 86_400_000,
}
_SIZE_UNITS = {
    "": 1,
    "b": 1,
    "k": 1 << 10,
    "kb": 1 << 10,
    "m": 1 << 20,
    "mb": 1 << 20,
    "g": 1 << 30,
    "gb": 1 << 30,
    "t": 1 << 40,
    "tb": 1 << 40,
    "p": 1 << 50,
    "pb": 1 << 50,
}
# The largest values accepted. A duration ends up as a Python timeout (threading.TIMEOUT_MAX is about
# 292 years) or a Java long of milliseconds, a size as a Java long of bytes (and a protobuf uint64/int64):
# beyond these a daemon would die of OverflowError long after the value passed validation.
MAX_DURATION_MS = 100 * 365 * 86_400_000  # 100 years (36500d), with headroom for sums and multiples
MAX_SIZE_BYTES = (1 << 63) - 1  # Java's Long.MAX_VALUE, just under 8192PB


class OutOfRangeError(ValueError):
    """A well-formed value beyond what pyozone can hold; the message says the limit."""


_NUMBER_UNIT = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$")


_ISO_DURATION = re.compile(
    r"^\s*P(?:(\d+(?:\.\d+)?)D)?(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?\s*$",
    re.IGNORECASE,
)


def _iso_duration_ms(text: str) -> int:
    """ISO-8601 durations ("P365D", "PT10S", "P1DT2H"), the form Ozone's hdds.x509.* keys take."""
    m = _ISO_DURATION.match(text)
    if not m or not any(m.groups()) or text.strip().upper().endswith("T"):
        raise ValueError(f"{text!r} is not an ISO-8601 duration (e.g. P365D, PT10S, P1DT2H)")
    days, hours, minutes, seconds = (Fraction(g) if g else Fraction(0) for g in m.groups())
    return round(((days * 24 + hours) * 60 + minutes) * 60_000 + seconds * 1000)


def parse_duration_ms(text: str, default_unit: str = "ms") -> int:
    """A duration in milliseconds; a bare number is in `default_unit`, as Hadoop's getTimeDuration. An
    ISO-8601 duration ("P28D", "PT30S") is taken too, as Ozone's certificate keys are written."""
    if text.strip()[:1] in ("P", "p"):
        ms = _iso_duration_ms(text)
        if ms > MAX_DURATION_MS:
            raise OutOfRangeError("out of range: a duration is at most 36500d (100 years)")
        return ms
    m = _NUMBER_UNIT.match(text)
    if not m:
        raise ValueError(f"{text!r} is not a duration (a number with an optional unit ms, s, m, h or d)")
    number, unit = m.group(1), (m.group(2).lower() or default_unit)
    if unit not in _DURATION_UNITS_MS:
        raise ValueError(f"{text!r} has unknown duration unit {m.group(2)!r} (use ms, s, m, h or d)")
    # Fraction keeps large values exact, where a float would round "10000000000000001ms".
    ms = round(Fraction(number) * _DURATION_UNITS_MS[unit])
    if abs(ms) > MAX_DURATION_MS:
        raise OutOfRangeError("out of range: a duration is at most 36500d (100 years)")
    return ms


def parse_size_bytes(text: str) -> int:
    """A size in bytes; units are binary (1KB = 1024 B) as in Ozone's StorageUnit."""
    m = _NUMBER_UNIT.match(text)
    if not m:
        raise ValueError(f"{text!r} is not a size (a number with an optional unit B, KB, MB, GB or TB)")
    number, unit = m.group(1), m.group(2).lower()
    if unit not in _SIZE_UNITS:
        raise ValueError(f"{text!r} has unknown size unit {m.group(2)!r} (use B, KB, MB, GB or TB)")
    size = round(Fraction(number) * _SIZE_UNITS[unit])
    if abs(size) > MAX_SIZE_BYTES:
        raise OutOfRangeError(f"out of range: a size is at most {MAX_SIZE_BYTES} bytes (just under 8192PB)")
    return size
