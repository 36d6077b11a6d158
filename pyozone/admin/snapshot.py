"""`pyozone admin snapshot`'s work: SCM's streamed snapshot written to a directory with SnapshotWriter,
and with `--keys` OM's keys after it (pyozone/admin/om_keys.py).

The stream's first chunk announces the rows of every table; the manifest is written only when every
announced row arrived, so a stream cut short (SCM stopped, network lost) leaves an incomplete snapshot
that every reader refuses, never a silently smaller one.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import islice
from pathlib import Path
from typing import Any

from pyozone.analytics.schema import SCHEMA_VERSION, TABLES, Manifest
from pyozone.analytics.snapshot_transport import TransportError, decode_batches
from pyozone.analytics.snapshot_writer import SnapshotWriter, check_out_dir
from pyozone.framework.scm_admin import ScmAdminClient
from pyozone.framework.scm_errors import ScmClientError
from pyozone.protocol.snapshot import SnapshotBatch, SnapshotInfo

KEY_ROWS_PER_BATCH = 10_000


def fetch_snapshot(
    scm: ScmAdminClient, out_dir: Path, batch_rows: int = 0, keys: Iterable[dict[str, Any]] | None = None
) -> Manifest:
    """SCM's tables, then (given `keys`, rows of the keys table from OM) the keys table."""
    check_out_dir(out_dir)
    chunks = scm.snapshot_chunks(batch_rows)
    first = next(chunks, None)
    if not isinstance(first, SnapshotInfo):
        raise ScmClientError(f"SCM at {scm.address} did not start the snapshot with its info")
    info = first
    if info.schema_version != SCHEMA_VERSION:
        raise ScmClientError(
            f"SCM at {scm.address} writes snapshot schema version {info.schema_version}; "
            f"this pyozone writes version {SCHEMA_VERSION}"
        )
    announced = {table: info.rows.get(table, 0) for table in TABLES}
    with SnapshotWriter(out_dir, info.cluster_id, "scm", info.created_ms) as writer:
        for chunk in chunks:
            if not isinstance(chunk, SnapshotBatch):
                raise ScmClientError(f"SCM at {scm.address} sent a second snapshot info")
            try:
                received = decode_batches(chunk.arrow_ipc)
            except TransportError as e:
                raise ScmClientError(
                    f"SCM at {scm.address} sent a malformed batch of {chunk.table}: {e}"
                ) from None
            for batch in received:
                writer.add_batch(chunk.table, batch)
        if writer.rows != announced:
            raise ScmClientError(f"SCM at {scm.address} announced rows {announced} but sent {writer.rows}")
        rows = iter(keys or ())
        while batch := list(islice(rows, KEY_ROWS_PER_BATCH)):
            writer.add_rows("keys", batch)
        return writer.finish()
