"""Missing containers mapped to affected keys on a live cluster: keys written through OM, every datanode
of one pipeline killed, then `admin snapshot --keys` and `analytics affected-keys` name exactly the keys
with a block in a container that lost all its replicas."""

from __future__ import annotations

import os

import pyarrow.parquet as pq
import pytest

from tests.e2e.cluster.cluster_helpers import DEAD_S, live_cluster, ozone_client
from tests.polling import wait_for

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]  # the affected-keys job alone may take 600 s

VOL, BUCKET, KEYS = "vol1", "bucket1", 24


def test_affected_keys_are_the_keys_of_the_lost_containers(request, tmp_path_factory, tmp_path) -> None:
    with live_cluster(request, tmp_path_factory, "affected", 5) as cluster:
        with ozone_client(cluster) as client:
            client.create_volume(VOL)
            client.create_bucket(VOL, BUCKET)
            holders: dict[str, set[frozenset[str]]] = {}
            for i in range(KEYS):
                name = f"key-{i:03d}"
                client.put_key(VOL, BUCKET, name, os.urandom(10_000 + i))
                info = client.key_info(VOL, BUCKET, name)
                holders[name] = {frozenset(d.uuid for d in loc.pipeline.members) for loc in info.locations}
        nodes = cluster.datanodes()
        names = {n["uuid"]: host for host, n in nodes.items()}
        lost = next(iter(holders["key-000"]))  # every datanode of the first key's pipeline
        for uuid in sorted(lost):
            cluster.kill(names[uuid])
        wait_for(
            lambda: all(cluster.health(names[u]) == "DEAD" for u in lost),
            DEAD_S + 30,
            "the killed datanodes DEAD",
        )
        expected = {name for name, sets in holders.items() if any(s <= lost for s in sets)}
        assert "key-000" in expected

        snapshot = tmp_path / "snapshot"
        taken = cluster.admin("snapshot", "--out", str(snapshot), "--keys")
        assert taken.code == 0, taken
        out = tmp_path / "results"
        job = cluster.pyozone(
            "analytics", "affected-keys", "--snapshot", str(snapshot), "--out", str(out),
            "--master", "local[2]", "--conf", str(cluster.conf_dir), timeout_s=600,
        )  # fmt: skip
        assert job.code == 0, job
    affected = {row["key"] for row in pq.read_table(out / "affected-keys" / "keys").to_pylist()}
    print(
        f"\n{len(expected)} of {KEYS} keys lost every replica of a block; affected-keys found {len(affected)}"
    )
    assert affected == expected
