"""Where a volume, bucket or key lives in OM's namespace: one address above every edge that names one.

An edge parses its own spelling with its own rules and messages (`sh`'s `[o3://OM]/VOLUME/BUCKET/KEY` in
cli/sh.py `parse_path`; ofs's `volume/bucket/key` in fs/paths.py `parse_ofs`) into a `KeyAddress`; the
code above it reads volume, bucket and key from that one value (issue 34).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum


class Level(IntEnum):
    """How deep an address reaches in Ozone's namespace."""

    ROOT = 0
    VOLUME = 1
    BUCKET = 2
    KEY = 3


@dataclass(frozen=True, slots=True)
class KeyAddress:
    """/volume/bucket/key, as Ozone's OzoneObj names a resource: the parts below the address's level are
    "" (a bucket's address has no key, the root none at all). A key is as its edge spelled it after the
    bucket's "/": ofs strips its slashes, `sh` keeps a key named "/k" in /v/b//k (Ozone's key names may
    start with "/")."""

    volume: str = ""
    bucket: str = ""
    key: str = ""

    @property
    def level(self) -> Level:
        if self.key:
            return Level.KEY
        if self.bucket:
            return Level.BUCKET
        return Level.VOLUME if self.volume else Level.ROOT

    @property
    def prefix(self) -> str:
        """The key prefix of what lies below this address within its bucket ("" for the whole bucket)."""
        return f"{self.key}/" if self.key else ""

    def child(self, key: str) -> KeyAddress:
        """The key `key` of this address's bucket."""
        return KeyAddress(self.volume, self.bucket, key)

    def __str__(self) -> str:
        """ "volume/bucket/key" without its empty parts (how fsspec names an ofs path)."""
        return "/".join(part for part in (self.volume, self.bucket, self.key) if part)
