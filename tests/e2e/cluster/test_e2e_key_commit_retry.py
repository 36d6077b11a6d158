"""Issue 28 defect 15: a key whose data is all on the datanodes is not lost to an OM restart. OM is killed
after the key's bytes were written and before close() commits it, and started again a few seconds later:
the commit waits OM out (ozone.client.failover.max.attempts attempts ozone.client.wait.between.retries.millis
apart) and the key is then readable, whole. Before the fix close() raised OMUnavailableError at once."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator

import pytest

from pyozone.cluster.status import om_ready
from tests.e2e.cluster.cluster_helpers import LiveCluster, MiB, live_cluster, ozone_client
from tests.polling import wait_for

VOL, BUCKET = "vol", "bucket"
DOWN_S = 4.0
RETRYING = {"ozone.client.wait.between.retries.millis": "500", "ozone.client.failover.max.attempts": "60"}


@pytest.fixture(scope="module")
def cluster(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveCluster]:
    with live_cluster(request, tmp_path_factory, "commit-retry", 1) as c:
        yield c


@pytest.mark.parametrize("size", [1 * MiB, 6 * MiB], ids=["V1", "V2"])
def test_a_key_written_while_om_restarts_is_committed_and_readable(cluster: LiveCluster, size: int) -> None:
    data = os.urandom(size)
    name = f"k{size}"
    with ozone_client(cluster, **RETRYING) as client:
        if VOL not in {v.name for v in client.list_volumes()}:
            client.create_volume(VOL)
            client.create_bucket(VOL, BUCKET, "RATIS/ONE")
        out = client.create_key(VOL, BUCKET, name, size_hint=size)
        out.write(data)
        cluster.kill("om")
        restarted = threading.Timer(DOWN_S, cluster.start, ("om",))
        started = time.monotonic()
        restarted.start()
        try:
            info = out.close()
        finally:
            restarted.join()
        assert time.monotonic() - started >= DOWN_S and info.data_size == size
        wait_for(lambda: om_ready(cluster.port("om", "http")), 30, "OM ready again")
        assert client.key_info(VOL, BUCKET, name).data_size == size
        assert client.read_key(VOL, BUCKET, name).readall() == data
