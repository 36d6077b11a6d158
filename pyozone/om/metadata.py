"""om.db: the OM's tables, one RocksDB column family each, named as in Ozone's om.db.

  volumeTable   /vol                      VolumeInfo
  bucketTable   /vol/bucket               BucketInfo
  keyTable      /vol/bucket/key           KeyInfo (committed keys)
  openKeyTable  /vol/bucket/key/<clientID> KeyInfo (keys being written; locations = allocated blocks)
  deletedTable  /vol/bucket/key/<seq>     KeyInfo (blocks SCM must still delete; seq keeps entries unique)
  s3SecretTable <access id>               S3Secret (a user's S3 secret; the access id is the user name)
  multipartInfoTable /vol/bucket/key NUL uploadID  MultipartInfo (an upload in progress and its parts)
  meta          name                      decimal text (the object-id counter)

Ozone names a multipart upload /vol/bucket/key/uploadID; pyozone puts a NUL (which no key name holds)
before the upload id instead, so a scan lists uploads in S3's order: by key, then by upload id, which
grows with creation time.

Values are serialized OmClientProtocol messages. Every mutation is one WriteBatch, so a crash leaves
either all of it or none. Keys are UTF-8, so RocksDB's byte order is the names' code-point order and a
listing is a range scan.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TypeVar

from pyozone.hdds.store.rocksdb import RocksDBBackend, StoreError

VOLUME_TABLE = "volumeTable"
BUCKET_TABLE = "bucketTable"
KEY_TABLE = "keyTable"
OPEN_KEY_TABLE = "openKeyTable"
DELETED_TABLE = "deletedTable"
S3_SECRET_TABLE = "s3SecretTable"
MULTIPART_INFO_TABLE = "multipartInfoTable"
META_TABLE = "meta"
TABLE_NAMES = (
    VOLUME_TABLE,
    BUCKET_TABLE,
    KEY_TABLE,
    OPEN_KEY_TABLE,
    DELETED_TABLE,
    S3_SECRET_TABLE,
    MULTIPART_INFO_TABLE,
    META_TABLE,
)

T = TypeVar("T")
Op = tuple[str, str, bytes | None]
"""(table, key, value); None deletes."""


class OMStoreError(Exception):
    """om.db cannot be opened or used; the message names the path."""


class OMMetadataStore:
    """om.db on the RocksDB backend SCM uses for scm.db, with text keys."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._backend = RocksDBBackend(path, tables=TABLE_NAMES, owner="an OM")
        except (StoreError, OSError) as e:
            raise OMStoreError(str(e)) from None

    def get(self, table: str, key: str) -> bytes | None:
        return self._call(self._backend.get, table, key.encode())

    def scan(
        self, table: str, prefix: str = "", start_after: str | None = None
    ) -> Iterator[tuple[str, bytes]]:
        """Entries whose key starts with `prefix`, in key order, after `start_after` (exclusive)."""
        low = prefix.encode()
        if start_after is not None and start_after.encode() + b"\x00" > low:
            low = start_after.encode() + b"\x00"
        wanted = prefix.encode()
        try:
            for key, value in self._backend.items(table, low):
                if not key.startswith(wanted):
                    return
                yield key.decode(), value
        except StoreError as e:
            raise OMStoreError(str(e)) from None

    def write(self, ops: Sequence[Op]) -> None:
        """One atomic WriteBatch across tables."""
        if ops:
            self._call(self._backend.write, [(table, key.encode(), value) for table, key, value in ops])

    def close(self) -> None:
        self._backend.close()

    @staticmethod
    def _call(fn: Callable[..., T], *args: object) -> T:
        try:
            return fn(*args)
        except StoreError as e:
            raise OMStoreError(str(e)) from None
