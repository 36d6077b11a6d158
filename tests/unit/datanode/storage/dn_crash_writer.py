"""Writes blocks (chunks + putBlock) until killed, printing `ack N` after each committed putBlock.

Run by test_dn_crash.py as a script (with the repository root on PYTHONPATH), which kills it with SIGKILL
and reopens its storage.
"""

from __future__ import annotations

import sys
from pathlib import Path

from tests.unit.datanode.storage.dn_helpers import open_node, write_block

BLOCKS_PER_CONTAINER = 40
MAX_BLOCKS = 100_000


def container_of(local_id: int) -> int:
    return 1 + (local_id - 1) // BLOCKS_PER_CONTAINER


def sizes_of(local_id: int) -> tuple[int, ...]:
    return (8192, 1000 + local_id * 37 % 7000, 3)


def main(root: Path) -> None:
    node = open_node(root, disks=2, container_size="1GB")
    for local_id in range(1, MAX_BLOCKS + 1):
        cid = container_of(local_id)
        container = node.containers.get(cid) or node.containers.create(cid, "writer", "pipeline")
        write_block(container, local_id, sizes_of(local_id), bcsid=local_id)
        print(f"ack {local_id}", flush=True)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
