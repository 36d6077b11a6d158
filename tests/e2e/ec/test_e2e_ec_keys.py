"""Acceptance (issue 14), the fast core: EC keys on 6 live datanodes.

rs-3-2 and xor-2-1 keys of 0 B, 1 KB, one stripe minus 1, one stripe, 50 MB and several block groups
(2 MB blocks) read back bit-identical; every replica index stores exactly its cells (data) or its parity
cells on its datanode's disk, so an rs-3-2 key stores 5/3 bytes per byte. The bucket's EC default comes
from `sh bucket create --type EC --replication rs-3-2-1024k`; xor-2-1 keys override a RATIS bucket's
default per key (`sh key put --type EC --replication xor-2-1-1024k` and the client's `replication=`).
Last, two datanodes holding data indexes of an rs-3-2 key are killed with SIGKILL: every rs-3-2 key
still reads back, degraded (missing cells rebuilt from parity).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from pyozone.client import KeyInfo
from pyozone.hdds.ids import RATIS_THREE, ReplicationConfig
from tests.e2e.cluster.cluster_helpers import LiveCluster, MiB, live_cluster, ozone_client, sh_here
from tests.e2e.ec.ec_helpers import (
    BLOCK,
    EC_INTERVALS,
    RS_3_2,
    XOR_2_1,
    check_stored,
    make_bucket,
    sha256,
    uuid_names,
    wait_indexes,
)

DATANODES = 6
VOL = "ecvol"
EC_BUCKET, RATIS_BUCKET = "rs32", "mixed"
CONFIGS = {RS_3_2.ec_name: (RS_3_2, EC_BUCKET), XOR_2_1.ec_name: (XOR_2_1, RATIS_BUCKET)}


def sizes(config: ReplicationConfig) -> dict[str, int]:
    stripe = config.ec_data * config.ec_chunk_size
    return {
        "0B": 0,
        "1KB": 1024,
        "stripe-1": stripe - 1,
        "stripe": stripe,
        "50MB": 50 * MiB,
        "groups": 3 * config.ec_data * BLOCK - 5,  # three block groups, the last ending mid-cell
    }


@dataclass(frozen=True)
class Written:
    config: ReplicationConfig
    bucket: str
    key: str
    data: bytes
    info: KeyInfo


@pytest.fixture(scope="module")
def cluster(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveCluster]:
    with live_cluster(request, tmp_path_factory, "ec-keys", DATANODES, overrides=EC_INTERVALS) as c:
        make_bucket(c, VOL, EC_BUCKET, RS_3_2)
        make_bucket(c, VOL, RATIS_BUCKET, None)
        yield c


@pytest.fixture(scope="module")
def written(cluster: LiveCluster, tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], Written]:
    """Every size of both configs: rs-3-2 by the bucket's default, xor-2-1 by a per-key override (the
    one-stripe key through `sh key put`, the rest through the client)."""
    result: dict[tuple[str, str], Written] = {}
    files = tmp_path_factory.mktemp("ec-files")
    with ozone_client(cluster) as client:
        for name, (config, bucket) in CONFIGS.items():
            for label, size in sizes(config).items():
                key, data = f"{name}/{label}", os.urandom(size)
                replication = None if bucket == EC_BUCKET else name
                if config is XOR_2_1 and label == "stripe":
                    path = files / "stripe"
                    path.write_bytes(data)
                    put = sh_here(
                        cluster, "key", "put", f"/{VOL}/{bucket}/{key}", str(path),
                        "--type", "EC", "--replication", name, "-q",
                    )  # fmt: skip
                    assert put.code == 0, put
                else:
                    client.put_key(VOL, bucket, key, data, replication=replication)
                result[name, label] = Written(config, bucket, key, data, client.key_info(VOL, bucket, key))
    return result


def read(cluster: LiveCluster, w: Written) -> bytes:
    with ozone_client(cluster) as client, client.read_key(VOL, w.bucket, w.key) as reader:
        return reader.readall()


def test_buckets_and_keys_record_their_replication(cluster: LiveCluster, written: dict) -> None:
    with ozone_client(cluster) as client:
        assert client.bucket_info(VOL, EC_BUCKET).replication == RS_3_2
        assert client.bucket_info(VOL, RATIS_BUCKET).replication == RATIS_THREE
    for w in written.values():
        assert w.info.replication == w.config, w.info
        assert w.info.data_size == len(w.data)
        assert sum(loc.length for loc in w.info.locations) == len(w.data), w.info.locations
        for loc in w.info.locations:
            assert loc.pipeline.ec == w.config and sorted(loc.pipeline.replica_indexes) == list(
                range(1, w.config.required_nodes + 1)
            ), loc.pipeline
    for name, (config, _) in CONFIGS.items():
        groups = written[name, "groups"].info.locations
        assert len(groups) >= 3, f"{name}: {len(groups)} block group(s) of {sizes(config)['groups']} B"
    info = sh_here(cluster, "key", "info", f"/{VOL}/{RATIS_BUCKET}/{XOR_2_1.ec_name}/stripe")
    assert info.code == 0 and "XOR-2-1-1024K" in info.out.upper(), info


@pytest.mark.parametrize("name", list(CONFIGS))
def test_keys_read_back_bit_identical(cluster: LiveCluster, written: dict, name: str) -> None:
    config, _ = CONFIGS[name]
    for label in sizes(config):
        w = written[name, label]
        got = read(cluster, w)
        assert len(got) == len(w.data) and sha256(got) == sha256(w.data), f"{w.key}: {len(got)} bytes read"


def test_a_key_reads_back_through_sh_key_get(cluster: LiveCluster, written: dict, tmp_path: Path) -> None:
    w = written[RS_3_2.ec_name, "groups"]
    out = tmp_path / "groups"
    got = sh_here(cluster, "key", "get", f"/{VOL}/{w.bucket}/{w.key}", str(out), "-q")
    assert got.code == 0, got
    assert sha256(out.read_bytes()) == sha256(w.data)


@pytest.mark.parametrize("name", list(CONFIGS))
def test_each_replica_index_stores_its_cells(cluster: LiveCluster, written: dict, name: str) -> None:
    config, _ = CONFIGS[name]
    names = uuid_names(cluster)
    for label in sizes(config):
        w = written[name, label]
        stored = check_stored(cluster, w.data, w.info.locations, config, names)
        if label == "stripe":  # full stripes: (d + p) / d bytes stored per byte
            assert stored * config.ec_data == len(w.data) * config.required_nodes, (label, stored)


def test_rs_keys_read_degraded_with_two_data_indexes_killed(cluster: LiveCluster, written: dict) -> None:
    """Runs last: it kills two datanodes."""
    w = written[RS_3_2.ec_name, "stripe"]
    (group,) = w.info.locations
    names = uuid_names(cluster)
    by_index = wait_indexes(cluster, group.container_id, RS_3_2, names)
    victims = [by_index[1].name, by_index[2].name]
    for name in victims:
        cluster.kill(name)
    started = time.monotonic()
    got = read(cluster, w)
    elapsed = time.monotonic() - started
    assert sha256(got) == sha256(w.data), f"{w.key} read degraded differs ({len(got)} bytes)"
    for label in sizes(RS_3_2):  # any two lost indexes of any group leave three: every key reads
        other = written[RS_3_2.ec_name, label]
        assert sha256(read(cluster, other)) == sha256(other.data), f"{other.key} degraded"
    print(f"\n{victims} (indexes 1, 2) killed: {len(w.data)} B read degraded in {elapsed:.2f} s")
