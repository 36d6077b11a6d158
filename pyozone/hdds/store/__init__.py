"""The key-value store interface of every daemon's metadata. RocksDB is `rocksdb.RocksDBBackend`, imported
only by what opens a database, so the sans-IO core and the client never load rocksdict."""

from pyozone.hdds.store.codec import Codec, IntKeyCodec, JsonCodec, RecordCodec, StrKeyCodec
from pyozone.hdds.store.table import KVBackend, MemoryBackend, Op, StoreError, Table

__all__ = [
    "Codec",
    "IntKeyCodec",
    "JsonCodec",
    "KVBackend",
    "MemoryBackend",
    "Op",
    "RecordCodec",
    "StoreError",
    "StrKeyCodec",
    "Table",
]
