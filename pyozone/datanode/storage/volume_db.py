"""One RocksDB per data volume for the block metadata of every container on it (Ozone schema v3).

Every key starts with the container id (8 bytes big-endian) and '|', so one DB holds many containers,
a container's keys are one contiguous range (listed by a seek, dropped by one range delete), and
block keys sort by local id because the local id is 8 bytes big-endian too.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from rocksdict import ColumnFamily, Options, Rdict, WriteBatch, WriteOptions

from pyozone.hdds.store.rocksdb import open_error, rocksdb_options

BLOCK_DATA = "block_data"
METADATA = "metadata"
DELETE_TXNS = "delete_txns"
COLUMN_FAMILIES = (BLOCK_DATA, METADATA, DELETE_TXNS)

# Counter names in the metadata column family, as Ozone spells them.
BCSID = "#BCSID"
BLOCK_COUNT = "#BLOCKCOUNT"
BYTES_USED = "#BYTESUSED"
DELETE_TXID = "#delTX"

_U64 = struct.Struct(">Q")
_SEP = b"|"


class DBError(Exception):
    """The volume DB cannot be opened or written; the message names the path."""


def container_prefix(container_id: int) -> bytes:
    return _U64.pack(container_id) + _SEP


def id_key(container_id: int, number: int) -> bytes:
    """Key of a block (by local id) or of a delete transaction (by tx id)."""
    return container_prefix(container_id) + _U64.pack(number)


def meta_key(container_id: int, name: str) -> bytes:
    return container_prefix(container_id) + name.encode()


def key_number(key: bytes) -> int:
    return _U64.unpack_from(key, len(key) - 8)[0]


def _options() -> Options:
    return rocksdb_options(create=True)


class Batch:
    """Puts and deletes that reach the DB together or not at all."""

    def __init__(self, handles: dict[str, ColumnFamily]) -> None:
        self._handles = handles
        self.batch = WriteBatch(raw_mode=True)

    def put(self, cf: str, key: bytes, value: bytes) -> None:
        self.batch.put(key, value, self._handles[cf])

    def delete(self, cf: str, key: bytes) -> None:
        self.batch.delete(key, self._handles[cf])

    def put_int(self, container_id: int, name: str, value: int) -> None:
        self.put(METADATA, meta_key(container_id, name), _U64.pack(value))

    def delete_container(self, container_id: int) -> None:
        begin = container_prefix(container_id)
        end = _U64.pack(container_id) + bytes([_SEP[0] + 1])
        for handle in self._handles.values():
            self.batch.delete_range(begin, end, handle)


class VolumeDB:
    def __init__(self, path: Path) -> None:
        # rocksdict creates the directory before RocksDB checks anything: refuse a non-directory first.
        if path.exists() and not path.is_dir():
            raise DBError(f"{path}: not a directory, so not a RocksDB database")
        if path.is_dir() and any(path.iterdir()) and not (path / "CURRENT").is_file():
            raise DBError(f"{path}: not empty and not a RocksDB database (no CURRENT file)")
        self.path = path
        try:
            self._db = Rdict(str(path), _options(), {cf: _options() for cf in COLUMN_FAMILIES})
        except Exception as e:
            raise DBError(open_error(path, str(e), "the datanode")) from None
        self._views = {cf: self._db.get_column_family(cf) for cf in COLUMN_FAMILIES}
        self._handles = {cf: self._db.get_column_family_handle(cf) for cf in COLUMN_FAMILIES}
        self._sync = WriteOptions()
        self._sync.sync = True

    def get(self, cf: str, key: bytes) -> bytes | None:
        return self._views[cf].get(key)

    def get_int(self, container_id: int, name: str) -> int:
        raw = self._views[METADATA].get(meta_key(container_id, name))
        return 0 if raw is None else _U64.unpack(raw)[0]

    def scan(self, cf: str, container_id: int, start: int = 0) -> Iterator[tuple[bytes, bytes]]:
        """The container's id-keyed entries from `start` on, in id order."""
        prefix = container_prefix(container_id)
        for key, value in self._views[cf].items(from_key=id_key(container_id, start)):
            if not key.startswith(prefix):
                return
            yield key, value

    def batch(self) -> Batch:
        if not self._views:
            raise DBError(f"{self.path}: closed")
        return Batch(self._handles)

    def write(self, batch: Batch) -> None:
        """Synced: the WAL is fsynced before this returns, so the write survives a power cut."""
        try:
            self._db.write(batch.batch, self._sync)
        except Exception as e:
            raise DBError(f"{self.path}: write failed: {e}") from None

    def close(self) -> None:
        """Drops the column-family views first: each holds the DB open (and its LOCK) until freed."""
        if not self._views:
            return
        self._views.clear()
        self._handles.clear()
        self._db.close()


class ContainerDB:
    """One container's key range of its volume DB: block records, counters and applied delete txns."""

    def __init__(self, db: VolumeDB, container_id: int) -> None:
        self.db = db
        self.container_id = container_id

    def counter(self, name: str) -> int:
        return self.db.get_int(self.container_id, name)

    def block(self, local_id: int) -> bytes | None:
        return self.db.get(BLOCK_DATA, id_key(self.container_id, local_id))

    def blocks(self, start_local_id: int = 0) -> Iterator[tuple[int, bytes]]:
        """(local id, block record) from start_local_id on, in local-id order."""
        for key, value in self.db.scan(BLOCK_DATA, self.container_id, start_local_id):
            yield key_number(key), value

    def has_txn(self, tx_id: int) -> bool:
        return self.db.get(DELETE_TXNS, id_key(self.container_id, tx_id)) is not None

    def commit(
        self,
        put_blocks: Iterable[tuple[int, bytes]] = (),
        delete_blocks: Iterable[int] = (),
        counters: Mapping[str, int] | None = None,
        txn: int | None = None,
        clear: bool = False,
    ) -> None:
        """One synced batch: optionally drop the whole range first, then the given changes."""
        cid, batch = self.container_id, self.db.batch()
        if clear:
            batch.delete_container(cid)
        for local_id, record in put_blocks:
            batch.put(BLOCK_DATA, id_key(cid, local_id), record)
        for local_id in delete_blocks:
            batch.delete(BLOCK_DATA, id_key(cid, local_id))
        for name, value in (counters or {}).items():
            batch.put_int(cid, name, value)
        if txn is not None:
            batch.put(DELETE_TXNS, id_key(cid, txn), b"")
        self.db.write(batch)
