"""Tiny hand-written snapshots for job and CLI tests: every number in them can be checked by hand."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from pyozone.analytics.schema import MANIFEST, SCHEMA_VERSION, TABLES, Manifest, write_manifest

MB = 1 << 20


def write_snapshot(
    directory: Path, rows: dict[str, list[dict[str, Any]]], version: int = SCHEMA_VERSION
) -> Path:
    """Every table (missing ones empty), then the manifest; `version` other than 1 makes a bad one."""
    directory.mkdir(parents=True, exist_ok=True)
    for table, schema in TABLES.items():
        (directory / table).mkdir()
        pq.write_table(
            pa.Table.from_pylist(rows.get(table, []), schema=schema), directory / table / "part-0.parquet"
        )
    write_manifest(
        directory,
        Manifest(
            SCHEMA_VERSION, 1_700_000_000_000, "handmade", "test", {t: len(rows.get(t, [])) for t in TABLES}
        ),
    )
    if version != SCHEMA_VERSION:
        manifest = json.loads((directory / MANIFEST).read_text())
        manifest["schemaVersion"] = version
        (directory / MANIFEST).write_text(json.dumps(manifest))
    return directory


def node(i: int, health: str = "HEALTHY", op: str = "IN_SERVICE", rack: str = "/r1") -> dict[str, Any]:
    return {
        "uuid": f"uuid-{i}",
        "hostname": f"dn{i}",
        "ip_address": f"10.0.0.{i}",
        "rack": rack,
        "health": health,
        "operational_state": op,
        "op_state_expiry_epoch_sec": 0,
        "data_disks": 4,
        "failed_disks": 0,
        "metadata_disks": 1,
        "capacity": 1 << 40,
        "used": 0,
        "remaining": 1 << 40,
        "last_heartbeat_ms": 1_700_000_000_000,
    }


def container(cid: int, used_mb: int, state: str = "CLOSED", config: str = "RATIS/THREE", seq: int = 10):
    return {
        "container_id": cid,
        "state": state,
        "replication_config": config,
        "pipeline_id": None,
        "owner": "om",
        "used_bytes": used_mb * MB,
        "number_of_keys": 1,
        "sequence_id": seq,
        "state_entered_ms": 0,
        "suppressed": False,
        "replicas_reported": True,
    }


def replica(cid: int, dn: int, state: str = "CLOSED", seq: int = 10, used_mb: int = 0, index: int = 0):
    return {
        "container_id": cid,
        "datanode": f"uuid-{dn}",
        "state": state,
        "origin_node_id": f"uuid-{dn}",
        "sequence_id": seq,
        "key_count": 1,
        "bytes_used": used_mb * MB,
        "replica_index": index,
        "is_empty": False,
    }


def key(volume: str, bucket: str, name: str, size: int, blocks: list[tuple[int, int]] = ()) -> dict[str, Any]:
    return {
        "volume": volume,
        "bucket": bucket,
        "key": name,
        "size": size,
        "replication_config": "RATIS/THREE",
        "created_ms": 0,
        "blocks": [{"container_id": c, "local_id": local, "length": size} for c, local in blocks],
    }
