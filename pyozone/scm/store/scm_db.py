"""scm.db on RocksDB: kept apart from SCMMetadataStore so the sans-IO core never loads rocksdict."""

from __future__ import annotations

from pathlib import Path

from pyozone.hdds.store.rocksdb import RocksDBBackend
from pyozone.scm.store.layout import SCM_DB_NAME
from pyozone.scm.store.metadata_store import TABLE_NAMES, SCMMetadataStore


def open_scm_db(db_dir: Path, read_only: bool = False) -> SCMMetadataStore:
    """`<db_dir>/scm.db`, created with every column family if absent (unless read-only)."""
    return SCMMetadataStore(
        RocksDBBackend(db_dir / SCM_DB_NAME, read_only, tables=TABLE_NAMES, owner="an SCM")
    )
