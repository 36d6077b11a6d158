"""Hands out localIds from scm.db until killed, printing each id once it is handed out.

Run by test_block_sequence_id.py as a separate process, which it then kills with SIGKILL.
"""

from __future__ import annotations

import sys
from pathlib import Path

from pyozone.scm.block.sequence_id import LOCAL_ID, SequenceIdGenerator
from pyozone.scm.store.scm_db import open_scm_db

MAX_IDS = 1_000_000


def main(db_dir: Path, batch_size: int) -> None:
    store = open_scm_db(db_dir)
    gen = SequenceIdGenerator(store, batch_size)
    for _ in range(MAX_IDS):
        sys.stdout.write(f"{gen.next_id(LOCAL_ID)}\n")
        sys.stdout.flush()
    store.close()


if __name__ == "__main__":
    main(Path(sys.argv[1]), int(sys.argv[2]))
