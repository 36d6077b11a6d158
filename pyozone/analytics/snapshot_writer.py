"""SnapshotWriter: writes a snapshot table by table in bounded memory, the manifest last.

Rows arrive in batches and go to one ParquetWriter per table as row groups of `row_group_rows`; at most
about one row group per table is held in memory, whatever the total. The manifest is written only by
`finish()`, after every file is closed, so a run that fails or is interrupted leaves a directory that
`read_manifest` refuses as incomplete, never one that looks whole.

    with SnapshotWriter(out, cluster_id, "scm") as writer:
        writer.add_rows("nodes", rows)
        manifest = writer.finish()
"""

from __future__ import annotations

import time
from contextlib import suppress
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from pyozone.analytics.schema import MANIFEST, SCHEMA_VERSION, TABLES, Manifest, SnapshotError, write_manifest
from pyozone.analytics.snapshot_reader import schema_mismatch

ROW_GROUP_ROWS = 65_536
PART_FILE = "part-00000.parquet"


def check_out_dir(out_dir: Path) -> None:
    """Refuses a directory that cannot take a new snapshot; called before any work, so the error comes first.

    A directory left by an interrupted run (table files, no manifest) is accepted and overwritten; one
    with a manifest is a finished snapshot and is never overwritten, and a table directory holding other
    files would mix them into the table for every reader.
    """
    if out_dir.exists() and not out_dir.is_dir():
        raise SnapshotError(f"{out_dir}: exists and is not a directory")
    if (out_dir / MANIFEST).exists():
        raise SnapshotError(f"{out_dir}: already holds a snapshot ({MANIFEST}); choose a new directory")
    for table in TABLES:
        table_dir = out_dir / table
        if table_dir.exists() and not table_dir.is_dir():
            raise SnapshotError(f"{table_dir}: exists and is not a directory")
        others = (
            sorted(p.name for p in table_dir.iterdir() if p.name != PART_FILE) if table_dir.is_dir() else []
        )
        if others:
            raise SnapshotError(f"{table_dir}: holds other files ({', '.join(others[:3])}); not a snapshot's")


class SnapshotWriter:
    def __init__(
        self,
        out_dir: Path | str,
        cluster_id: str,
        source: str,
        created_ms: int | None = None,
        row_group_rows: int = ROW_GROUP_ROWS,
    ) -> None:
        self.out_dir = Path(out_dir)
        check_out_dir(self.out_dir)
        self.cluster_id = cluster_id
        self.source = source
        self.created_ms = int(time.time() * 1000) if created_ms is None else created_ms
        self.row_group_rows = row_group_rows
        self.rows = dict.fromkeys(TABLES, 0)
        self._pending: dict[str, list[pa.RecordBatch]] = {table: [] for table in TABLES}
        self._pending_rows = dict.fromkeys(TABLES, 0)
        self._writers: dict[str, pq.ParquetWriter] = {}
        self._finished = False
        try:
            for table, schema in TABLES.items():
                (self.out_dir / table).mkdir(parents=True, exist_ok=True)
                # Every table gets its file up front, so an empty table still carries its schema.
                self._writers[table] = pq.ParquetWriter(self.out_dir / table / PART_FILE, schema)
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> SnapshotWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def add_rows(self, table: str, rows: list[dict[str, Any]]) -> None:
        """Rows as dicts keyed by the table's field names."""
        if rows:
            self.add_batch(table, pa.RecordBatch.from_pylist(rows, schema=_schema(table)))

    def add_batch(self, table: str, batch: pa.RecordBatch) -> None:
        """A batch with the table's fields; their order and nullability may differ (Spark's do)."""
        schema = _schema(table)
        if self._finished:
            raise SnapshotError(f"{self.out_dir}: snapshot already finished")
        problem = schema_mismatch(table, batch.schema)
        if problem:
            raise SnapshotError(f"batch for table {table}: {problem}")
        if batch.num_rows == 0:
            return
        if not batch.schema.equals(schema):
            columns = [batch.column(field.name).cast(field.type) for field in schema]
            batch = pa.RecordBatch.from_arrays(columns, schema=schema)
        self._pending[table].append(batch)
        self._pending_rows[table] += batch.num_rows
        self.rows[table] += batch.num_rows
        while self._pending_rows[table] >= self.row_group_rows:
            self._flush(table, self.row_group_rows)

    def _flush(self, table: str, rows: int) -> None:
        """Writes the first `rows` pending rows as one row group; the rest stays pending."""
        pending = pa.Table.from_batches(self._pending[table], schema=_schema(table))
        self._writers[table].write_table(pending.slice(0, rows), row_group_size=rows)
        self._pending[table] = pending.slice(rows).to_batches()
        self._pending_rows[table] -= rows

    def finish(self) -> Manifest:
        """Writes what is pending, closes every file, then writes the manifest: the snapshot is complete."""
        if self._finished:
            raise SnapshotError(f"{self.out_dir}: snapshot already finished")
        for table in TABLES:
            if self._pending_rows[table]:
                self._flush(table, self._pending_rows[table])
        for table in TABLES:
            self._writers.pop(table).close()
        manifest = Manifest(SCHEMA_VERSION, self.created_ms, self.cluster_id, self.source, dict(self.rows))
        write_manifest(self.out_dir, manifest)
        self._finished = True
        return manifest

    def close(self) -> None:
        """Closes any open file without writing the manifest: an unfinished snapshot stays incomplete."""
        for writer in self._writers.values():
            with suppress(Exception):  # already failing: the first error is the one to report
                writer.close()
        self._writers.clear()
        self._pending = {table: [] for table in TABLES}


def _schema(table: str) -> pa.Schema:
    try:
        return TABLES[table]
    except KeyError:
        raise SnapshotError(f"no table {table!r}; the tables are {', '.join(TABLES)}") from None
