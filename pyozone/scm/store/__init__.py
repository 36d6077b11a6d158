"""SCM metadata store: typed tables over RocksDB column families (or a dict, in unit tests)."""

from pyozone.scm.store.codec import Codec, IntKeyCodec, JsonCodec, RecordCodec, StrKeyCodec
from pyozone.scm.store.metadata_store import TABLE_NAMES, SCMMetadataStore
from pyozone.scm.store.table import KVBackend, MemoryBackend, Table

__all__ = [
    "TABLE_NAMES", "Codec", "IntKeyCodec", "JsonCodec", "KVBackend", "MemoryBackend", "RecordCodec",
    "SCMMetadataStore", "StrKeyCodec", "Table",
]
