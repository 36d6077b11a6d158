"""Acceptance (issue 14): an rs-3-2 key's closed container on 7 live datanodes, damaged and drained.

- A data cell of one replica is corrupted on disk: the key still reads (the cell's checksum fails, so it
  counts as missing and is rebuilt), the datanode's scanner finds it and the replica goes UNHEALTHY in SCM,
  and the Replication Manager has that index reconstructed on another datanode, which stores exactly
  its cells.
- A datanode holding an index is decommissioned: it ends DECOMMISSIONED with every index 1..5 CLOSED on
  in-service datanodes, each holding exactly its bytes.

Seven datanodes: one spare for each of the two moves.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

import pytest

from tests.e2e.cluster.cluster_helpers import (
    LiveCluster,
    MiB,
    block_files,
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
    replicas,
    sha256,
    uuid_names,
    wait_indexes,
)
from tests.polling import wait_for

DATANODES = 7
VOL, BUCKET, KEY = "ecvol", "rs32", "scanned"
SIZE = 4 * MiB + 12345
OVERRIDES = {
    **EC_INTERVALS,
    "hdds.container.scrub.data.scan.interval": "2s",
    "ozone.scm.datanode.admin.monitor.interval": "2s",
}


@pytest.fixture(scope="module")
def cluster(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveCluster]:
    with live_cluster(request, tmp_path_factory, "ec-scan", DATANODES, overrides=OVERRIDES) as c:
        make_bucket(c, VOL, BUCKET, RS_3_2)
        yield c


@pytest.fixture(scope="module")
def key(cluster: LiveCluster) -> Key:
    data = os.urandom(SIZE)
    with ozone_client(cluster) as client:
        client.put_key(VOL, BUCKET, KEY, data)
        key = Key(data, client.key_info(VOL, BUCKET, KEY))
    close_open_containers(cluster)
    names = uuid_names(cluster)
    for cid in key.containers:
        wait_indexes(cluster, cid, RS_3_2, names, states=("CLOSED",), timeout_s=40)
    return key


def read(cluster: LiveCluster) -> bytes:
    with ozone_client(cluster) as client, client.read_key(VOL, BUCKET, KEY) as reader:
        return reader.readall()


def test_a_corrupted_cell_is_found_and_its_index_reconstructed(cluster: LiveCluster, key: Key) -> None:
    (group, *_) = key.info.locations
    cid = group.container_id
    names = uuid_names(cluster)
    victim = wait_indexes(cluster, cid, RS_3_2, names, states=("CLOSED",))[1]
    path = block_files(cluster, cid, group.local_id)[victim.name]
    with open(path, "r+b") as f:  # 16 bytes inside index 1's first cell
        f.seek(100_000)
        damaged = bytes(b ^ 0xFF for b in f.read(16))
        f.seek(100_000)
        f.write(damaged)
    corrupted = time.monotonic()
    assert sha256(read(cluster)) == sha256(key.data), "a read past the corrupted cell differs"

    wait_for(
        lambda: any(r.uuid == victim.uuid and r.state == "UNHEALTHY" for r in replicas(cluster, cid, names)),
        30,
        f"{victim.name}'s replica of {cid} UNHEALTHY",
    )
    unhealthy_s = time.monotonic() - corrupted
    others = set(names) - {victim.uuid}
    rebuilt = wait_indexes(cluster, cid, RS_3_2, names, states=("CLOSED",), among=others, timeout_s=90)
    rebuilt_s = time.monotonic() - corrupted
    assert rebuilt[1].uuid != victim.uuid
    check_stored(cluster, key.data, key.info.locations, RS_3_2, names)
    assert sha256(read(cluster)) == sha256(key.data)
    print(
        f"\n{victim.name}: index 1 of {cid} corrupted; UNHEALTHY in SCM {unhealthy_s:.1f} s later, "
        f"reconstructed on {rebuilt[1].name} after {rebuilt_s:.1f} s"
    )


def test_decommission_keeps_every_index_available(cluster: LiveCluster, key: Key) -> None:
    cid = key.containers[0]
    names = uuid_names(cluster)
    holder = wait_indexes(cluster, cid, RS_3_2, names, states=("CLOSED",))[2]
    started = cluster.admin("datanode", "decommission", holder.name)
    assert started.code == 0, started
    began = time.monotonic()
    wait_for(
        lambda: cluster.datanodes().get(holder.name, {}).get("operationalState") == "DECOMMISSIONED",
        120,
        f"{holder.name} DECOMMISSIONED",
    )
    drained_s = time.monotonic() - began
    in_service = {n["uuid"] for n in cluster.datanodes().values() if n["operationalState"] == "IN_SERVICE"}
    for c in key.containers:
        wait_indexes(cluster, c, RS_3_2, names, states=("CLOSED",), among=in_service, timeout_s=10)
    check_stored(cluster, key.data, key.info.locations, RS_3_2, names)
    assert sha256(read(cluster)) == sha256(key.data)
    print(f"\n{holder.name} (index 2 of {cid}) DECOMMISSIONED {drained_s:.1f} s after the command")
