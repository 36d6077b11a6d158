"""streamSnapshot's messages: SCM's metadata as snapshot batches, from a view taken in one event-loop turn.

This is the SCM daemon's SnapshotSource (pyozone/scm/server/snapshot_source.py): `pyozone scm` hands it to
the daemon, which never imports analytics, so pyarrow loads with the first snapshot and not before.

The view is taken synchronously, so no heartbeat or admin call changes the core while it is copied
(references only: see pyozone/analytics/scm_snapshot.py). Rows are then built and encoded a batch at a
time, giving the loop back between batches so heartbeats keep flowing during a large snapshot; the RPC
stream's window holds it when the client reads slower, so the server never buffers the snapshot.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from pyozone.analytics.schema import SCHEMA_VERSION
from pyozone.analytics.scm_snapshot import DEFAULT_BATCH_ROWS, batches, take_view
from pyozone.analytics.snapshot_transport import encode_batch
from pyozone.hdds.limits import MAX_ADMIN_MESSAGE_BYTES, KiB
from pyozone.protocol.snapshot import SnapshotBatch, SnapshotChunk, SnapshotInfo
from pyozone.scm.scm import StorageContainerManager

CHUNK_BYTES = MAX_ADMIN_MESSAGE_BYTES - 64 * KiB
"""Arrow bytes per chunk at most, leaving room for the message around them."""


async def snapshot_chunks(core: StorageContainerManager, batch_rows: int) -> AsyncIterator[SnapshotChunk]:
    """`batch_rows` 0 takes the default."""
    batch_rows = batch_rows or DEFAULT_BATCH_ROWS
    view = take_view(core)
    yield SnapshotInfo(view.cluster_id, view.created_ms, SCHEMA_VERSION, view.row_counts())
    for table, batch in batches(view, batch_rows):
        for data in encode_batch(batch, CHUNK_BYTES):
            yield SnapshotBatch(table, data)
        await asyncio.sleep(0)
