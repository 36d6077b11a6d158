"""A snapshot written straight from an in-process SCM core: what `pyozone admin snapshot` writes from a
live SCM, without the RPC, through the same view and row functions (parity tests, the simulator)."""

from __future__ import annotations

from pathlib import Path

from pyozone.analytics.schema import Manifest
from pyozone.analytics.scm_snapshot import DEFAULT_BATCH_ROWS, batches, take_view
from pyozone.analytics.snapshot_writer import SnapshotWriter
from pyozone.scm.scm import StorageContainerManager


def write_core_snapshot(
    core: StorageContainerManager, out_dir: Path | str, batch_rows: int = DEFAULT_BATCH_ROWS
) -> Manifest:
    view = take_view(core)
    with SnapshotWriter(out_dir, view.cluster_id, "scm", view.created_ms) as writer:
        for table, batch in batches(view, batch_rows):
            writer.add_batch(table, batch)
        return writer.finish()
