"""Ozone's two filesystem URI shapes, parsed without I/O.

- ofs (Ozone's rooted filesystem): `ofs://OM_HOST[:PORT]/volume/bucket/key`; the first level is volumes, the
  second buckets, then keys, with "/" separating directories within a key name.
- o3fs (one bucket per filesystem): `o3fs://bucket.volume[.OM_HOST[:PORT]]/key`; the authority is split at
  its first two dots, as Ozone does, so the OM host may itself contain dots (127.0.0.1).

fsspec hands filesystems paths with the protocol and authority stripped ("volume/bucket/key" for ofs, "key"
for o3fs); the authority becomes storage options (`om_address`, and `volume`/`bucket` for o3fs). A path
is the kernel's KeyAddress (hdds/addresses.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from pyozone.hdds.addresses import KeyAddress


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


def parse_ofs(path: str) -> KeyAddress:
    """A stripped ofs path ("volume/bucket/dir/key") as its volume, bucket and key."""
    volume, _, rest = path.strip("/").partition("/")
    bucket, _, key = rest.partition("/")
    return KeyAddress(volume, bucket, key.strip("/"))


def parse_o3fs_authority(authority: str) -> O3fsAuthority:
    """ "bucket.volume[.om-host[:port]]" -> its parts; ValueError when the bucket or volume is missing."""
    bucket, _, rest = authority.partition(".")
    volume, _, host = rest.partition(".")
    if not bucket or not volume:
        raise ValueError(f"o3fs authority {authority!r}: expected bucket.volume[.om-host[:port]]")
    return O3fsAuthority(bucket, volume, host or None)
