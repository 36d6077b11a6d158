"""The write failover tests' cluster and writer settings and their probes of a pipeline (shared by
test_e2e_write_leader_failover.py and test_e2e_write_follower_kill.py, split so that loadfile runs them in
parallel: each test starts its own cluster)."""

from __future__ import annotations

import json
import urllib.request

from pyozone.cluster.layout import HOST
from tests.e2e.cluster.cluster_helpers import LiveCluster, MiB, sh

VOL, BUCKET = "failover", "bucket1"
PIECE = 1 * MiB
# Write pipeline V1 (the datastream does not fail over); a writeChunk per MB, a putBlock every 2 MB.
WRITER = {
    "ozone.fs.datastream.enabled": "false",
    "hdds.ratis.client.request.watch.type": "MAJORITY_COMMITTED",
    "ozone.client.stream.buffer.size": "1MB",
    "ozone.client.stream.buffer.flush.size": "2MB",
    "ozone.client.stream.buffer.max.size": "8MB",
}
OVERRIDES = {
    "ozone.scm.block.size": "16MB",
    "ozone.scm.container.size": "64MB",
    # The stopped leader must not go STALE meanwhile: SCM would close its pipelines (StaleNodeHandler).
    "ozone.scm.stale.node.interval": "60s",
    "ozone.scm.dead.node.interval": "120s",
}
KILL_AT = 4 * MiB  # requests in flight: a putBlock every 2 MB, up to 8 MB unacknowledged


def pipeline_views(
    cluster: LiveCluster, hosts: list[str], pipeline_id: str
) -> set[tuple[str | None, int | None]]:
    """(leader, term) of the pipeline as each datanode in `hosts` sees it (its /api/v1/pipelines)."""
    seen = set()
    for host in hosts:
        url = f"http://{HOST}:{cluster.port(host, 'http')}/api/v1/pipelines?limit=100"
        with urllib.request.urlopen(url, timeout=10) as answer:
            items = json.load(answer)["items"]
        item = next(i for i in items if i["pipelineId"] == pipeline_id)
        seen.add((item["leader"], item["term"]))
    return seen


def make_bucket(cluster: LiveCluster) -> None:
    for made in (
        sh(cluster, "volume", "create", f"/{VOL}"),
        sh(cluster, "bucket", "create", f"/{VOL}/{BUCKET}"),
    ):
        assert made.code == 0, made
