"""scm.db on RocksDB: kept apart from SCMMetadataStore so the sans-IO core never loads rocksdict; with its
checkpoints for SCM HA (Ozone's SCMDBCheckpointServlet and SCMSnapshotProvider): the generic code of
ratis_server/db_checkpoint.py bound to scm.db's spec (`SCM_CHECKPOINT`)."""

from __future__ import annotations

from pathlib import Path

from pyozone.hdds.security.x509 import CertRole
from pyozone.hdds.store.rocksdb import RocksDBBackend
from pyozone.hdds.store.table import StoreError
from pyozone.ratis_server import db_checkpoint
from pyozone.scm.store.layout import SCM_DB_NAME
from pyozone.scm.store.metadata_store import TABLE_NAMES, TRANSACTION_INFO_KEY, SCMMetadataStore

SCM_CHECKPOINT = db_checkpoint.CheckpointSpec(
    SCM_DB_NAME, "scmTransactionInfos", TRANSACTION_INFO_KEY, CertRole.SCM, info_json=True
)
"""scm.db's checkpoints: scmTransactionInfos' #TRANSACTIONINFO (a JSON string), served by an SCM."""


def _open(path: Path, read_only: bool = False) -> RocksDBBackend:
    return RocksDBBackend(path, read_only, tables=TABLE_NAMES, owner="an SCM")


def open_scm_db(db_dir: Path, read_only: bool = False) -> SCMMetadataStore:
    """`<db_dir>/scm.db`, created with every column family if absent (unless read-only); an install of the
    leader's checkpoint a crash interrupted is finished (or undone) first (db_checkpoint.recover)."""
    if not read_only:
        db_checkpoint.recover(db_dir / SCM_DB_NAME)
    return SCMMetadataStore(_open(db_dir / SCM_DB_NAME, read_only))


def pack_checkpoint(store: SCMMetadataStore) -> db_checkpoint.PackedCheckpoint:
    """A checkpoint of the SCM's scm.db ready to send as a tar (`/dbCheckpoint`). Every write to scm.db is
    one batch carrying its entry's #TRANSACTIONINFO, so the checkpoint's tables are those it names."""
    backend = _backend(store)
    return db_checkpoint.pack(SCM_CHECKPOINT, backend, backend.path)


def flush(store: SCMMetadataStore) -> None:
    """Every memtable to table files (Ozone's flushDB at an SCM snapshot): scm.db holds what it applied
    without its unsynced write-ahead log."""
    _backend(store).flush()


def install(store: SCMMetadataStore, checkpoint: Path) -> None:
    """Replaces the store's scm.db by the unpacked, checked `checkpoint` (db_checkpoint.swap_in: crash safe)
    and reopens it in place. If the new one does not open, the old one is back and StoreError is raised.
    The caller holds every write meanwhile (a follower's store takes none but the log's)."""
    backend = _backend(store)
    path = backend.path
    backend.close()
    try:
        db_checkpoint.swap_in(path, checkpoint)
        store.backend = _open(path)
    except (StoreError, OSError) as e:
        if db_checkpoint.aside(path).exists():
            db_checkpoint.restore_aside(path)
        store.backend = _open(path)
        raise StoreError(f"{path}: the checkpoint could not be installed: {e}") from None
    db_checkpoint.drop_aside(path)


def db_path(store: SCMMetadataStore) -> Path:
    """Where the store's scm.db is."""
    return _backend(store).path


def _backend(store: SCMMetadataStore) -> RocksDBBackend:
    backend = store.backend
    if not isinstance(backend, RocksDBBackend):
        raise StoreError("scm.db checkpoints need scm.db on RocksDB")
    return backend
