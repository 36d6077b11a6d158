"""RocksDBBackend: the KVBackend of every daemon's metadata, a RocksDB column family per table.

Writes go through the WAL without fsync unless asked (`write(..., sync=True)`, OM's double buffer): an
acknowledged write survives the process being killed (the kernel has the bytes), though not a power cut;
the SCM's state only has to survive a restart.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from rocksdict import AccessType, Checkpoint, ColumnFamily, DBRecoveryMode, Options, Rdict, WriteBatch

from pyozone.hdds.store.table import Op, StoreError

DEFAULT_CF = "default"


def rocksdb_options(create: bool, recovery: DBRecoveryMode | None = None) -> Options:
    """Every pyozone database opens with these (SCM, OM, the datanode's volumes and witnessed containers).

    A crash can leave a torn last record in the write-ahead log: it was never acknowledged, so RocksDB
    may drop it. Anything else wrong in the log is corruption, and opening must fail rather than stop
    replaying there (RocksDB's default, point-in-time recovery, silently forgets every write after the
    damage). Paranoid checks make RocksDB verify what it reads while opening. An operator who accepts the
    loss salvages with `pyozone repair db`, which passes another `recovery` mode.
    """
    opts = Options(raw_mode=True)
    opts.create_if_missing(create)
    opts.create_missing_column_families(create)
    opts.set_wal_recovery_mode(recovery or DBRecoveryMode.tolerate_corrupted_tail_records())
    opts.set_paranoid_checks(True)
    return opts


def is_rocksdb(path: Path) -> bool:
    return (path / "CURRENT").is_file()


def list_column_families(path: Path) -> list[str]:
    """The column families recorded in the DB's manifest; reads only, so safe while an SCM runs."""
    if not is_rocksdb(path):
        raise StoreError(_not_a_db(path))
    try:
        return Rdict.list_cf(str(path), rocksdb_options(create=False))
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
        recovery: DBRecoveryMode | None = None,
    ) -> None:
        """`tables` are created if missing; `owner` names the daemon that would hold the lock, for the
        error message; `recovery` replaces the write-ahead log's recovery mode (salvage only)."""
        self.path = path
        self.read_only = read_only
        # rocksdict creates the directory (and writes its rocksdict-config.json) before RocksDB
        # checks anything, so refuse what is not a DB before calling it: bad input never writes.
        if path.exists() and not path.is_dir():
            raise StoreError(f"{path}: not a directory, so not a RocksDB database")
        fresh = not read_only and not (path.is_dir() and any(path.iterdir()))
        existing = [] if fresh else list_column_families(path)
        names = list(dict.fromkeys([*existing, *([] if read_only else tables)]))
        create = not read_only
        cf_opts = {name: rocksdb_options(create, recovery) for name in names if name != DEFAULT_CF}
        access = AccessType.read_only(False) if read_only else AccessType.read_write()
        try:
            self._db = Rdict(str(path), rocksdb_options(create, recovery), cf_opts, access)
        except Exception as e:
            raise StoreError(open_error(path, str(e), owner)) from None
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

    def write(self, ops: list[Op], sync: bool = False) -> None:
        """One WriteBatch across column families: all of it is visible after a crash, or none. `sync`:
        the write-ahead log is fsynced before this returns, so the batch survives a power cut too."""
        if self.read_only:
            raise StoreError(f"{self.path}: opened read-only")
        batch = WriteBatch(raw_mode=True)
        for cf, key, value in ops:
            if value is None:
                batch.delete(key, self._handles[self._check(cf)])
            else:
                batch.put(key, value, self._handles[self._check(cf)])
        self._db.write(batch)
        if sync:
            # Not WriteOptions.sync: rocksdict holds the GIL through that fsync, stalling every thread of
            # the daemon (measured: 17 % of OM's GIL time under omkg load); flush_wal releases it.
            self._db.flush_wal(True)

    def iterate(self, cf: str, from_key: bytes) -> Iterator[tuple[bytes, bytes]]:
        """Entries in key order from `from_key` (inclusive), as of this call: the iterator is created
        here, not at the first `next` (items() is a generator, which starts late)."""
        return iter(self._views[self._check(cf)].items(from_key=from_key))

    def items(self, cf: str, from_key: bytes | None = None) -> Iterator[tuple[bytes, bytes]]:
        """Entries in key order, from `from_key` (inclusive) on."""
        view = self._views[self._check(cf)]
        yield from (view.items() if from_key is None else view.items(from_key=from_key))

    def flush(self) -> None:
        """Writes every memtable to table files, so nothing depends on the write-ahead log any more."""
        for view in self._views.values():
            view.flush()

    def checkpoint(self, path: Path) -> None:
        """A consistent copy of the DB in the new directory `path` (RocksDB's Checkpoint: hard links to
        the table files on the same file system, and what the memtables hold flushed first)."""
        self._check(DEFAULT_CF)
        try:
            Checkpoint(self._db).create_checkpoint(str(path))
        except Exception as e:
            raise StoreError(f"{self.path}: cannot create a checkpoint in {path}: {e}") from None

    def close(self) -> None:
        """Drops the column-family views first: each holds the DB open (and its LOCK) until freed."""
        if not self._views:
            return
        self._views.clear()
        self._handles.clear()
        self._db.close()


def open_error(path: Path, message: str, owner: str) -> str:
    """One line for an operator: a lock held by a running daemon, corruption (which names the write-ahead
    logs and the way out), or RocksDB's own words."""
    if "lock" in message.lower():
        return f"{path}: locked by another process (is {owner} running on it?)"
    if "corruption" in message.lower():
        logs = ", ".join(sorted(p.name for p in path.glob("*.log"))) or "none"
        return (
            f"{path}: corrupt RocksDB data, refusing to open it ({message.strip()}; "
            f"write-ahead logs: {logs}). Opening it anyway could lose acknowledged writes; to salvage what "
            f"is readable, stop the daemon and run `pyozone repair db --db {path}`"
        )
    return f"{path}: cannot open RocksDB: {message}"
