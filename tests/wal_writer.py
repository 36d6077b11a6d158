"""Run as a script: writes N keys through RocksDBBackend, one acknowledged write each, then dies without
closing (os._exit), so every write is only in the write-ahead log, as after a crash."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from pyozone.hdds.store.rocksdb import RocksDBBackend

if __name__ == "__main__":
    path, table, count = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    backend = RocksDBBackend(path, tables=(table,))
    for i in range(count):
        backend.write([(table, b"key%06d" % i, b"value-%06d-" % i + bytes(200))])
    print("done", flush=True)
    os._exit(0)
