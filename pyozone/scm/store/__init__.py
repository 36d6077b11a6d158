"""SCM metadata store: typed tables over column families, on any KVBackend.

Only the sans-IO parts are exported here, for the core; RocksDB is opened through `scm_db.open_scm_db`
and the VERSION file is `version`.
"""

from pyozone.hdds.store.codec import Codec, IntKeyCodec, JsonCodec, RecordCodec, StrKeyCodec
from pyozone.hdds.store.table import KVBackend, MemoryBackend, Table
from pyozone.scm.store.metadata_store import TABLE_NAMES, SCMMetadataStore

__all__ = [
    "TABLE_NAMES",
    "Codec",
    "IntKeyCodec",
    "JsonCodec",
    "KVBackend",
    "MemoryBackend",
    "RecordCodec",
    "SCMMetadataStore",
    "StrKeyCodec",
    "Table",
]
