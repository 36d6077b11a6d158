"""SCM metadata store: typed tables over RocksDB column families (or a dict, in unit tests)."""

from pyozone.scm.store.codec import Codec, IntKeyCodec, JsonCodec, RecordCodec, StrKeyCodec
from pyozone.scm.store.metadata_store import TABLE_NAMES, SCMMetadataStore
from pyozone.scm.store.rocksdb import RocksDBBackend, StoreError
from pyozone.scm.store.table import KVBackend, MemoryBackend, Table
from pyozone.scm.store.version import (
    SCM_LAYOUT_VERSION,
    CorruptVersionError,
    SCMStorageConfig,
    StorageError,
    StorageNotInitializedError,
    init_scm,
    init_scm_storage,
    open_scm_store,
    read_scm_storage,
)

__all__ = [
    "SCM_LAYOUT_VERSION",
    "TABLE_NAMES",
    "Codec",
    "CorruptVersionError",
    "IntKeyCodec",
    "JsonCodec",
    "KVBackend",
    "MemoryBackend",
    "RecordCodec",
    "RocksDBBackend",
    "SCMMetadataStore",
    "SCMStorageConfig",
    "StorageError",
    "StorageNotInitializedError",
    "StoreError",
    "StrKeyCodec",
    "Table",
    "init_scm",
    "init_scm_storage",
    "open_scm_store",
    "read_scm_storage",
]
