"""Writes numbered batches to scm.db until killed, printing `ack N` after each acknowledged write.

Run by test_crash.py as a separate process, which it then kills with SIGKILL.
"""

from __future__ import annotations

import sys
from pathlib import Path

from pyozone.scm.store import JsonCodec
from pyozone.scm.store.scm_db import open_scm_db

MAX_WRITES = 100_000


def main(db_dir: Path) -> None:
    store = open_scm_db(db_dir)
    containers = store.int_table("containers", JsonCodec())
    deleted = store.int_table("deletedBlocks", JsonCodec())
    for n in range(1, MAX_WRITES + 1):
        with store.batch():  # one batch across three column families
            containers.put(n, {"id": n, "pad": "x" * 200})
            deleted.put(n, {"txID": n})
            store.meta.put("last", n)
        print(f"ack {n}", flush=True)
    store.close()


if __name__ == "__main__":
    main(Path(sys.argv[1]))
