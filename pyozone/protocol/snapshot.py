"""streamSnapshot's messages (`pyozone admin snapshot`): a stream that opens with the snapshot's info (its
cluster, when it was taken, its schema and how many rows each table holds) and goes on with Arrow IPC
batches of SCM's tables. The Arrow bytes are handed through as they are, never copied again here."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pyozone.proto import ScmAdminProtocol_pb2 as admin_pb2


@dataclass(frozen=True, slots=True)
class SnapshotInfo:
    """The stream's first message."""

    cluster_id: str
    created_ms: int
    schema_version: int
    rows: Mapping[str, int]
    """Rows of each table the batches that follow carry."""


@dataclass(frozen=True, slots=True)
class SnapshotBatch:
    """Arrow IPC bytes of one table's rows."""

    table: str
    arrow_ipc: bytes


SnapshotChunk = SnapshotInfo | SnapshotBatch


def snapshot_request(batch_rows: int) -> admin_pb2.SnapshotRequestProto:
    """`batch_rows` 0 lets SCM choose."""
    return admin_pb2.SnapshotRequestProto(batchRows=batch_rows)


def snapshot_chunk_to_proto(chunk: SnapshotChunk) -> admin_pb2.SnapshotChunkProto:
    if isinstance(chunk, SnapshotInfo):
        info = admin_pb2.SnapshotInfoProto(
            clusterId=chunk.cluster_id,
            createdMs=chunk.created_ms,
            schemaVersion=chunk.schema_version,
            rows=chunk.rows,
        )
        return admin_pb2.SnapshotChunkProto(info=info)
    return admin_pb2.SnapshotChunkProto(
        batch=admin_pb2.SnapshotBatchProto(table=chunk.table, arrowIpc=chunk.arrow_ipc)
    )


def snapshot_chunk_from_proto(proto: admin_pb2.SnapshotChunkProto) -> SnapshotChunk | None:
    """None for a chunk that carries neither (the reader refuses it where it stands)."""
    kind = proto.WhichOneof("chunk")
    if kind == "info":
        info = proto.info
        return SnapshotInfo(info.clusterId, info.createdMs, info.schemaVersion, dict(info.rows))
    if kind == "batch":
        return SnapshotBatch(proto.batch.table, proto.batch.arrowIpc)
    return None
