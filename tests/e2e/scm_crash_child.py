"""Allocates 1 MB blocks from a SimCluster over an on-disk scm.db until killed, acknowledging each one.

Run by test_crash_scm.py as a separate process (after `pyozone scm --init`), which SIGKILLs it. Output:
`dn UUID` per datanode, then `ready`, then `ack CONTAINER_ID LOCAL_ID PIPELINE_ID` after each allocation
(flushed before the next allocation starts). Stops by itself after MAX_SECONDS or MAX_BLOCKS.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from pyozone.config import load_configuration
from pyozone.hdds.ids import RATIS_THREE
from pyozone.hdds.states import PipelineState
from pyozone.scm.store import SCMMetadataStore
from pyozone.scm.store.scm_db import open_scm_db
from pyozone.sim.cluster import SimCluster

MAX_SECONDS = 30.0
MAX_BLOCKS = 100_000
BLOCK = 1 << 20
SEED = 7
DATANODES = 5
CONF = {
    "hdds.scm.safemode.min.datanode": "3",
    "ozone.scm.container.size": "4MB",
    "ozone.scm.block.size": "1MB",
    # Small batches: the kill lands near batch boundaries, where a reuse of ids would show.
    "ozone.scm.sequence.id.batch.size": "16",
}


def cluster_over(store: SCMMetadataStore) -> SimCluster:
    return SimCluster(datanodes=DATANODES, conf=load_configuration(None, CONF), seed=SEED, store=store)


def writable(cluster: SimCluster) -> bool:
    scm = cluster.scm
    return not scm.safe_mode.in_safe_mode() and scm.pipelines.count(RATIS_THREE, [PipelineState.OPEN]) > 0


def main(db_dir: Path) -> int:
    deadline = time.monotonic() + MAX_SECONDS
    store = open_scm_db(db_dir)
    cluster = cluster_over(store)
    for uuid in cluster.datanodes:
        print(f"dn {uuid}")
    if not cluster.run_until(lambda: writable(cluster), timeout_ms=30 * 60_000):
        print("never left safe mode", file=sys.stderr)
        return 2
    print("ready", flush=True)
    for _ in range(MAX_BLOCKS):
        if time.monotonic() > deadline:
            break
        block = cluster.write_block(BLOCK)
        print(f"ack {block.block_id.container_id} {block.block_id.local_id} {block.pipeline.id}", flush=True)
        cluster.advance(200)  # heartbeats, reports and close commands keep flowing between writes
    store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
