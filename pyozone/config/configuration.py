"""OzoneConfiguration: effective values with their sources, parsed by each key's declared type."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pyozone.config.keys import KEYS_BY_NAME, ConfigKey, Kind
from pyozone.config.units import parse_duration_ms, parse_size_bytes


class ConfigError(ValueError):
    """A configuration problem; the message names the key and the rule it breaks."""


_TRUE = {"true", "yes", "1", "on"}
_FALSE = {"false", "no", "0", "off"}


def parse_value(key: ConfigKey, raw: str) -> Any:
    try:
        match key.kind:
            case Kind.DURATION:
                return parse_duration_ms(raw, key.unit)
            case Kind.SIZE:
                return parse_size_bytes(raw)
            case Kind.INT:
                return int(raw.strip())
            case Kind.FLOAT:
                return float(raw.strip())
            case Kind.FRACTION:
                value = float(raw.strip())
                if not 0.0 <= value <= 1.0:
                    raise ValueError(f"{raw!r} is outside [0, 1]")
                return value
            case Kind.BOOL:
                text = raw.strip().lower()
                if text in _TRUE:
                    return True
                if text in _FALSE:
                    return False
                raise ValueError(f"{raw!r} is not a boolean (true or false)")
            case _:
                return raw.strip()
    except ValueError as e:
        raise ConfigError(f"{key.name}: {e} (expected {key.kind.value})") from None


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
        """Sets a raw value; a known key must parse as its type, an unknown key is kept as text."""
        key = KEYS_BY_NAME.get(name)
        if key is not None:
            self._cache[name] = parse_value(key, value)
        else:
            self._cache.pop(name, None)
        self._raw[name] = value
        self._source[name] = source

    def get(self, name: str) -> Any:
        """The typed value: durations in ms, sizes in bytes; None when unset and without default."""
        if name in self._cache:
            return self._cache[name]
        key = KEYS_BY_NAME.get(name)
        raw = self._raw.get(name)
        if key is None:
            if raw is None:
                raise ConfigError(f"{name}: not a configuration key pyozone knows")
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
