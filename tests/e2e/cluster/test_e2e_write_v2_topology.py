"""Write pipeline V2 carries each byte across racks once; V1 with a remote leader carries it twice or more
(the "Ozone Write Pipeline V2 with Ratis Streaming" blog post, Fig. I.2). Counted from what every datanode
says it sent to each peer (`GET /traffic`) plus the client's own first hop, on a 3-datanode cluster over two
racks with one RATIS/THREE pipeline."""

from __future__ import annotations

import json
import os
import urllib.request
from typing import Any

import pytest

from tests.e2e.cluster.cluster_helpers import LiveCluster, MiB, live_cluster, ozone_client

VOL, BUCKET = "racks", "topology"
SIZE = 24 * MiB


@pytest.fixture(scope="module")
def cluster(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> LiveCluster:
    overrides = {"ozone.scm.datanode.pipeline.limit": "1", "ozone.scm.block.size": "64MB"}
    with live_cluster(request, tmp_path_factory, "v2racks", 3, racks=2, overrides=overrides) as c:
        yield c


def _sent(cluster: LiveCluster) -> dict[str, dict[str, dict[str, int]]]:
    """Per datanode uuid: bytes sent to each peer uuid, by path."""
    sent = {}
    for daemon in cluster.state.daemons:
        if daemon.name.startswith("dn"):
            url = f"http://127.0.0.1:{daemon.ports['http']}/traffic"
            with urllib.request.urlopen(url, timeout=5) as r:
                body = json.load(r)
            sent[body["uuid"]] = body["sent"]
    return sent


def _cross_rack(before: dict[str, Any], after: dict[str, Any], racks: dict[str, str], path: str) -> int:
    total = 0
    for sender, peers in after.items():
        for peer, paths in peers.items():
            grew = paths.get(path, 0) - before.get(sender, {}).get(peer, {}).get(path, 0)
            if racks[sender] != racks[peer]:
                total += grew
    return total


def test_v2_crosses_racks_once_where_v1_with_a_remote_leader_crosses_twice(cluster: LiveCluster) -> None:
    nodes = cluster.datanodes()
    racks = {n["uuid"]: n["networkLocation"] for n in nodes.values()}
    hosts = {n["uuid"]: name for name, n in nodes.items()}
    (pipeline,) = [p for p in cluster.pipelines() if p["replicationConfig"] == "RATIS/THREE"]
    leader = pipeline["leaderId"]
    # The client sits on the host of a member in a rack the leader is not in: V1's remote leader.
    remote = next(uuid for uuid in racks if racks[uuid] != racks[leader])
    client = ozone_client(cluster)
    client._async.client_host, client._async.client_rack = hosts[remote], racks[remote]
    try:
        client.create_volume(VOL)
        client.create_bucket(VOL, BUCKET)
        data = os.urandom(SIZE)
        crossings = {}
        for path in ("V1", "V2"):
            before = _sent(cluster)
            info = client.put_key(VOL, BUCKET, path, data, datastream=path == "V2")
            assert info.write_path == path
            datanode_hops = _cross_rack(before, _sent(cluster), racks, path)
            # The client's own hop: to the leader (V1), to the nearest member, on its own host (V2).
            first = leader if path == "V1" else remote
            client_hop = SIZE if racks[first] != racks[remote] else 0
            crossings[path] = (client_hop + datanode_hops) / SIZE
            assert client.read_key(VOL, BUCKET, path).read() == data
    finally:
        client.close()
    assert 0.99 <= crossings["V2"] <= 1.01, crossings  # packet frames and checksums: ~0.03 %
    assert crossings["V1"] >= 1.99, crossings
