"""Acceptance (issue 14): an rs-3-2 key on 7 live datanodes loses indexes and comes back.

- Two datanodes holding data indexes of the key's closed container are killed with SIGKILL: the key still
  reads, degraded. Once SCM declares them DEAD the Replication Manager has the lost indexes reconstructed
  on two other datanodes (reconstructECContainers: a coordinator reads three sources, decodes, writes the
  missing indexes), every index is CLOSED on a live datanode, each holds exactly the bytes the stripe
  arithmetic says, and `admin container report` shows the container HEALTHY again.
- Datanodes holding indexes are killed until fewer than three indexes live: the container is MISSING
  in the report and `analytics affected-keys` on a snapshot names the key.

Seven datanodes: rs-3-2 needs five distinct datanodes, and two are dead while it is rebuilt. Slow (SCM must
declare datanodes DEAD twice, then a Spark job): the default suite's EC core is test_e2e_ec_keys (degraded
reads) and test_e2e_ec_scanner_decommission (a reconstruction).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from tests.e2e.cluster.cluster_helpers import (
    DEAD_S,
    LiveCluster,
    MiB,
    close_open_containers,
    live_cluster,
    ozone_client,
)
from tests.e2e.ec.ec_helpers import (
    EC_INTERVALS,
    RS_3_2,
    Key,
    check_stored,
    make_bucket,
    sha256,
    uuid_names,
    wait_indexes,
)
from tests.polling import wait_for

pytestmark = pytest.mark.slow

DATANODES = 7
VOL, BUCKET, KEY = "ecvol", "rs32", "precious"
SIZE = 5 * MiB + 777  # one block group: one full stripe and a partial one


@pytest.fixture(scope="module")
def cluster(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveCluster]:
    with live_cluster(request, tmp_path_factory, "ec-recovery", DATANODES, overrides=EC_INTERVALS) as c:
        make_bucket(c, VOL, BUCKET, RS_3_2)
        yield c


@pytest.fixture(scope="module")
def key(cluster: LiveCluster) -> Key:
    """The key written and its containers closed (every index CLOSED): the RM reconstructs closed
    containers only."""
    data = os.urandom(SIZE)
    with ozone_client(cluster) as client:
        client.put_key(VOL, BUCKET, KEY, data)
        key = Key(data, client.key_info(VOL, BUCKET, KEY))
    close_open_containers(cluster)
    names = uuid_names(cluster)
    for cid in key.containers:
        wait_indexes(cluster, cid, RS_3_2, names, states=("CLOSED",), timeout_s=40)
    return key


def report(cluster: LiveCluster) -> dict[str, Any]:
    return cluster.poll_json("container", "report") or {}


def samples(data: dict[str, Any], state: str) -> set[int]:
    return set(data.get("samples", {}).get(state, []))


def problems(data: dict[str, Any]) -> set[int]:
    """Containers in any sample: samples hold only states a check recorded, never HEALTHY."""
    return {cid for ids in data.get("samples", {}).values() for cid in ids}


def read(cluster: LiveCluster) -> bytes:
    with ozone_client(cluster) as client, client.read_key(VOL, BUCKET, KEY) as reader:
        return reader.readall()


def live_uuids(cluster: LiveCluster) -> set[str]:
    return {n["uuid"] for n in cluster.datanodes().values() if n["healthState"] == "HEALTHY"}


def test_two_lost_indexes_read_degraded_and_are_reconstructed(cluster: LiveCluster, key: Key) -> None:
    cid = key.containers[0]
    names = uuid_names(cluster)
    wait_for(
        lambda: (r := report(cluster)) and r["stats"].get("CLOSED", 0) >= 1 and not problems(r) & {cid},
        30,
        f"a full check finding container {cid} healthy",
    )
    before = wait_indexes(cluster, cid, RS_3_2, names, states=("CLOSED",))
    victims = [before[1], before[2]]
    killed = time.monotonic()
    for victim in victims:
        cluster.kill(victim.name)
    reading = time.monotonic()
    got = read(cluster)
    degraded_s = time.monotonic() - reading
    assert sha256(got) == sha256(key.data), f"degraded read differs ({len(got)} bytes)"

    for victim in victims:
        wait_for(lambda v=victim: cluster.health(v.name) == "DEAD", DEAD_S + 20, f"{victim.name} DEAD")
    live = live_uuids(cluster)
    after = {
        c: wait_indexes(cluster, c, RS_3_2, names, states=("CLOSED",), among=live, timeout_s=90)
        for c in key.containers
    }
    rebuilt_s = time.monotonic() - killed
    holders = {r.uuid for r in after[cid].values()}
    assert len(holders) == RS_3_2.required_nodes and not holders & {v.uuid for v in victims}, after[cid]
    # the reconstructed indexes hold exactly their cells (and the others are untouched)
    check_stored(cluster, key.data, key.info.locations, RS_3_2, names)

    healthy = wait_for(
        lambda: (r := report(cluster)) and not problems(r) & set(key.containers) and r,
        30,
        f"a full check finding containers {key.containers} HEALTHY",
    )
    assert healthy["stats"].get("UNDER_REPLICATED", 0) == 0 and healthy["stats"].get("MISSING", 0) == 0
    table = cluster.admin("container", "report")
    assert table.code == 0 and "UNDER_REPLICATED: 0" in table.out and "MISSING: 0" in table.out, table
    assert sha256(read(cluster)) == sha256(key.data)
    print(
        f"\nindexes 1, 2 ({victims[0].name}, {victims[1].name}) killed: degraded read of {SIZE} B in "
        f"{degraded_s:.2f} s; reconstructed, every index CLOSED on a live datanode {rebuilt_s:.1f} s later"
    )


def test_a_container_below_data_indexes_is_missing_and_names_its_key(
    cluster: LiveCluster, key: Key, tmp_path: Path
) -> None:
    cid = key.containers[0]
    names = uuid_names(cluster)
    wait_indexes(cluster, cid, RS_3_2, names, states=("CLOSED",), among=live_uuids(cluster), timeout_s=90)
    live_holders = sorted(
        {r.name for r in wait_indexes(cluster, cid, RS_3_2, names, states=("CLOSED",)).values()}
        & {names[u] for u in live_uuids(cluster)}
    )
    doomed = live_holders[: len(live_holders) - (RS_3_2.ec_data - 1)]  # leaves d - 1 indexes
    for name in doomed:
        cluster.kill(name)
    wait_for(
        lambda: all(cluster.health(n) == "DEAD" for n in doomed), DEAD_S + 30, f"{doomed} DEAD"
    )  # fmt: skip
    missing = wait_for(
        lambda: (r := report(cluster)) and cid in samples(r, "MISSING") and r,
        40,
        f"container {cid} MISSING in the report",
    )
    table = cluster.admin("container", "report")
    assert table.code == 0 and f"#{cid}" in table.out.split("MISSING containers:")[-1], table

    snapshot = tmp_path / "snapshot"
    taken = cluster.admin("snapshot", "--out", str(snapshot), "--keys")
    assert taken.code == 0, taken
    out = tmp_path / "results"
    job = cluster.pyozone(
        "analytics", "affected-keys", "--snapshot", str(snapshot), "--out", str(out),
        "--master", "local[2]", "--conf", str(cluster.conf_dir), timeout_s=600,
    )  # fmt: skip
    assert job.code == 0, job
    rows = pq.read_table(out / "affected-keys" / "keys").to_pylist()
    assert [(r["volume"], r["bucket"], r["key"]) for r in rows] == [(VOL, BUCKET, KEY)], rows
    assert "MISSING" in rows[0]["states"] and cid in rows[0]["containers"], rows
    print(f"\n{doomed} killed too: container {cid} MISSING ({missing['stats'].get('MISSING')}), key named")
