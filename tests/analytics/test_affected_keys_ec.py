"""affected-keys on EC containers (issue 14): a block group is lost when fewer than `data` of its indexes
are left (MISSING), and only degraded while at least `data` are (UNDER_REPLICATED), whatever the count of
replicas; a hand-written snapshot whose every answer can be checked by hand."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pyarrow.dataset as ds

from pyozone.analytics.jobs import affected_keys
from pyozone.analytics.reader import Snapshot
from pyozone.config import OzoneConfiguration
from pyozone.hdds.container_health import ContainerHealthState as S
from tests.analytics.handmade import container, key, node, replica, write_snapshot

RS, XOR = "EC/RS-3-2-1024k", "EC/XOR-2-1-1024k"


def ec_key(name: str, config: str, containers: list[int]) -> dict:
    row = key("vol", "ec", name, 1000, [(c, c * 10) for c in containers])
    row["replication_config"] = config
    return row


def snapshot(path: Path) -> Path:
    """Seven healthy datanodes; container 1 (rs-3-2) keeps indexes 1, 2 (two of five, below three data
    indexes), container 2 (rs-3-2) keeps 1, 2, 3, container 3 (rs-3-2) all five, container 4 (xor-2-1)
    only index 3, container 5 (rs-3-2) keeps two copies of index 1 and one of index 2 (three replicas, two
    indexes)."""
    held = {1: [1, 2], 2: [1, 2, 3], 3: [1, 2, 3, 4, 5], 4: [3], 5: [1, 1, 2]}
    replicas = [
        replica(cid, dn, used_mb=10, index=index)
        for cid, indexes in held.items()
        for dn, index in enumerate(indexes, start=1 + cid % 3)
    ]
    return write_snapshot(
        path,
        {
            "nodes": [node(i) for i in range(1, 8)],
            "containers": [container(c, 30, config=XOR if c == 4 else RS) for c in held],
            "replicas": replicas,
            "keys": [
                ec_key("lost", RS, [1, 3]),
                ec_key("degraded", RS, [2]),
                ec_key("whole", RS, [3]),
                ec_key("xor-lost", XOR, [4]),
                ec_key("copies-are-not-indexes", RS, [5]),
            ],
        },
    )


def run(spark, path: Path, out: Path, states: tuple[S, ...]) -> dict[str, list[str]]:
    args = argparse.Namespace(conf=OzoneConfiguration(), states=states, csv=False, top=5)
    assert affected_keys.run(spark, Snapshot(spark, path), args, out) == 0
    rows = ds.dataset(out / "affected-keys" / "keys", format="parquet").to_table().to_pylist()
    return {r["key"]: r["states"] for r in rows}


def test_ec_keys_below_data_indexes_are_missing(spark, tmp_path: Path) -> None:
    path = snapshot(tmp_path / "snapshot")
    found = run(spark, path, tmp_path / "default", affected_keys.DEFAULT_STATES)
    assert found == {"lost": ["MISSING"], "xor-lost": ["MISSING"], "copies-are-not-indexes": ["MISSING"]}
    summary = json.loads((tmp_path / "default" / "affected-keys.json").read_text())
    assert summary["affectedContainers"] == {"MISSING": 3, "UNHEALTHY": 0}


def test_ec_keys_with_data_indexes_left_are_only_under_replicated(spark, tmp_path: Path) -> None:
    path = snapshot(tmp_path / "snapshot")
    assert run(spark, path, tmp_path / "under", (S.UNDER_REPLICATED,)) == {"degraded": ["UNDER_REPLICATED"]}
