"""Acceptance (issue 4): a client that disconnects mid-write. A `sh key put` killed -9 halfway through a
300 MB key leaves no key visible, and once its open key expires (ozone.om.open.key.expire.threshold, 20 s
here) OM hands its blocks to SCM, which has the datanodes delete them: the block files leave the disks.

The cluster is this module's own: closing every open container for the reclaim check must not disturb
other tests' keys, and only here do open keys expire so soon.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest

from tests.e2e.cluster.cluster_helpers import (
    LiveCluster,
    MiB,
    all_block_files,
    block_files,
    close_open_containers,
    container_replica_states,
    om_code,
    one_line_error,
    ozone_client,
    random_file,
    sh,
)
from tests.e2e.cluster.keys_cluster import BUCKET, LEASE_S, VOL, keys_cluster
from tests.polling import wait_for

OPEN_KEY_EXPIRY_S = 20


@dataclass
class Abandoned:
    """What the dead put left: (datanode, container, local id) of each block file, and their containers."""

    blocks: set[tuple[str, int, int]] = field(default_factory=set)
    containers: set[int] = field(default_factory=set)


@pytest.fixture(scope="module")
def cluster(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveCluster]:
    expiring = {
        "ozone.om.open.key.expire.threshold": f"{OPEN_KEY_EXPIRY_S}s",
        "ozone.om.open.key.cleanup.service.interval": "1s",
    }
    with keys_cluster(request, tmp_path_factory, "keys-abandon", expiring) as c:
        yield c


@pytest.fixture(scope="module")
def abandoned() -> Abandoned:
    return Abandoned()


def test_a_put_killed_mid_write_leaves_no_key(
    cluster: LiveCluster, abandoned: Abandoned, tmp_path_factory: pytest.TempPathFactory
) -> None:
    big = tmp_path_factory.mktemp("big") / "big.bin"
    random_file(big, 300 * MiB)
    before = all_block_files(cluster)
    put = cluster.spawn(
        "sh", "key", "put", f"/{VOL}/{BUCKET}/abandoned", str(big), "-q", "--conf", str(cluster.conf_dir),
        log=cluster.data_dir / "abandoned-put.log",
    )  # fmt: skip

    def written() -> int:
        new = all_block_files(cluster) - before
        return sum(block_files(cluster, c, b)[dn].stat().st_size for dn, c, b in new if dn == "dn1")

    started = time.monotonic()
    wait_for(lambda: written() >= 24 * MiB, 60, "24 MB of the put on dn1's disk", interval_s=0.05)
    os.kill(put.pid, signal.SIGKILL)
    put.wait(10)
    print(
        f"\n`sh key put` killed -9 {time.monotonic() - started:.1f} s after it started, "
        f"{written() / MiB:.0f} MB out"
    )
    abandoned.blocks = all_block_files(cluster) - before
    abandoned.containers = {c for _, c, _ in abandoned.blocks}
    assert abandoned.blocks and put.returncode == -signal.SIGKILL

    with ozone_client(cluster) as client:
        assert om_code(lambda: client.key_info(VOL, BUCKET, "abandoned")) == "KEY_NOT_FOUND"
        assert "abandoned" not in [k.name for k in client.list_keys(VOL, BUCKET)]
    one_line_error(sh(cluster, "key", "info", f"/{VOL}/{BUCKET}/abandoned"), "KEY_NOT_FOUND")
    # SCM deletes blocks of closed containers only: close the ones the dead put wrote to
    closing = close_open_containers(cluster)
    print(f"closing containers {closing}; the dead put wrote to {sorted(abandoned.containers)}")


def test_the_abandoned_writes_blocks_are_reclaimed(cluster: LiveCluster, abandoned: Abandoned) -> None:
    assert abandoned.blocks, "test_a_put_killed_mid_write_leaves_no_key did not run"
    started = time.monotonic()
    wait_for(
        lambda: "open key(s) expired, their blocks go to deletion" in cluster.log("om"),
        OPEN_KEY_EXPIRY_S + 30,
        "OM's open-key cleanup expiring the dead put's key",
        interval_s=0.5,
    )
    expired_s = time.monotonic() - started
    for cid in abandoned.containers:  # closed, and perhaps already deleted as empty
        wait_for(
            lambda cid=cid: (
                container_replica_states(cluster, cid)[0] in ("CLOSED", "DELETING", "DELETED", "")
            ),
            LEASE_S + 30,
            f"container {cid} CLOSED (or deleted once empty)",
            interval_s=0.5,
        )
    wait_for(
        lambda: not (abandoned.blocks & all_block_files(cluster)),
        90,
        "the dead put's block files leaving the disks",
        interval_s=0.5,
    )
    emptied = [c for c in abandoned.containers if f"Container {c}: CLOSED -> DELETING" in cluster.log("scm")]
    print(
        f"\ncontainers the dead put wrote to that SCM deleted as empty: {sorted(emptied)}"
        f"\nthe dead put's open key expired (waited {expired_s:.1f} s here); its {len(abandoned.blocks)} "
        f"block files gone {time.monotonic() - started:.1f} s after this test began"
    )
