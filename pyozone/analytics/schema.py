"""The snapshot format (version 2): one Parquet directory per table plus a manifest.

A snapshot is what every analytics job reads, whether it came from a live cluster (`pyozone admin snapshot`)
or from `pyozone analytics generate`. Executors read only these files, so a snapshot on shared storage is
all a Spark cluster needs.

    DIR/_SNAPSHOT.json         manifest: format, schemaVersion, createdMs, clusterId, source, row counts
    DIR/<table>/part-*.parquet one directory per table below, written in row groups (bounded memory)

States and replication configs are stored as Ozone's names ("CLOSED", "RATIS/THREE", "EC/RS-3-2-1024k"),
ids as int64 (containers, local ids, transactions) or strings (datanode and pipeline UUIDs).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

FORMAT = "pyozone-snapshot"
SCHEMA_VERSION = 2
MANIFEST = "_SNAPSHOT.json"

BLOCK = pa.struct([("container_id", pa.int64()), ("local_id", pa.int64()), ("length", pa.int64())])

TABLES: dict[str, pa.Schema] = {
    # every registered datanode as SCM's NodeManager sees it
    "nodes": pa.schema(
        [
            ("uuid", pa.string()),
            ("hostname", pa.string()),
            ("ip_address", pa.string()),
            ("rack", pa.string()),
            ("health", pa.string()),
            ("operational_state", pa.string()),
            ("op_state_expiry_epoch_sec", pa.int64()),
            ("data_disks", pa.int32()),
            ("failed_disks", pa.int32()),
            ("metadata_disks", pa.int32()),
            ("capacity", pa.int64()),
            ("used", pa.int64()),
            ("remaining", pa.int64()),
            ("last_heartbeat_ms", pa.int64()),
        ]
    ),
    "pipelines": pa.schema(
        [
            ("pipeline_id", pa.string()),
            ("replication_config", pa.string()),
            ("state", pa.string()),
            ("nodes", pa.list_(pa.string())),
            ("leader", pa.string()),
            ("created_ms", pa.int64()),
        ]
    ),
    "containers": pa.schema(
        [
            ("container_id", pa.int64()),
            ("state", pa.string()),
            ("replication_config", pa.string()),
            ("pipeline_id", pa.string()),
            ("owner", pa.string()),
            ("used_bytes", pa.int64()),
            ("number_of_keys", pa.int64()),
            ("sequence_id", pa.int64()),
            ("state_entered_ms", pa.int64()),
            ("suppressed", pa.bool_()),
            # a datanode reported a replica once (ContainerInfo.replicas_reported): lost, not never written
            ("replicas_reported", pa.bool_()),
        ]
    ),
    "replicas": pa.schema(
        [
            ("container_id", pa.int64()),
            ("datanode", pa.string()),
            ("state", pa.string()),
            ("origin_node_id", pa.string()),
            ("sequence_id", pa.int64()),
            ("key_count", pa.int64()),
            ("bytes_used", pa.int64()),
            ("replica_index", pa.int32()),
            ("is_empty", pa.bool_()),
        ]
    ),
    # the Replication Manager's pending replica operations
    "pending_ops": pa.schema(
        [
            ("container_id", pa.int64()),
            ("type", pa.string()),
            ("target", pa.string()),
            ("replica_index", pa.int32()),
            ("deadline_epoch_ms", pa.int64()),
        ]
    ),
    # OM's keys with their block lists (`admin snapshot --keys`; empty without it)
    "keys": pa.schema(
        [
            ("volume", pa.string()),
            ("bucket", pa.string()),
            ("key", pa.string()),
            ("size", pa.int64()),
            ("replication_config", pa.string()),
            ("created_ms", pa.int64()),
            ("blocks", pa.list_(BLOCK)),
        ]
    ),
    "deleted_blocks": pa.schema(
        [
            ("tx_id", pa.int64()),
            ("container_id", pa.int64()),
            ("local_ids", pa.list_(pa.int64())),
        ]
    ),
}


class SnapshotError(Exception):
    """A snapshot that cannot be read; the message names the path and the problem."""


@dataclass(frozen=True, slots=True)
class Manifest:
    schema_version: int
    created_ms: int
    cluster_id: str
    source: str  # "scm" or "synthetic"
    rows: dict[str, int]

    def to_json(self) -> str:
        return json.dumps(
            {
                "format": FORMAT,
                "schemaVersion": self.schema_version,
                "createdMs": self.created_ms,
                "clusterId": self.cluster_id,
                "source": self.source,
                "rows": self.rows,
            },
            indent=2,
        )


def write_manifest(directory: Path, manifest: Manifest) -> None:
    """Written last: a snapshot without its manifest is incomplete and is refused."""
    tmp = directory / (MANIFEST + ".tmp")
    tmp.write_text(manifest.to_json())
    tmp.replace(directory / MANIFEST)


def read_manifest(directory: Path) -> Manifest:
    path = directory / MANIFEST
    if not directory.is_dir():
        raise SnapshotError(f"{directory}: no such snapshot directory")
    if not path.is_file():
        raise SnapshotError(f"{directory}: not a snapshot (no {MANIFEST}; was it written completely?)")
    try:
        data: dict[str, Any] = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise SnapshotError(f"{path}: unreadable manifest: {e}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise SnapshotError(f"{path}: not a {FORMAT} manifest")
    version = data.get("schemaVersion")
    if version != SCHEMA_VERSION:
        raise SnapshotError(
            f"{path}: schema version {version!r}; this pyozone reads version {SCHEMA_VERSION}"
        )
    rows = data.get("rows")
    if not isinstance(rows, dict) or set(rows) != set(TABLES):
        raise SnapshotError(f"{path}: rows must list exactly the tables {sorted(TABLES)}")
    for table in TABLES:
        if not (directory / table).is_dir():
            raise SnapshotError(f"{directory}: table directory {table}/ is missing")
    return Manifest(
        version,
        int(data.get("createdMs", 0)),
        str(data.get("clusterId", "")),
        str(data.get("source", "")),
        {k: int(v) for k, v in rows.items()},
    )
