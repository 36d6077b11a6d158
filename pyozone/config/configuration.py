"""OzoneConfiguration: effective values with their sources, parsed by each key's declared type."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from pyozone.config.keys import KEYS_BY_NAME, ConfigKey, Kind, lookup, unknown_key_message
from pyozone.config.units import MAX_SIZE_BYTES, OutOfRangeError, parse_duration_ms, parse_size_bytes


class ConfigError(ValueError):
    """A configuration problem; the message names the key and the rule it breaks."""


_TRUE = {"true", "yes", "1", "on"}
_FALSE = {"false", "no", "0", "off"}
_EXPECTED = {
    Kind.DURATION: "e.g. 500ms, 30s, 5m, 1h or 1d",
    Kind.SIZE: "e.g. 512B, 16KB, 256MB or 5GB; binary units",
    Kind.INT: "a whole number",
    Kind.FLOAT: "a finite number",
    Kind.FRACTION: "a number from 0 to 1",
    Kind.BOOL: "true or false",
}


def _parse(key: ConfigKey, raw: str) -> Any:
    match key.kind:
        case Kind.DURATION:
            return parse_duration_ms(raw, key.unit)
        case Kind.SIZE:
            return parse_size_bytes(raw)
        case Kind.INT:
            value = int(raw.strip())
            if abs(value) > MAX_SIZE_BYTES:
                raise OutOfRangeError(f"out of range: a whole number is at most {MAX_SIZE_BYTES}")
            return value
        case Kind.FLOAT | Kind.FRACTION:
            value = float(raw.strip())
            if not math.isfinite(value) or (key.kind is Kind.FRACTION and not 0.0 <= value <= 1.0):
                raise ValueError(raw)
            return value
        case Kind.BOOL:
            text = raw.strip().lower()
            if text not in _TRUE | _FALSE:
                raise ValueError(raw)
            return text in _TRUE
        case _:
            return raw.strip()


def parse_value(key: ConfigKey, raw: str, source: str = "default") -> Any:
    """The typed value of `raw`; the error names key, value, source and expected type for the operator."""
    try:
        return _parse(key, raw)
    except OutOfRangeError as e:
        raise ConfigError(f"{key.name}: invalid value {raw!r} from {source}: {e}") from None
    except ValueError:
        unit = f"; a bare number is in {key.unit}" if key.kind is Kind.DURATION else ""
        raise ConfigError(
            f"{key.name}: invalid value {raw!r} from {source}: expected {key.kind.value} "
            f"({_EXPECTED[key.kind]}{unit})"
        ) from None


class OzoneConfiguration:
    """Values come from defaults, then site files in order, then overrides; the last one wins."""

    def __init__(self, overrides: Mapping[str, str] | None = None) -> None:
        self._raw: dict[str, str] = {}
        self._source: dict[str, str] = {}
        self._cache: dict[str, Any] = {}
        for key in KEYS_BY_NAME.values():
            if key.default is not None:
                self._raw[key.name] = key.default
                self._source[key.name] = "default"
        for name, value in (overrides or {}).items():
            self.set(name, value, source="override")

    def set(self, name: str, value: str, source: str = "override") -> None:
        """Sets a raw value; a known key (or a known key with its HA suffixes) must parse as its type, an
        unknown key is kept as text."""
        key = lookup(name)
        if key is not None:
            self._cache[name] = parse_value(key, value, source)
        else:
            self._cache.pop(name, None)
        self._raw[name] = value
        self._source[name] = source

    def get(self, name: str) -> Any:
        """The typed value: durations in ms, sizes in bytes; None when unset and without default."""
        if name in self._cache:
            return self._cache[name]
        key = lookup(name)
        raw = self._raw.get(name)
        if key is None:
            if raw is None:
                raise ConfigError(unknown_key_message(name))
            return raw
        value = None if raw is None else parse_value(key, raw)
        self._cache[name] = value
        return value

    def get_raw(self, name: str) -> str | None:
        return self._raw.get(name)

    def source(self, name: str) -> str:
        return self._source.get(name, "unset")

    def names(self) -> list[str]:
        return sorted(set(self._raw) | set(KEYS_BY_NAME))

    def copy(self) -> OzoneConfiguration:
        other = OzoneConfiguration.__new__(OzoneConfiguration)
        other._raw = dict(self._raw)
        other._source = dict(self._source)
        other._cache = dict(self._cache)
        return other
