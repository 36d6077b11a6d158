"""Issue 28 (dn2 defect 3) on a cluster made by `pyozone cluster up --secure`, with block tokens enforced and
a block size that is not a multiple of the EC cell: OM signed maxLength = ozone.scm.block.size, but an EC
group holds the block size on each data index, so its first data index and its parity index hold a whole
cell (512 KiB) more than the block size (768 KiB) here, and the datanodes refused the write. The client,
carrying OM's tokens, writes such a key over more than one group and reads it back."""

from __future__ import annotations

import secrets
from collections.abc import Iterator

import pytest

from tests.e2e.security.secure_cluster import SecureCluster, secure_cluster

VOL, BUCKET = "ectokens", "ecbucket"
KiB = 1024
BLOCK = 768 * KiB  # not a multiple of the 512 KiB cell


@pytest.fixture(scope="module")
def cluster(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SecureCluster]:
    overrides = {"ozone.scm.block.size": f"{BLOCK // KiB}KB"}
    with secure_cluster(request, tmp_path_factory, "ectokens", overrides=overrides) as c:
        yield c


def test_an_ec_key_over_groups_fuller_than_the_block_size_writes_and_reads_back(
    cluster: SecureCluster,
) -> None:
    data = secrets.token_bytes(2 * 2 * BLOCK + 100 * KiB)  # two full xor-2-1 groups and part of a third
    with cluster.ozone_client() as client:
        client.create_volume(VOL)
        client.create_bucket(VOL, BUCKET, "EC/XOR-2-1-512k")
        client.put_key(VOL, BUCKET, "k", data)
        with client.read_key(VOL, BUCKET, "k") as reader:
            assert reader.readall() == data
        locations = client.key_info(VOL, BUCKET, "k").locations
        assert len(locations) == 3 and all(loc.token for loc in locations)
