"""om.db: the OM's tables, one RocksDB column family each, named as in Ozone's om.db.

  volumeTable   /vol                      VolumeInfo
  bucketTable   /vol/bucket               BucketInfo
  keyTable      /vol/bucket/key           KeyInfo (committed keys)
  openKeyTable  /vol/bucket/key/<clientID> KeyInfo (keys being written; locations = allocated blocks)
  deletedTable  /vol/bucket/key/<seq>     KeyInfo (blocks SCM must still delete; seq keeps entries unique)
  meta          name                      decimal text (the object-id counter)

Values are serialized OmClientProtocol messages. Every mutation is one WriteBatch, so a crash leaves
either all of it or none. Keys are UTF-8, so RocksDB's byte order is the names' code-point order and a
listing is a range scan.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

from rocksdict import AccessType, ColumnFamily, Options, Rdict, WriteBatch

VOLUME_TABLE = "volumeTable"
BUCKET_TABLE = "bucketTable"
KEY_TABLE = "keyTable"
OPEN_KEY_TABLE = "openKeyTable"
DELETED_TABLE = "deletedTable"
META_TABLE = "meta"
TABLE_NAMES = (VOLUME_TABLE, BUCKET_TABLE, KEY_TABLE, OPEN_KEY_TABLE, DELETED_TABLE, META_TABLE)

Op = tuple[str, str, bytes | None]
"""(table, key, value); None deletes."""


class OMStoreError(Exception):
    """om.db cannot be opened or used; the message names the path."""


def _options() -> Options:
    opts = Options(raw_mode=True)
    opts.create_if_missing(True)
    opts.create_missing_column_families(True)
    return opts


class OMMetadataStore:
    def __init__(self, path: Path) -> None:
        self.path = path
        if path.exists() and not path.is_dir():
            raise OMStoreError(f"{path}: not a directory, so not a RocksDB database")
        existing: list[str] = []
        if (path / "CURRENT").is_file():
            try:
                existing = Rdict.list_cf(str(path), _options())
            except Exception as e:
                raise OMStoreError(f"{path}: cannot read the column families: {e}") from None
        names = [n for n in dict.fromkeys([*existing, *TABLE_NAMES]) if n != "default"]
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = Rdict(str(path), _options(), {n: _options() for n in names}, AccessType.read_write())
        except Exception as e:
            message = str(e)
            if "lock" in message.lower():
                message = "locked by another process (is an OM running on it?)"
            raise OMStoreError(f"{path}: cannot open RocksDB: {message}") from None
        self._views: dict[str, Rdict] = {n: self._db.get_column_family(n) for n in TABLE_NAMES}
        self._handles: dict[str, ColumnFamily] = {
            n: self._db.get_column_family_handle(n) for n in TABLE_NAMES
        }

    def _view(self, table: str) -> Rdict:
        if not self._views:
            raise OMStoreError(f"{self.path}: closed")
        return self._views[table]

    def get(self, table: str, key: str) -> bytes | None:
        return self._view(table).get(key.encode())

    def scan(
        self, table: str, prefix: str = "", start_after: str | None = None
    ) -> Iterator[tuple[str, bytes]]:
        """Entries whose key starts with `prefix`, in key order, after `start_after` (exclusive)."""
        low = prefix.encode()
        if start_after is not None and start_after.encode() + b"\x00" > low:
            low = start_after.encode() + b"\x00"
        wanted = prefix.encode()
        for key, value in self._view(table).items(from_key=low):
            if not key.startswith(wanted):
                return
            yield key.decode(), value

    def write(self, ops: Sequence[Op]) -> None:
        """One atomic WriteBatch across tables."""
        if not ops:
            return
        batch = WriteBatch(raw_mode=True)
        for table, key, value in ops:
            self._view(table)
            if value is None:
                batch.delete(key.encode(), self._handles[table])
            else:
                batch.put(key.encode(), value, self._handles[table])
        self._db.write(batch)

    def close(self) -> None:
        """Drops the column-family views first: each holds the DB (and its LOCK) open until freed."""
        if not self._views:
            return
        self._views.clear()
        self._handles.clear()
        self._db.close()
