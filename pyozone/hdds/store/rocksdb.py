"""RocksDBBackend: the KVBackend of every daemon's metadata, a RocksDB column family per table.

Writes go through the WAL without fsync: an acknowledged write survives the process being killed
(the kernel has the bytes), though not a power cut; the SCM's state only has to survive a restart.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from rocksdict import AccessType, ColumnFamily, Options, Rdict, WriteBatch

from pyozone.hdds.store.table import Op, StoreError

DEFAULT_CF = "default"


def _options(create: bool) -> Options:
    opts = Options(raw_mode=True)
    opts.create_if_missing(create)
    opts.create_missing_column_families(create)
    return opts


def is_rocksdb(path: Path) -> bool:
    return (path / "CURRENT").is_file()


def list_column_families(path: Path) -> list[str]:
    """The column families recorded in the DB's manifest; reads only, so safe while an SCM runs."""
    if not is_rocksdb(path):
        raise StoreError(_not_a_db(path))
    try:
        return Rdict.list_cf(str(path), _options(create=False))
    except Exception as e:
        raise StoreError(f"{path}: cannot read the column families: {e}") from None


def _not_a_db(path: Path) -> str:
    if not path.exists():
        return f"{path}: no such RocksDB database"
    return f"{path}: not a RocksDB database (no CURRENT file)"


class RocksDBBackend:
    """Opens (or creates) the DB with the column families `tables` plus any the DB already has.

    RocksDB refuses to open a DB unless every existing column family is named, so families this
    version does not know (a newer layout, or Ozone's own scm.db) are opened too and left alone.
    Read-only mode replays the WAL without taking the lock, so `debug ldb` can read the DB of a
    running SCM as of the moment it opens.
    """

    def __init__(
        self,
        path: Path,
        read_only: bool = False,
        tables: tuple[str, ...] = (),
        owner: str = "a pyozone daemon",
    ) -> None:
        """`tables` are created if missing; `owner` names the
        daemon that would hold the lock, for the error message."""
        self.path = path
        self.read_only = read_only
        # rocksdict creates the directory (and writes its rocksdict-config.json) before RocksDB
        # checks anything, so refuse what is not a DB before calling it: bad input never writes.
        if path.exists() and not path.is_dir():
            raise StoreError(f"{path}: not a directory, so not a RocksDB database")
        fresh = not read_only and not (path.is_dir() and any(path.iterdir()))
        existing = [] if fresh else list_column_families(path)
        names = list(dict.fromkeys([*existing, *([] if read_only else tables)]))
        cf_opts = {name: _options(create=not read_only) for name in names if name != DEFAULT_CF}
        access = AccessType.read_only(False) if read_only else AccessType.read_write()
        try:
            self._db = Rdict(str(path), _options(create=not read_only), cf_opts, access)
        except Exception as e:
            raise StoreError(_open_error(path, str(e), owner)) from None
        self._views: dict[str, Rdict] = {name: self._db.get_column_family(name) for name in cf_opts}
        self._views[DEFAULT_CF] = self._db
        self._handles: dict[str, ColumnFamily] = {
            name: self._db.get_column_family_handle(name) for name in self._views
        }

    @property
    def column_families(self) -> list[str]:
        return sorted(self._views)

    def _check(self, cf: str) -> str:
        if not self._views:
            raise StoreError(f"{self.path}: closed")
        if cf not in self._views:
            raise KeyError(f"no column family {cf!r} in {self.path}")
        return cf

    def get(self, cf: str, key: bytes) -> bytes | None:
        return self._views[self._check(cf)].get(key)

    def write(self, ops: list[Op]) -> None:
        """One WriteBatch across column families: all of it is visible after a crash, or none."""
        if self.read_only:
            raise StoreError(f"{self.path}: opened read-only")
        batch = WriteBatch(raw_mode=True)
        for cf, key, value in ops:
            if value is None:
                batch.delete(key, self._handles[self._check(cf)])
            else:
                batch.put(key, value, self._handles[self._check(cf)])
        self._db.write(batch)

    def items(self, cf: str, from_key: bytes | None = None) -> Iterator[tuple[bytes, bytes]]:
        """Entries in key order, from `from_key` (inclusive) on."""
        view = self._views[self._check(cf)]
        yield from (view.items() if from_key is None else view.items(from_key=from_key))

    def close(self) -> None:
        """Drops the column-family views first: each holds the DB open (and its LOCK) until freed."""
        if not self._views:
            return
        self._views.clear()
        self._handles.clear()
        self._db.close()


def _open_error(path: Path, message: str, owner: str) -> str:
    if "lock" in message.lower():
        return f"{path}: locked by another process (is {owner} running on it?)"
    return f"{path}: cannot open RocksDB: {message}"
