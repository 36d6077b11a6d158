"""The fsspec protocols `ofs` and `o3fs` (registered in pyproject.toml's fsspec.specs entry points).

    pandas.read_parquet("ofs://om-host:9862/volume/bucket/table.parquet")
    fsspec.open("o3fs://bucket.volume.om-host/dir/data.csv", "rb")
    fsspec.filesystem("ofs", conf={"ozone.client.verify.checksum": "false"})

A URL without an OM host (`ofs:///volume/bucket/key`, `o3fs://bucket.volume/key`) uses ozone.om.address
from `conf`, `conf_dir`/ozone-site.xml or $OZONE_CONF_DIR; a host without a port means OM's default port
(9862). Paths handed to the filesystem's methods may be full URLs or stripped ones, as fsspec's are.
"""

from __future__ import annotations

from typing import Any

from pyozone.fs.base import OzoneFileSystemBase
from pyozone.fs.paths import parse_o3fs_authority, parse_ofs, split_url
from pyozone.hdds.addresses import KeyAddress


class OzoneFileSystem(OzoneFileSystemBase):
    """Ozone's rooted filesystem: `ofs://OM_HOST[:PORT]/volume/bucket/key`."""

    protocol = ("ofs",)

    @classmethod
    def _strip_protocol(cls, path: str | list[str]) -> str | list[str]:
        if isinstance(path, list):
            return [cls._strip_protocol(p) for p in path]  # type: ignore[misc]
        return split_url(str(path), "ofs")[1]

    @staticmethod
    def _get_kwargs_from_urls(path: str) -> dict[str, Any]:
        authority, _ = split_url(path, "ofs")
        return {"om_address": authority} if authority else {}

    def unstrip_protocol(self, name: str) -> str:
        return f"ofs://{self.om_address}/{self._strip_protocol(name)}"

    def locate(self, path: str) -> KeyAddress:
        return parse_ofs(self._strip_protocol(path))  # type: ignore[arg-type]

    def name(self, where: KeyAddress) -> str:
        return str(where)


class O3FileSystem(OzoneFileSystemBase):
    """One bucket as a filesystem: `o3fs://bucket.volume[.OM_HOST[:PORT]]/key`."""

    protocol = ("o3fs",)

    def __init__(self, bucket: str, volume: str, om_address: str | None = None, **kwargs: Any) -> None:
        super().__init__(om_address=om_address, bucket=bucket, volume=volume, **kwargs)
        self.bucket, self.volume = bucket, volume

    @classmethod
    def _strip_protocol(cls, path: str | list[str]) -> str | list[str]:
        if isinstance(path, list):
            return [cls._strip_protocol(p) for p in path]  # type: ignore[misc]
        return split_url(str(path), "o3fs")[1]

    @staticmethod
    def _get_kwargs_from_urls(path: str) -> dict[str, Any]:
        authority, _ = split_url(path, "o3fs")
        if not authority:
            return {}
        parsed = parse_o3fs_authority(authority)
        found: dict[str, Any] = {"bucket": parsed.bucket, "volume": parsed.volume}
        return found | ({"om_address": parsed.om_address} if parsed.om_address else {})

    def unstrip_protocol(self, name: str) -> str:
        return f"o3fs://{self.bucket}.{self.volume}.{self.om_address}/{self._strip_protocol(name)}"

    def locate(self, path: str) -> KeyAddress:
        return KeyAddress(self.volume, self.bucket, self._strip_protocol(path))  # type: ignore[arg-type]

    def name(self, where: KeyAddress) -> str:
        return where.key
