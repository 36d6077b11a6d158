"""One task's share of the check, on the executor: a range of containers with their replicas and pending
ops, as Arrow tables, turned into groups and run through rm_rules.check_partition.

The three tables are matched by container id with sorted arrays and binary search, a chunk of containers
at a time, and each chunk's columns become row tuples at C speed (to_pylist, map): no per-row Arrow access
and no join on the JVM side, whose row-by-row conversion to Arrow cost more than the check itself.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pyozone.analytics.rm_rules import (
    CheckContext,
    ContainerGroup,
    ContainerRow,
    PendingOpRow,
    ReplicaRow,
    check_partition,
    lifecycle_state,
    pending_op_type,
    replica_state,
    replication_config,
)
from pyozone.hdds.container_health import ContainerHealthState
from pyozone.hdds.ids import ContainerID

CHECK_TABLES = {"containers": ContainerRow, "replicas": ReplicaRow, "pending_ops": PendingOpRow}
"""The snapshot tables the check reads, with the row tuple each becomes (its fields are the columns)."""
OUTPUT_SCHEMA = pa.schema([("container_id", pa.int64()), ("health", pa.string()), ("report", pa.string())])
"""A task's output: a (container_id, health) row per container not HEALTHY when asked for, then one row
holding its partial report as JSON."""
CHUNK = 8192
"""Containers decoded at a time: bounds the Python objects alive, whatever the task's size."""

_DECODE: dict[tuple[type, str], Callable[[Any], Any]] = {
    (ContainerRow, "state"): lifecycle_state,
    (ContainerRow, "replication_config"): replication_config,
    (ReplicaRow, "state"): replica_state,
    (PendingOpRow, "type"): pending_op_type,
}


def check_tables(
    containers: pa.Table, replicas: pa.Table, pending_ops: pa.Table, context: CheckContext, with_health: bool
) -> Iterator[pa.RecordBatch]:
    """The task's output batches (OUTPUT_SCHEMA)."""
    unhealthy: list[tuple[ContainerID, ContainerHealthState]] | None = [] if with_health else None
    report = check_partition(groups(containers, replicas, pending_ops), context, unhealthy)
    if unhealthy:
        ids, states = zip(*unhealthy, strict=True)
        yield _output(list(ids), [s.name for s in states], [None] * len(ids))
    yield _output([None], [None], [json.dumps(report.to_dict())])


def groups(
    containers: pa.Table, replicas: pa.Table, pending_ops: pa.Table, chunk: int = CHUNK
) -> Iterator[ContainerGroup]:
    """Each container with its replicas and ops, in ascending id order (so samples come out as SCM's
    scan takes them). Replicas and ops of a container the tables do not list join no group: SCM's scan
    walks the containers and never sees them either."""
    containers, replicas, pending_ops = (_by_id(t) for t in (containers, replicas, pending_ops))
    ids = containers.column("container_id").to_numpy()
    replica_ids = replicas.column("container_id").to_numpy()
    op_ids = pending_ops.column("container_id").to_numpy()
    bounds = [np.searchsorted(a, ids, side) for a in (replica_ids, op_ids) for side in ("left", "right")]
    for start in range(0, len(ids), chunk):
        end = min(start + chunk, len(ids))
        r_lo, r_hi, o_lo, o_hi = (b[start:end] for b in bounds)
        container_rows = table_rows(containers.slice(start, end - start), ContainerRow)
        replica_rows = table_rows(replicas.slice(r_lo[0], r_hi[-1] - r_lo[0]), ReplicaRow)
        op_rows = table_rows(pending_ops.slice(o_lo[0], o_hi[-1] - o_lo[0]), PendingOpRow)
        for row, a, b, c, d in zip(
            container_rows,
            (r_lo - r_lo[0]).tolist(),
            (r_hi - r_lo[0]).tolist(),
            (o_lo - o_lo[0]).tolist(),
            (o_hi - o_lo[0]).tolist(),
            strict=True,
        ):
            yield row, replica_rows[a:b], op_rows[c:d]


def _by_id(table: pa.Table) -> pa.Table:
    """Sorted by container id (stable: a container's replicas keep their order); snapshots written in id
    order, as SCM's and the generator's are, pass through untouched."""
    ids = table.column("container_id").to_numpy()
    if len(ids) < 2 or bool((ids[1:] >= ids[:-1]).all()):
        return table
    return table.take(pa.array(np.argsort(ids, kind="stable")))


def table_rows(table: pa.Table, row_type: type) -> list:
    """The table's rows as row tuples, built column by column."""
    columns = [_values(table.column(f), _DECODE.get((row_type, f))) for f in row_type._fields]
    return list(map(row_type._make, zip(*columns, strict=True)))


def _values(column: pa.ChunkedArray, decode: Callable[[Any], Any] | None) -> list:
    """A column as Python values. Text goes through a dictionary (snapshot text is a few distinct
    names and ids repeated), so each distinct value is decoded, and made a Python object, once."""
    if not (pa.types.is_string(column.type) or pa.types.is_dictionary(column.type)):
        return column.to_pylist()
    values: list = []
    for chunk in column.chunks:
        if not pa.types.is_dictionary(chunk.type):
            chunk = pc.dictionary_encode(chunk)
        names = chunk.dictionary.to_pylist()
        lookup = list(map(decode, names)) if decode else names
        if chunk.null_count:
            values += [None if i is None else lookup[i] for i in chunk.indices.to_pylist()]
        else:
            values += [lookup[i] for i in chunk.indices.to_numpy().tolist()]
    return values


def _output(ids: list, health: list, report: list) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays(
        [pa.array(ids, pa.int64()), pa.array(health, pa.string()), pa.array(report, pa.string())],
        schema=OUTPUT_SCHEMA,
    )
