"""Smoke test of the client's striped EC write on live processes (6 datanodes, 2 MB blocks: a block group
of rs-3-2-1024k holds two stripes): keys of rs-3-2 and xor-2-1 read back bit-identical, and a datanode
killed mid-write costs nothing: its group ends at its acknowledged stripes and the rest is rewritten in
groups on live datanodes. The acceptance suite (tests/e2e/ec) checks the bytes on disk and the repairs.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from pyozone.hdds.ids import ReplicationConfig
from tests.e2e.cluster.cluster_helpers import LiveCluster, MiB, live_cluster, ozone_client

RS = ReplicationConfig.parse("rs-3-2-1024k")
XOR = ReplicationConfig.parse("xor-2-1-1024k")
OVERRIDES = {
    "ozone.scm.block.size": "2MB",
    # Each open container holds its size as committed space on a datanode, and SCM places a group only on
    # datanodes with two containers' worth free (has_volume_for): at Ozone's 5GB a host disk with less
    # free space than the open containers promise left one of the five live datanodes unplaceable in CI.
    "ozone.scm.container.size": "256MB",
    # Ozone's default pattern leaves XOR out
    "ozone.replication.allowed-configs": r"^((STANDALONE|RATIS)/(ONE|THREE))|(EC/(3-2|2-1)-1024k)$",
}


@pytest.fixture(scope="module")
def cluster(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveCluster]:
    with live_cluster(request, tmp_path_factory, "ec-write", 6, overrides=OVERRIDES) as c:
        c.wait_healthy(6)
        with ozone_client(c) as client:
            client.create_volume("ecw")
            client.create_bucket("ecw", "keys")
        yield c


@pytest.mark.parametrize("config", [RS, XOR], ids=["rs-3-2", "xor-2-1"])
def test_keys_of_every_size_read_back(cluster: LiveCluster, config: ReplicationConfig) -> None:
    stripe = config.ec_data * config.ec_chunk_size
    group = config.ec_data * 2 * MiB
    with ozone_client(cluster) as client:
        for size in (0, 1024, stripe - 1, stripe, 2 * group + 5):
            data = os.urandom(size)
            key = f"{config.ec_name}/{size}"
            info = client.put_key("ecw", "keys", key, data, replication=config.ec_name)
            assert (info.write_path, info.data_size) == ("EC", size)
            assert [loc.length for loc in client.key_info("ecw", "keys", key).locations] == [
                min(group, size - i) for i in range(0, size, group)
            ]
            with client.read_key("ecw", "keys", key) as reader:
                assert reader.readall() == data, key


def test_a_datanode_killed_mid_write_loses_nothing(cluster: LiveCluster) -> None:
    names = {n["uuid"]: name for name, n in cluster.datanodes().items()}
    data = os.urandom(5 * RS.ec_data * RS.ec_chunk_size + 7)  # five stripes and a bit: three groups or more
    stripe = RS.ec_data * RS.ec_chunk_size
    with ozone_client(cluster) as client:
        writer = client.create_key("ecw", "keys", "killed", size_hint=len(data), replication=RS.ec_name)
        with writer:
            writer.write(data[: stripe + 1])  # the first stripe is sent, the next one fills
            victim = writer.stream._group.location.pipeline.members[2]  # index 3 (test-only look inside)
            cluster.kill(names[victim.uuid])
            writer.write(data[stripe + 1 :])
        assert victim.uuid in writer.stream.exclude_list.datanodes
        with client.read_key("ecw", "keys", "killed") as reader:
            assert reader.readall() == data
        later = client.key_info("ecw", "keys", "killed").locations[1:]
        assert later and all(victim.uuid not in [m.uuid for m in loc.pipeline.members] for loc in later)
