"""Ozone's two filesystem URI shapes, parsed without I/O.

- ofs (Ozone's rooted filesystem): `ofs://OM_HOST[:PORT]/volume/bucket/key`; the first level is volumes, the
  second buckets, then keys, with "/" separating directories within a key name.
- o3fs (one bucket per filesystem): `o3fs://bucket.volume[.OM_HOST[:PORT]]/key`; the authority is split at
  its first two dots, as Ozone does, so the OM host may itself contain dots (127.0.0.1).

fsspec hands filesystems paths with the protocol and authority stripped ("volume/bucket/key" for ofs, "key"
for o3fs); the authority becomes storage options (`om_address`, and `volume`/`bucket` for o3fs).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum


class Level(IntEnum):
    """How deep a path reaches in Ozone's namespace."""

    ROOT = 0
    VOLUME = 1
    BUCKET = 2
    KEY = 3


@dataclass(frozen=True, slots=True)
class OzonePath:
    volume: str = ""
    bucket: str = ""
    key: str = ""  # no leading or trailing "/"; "" above key level

    @property
    def level(self) -> Level:
        if self.key:
            return Level.KEY
        if self.bucket:
            return Level.BUCKET
        return Level.VOLUME if self.volume else Level.ROOT

    @property
    def prefix(self) -> str:
        """The key prefix of what lies below this path within its bucket ("" for the whole bucket)."""
        return f"{self.key}/" if self.key else ""

    def child(self, key: str) -> OzonePath:
        return OzonePath(self.volume, self.bucket, key)

    def ofs_name(self) -> str:
        """The path as fsspec names it for ofs: "volume/bucket/key" without empty parts."""
        return "/".join(part for part in (self.volume, self.bucket, self.key) if part)


@dataclass(frozen=True, slots=True)
class O3fsAuthority:
    bucket: str
    volume: str
    om_address: str | None  # None: the configured ozone.om.address


def split_url(url: str, protocol: str) -> tuple[str | None, str]:
    """(authority, path) of `protocol://authority/path`; authority None when `url` is a bare path. The path
    comes back without leading or trailing "/"."""
    head = f"{protocol}://"
    if url.startswith(head):
        authority, _, path = url[len(head) :].partition("/")
        return authority, path.strip("/")
    if url.startswith(f"{protocol}:"):  # ofs:/volume/bucket, as Hadoop prints a path without authority
        return None, url[len(protocol) + 1 :].strip("/")
    return None, url.strip("/")


def parse_ofs(path: str) -> OzonePath:
    """A stripped ofs path ("volume/bucket/dir/key") as its volume, bucket and key."""
    volume, _, rest = path.strip("/").partition("/")
    bucket, _, key = rest.partition("/")
    return OzonePath(volume, bucket, key.strip("/"))


def parse_o3fs_authority(authority: str) -> O3fsAuthority:
    """ "bucket.volume[.om-host[:port]]" -> its parts; ValueError when the bucket or volume is missing."""
    bucket, _, rest = authority.partition(".")
    volume, _, host = rest.partition(".")
    if not bucket or not volume:
        raise ValueError(f"o3fs authority {authority!r}: expected bucket.volume[.om-host[:port]]")
    return O3fsAuthority(bucket, volume, host or None)
