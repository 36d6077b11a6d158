"""OM HA snapshots on real processes (three `pyozone om` of one service beside `cluster up`'s SCM and
datanodes, as test_om_ha.py): with ozone.om.ratis.snapshot.auto.trigger.threshold and
ozone.om.ratis.log.purge.gap small, a follower is stopped, the leader takes keys and purges its log past it;
restarted, the follower fetches the leader's om.db checkpoint through a proxy that flips a byte of the first
download (refused: its SHA-256 differs; the install is retried), installs the next, applies the log after
it, and once made leader (`admin om transfer`) serves every key with its bytes."""

from __future__ import annotations

import http.server
import signal
import threading
import urllib.request
from collections.abc import Iterator

import pytest

from benchmarks.om_ha import SERVICE, HaOms
from pyozone.client import OzoneClient
from pyozone.cluster.layout import free_ports
from pyozone.om.db_checkpoint import CHECKPOINT_PATH, CHECKSUM_HEADER
from tests.e2e.cluster.cluster_helpers import LiveCluster
from tests.e2e.om_ha_support import leader, om_service
from tests.polling import wait_for

VOLUME, BUCKET = "snapvol", "snapbucket"
SMALL = {
    "ozone.om.ratis.snapshot.auto.trigger.threshold": "5",
    "ozone.om.ratis.log.purge.gap": "5",
    "ozone.om.ratis.segment.size": "4KB",
}


class FlippingProxy:
    """Forwards GET /dbCheckpoint to `upstream` (host:port), one byte flipped in the first `corrupt`
    answers (the leader's SHA-256 header kept)."""

    def __init__(self, upstream: str, corrupt: int) -> None:
        self.served = 0
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                with urllib.request.urlopen(f"http://{upstream}{CHECKPOINT_PATH}", timeout=60) as answer:
                    checksum, body = answer.headers[CHECKSUM_HEADER], answer.read()
                proxy.served += 1
                if proxy.served <= corrupt:
                    flipped = bytearray(body)
                    flipped[len(flipped) // 2] ^= 0x01
                    body = bytes(flipped)
                self.send_response(200)
                self.send_header(CHECKSUM_HEADER, checksum)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", free_ports(1)[0]), Handler)
        self.address = f"127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveCluster, HaOms]]:
    cluster = LiveCluster(tmp_path_factory.mktemp("om-ha-snapshot"))
    oms = HaOms.plan(cluster.data_dir, cluster.conf_dir)
    oms.values.update(SMALL)
    with om_service(cluster, oms) as running:
        yield running


def test_a_follower_behind_the_purged_log_installs_the_checkpoint_refusing_a_corrupt_one(
    service: tuple[LiveCluster, HaOms],
) -> None:
    cluster, oms = service
    written: dict[str, bytes] = {}
    with OzoneClient(oms.conf()) as client:
        client.create_volume(VOLUME)
        client.create_bucket(VOLUME, BUCKET)
        current = leader(oms)
        lagging = next(node for node in oms.nodes if node != current)
        oms.kill(lagging, signal.SIGTERM)
        for i in range(30):
            written[f"k{i}"] = data = f"key {i} written while {lagging} was down ".encode() * 20
            client.put_key(VOLUME, BUCKET, f"k{i}", data)
    view = oms.raft_view(current)
    assert view is not None and view["snapshots"] >= 1 and view["snapshotIndex"] >= 10, view
    proxy = FlippingProxy(oms.values[f"ozone.om.http-address.{SERVICE}.{current}"], corrupt=1)
    try:
        oms.node_values[lagging] = {f"ozone.om.http-address.{SERVICE}.{current}": proxy.address}
        oms.start(lagging)
        shown = wait_for(
            lambda: (v := oms.raft_view(lagging)) is not None and v["snapshotInstalls"] >= 1 and v,
            120,
            f"{lagging} installed the leader's checkpoint",
            interval_s=0.5,
        )
        assert shown["snapshotInstallFailures"] >= 1 and proxy.served >= 2
        assert "corrupt or truncated" in oms.log(lagging)
    finally:
        proxy.close()
    target = oms.raft_view(current)
    assert target is not None
    wait_for(
        lambda: (v := oms.raft_view(lagging)) is not None and v["appliedIndex"] >= target["commitIndex"],
        60,
        f"{lagging} applied the log after the checkpoint",
        interval_s=0.5,
    )
    defines = [arg for k, v in oms.values.items() for arg in ("-D", f"{k}={v}")]
    moved = cluster.admin("om", "transfer", "-n", lagging, *defines)
    assert moved.code == 0, moved
    with OzoneClient(oms.conf()) as client:
        assert sorted(k.name for k in client.list_keys(VOLUME, BUCKET)) == sorted(written)
        for key, data in written.items():
            with client.read_key(VOLUME, BUCKET, key) as reader:
                assert reader.readall() == data, key
    assert leader(oms) == lagging
