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

KEY_ROWS_PER_BATCH = 10_000


def fetch_snapshot(
    scm: ScmAdminClient, out_dir: Path, batch_rows: int = 0, keys: Iterable[dict[str, Any]] | None = None
) -> Manifest:
    """SCM's tables, then (given `keys`, rows of the keys table from OM) the keys table."""
    check_out_dir(out_dir)
    chunks = scm.snapshot_chunks(batch_rows)
    first = next(chunks, None)
    if first is None or first.WhichOneof("chunk") != "info":
        raise ScmClientError(f"SCM at {scm.address} did not start the snapshot with its info")
    info = first.info
    if info.schemaVersion != SCHEMA_VERSION:
        raise ScmClientError(
            f"SCM at {scm.address} writes snapshot schema version {info.schemaVersion}; "
            f"this pyozone writes version {SCHEMA_VERSION}"
        )
    announced = {table: info.rows.get(table, 0) for table in TABLES}
    with SnapshotWriter(out_dir, info.clusterId, "scm", info.createdMs) as writer:
        for chunk in chunks:
            if chunk.WhichOneof("chunk") != "batch":
                raise ScmClientError(f"SCM at {scm.address} sent a second snapshot info")
            try:
                received = decode_batches(chunk.batch.arrowIpc)
            except TransportError as e:
                raise ScmClientError(
                    f"SCM at {scm.address} sent a malformed batch of {chunk.batch.table}: {e}"
                ) from None
            for batch in received:
                writer.add_batch(chunk.batch.table, batch)
        if writer.rows != announced:
            raise ScmClientError(f"SCM at {scm.address} announced rows {announced} but sent {writer.rows}")
        rows = iter(keys or ())
        while batch := list(islice(rows, KEY_ROWS_PER_BATCH)):
            writer.add_rows("keys", batch)
        return writer.finish()
